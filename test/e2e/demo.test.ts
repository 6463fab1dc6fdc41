import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {FINDING_KINDS} from '../../src/domain/types.js';
import {tempDir} from '../helpers/tmp.js';
import {alive, CLI, E2eTmux, processesWithin, startTimeOf, type Screen} from './support/tmuxScreen.js';
import {eventually} from '../helpers/poll.js';

/**
 * `mam-tui demo` itself, started in a tmux window as a user would: it must open the dashboard on
 * its sandbox, raise the drift kinds tmux can show, stop a stand-in for real, and leave nothing
 * behind when it ends — by q, by SIGTERM, or by its terminal going away (SIGHUP).
 */

/** tmux reports no agent's own session id, so `pin-changed` needs herdr: the demo says so. */
// pin-changed needs the session id herdr reports; status-disagrees needs herdr's own status.
const TMUX_KINDS = FINDING_KINDS.filter(kind => kind !== 'pin-changed' && kind !== 'status-disagrees');

let tmp: ReturnType<typeof tempDir>;
let tmux: E2eTmux;
let sock: string;
/** The user's home as the demo sees it: the demo must never write there. */
let userHome: string;

interface RunningDemo {
	readonly screen: Screen;
	readonly pid: number;
	readonly startTime: number;
	/** The demo's own TMPDIR: its sandbox appears (and must disappear) here. */
	readonly tmpdir: string;
	readonly sandbox: string;
	readonly server: string;
	/** Every process of the sandbox seen while it ran. */
	readonly processes: Array<{pid: number; startTime: number; cmdline: string}>;
}

async function startDemo(label: string): Promise<RunningDemo> {
	const tmpdir = path.join(tmp.dir, `tmp-${label}`);
	fs.mkdirSync(tmpdir);
	const pane = await tmux.openWindow(`demo-${label}`, [process.execPath, CLI, 'demo'], {cwd: tmp.dir, env: {TMPDIR: tmpdir}});
	const screen = tmux.screen(pane);
	const pid = await tmux.panePid(pane);
	const startTime = startTimeOf(pid);
	await screen.waitFor(s => s.includes('mam-tui — sessions') && s.includes('opencode-immortal') && /tmux ok/.test(s), `the ${label} demo's dashboard`, {
		timeoutMs: 60_000,
	});
	const entries = fs.readdirSync(tmpdir).filter(name => name.startsWith('mam-demo-'));
	expect(entries).toHaveLength(1);
	const sandbox = path.join(tmpdir, entries[0] ?? '');
	// Printed before the dashboard took the alternate screen: it waits on the primary one.
	expect(await screen.primary(true)).toContain(`watch the agents with \`tmux -L mam-demo-${pid} attach\``);
	// Seven panes of stand-ins and shells, the stray stand-in and the demo's tmux server.
	const processes = await eventually(
		'the stand-ins to run',
		() => {
			const found = processesWithin(sandbox);
			return found.filter(p => p.cmdline.includes(`${sandbox}/bin/`)).length >= 6 ? found : undefined;
		},
		{timeoutMs: 20_000},
	);
	return {screen, pid, startTime, tmpdir, sandbox, server: `mam-demo-${pid}`, processes};
}

/** Nothing of the demo is left: its tmux server, its processes, its folders, its socket. */
async function expectAllGone(demo: RunningDemo): Promise<void> {
	const probe = await new E2eTmux(tmux.env, demo.server).run(['list-sessions']);
	expect(probe.exitCode).not.toBe(0);
	expect(fs.existsSync(path.join(sock, `tmux-${process.getuid?.() ?? 0}`, demo.server))).toBe(false);
	expect(demo.processes.filter(p => alive(p.pid, p.startTime))).toEqual([]);
	expect(processesWithin(demo.sandbox)).toEqual([]);
	expect(fs.readdirSync(demo.tmpdir)).toEqual([]);
	expect(fs.readdirSync(userHome)).toEqual([]);
}

describe('mam-tui demo in a tmux window', {timeout: 120_000}, () => {
	beforeAll(async () => {
		tmp = tempDir('mam-e2e-demo-');
		sock = path.join(tmp.dir, 'sock');
		userHome = path.join(tmp.dir, 'user-home');
		fs.mkdirSync(sock);
		fs.mkdirSync(userHome);
		// The user's own agent settings: a demo that let them through would write the stand-ins'
		// conversations (and read its data) there, in the user's real data.
		const userAgents = {
			CLAUDE_CONFIG_DIR: path.join(userHome, '.claude-config'),
			CODEX_HOME: path.join(userHome, '.codex-home'),
			XDG_DATA_HOME: path.join(userHome, '.data'),
		};
		tmux = new E2eTmux({PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: userHome, TMUX_TMPDIR: sock, LANG: 'C.UTF-8', NO_COLOR: '1', ...userAgents});
		await tmux.start();
	});

	afterAll(async () => {
		await tmux?.kill();
		tmp?.dispose();
	});

	it('shows the drift kinds, stops a stand-in with s, and q removes everything', async () => {
		const demo = await startDemo('q');
		const {screen} = demo;
		await screen.press('Tab');
		// `unpinned` shows only until the dashboard pins claude-unpinned itself (its stand-in's live record names its conversation).
		const shown = TMUX_KINDS.filter(kind => kind !== 'unpinned');
		const findings = await screen.waitFor(
			s => s.includes('mam-tui — findings') && shown.every(kind => s.includes(kind)) && !/^\s*>?\s*unpinned\s/m.test(s),
			'every kind tmux can show, claude-unpinned pinned',
		);
		expect(findings).toContain('7 findings');
		await screen.press('Tab');
		await screen.waitFor('mam-tui — sessions', 'the sessions list');

		const claude = demo.processes.filter(p => p.cmdline.includes(`${demo.sandbox}/bin/claude --resume`));
		expect(claude).toHaveLength(1);
		await screen.selectSession('claude-live');
		await screen.press('s');
		await screen.waitFor('Stop claude-live?', 'the stop confirmation');
		await screen.press('y');
		await screen.waitFor('stop claude-live: ended by exit-input', 'claude-live to obey /exit');
		expect(claude.filter(p => alive(p.pid, p.startTime))).toEqual([]);

		await screen.press('q');
		expect(await tmux.waitExit(screen.paneId)).toBe(0);
		expect(await screen.text(100, true)).toContain('mam-tui demo: cleaned up');
		await expectAllGone(demo);
	});

	it('SIGTERM, and its terminal going away (SIGHUP), also remove everything', async () => {
		const [terminated, hungUp] = await Promise.all([startDemo('term'), startDemo('hup')]);
		process.kill(terminated.pid, 'SIGTERM');
		await tmux.runOk(['kill-pane', '-t', hungUp.screen.paneId]);
		expect(await tmux.waitExit(terminated.screen.paneId)).toBe(1);
		expect(await terminated.screen.text(100)).toContain('ended by SIGTERM');
		await eventually('the hung-up demo to finish its cleanup and exit', () => !alive(hungUp.pid, hungUp.startTime), {timeoutMs: 20_000});
		await expectAllGone(terminated);
		await expectAllGone(hungUp);
	});
});
