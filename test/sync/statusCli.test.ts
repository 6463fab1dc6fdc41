import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {Registry} from '../../src/registry/registry.js';
import type {StatusJson} from '../../src/cli/statusCommand.js';
import {runCli} from '../helpers/cli.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {FAKE_HERDR_VERSIONS} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS, type FakeProtocol} from '../support/herdrSchema.js';
import {isolatedEnv, privateTmux, type PrivateTmux} from '../helpers/tmux.js';
import {eventually} from '../helpers/poll.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE_MAIN = path.join(ROOT, 'test/support/fakeHerdrMain.ts');

let dir: string;
let bin: string;
let env: Record<string, string>;

beforeAll(() => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-status-')));
	bin = path.join(dir, 'bin');
	writeAgentStandIns(bin, ['claude', 'codex']);
	// HOME and XDG point into the temp dir: no real herdr socket, registry or config is reachable.
	env = {HOME: dir, MAM_HOME: path.join(dir, 'state'), XDG_CONFIG_HOME: path.join(dir, 'config'), TMUX_TMPDIR: dir};
});

afterAll(() => {
	fs.rmSync(dir, {recursive: true, force: true});
});

function pidOf(name: string, pids: readonly number[]): number | undefined {
	return pids.find(pid => {
		try {
			return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
		} catch {
			return false;
		}
	});
}

/** The standalone fake herdr: a child process, ready when it prints its JSON line. */
async function startStandaloneFake(socket: string, tmuxName: string, protocol: FakeProtocol): Promise<{child: ChildProcess; panes: string[]}> {
	const child = spawn(
		process.execPath,
		[
			'--import',
			'tsx',
			FAKE_MAIN,
			'--socket',
			socket,
			'--tmux-socket',
			tmuxName,
			'--protocol',
			String(protocol),
			'--cwd',
			dir,
			'--path-prepend',
			bin,
			'--pane',
			'claude',
			'--pane',
			'codex',
			'--pane',
			'',
			'--strict',
		],
		{cwd: ROOT, env: isolatedEnv(), stdio: ['ignore', 'pipe', 'pipe']},
	);
	let out = '';
	let err = '';
	child.stdout?.on('data', chunk => (out += String(chunk)));
	child.stderr?.on('data', chunk => (err += String(chunk)));
	const ready = await eventually(
		'the fake herdr to be ready',
		() => {
			if (child.exitCode !== null) throw new Error(`fake herdr exited: ${err}`);
			const line = out.split('\n').find(l => l.includes('"ready"'));
			return line ? (JSON.parse(line) as {panes: string[]}) : undefined;
		},
		{timeoutMs: 30_000, retryErrors: true},
	);
	return {child, panes: ready.panes};
}

