import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {Registry} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';
import {CLI, COLUMNS, E2eTmux, ROWS, selectedRow, type Screen} from './support/tmuxScreen.js';
import {eventually} from '../helpers/poll.js';

/**
 * The built dashboard as a full-screen app in real tmux: it takes the alternate screen, fills the
 * pane and follows its resizes, takes chunked keys one by one, asks before a stop, and gives the
 * terminal back as it was on q and on SIGTERM. Each window runs a shell line that prints a marker,
 * runs the dashboard, then prints its exit code: the primary screen must hold exactly those lines.
 */

let tmp: ReturnType<typeof tempDir>;
let tmux: E2eTmux;
let home: string;
let configDir: string;

const NAMES = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];

/** A window running `sh -c 'echo BEFORE; mam-tui …; echo "rc=$?"; sleep'`; returns its screen. */
async function openDashboard(label: string, extraEnv: Record<string, string> = {}): Promise<Screen> {
	const script = `echo BEFORE-${label}; "$0" "$1" --mux tmux --tmux-socket "$2"; echo "rc=$?"; exec sleep 100000`;
	const pane = await tmux.openWindow(label, ['sh', '-c', script, process.execPath, CLI, tmux.name], {cwd: tmp.dir, env: extraEnv});
	return tmux.screen(pane);
}

/** The dashboard's node process under the pane's shell. */
async function dashboardPid(screen: Screen): Promise<number> {
	const shell = await tmux.panePid(screen.paneId);
	return eventually(
		'the dashboard process',
		() => {
			const children = fs.readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
			return children.find(pid => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CLI));
		},
		{timeoutMs: 20_000},
	);
}

/** What the pane shows once the dashboard ended, trailing blank lines dropped. */
async function afterExit(screen: Screen): Promise<string[]> {
	const text = await screen.waitFor(/rc=\d+/, 'the shell to print the exit code');
	return text.split('\n').filter(line => line.trim() !== '');
}

describe('the built dashboard is a full-screen app (real tmux)', {timeout: 90_000}, () => {
	beforeAll(async () => {
		tmp = tempDir('mam-e2e-full-');
		home = path.join(tmp.dir, 'home');
		const state = path.join(tmp.dir, 'state');
		configDir = path.join(tmp.dir, 'config');
		fs.mkdirSync(home);
		fs.mkdirSync(path.join(configDir, 'mam'), {recursive: true});
		const sock = path.join(tmp.dir, 'sock');
		fs.mkdirSync(sock);
		const registry = Registry.open(path.join(state, 'registry.db'));
		try {
			for (const name of NAMES) registry.insert({name, agent: 'claude', cwd: home, mux: 'tmux', paneId: '%900', status: 'running', epoch: Date.now()});
		} finally {
			registry.close();
		}
		tmux = new E2eTmux({
			PATH: process.env['PATH'] ?? '/usr/bin:/bin',
			HOME: home,
			MAM_HOME: state,
			XDG_CONFIG_HOME: configDir,
			TMUX_TMPDIR: sock,
			LANG: 'C.UTF-8',
			NO_COLOR: '1',
		});
		await tmux.start();
	}, 60_000);

	afterAll(async () => {
		await tmux?.kill();
		tmp?.dispose();
	});

	it('takes the alternate screen and fills the pane; q gives the primary screen back as it was, cursor shown', async () => {
		const screen = await openDashboard('q');
		const frame = await screen.waitFor(s => s.includes('echo') && /tmux ok/.test(s), 'the dashboard');
		expect(await screen.modes()).toMatchObject({alternate: true});
		expect(frame).not.toContain('BEFORE-q');
		// The status bar sits at the foot of the pane (one line is kept free), not under the rows.
		const lines = frame.split('\n');
		expect(lines[ROWS - 2]).toMatch(/enter focus .* q quit/);
		expect(await screen.primary()).toMatch(/^BEFORE-q\n/);

		await screen.press('q');
		expect(await afterExit(screen)).toEqual(['BEFORE-q', 'rc=0']);
		expect(await screen.modes()).toEqual({alternate: false, cursorShown: true});
	});

	it('follows a resize, rows and columns', async () => {
		const screen = await openDashboard('resize');
		await screen.waitFor(s => /tmux ok/.test(s), 'the dashboard');
		await tmux.runOk(['resize-window', '-t', screen.paneId, '-x', '80', '-y', '24']);
		const small = await screen.waitFor(s => (s.split('\n')[22] ?? '').includes('enter focus'), 'the status bar on line 23 of 24');
		for (const line of small.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
		await tmux.runOk(['resize-window', '-t', screen.paneId, '-x', String(COLUMNS), '-y', String(ROWS)]);
		await screen.waitFor(s => (s.split('\n')[ROWS - 2] ?? '').includes('enter focus'), 'the status bar back at the foot');
		await screen.press('q');
		expect(await afterExit(screen)).toEqual(['BEFORE-resize', 'rc=0']);
	});

	it.each(['SIGTERM', 'SIGHUP'] as const)('%s also gives the terminal back (exit 1)', async signal => {
		const screen = await openDashboard(signal);
		await screen.waitFor(s => /tmux ok/.test(s), 'the dashboard');
		process.kill(await dashboardPid(screen), signal);
		expect(await afterExit(screen)).toEqual([`BEFORE-${signal}`, 'rc=1']);
		expect(await screen.modes()).toEqual({alternate: false, cursorShown: true});
	});

	it('ctrl+c quits like q (exit 0)', async () => {
		const screen = await openDashboard('ctrlc');
		await screen.waitFor(s => /tmux ok/.test(s), 'the dashboard');
		await screen.press('C-c');
		expect(await afterExit(screen)).toEqual(['BEFORE-ctrlc', 'rc=0']);
		expect(await screen.modes()).toEqual({alternate: false, cursorShown: true});
	});

	it('send-keys -l jjj moves three rows; a pasted ss asks once and stops nothing; esc cancels', async () => {
		const screen = await openDashboard('keys');
		await screen.waitFor(selectedRow('alpha'), 'alpha selected');
		await screen.type('jjj');
		await screen.waitFor(selectedRow('delta'), 'three rows down');
		await screen.type('ss');
		const asked = await screen.waitFor('Stop delta?', 'the stop confirmation');
		expect(asked).toContain('3. SIGKILL');
		// A second chunk into the open question is not an answer (esc, a key of its own, still cancels).
		await screen.type('yy');
		await screen.press('Escape');
		const back = await screen.waitFor('stop cancelled', 'the cancel');
		expect(back).not.toMatch(/stop delta .*exit input/);
		await screen.press('q');
		expect(await afterExit(screen)).toEqual(['BEFORE-keys', 'rc=0']);
	});

	it('a keys: binding to ctrl+b is refused with exit 2, naming the key', async () => {
		fs.writeFileSync(path.join(configDir, 'mam', 'config.yaml'), 'keys:\n  session.stop: ctrl+b\n');
		try {
			const screen = await openDashboard('ctrlb');
			const lines = await afterExit(screen);
			expect(lines.at(-1)).toBe('rc=2');
			expect(lines.join('\n')).toContain('keys.session.stop: ctrl+b is refused');
			expect(await screen.modes()).toEqual({alternate: false, cursorShown: true});
		} finally {
			fs.rmSync(path.join(configDir, 'mam', 'config.yaml'));
		}
	});
});
