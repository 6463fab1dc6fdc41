// `npm run screenshots`: the README's pictures, from a real run of `mam-tui demo`. The demo runs in
// a private tmux server at 120×36; each picture is the pane captured with its colours
// (`capture-pane -e`), turned into HTML (ansiHtml.mjs) and photographed by headless Chromium.
// Needs tmux and Chromium (Debian: `apt-get install chromium`); writes docs/screenshots/*.png.
//
// The same pictures on any machine: the run sees only its own processes (a PID namespace with its
// own /proc, `unshare`, so agents or benchmarks running elsewhere on the machine never show as
// "in use"), runs in UTC, and each picture waits for the same state of the demo (statuses, the
// remote host up, the search's snippets). What still differs between runs: ids, pids, the clock.
import {execFile, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {promisify} from 'node:util';
import {ansiToHtmlPage} from './ansiHtml.mjs';

/** Run again inside a PID namespace of our own (a user namespace lets a non-root user make one). */
const NAMESPACED = 'MAM_SHOTS_NAMESPACED';
if (process.env[NAMESPACED] !== '1') {
	const unshare = ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc'];
	const probe = spawnSync('unshare', [...unshare, 'true'], {stdio: 'ignore'});
	if (probe.status === 0) {
		const again = spawnSync('unshare', [...unshare, process.execPath, ...process.argv.slice(1)], {stdio: 'inherit', env: {...process.env, [NAMESPACED]: '1'}});
		process.exit(again.status ?? 1);
	}
	console.warn('screenshots: unshare is not available here; agent processes running elsewhere on this machine may show in the pictures');
}

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
	TZ: 'UTC',
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

/** The list row of `name` (on this machine unless `host`), as the list draws it: cursor, mark, finding, HOST, NAME. */
const rowOf = (name, host = 'local') => new RegExp(`^.[ *][ !]${host} +${name} .*$`, 'm');
const statusOf = (screen, name, host) => screen.match(rowOf(name, host))?.[0].split(/ +/)[5];

async function keys(...args) {
	await tmux('send-keys', '-t', 'shots', ...args);
}

async function main() {
	fs.mkdirSync(OUT_DIR, {recursive: true});
	await tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'shots', '-x', String(COLUMNS), '-y', String(ROWS), process.execPath, CLI, 'demo');
	await waitFor('the demo dashboard', s => s.includes('opencode-immortal') && s.includes('tmux ok') && s.includes('processes ('));
	// The same moment every run: the second host up, the parks summed, and the two claude
	// stand-ins (they cycle idle → working → blocked every 8 s) both idle, so the rows sort alike.
	await waitFor(
		'the demo to settle',
		s =>
			s.includes('devbox up') &&
			s.includes('3 parked · 2.1 GB freed') &&
			statusOf(s, 'codex-stubborn') === 'working' &&
			statusOf(s, 'opencode-immortal') === 'blocked' &&
			statusOf(s, 'claude-live') === 'idle' &&
			statusOf(s, 'claude-unpinned') === 'idle' &&
			/^>.*claude-live /m.test(s),
		90_000,
	);
	await shoot('dashboard', 'mam-tui — the sessions list');

	// The second host's rows, after this machine's, under the HOST column.
	await keys('G', 'k', 'k');
	await waitFor('devbox api-fix selected', s => /^>[ *][ !]devbox +api-fix .* working /m.test(s) && statusOf(s, 'orders-pagination', 'devbox') === 'idle');
	await shoot('hosts', 'mam-tui — a second machine');

	await keys('g', '/');
	await waitFor('the filter', s => s.includes('filter:'));
	await keys('-l', 'claude-old');
	await keys('Enter');
	await waitFor('claude-old selected', s => /^>[ *][ !]local +claude-old /m.test(s));
	await keys('p');
	await waitFor('the purge plan', s => s.includes('Type claude-old and press enter'));
	await keys('-l', 'claude-ol');
	await waitFor('the typed name', s => s.includes('> claude-ol'));
	await shoot('purge', 'mam-tui — the purge confirmation');

	await keys('Escape');
	await waitFor('the dialog to close', s => !s.includes('Type claude-old'));
	await keys('Escape');
	await waitFor('the notice to go', s => !s.includes('purge cancelled'));
	// The conversations view's `/` searches the messages too: hits show the index's snippet.
	await keys('c');
	await waitFor('the conversations view', s => s.includes('mam-tui — conversations'));
	await keys('/');
	await keys('-l', 'token');
	await waitFor('three snippets', s => (s.match(/\[token\]/g) ?? []).length >= 3 && s.includes('search: token'));
	await shoot('search', 'mam-tui — a text search of the conversations');

	await keys('Escape');
	await keys('Escape');
	await keys('q');
	// The demo removes its sandbox (under the system temp folder) itself; wait until its window is gone.
	await waitFor('the demo to clean up', s => !s.includes('mam-tui — '), 30_000).catch(() => undefined);
}

try {
	await main();
} finally {
	await tmux('kill-server').catch(() => undefined);
	fs.rmSync(work, {recursive: true, force: true});
}