describe('mam-tui status: panes live, for both backends (the Done-when)', {timeout: 90_000}, () => {
	it.each(FAKE_PROTOCOLS)('herdr protocol %i: three panes (two agents, one shell) with their agents and pids; the session in one of them', async protocol => {
		const socket = path.join(dir, `herdr-${protocol}.sock`);
		const tmux = privateTmux();
		const {child, panes} = await startStandaloneFake(socket, tmux.name, protocol);
		try {
			expect(panes).toEqual(['w1:p1', 'w1:p2', 'w1:p3']);
			const state = path.join(dir, `state-${protocol}`);
			const registry = Registry.open(path.join(state, 'registry.db'));
			registry.insert({name: 'fix-login', agent: 'claude', cwd: dir, mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: 1});
			registry.close();
			const cli = {...env, MAM_HOME: state, HERDR_SOCKET_PATH: socket};
			const body = await eventually(
				'both agents detected',
				async () => {
					const r = await runCli(['status', '--json', '--mux', 'herdr'], cli);
					expect(r.exitCode).toBe(0);
					const parsed = JSON.parse(r.stdout) as StatusJson;
					return parsed.panes.filter(p => p.agent).length === 2 ? parsed : undefined;
				},
				{retryErrors: true},
			);
			expect(body.version).toBe(1);
			expect(body.mux).toMatchObject({kind: 'herdr', ok: true, message: `herdr ${FAKE_HERDR_VERSIONS[protocol]} (protocol ${protocol}) at ${socket}`});
			expect(body.panes.map(p => [p.id, p.agent])).toEqual([
				['w1:p1', 'claude'],
				['w1:p2', 'codex'],
				['w1:p3', null],
			]);
			for (const p of body.panes) {
				expect(p.pids[0]).toBe(p.shellPid);
				expect(p.processes.every(x => x.startTime > 0)).toBe(true);
			}
			expect(pidOf('claude', body.panes[0]?.pids ?? [])).toBeDefined();
			expect(pidOf('codex', body.panes[1]?.pids ?? [])).toBeDefined();
			expect(body.panes[2]?.pids).toHaveLength(1);
			expect(body.untrackedPanes).toEqual(['w1:p2']);
			expect(body.sessions).toEqual([
				expect.objectContaining({
					name: 'fix-login',
					liveStatus: 'idle',
					livePaneId: 'w1:p1',
					resumeState: 'no: no conversation pinned yet',
					pids: body.panes[0]?.pids,
				}),
			]);
			const human = await runCli(['status', '--mux', 'herdr'], cli);
			expect(human.stdout).toMatch(/fix-login\s+claude\s+running\s+w1:p1\s+—\s+~\s+idle\s+no: no conversation pinned yet/);
			expect(human.stdout).toMatch(/w1:p2\s+codex\s+idle/);
			expect(human.stdout).toContain(`mux: herdr ok — herdr ${FAKE_HERDR_VERSIONS[protocol]} (protocol ${protocol})`);
		} finally {
			child.kill('SIGTERM');
			const code = await new Promise<number | null>(resolve => child.once('exit', c => resolve(c)));
			// --strict: exit 3 if any line either way broke herdr's schema.
			expect(code).toBe(0);
			await tmux.kill();
		}
	});

	it('tmux: the same three panes on a private server with --tmux-socket', async () => {
		const tmux: PrivateTmux = privateTmux();
		try {
			const pathEnv = `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
			await tmux.run(['new-session', '-d', '-s', 'a', '-c', dir, '--', 'claude', '--flag'], pathEnv);
			await tmux.run(['new-window', '-d', '-t', 'a:', '-c', dir, '--', 'codex', '--flag'], pathEnv);
			await tmux.run(['new-window', '-d', '-t', 'a:', '-c', dir, '--', '/bin/sh', '-i'], pathEnv);
			// The private server lives where tmux puts sockets for this test process, not in the temp HOME.
			const {TMUX_TMPDIR: _unused, ...tmuxEnv} = env;
			const inherited = process.env['TMUX_TMPDIR'];
			const r = await runCli(['status', '--json', '--mux', 'tmux', '--tmux-socket', tmux.name], inherited ? {...tmuxEnv, TMUX_TMPDIR: inherited} : tmuxEnv);
			expect(r.exitCode).toBe(0);
			const body = JSON.parse(r.stdout) as StatusJson;
			expect(body.mux).toMatchObject({kind: 'tmux', ok: true, message: expect.stringContaining(tmux.name)});
			expect(body.panes.map(p => p.agent)).toEqual(['claude', 'codex', null]);
			expect(pidOf('claude', body.panes[0]?.pids ?? [])).toBe(body.panes[0]?.shellPid);
			expect(pidOf('codex', body.panes[1]?.pids ?? [])).toBe(body.panes[1]?.shellPid);
			expect(body.untrackedPanes).toEqual([body.panes[0]?.id, body.panes[1]?.id]);
		} finally {
			await tmux.kill();
		}
	});

	it("tmux: one-shot commands never attach a client to the user's server", async () => {
		// A control client half-way through attaching can crash tmux < 3.7 (PR 4980): only the dashboard and serve attach, once.
		const tmux: PrivateTmux = privateTmux();
		const log = path.join(dir, 'attached.log');
		try {
			await tmux.run(['new-session', '-d', '-s', 'a', '-c', dir, '--', 'sleep', '3600']);
			await tmux.run(['set-hook', '-g', 'client-attached', `run-shell "echo attached >> ${log}"`]);
			const {TMUX_TMPDIR: _unused, ...tmuxEnv} = env;
			const inherited = process.env['TMUX_TMPDIR'];
			const cliEnv = inherited ? {...tmuxEnv, TMUX_TMPDIR: inherited} : tmuxEnv;
			for (const args of [['status', '--json'], ['status'], ['drift', '--json']]) {
				const r = await runCli([...args, '--mux', 'tmux', '--tmux-socket', tmux.name], cliEnv);
				expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
			}
			// The hook works: an attach is written down.
			await tmux.run(['run-shell', `echo probe >> ${log}`]);
			expect(fs.readFileSync(log, 'utf8')).toBe('probe\n');
		} finally {
			await tmux.kill();
		}
	});

	it('with herdr unreachable, status still answers (exit 0) and says why', async () => {
		const r = await runCli(['status', '--json', '--mux', 'herdr'], {...env, HERDR_SOCKET_PATH: path.join(dir, 'nobody.sock')});
		expect(r.exitCode).toBe(0);
		const body = JSON.parse(r.stdout) as StatusJson;
		expect(body.mux).toEqual({kind: 'herdr', ok: false, message: expect.stringContaining('no herdr socket at')});
		expect(body.panes).toEqual([]);
		const human = await runCli(['status', '--mux', 'herdr'], {...env, HERDR_SOCKET_PATH: path.join(dir, 'nobody.sock')});
		expect(human.stdout).toContain('mux: herdr DOWN — no herdr socket at');
	});

	it('--mux auto falls back to tmux when no herdr answers', async () => {
		const r = await runCli(['status', '--json', '--tmux-socket', 'mam-test-none'], {...env, HERDR_SOCKET_PATH: path.join(dir, 'nobody.sock')});
		expect((JSON.parse(r.stdout) as StatusJson).mux.kind).toBe('tmux');
	});

	it.each([
		[['--tmux-socket', 'a', '--tmux-path', '/tmp/x', 'status'], 'not both'],
		[['--tmux-socket', 'a/b', 'status'], '--tmux-socket needs a plain name'],
	])('bad tmux server options %j exit 2', async (args, message) => {
		const r = await runCli(args, env);
		expect(r.exitCode).toBe(2);
		expect(r.stderr).toContain(message);
	});
});
