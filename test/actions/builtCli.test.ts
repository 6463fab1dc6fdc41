import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {runCli} from '../helpers/cli.js';
import {aliveWithStart} from '../support/standin.js';
import {startTimeOf} from './support/agents.js';
import {startTmuxServer, type TmuxServer} from './support/tmux.js';
import type {StandinRecord} from '../../src/demo/standin.js';
import {eventually} from '../helpers/poll.js';

const DIST_INSTALL = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../dist/src/demo/installStandin.js');

/**
 * The built `mam-tui` with the real adapters and the real `--mux tmux` selection, against the
 * stand-in the product itself ships (dist/src/demo): what `mam-tui demo` and a user would run.
 */
describe('the built mam-tui stops a stand-in that ignores everything', {timeout: 60_000}, () => {
	let dir: string;
	let server: TmuxServer;
	let env: Record<string, string>;
	const leftovers: Array<{pid: number; startTime: number}> = [];

	beforeAll(async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-built-')));
		for (const sub of ['bin', 'project', 'home']) fs.mkdirSync(path.join(dir, sub));
		const {installStandin} = (await import(DIST_INSTALL)) as typeof import('../../src/demo/installStandin.js');
		installStandin({
			binDir: path.join(dir, 'bin'),
			name: 'claude',
			options: {ignoreExit: true, ignoreSignals: true, orphan: true, children: 1, recordFile: path.join(dir, 'records')},
		});
		// tmux gives new panes the PATH of the mam-tui client, so the stand-in `claude` must be on it.
		env = {PATH: `${path.join(dir, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, HOME: path.join(dir, 'home'), MAM_HOME: path.join(dir, 'state')};
		server = await startTmuxServer(env);
	});

	afterAll(async () => {
		await server.kill();
		for (const ref of leftovers) if (aliveWithStart(ref.pid, ref.startTime)) process.kill(ref.pid, 'SIGKILL');
		fs.rmSync(dir, {recursive: true, force: true});
	});

	it('new registers it; stop reports step 3 and leaves no process behind', async () => {
		const mux = ['--mux', 'tmux', '--tmux-socket', server.socket];
		const started = await runCli(['new', '--agent', 'claude', '--cwd', path.join(dir, 'project'), '--name', 'stubborn', ...mux], env);
		expect(started.exitCode, started.stderr).toBe(0);
		const record = await eventually('the stand-in', () => {
			const text = fs.existsSync(path.join(dir, 'records')) ? fs.readFileSync(path.join(dir, 'records'), 'utf8').trim() : '';
			return text ? (JSON.parse(text.split('\n')[0] ?? '') as StandinRecord) : undefined;
		});
		const pids = [record.pid, ...record.childPids].map(pid => ({pid, startTime: startTimeOf(pid)}));
		leftovers.push(...pids);
		const stopped = await runCli(['stop', 'stubborn', '--grace', '1', '--kill-wait', '1', ...mux], env);
		expect(stopped.exitCode, stopped.stderr).toBe(0);
		expect(stopped.stdout).toMatch(/^step 3 sigkill\s+done/m);
		expect(stopped.stdout).toContain('stubborn: stopped at step 3 (sigkill)');
		expect(stopped.stdout).toContain('no process of the session is left');
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
		const status = await runCli(['status', '--json'], env);
		expect(JSON.parse(status.stdout)).toMatchObject({sessions: [{name: 'stubborn', status: 'stopped'}]});
	});
});
