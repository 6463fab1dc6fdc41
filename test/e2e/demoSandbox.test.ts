import {spawn, type ChildProcess} from 'node:child_process';
import path from 'node:path';
import {execa} from 'execa';
import {afterEach, describe, expect, it} from 'vitest';
import {installStandin} from '../../src/demo/installStandin.js';
import {reapSandbox, sandboxProcesses} from '../../src/demo/reaper.js';
import {SANDBOX_MARKER, sandboxEnv} from '../../src/demo/sandbox.js';
import {tempDir} from '../helpers/tmp.js';
import {alive, BUILT_STANDIN, startTimeOf} from './support/tmuxScreen.js';
import {eventually} from '../helpers/poll.js';

/** The two safety rules under `mam-tui demo`'s cleanup, without a terminal. */

const dirs = {base: '/tmp/mam-demo-test', home: '/tmp/mam-demo-test/home', state: '/tmp/mam-demo-test/state', bin: '/tmp/mam-demo-test/bin'};

describe('the sandbox environment', () => {
	it("keeps none of the user's agent, XDG, tmux or herdr settings; HOME and MAM_HOME are the sandbox's", () => {
		const env = sandboxEnv(
			{
				PATH: '/usr/bin:/bin',
				HOME: '/home/me',
				LANG: 'C.UTF-8',
				XDG_DATA_HOME: '/home/me/.data',
				XDG_CONFIG_HOME: '/home/me/.config',
				XDG_STATE_HOME: '/home/me/.state',
				CODEX_HOME: '/home/me/.codex',
				CLAUDE_CONFIG_DIR: '/home/me/.claude',
				HERMES_HOME: '/home/me/.hermes',
				MAM_HOME: '/home/me/.mam',
				HOME_DIR: '/home/me',
				TMUX: '/tmp/tmux-1000/default,1,0',
				TMUX_PANE: '%3',
				HERDR_SOCKET_PATH: '/home/me/.config/herdr/herdr.sock',
				BASH_ENV: '/home/me/.bashrc',
			},
			dirs,
		);
		expect(env).toEqual({
			PATH: `${dirs.bin}:/usr/bin:/bin`,
			LANG: 'C.UTF-8',
			HOME: dirs.home,
			MAM_HOME: dirs.state,
			SHELL: '/bin/sh',
			[SANDBOX_MARKER]: dirs.base,
		});
	});
});

describe('the reaper', () => {
	const started: ChildProcess[] = [];
	afterEach(() => {
		for (const child of started.splice(0)) child.kill('SIGKILL');
	});

	const sleeper = (env: Record<string, string>) => {
		const child = spawn('sleep', ['600'], {env: {PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env}, stdio: 'ignore'});
		started.push(child);
		return {pid: child.pid as number, startTime: startTimeOf(child.pid as number)};
	};

	it("ends the processes carrying this sandbox's marker, and only those", async () => {
		const base = `/tmp/mam-demo-reaper-${process.pid}`;
		const ours = sleeper({[SANDBOX_MARKER]: base});
		const otherSandbox = sleeper({[SANDBOX_MARKER]: `${base}-other`});
		const unmarked = sleeper({});
		await eventually('the marked process to be seen', () => sandboxProcesses(base).some(p => p.pid === ours.pid), {timeoutMs: 20_000});

		expect(await reapSandbox(base)).toEqual([]);
		await eventually('the marked process to end', () => !alive(ours.pid, ours.startTime), {timeoutMs: 20_000});
		expect(alive(otherSandbox.pid, otherSandbox.startTime)).toBe(true);
		expect(alive(unmarked.pid, unmarked.startTime)).toBe(true);
	});
});

describe("the demo's stand-ins and a purge", {timeout: 60_000}, () => {
	it("answer the agents' own delete commands at once (hermes sessions delete, opencode session delete), even with stdin left open", async () => {
		const tmp = tempDir('mam-e2e-standin-');
		try {
			for (const [name, args] of [
				['hermes', ['sessions', 'delete', '20261130_061143_3a91c6', '--yes']],
				['opencode', ['session', 'delete', 'ses_0123456789abABCDEFGHIJKLMN']],
			] as const) {
				const file = installStandin({binDir: path.join(tmp.dir, 'bin'), name, script: BUILT_STANDIN});
				// execa keeps the child's stdin open: a stand-in that opened its TUI would wait for input until the timeout.
				const result = await execa(file, [...args], {reject: false, timeout: 20_000});
				expect({name, exitCode: result.exitCode, timedOut: result.timedOut}).toEqual({name, exitCode: 0, timedOut: false});
				expect(String(result.stdout)).toContain('nothing of its own to delete');
			}
		} finally {
			tmp.dispose();
		}
	});
});
