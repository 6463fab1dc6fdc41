import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {parkedExtra} from '../../src/registry/extra.js';
import {Registry} from '../../src/registry/registry.js';
import {cliEnv, runCli} from '../helpers/cli.js';

/** `mam-tui park` and `wake` as a script runs them (the built CLI): usage, unknown names, refusals, JSON. */
let dir = '';
let env: Record<string, string> = {};
beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-park-cli-'));
	fs.mkdirSync(path.join(dir, 'home'));
	env = cliEnv(path.join(dir, 'home'), path.join(dir, 'state'));
	const registry = Registry.open(path.join(dir, 'state', 'registry.db'));
	registry.insert({name: 'api', agent: 'claude', cwd: dir, status: 'stopped', epoch: 0});
	registry.insert({
		name: 'old',
		agent: 'claude',
		cwd: dir,
		status: 'parked',
		agentSessionId: '69e68769-2dbb-4664-996b-bc39e1d62900',
		epoch: 0,
		extra: parkedExtra.write(
			{},
			{at: Date.parse('2026-12-03T10:00:00Z'), freedBytes: 300 * 1048576, idleSeconds: 3000, argv: ['claude', '--resume', 'x'], cwd: dir},
		),
	});
	registry.close();
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

describe('mam-tui park / wake', {timeout: 60_000}, () => {
	it('usage errors exit 2 and say what to give', async () => {
		for (const [args, why] of [
			[['park'], /give NAMEs or --idle-over/],
			[['park', 'api', '--idle-over', '45m'], /not both/],
			[['park', '--idle-over', 'soon'], /duration like 7d/],
			[['wake'], /give NAMEs or --all/],
			[['wake', '--cwd', '/tmp', 'api'], /--cwd goes with --all/],
		] as const) {
			const run = await runCli(args, env);
			expect(run.exitCode, args.join(' ')).toBe(2);
			expect(run.stderr).toMatch(why);
		}
	});

	it('an unknown name exits 3; a row that is not running is refused by the registry check, unchanged', async () => {
		const unknown = await runCli(['park', 'nope', '--json'], env);
		expect(unknown.exitCode).toBe(3);
		expect(JSON.parse(unknown.stdout)).toMatchObject({version: 1, results: [{session: 'nope', outcome: 'refused', check: 'not-found'}]});
		const stopped = await runCli(['park', 'api'], env);
		expect(stopped.exitCode).toBe(1);
		expect(stopped.stderr).toContain('api: not parked — registry: api is stopped, not running');
	});

	it('wake refuses a row that is not parked; status shows the parked one with its facts', async () => {
		const wake = await runCli(['wake', 'api', '--json'], env);
		expect(wake.exitCode).toBe(1);
		expect(JSON.parse(wake.stdout)).toMatchObject({results: [{session: 'api', outcome: 'refused', kind: 'not-parked'}]});
		const status = await runCli(['status', '--json', '--mux', 'tmux', '--tmux-socket', `mam-park-cli-${process.pid}`], env);
		const old = (JSON.parse(status.stdout) as {sessions: Array<{name: string}>}).sessions.find(s => s.name === 'old');
		expect(old).toMatchObject({status: 'parked', parked: {at: '2026-12-03T10:00:00.000Z', freedBytes: 300 * 1048576, idleSeconds: 3000}});
		const human = await runCli(['status', '--mux', 'tmux', '--tmux-socket', `mam-park-cli-${process.pid}`], env);
		expect(human.stdout).toMatch(/parked \(300 MB freed\)/);
		expect(human.stdout).toContain('1 parked \u00b7 300 MB freed');
	});
});
