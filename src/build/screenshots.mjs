// `npm run screenshots`: the README's pictures, from a real run of `mam-tui demo`. The demo runs in
// a private tmux server at 120×36; each picture is the pane captured with its colours
// (`capture-pane -e`), turned into HTML (ansiHtml.mjs) and photographed by headless Chromium.
// Needs tmux and Chromium (Debian: `apt-get install chromium`); writes docs/screenshots/*.png.
import {execFile} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {promisify} from 'node:util';
import {ansiToHtmlPage} from './ansiHtml.mjs';

const run = promisify(execFile);
const COLUMNS = 120;
const ROWS = 36;
const OUT_DIR = 'docs/screenshots';
const CLI = path.resolve('dist/bin/cli.js');
/** The page's padding and cell size (ansiHtml.mjs's CSS): the window is cut to the terminal. */
const CELL = {width: 8.43, height: 17};
const PADDING = {x: 14, y: 12};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-shots-'));
const server = `mam-shots-${process.pid}`;
const env = {
	PATH: process.env.PATH ?? '/usr/bin:/bin',
	HOME: path.join(work, 'home'),
	TMUX_TMPDIR: path.join(work, 'sock'),
	LANG: 'C.UTF-8',
	TERM: 'xterm-256color',
};
for (const dir of [env.HOME, env.TMUX_TMPDIR]) fs.mkdirSync(dir);

const tmux = (...args) => run('tmux', ['-u', '-L', server, ...args], {env});
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function capture(escapes) {
	const {stdout} = await tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'shots');
	return stdout;
}

async function waitFor(what, check, timeoutMs = 60_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const screen = await capture(false);
		if (check(screen)) return screen;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last screen:\n${screen}`);
		await sleep(200);
	}
}

function chromium() {
	for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
		for (const dir of env.PATH.split(':')) if (fs.existsSync(path.join(dir, name))) return path.join(dir, name);
	}
	throw new Error('Chromium not found: install it (Debian: apt-get install chromium)');
}

/** Photograph the pane as it is now into docs/screenshots/<name>.png. */
async function shoot(name, title) {
	const html = path.join(work, `${name}.html`);
	fs.writeFileSync(html, ansiToHtmlPage(await capture(true), {columns: COLUMNS, rows: ROWS, title}));
	const out = path.resolve(OUT_DIR, `${name}.png`);
	const width = Math.ceil(COLUMNS * CELL.width + 2 * PADDING.x);
	const height = Math.ceil(ROWS * CELL.height + 2 * PADDING.y);
	await run(chromium(), [
		'--headless',
		'--no-sandbox',
		'--disable-gpu',
		'--disable-background-networking',
		'--disable-component-update',
		'--disable-sync',
		'--no-first-run',
		'--hide-scrollbars',
		'--force-device-scale-factor=1',
		`--user-data-dir=${path.join(work, `chromium-${name}`)}`,
		`--window-size=${width},${height}`,
		`--screenshot=${out}`,
		`file://${html}`,
	]);
	console.log(`wrote ${path.relative(process.cwd(), out)} (${fs.statSync(out).size} bytes)`);
}

async function main() {
	fs.mkdirSync(OUT_DIR, {recursive: true});
	await tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'shots', '-x', String(COLUMNS), '-y', String(ROWS), process.execPath, CLI, 'demo');
	await waitFor('the demo dashboard', s => s.includes('opencode-immortal') && s.includes('tmux ok') && s.includes('processes ('));
	// Let the live data (status, resume state, findings) settle.
	await sleep(3000);
	await shoot('dashboard', 'mam-tui — the sessions list');

	await tmux('send-keys', '-t', 'shots', '/');
	await waitFor('the filter', s => s.includes('filter:'));
	await tmux('send-keys', '-t', 'shots', '-l', 'claude-old');
	await tmux('send-keys', '-t', 'shots', 'Enter');
	await waitFor('claude-old selected', s => /^>[ *][ !]claude-old /m.test(s));
	await tmux('send-keys', '-t', 'shots', 'p');
	await waitFor('the purge plan', s => s.includes('Type claude-old and press enter'));
	await tmux('send-keys', '-t', 'shots', '-l', 'claude-ol');
	await waitFor('the typed name', s => s.includes('> claude-ol'));
	await shoot('purge', 'mam-tui — the purge confirmation');

	await tmux('send-keys', '-t', 'shots', 'Escape');
	await waitFor('the dialog to close', s => !s.includes('Type claude-old'));
	await tmux('send-keys', '-t', 'shots', 'q');
	// The demo removes its sandbox (under the system temp folder) itself; wait until its window is gone.
	await waitFor('the demo to clean up', s => !s.includes('mam-tui — sessions'), 30_000).catch(() => undefined);
}

try {
	await main();
} finally {
	await tmux('kill-server').catch(() => undefined);
	fs.rmSync(work, {recursive: true, force: true});
}
