import crypto from 'node:crypto';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest';
import {createDriftCommand, type DriftJson, type OpenMux} from '../../src/cli/driftCommand.js';
import {createWorld, type World} from '../../src/world/world.js';
import type {Pane} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {runCli} from '../helpers/cli.js';
import {tempDir} from '../helpers/tmp.js';
import {EPOCH, ID, pane, spyMux, type Spy} from './builders.js';

let tmp: ReturnType<typeof tempDir>;
let file: string;
let env: Record<string, string>;
let spy: Spy;
let worlds: World[];

beforeEach(() => {
	tmp = tempDir('mam-drift-cli-');
	file = path.join(tmp.dir, 'registry.db');
	env = {HOME: tmp.dir, MAM_HOME: path.join(tmp.dir, 'state')};
	spy = {calls: []};
	worlds = [];
});
afterEach(() => {
	for (const w of worlds) w.close();
	tmp.dispose();
	vi.restoreAllMocks();
});

function seed(rows: ReadonlyArray<Parameters<Registry['insert']>[0]>): void {
	const registry = Registry.open(file);
	for (const r of rows) registry.insert(r);
	registry.close();
}

/** Run the command in-process with an injected mux, capturing stdout. */
async function run(panes: readonly Pane[] | Error, flags: {json?: boolean; fix?: boolean} = {}): Promise<{code: number; stdout: string}> {
	const world = createWorld({registry: file, json: flags.json ?? false, verbose: false}, env);
	worlds.push(world);
	const openMux: OpenMux = async () => ({mux: spyMux(() => panes, spy)});
	let stdout = '';
	const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
		stdout += String(chunk);
		return true;
	});
	try {
		const code = await createDriftCommand(openMux).run(world, {fix: flags.fix === true}, []);
		return {code, stdout};
	} finally {
		write.mockRestore();
	}
}

const cwd = () => path.join(tmp.dir, 'api');

describe('mam-tui drift (in-process, injected mux)', () => {
	it('--json reports {version: 1, findings} and exits 1 while findings remain', async () => {
		seed([{name: 'api', agent: 'claude', cwd: cwd(), mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: EPOCH, agentSessionId: ID.a}]);
		const r = await run([], {json: true});
		expect(r.code).toBe(1);
		const body = JSON.parse(r.stdout) as DriftJson;
		expect(body).toMatchObject({version: 1, mux: {kind: 'herdr', reachable: true}, notes: []});
		// The pinned id is not on disk in this empty home, so the adapter's verify says so too.
		expect(body.findings.map(f => [f.kind, f.sessionName])).toEqual([
			['pane-gone', 'api'],
			['artifact-missing', 'api'],
		]);
		expect(body.findings[0]?.fix).toEqual({type: 'mark-stopped', sessionId: 1, clearPane: true});
		expect(spy.calls).toEqual([]);
	});

	it('prints one human line per finding with its fix and evidence, and the --fix hint', async () => {
		seed([{name: 'api', agent: 'claude', cwd: cwd(), mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: EPOCH, agentSessionId: ID.a}]);
		const r = await run([pane('w1:p1')]);
		expect(r.stdout).toContain("! agent-exited api: api's pane w1:p1 is still open, but Claude Code no longer runs in it");
		expect(r.stdout).toContain('    fix: mark stopped');
		expect(r.stdout).toContain('    seen: herdr: pane w1:p1 has no agent detected');
		expect(r.stdout).toContain('run `mam-tui drift --fix`');
	});

	it('--fix applies only the safe fixes, prints what changed, and a second --fix changes nothing', async () => {
		seed([
			{name: 'api', agent: 'claude', cwd: cwd(), mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: EPOCH, agentSessionId: ID.a},
			{name: 'a', agent: 'codex', cwd: cwd(), status: 'stopped', epoch: EPOCH, agentSessionId: ID.b},
			{name: 'b', agent: 'codex', cwd: cwd(), status: 'stopped', epoch: EPOCH, agentSessionId: ID.b},
		]);
		const first = await run([]);
		expect(first.code).toBe(1);
		const fixed = await run([], {fix: true});
		expect(fixed.stdout).toContain('fixed pane-gone: api: status "running" → "stopped", paneId "w1:p1" → null');
		expect(fixed.stdout).toContain('! duplicate-pin a:');
		expect(fixed.code).toBe(1);
		const again = await run([], {fix: true, json: true});
		const body = JSON.parse(again.stdout) as DriftJson;
		expect(body.applied).toEqual([]);
		expect(body.findings.map(f => f.kind)).toEqual(['artifact-missing', 'artifact-missing', 'duplicate-pin', 'artifact-missing']);
		expect(body.findings.every(f => f.fix === undefined)).toBe(true);
		const registry = Registry.open(file);
		expect(registry.get('api')).toMatchObject({status: 'stopped', paneId: null});
		expect(registry.auditLog().map(a => [a.session, a.step, a.outcome])).toEqual([['api', 'mark-stopped', 'ok']]);
		registry.close();
		expect(spy.calls).toEqual([]);
	});

	it('exits 0 when nothing is left but information ("no conversation yet")', async () => {
		seed([{name: 'api', agent: 'claude', cwd: cwd(), mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: Date.now() + 60_000}]);
		const r = await run([pane('w1:p1', {agentArgv: ['claude']})]);
		expect(r.stdout).toMatch(/^i unpinned api: api: no conversation yet/m);
		expect(r.code).toBe(0);
	});

	it('an unreachable mux is a note, and no pane-based finding is raised', async () => {
		seed([{name: 'api', agent: 'claude', cwd: cwd(), mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: EPOCH, agentSessionId: ID.a}]);
		const r = await run(new Error('herdr socket: connection refused'), {json: true});
		const body = JSON.parse(r.stdout) as DriftJson;
		expect(body.mux).toEqual({kind: 'herdr', reachable: false, problem: 'herdr socket: connection refused'});
		expect(body.notes[0]).toMatch(/herdr unreachable .* not checked/);
		expect(body.findings).toEqual([]);
		expect(r.code).toBe(0);
	});

	it('an empty registry and no panes: no drift, exit 0', async () => {
		const r = await run([]);
		expect(r).toEqual({code: 0, stdout: 'No drift: the registry matches the panes and the disk.\n'});
	});
});

describe('mam-tui drift (the built CLI)', () => {
	it('is a registered command: --help names it, and it runs against a private, empty tmux server', async () => {
		const help = await runCli(['--help'], env);
		expect(help.stdout).toContain('mam-tui drift [--json] [--fix]');
		seed([{name: 'api', agent: 'claude', cwd: cwd(), mux: 'tmux', paneId: '%3', status: 'running', epoch: EPOCH}]);
		const socket = `mam-test-${crypto.randomBytes(4).toString('hex')}`;
		const r = await runCli(['drift', '--json', '--mux', 'tmux', '--tmux-socket', socket, '--registry', file], env);
		expect(r.stderr).toBe('');
		const body = JSON.parse(r.stdout) as DriftJson;
		expect(body.mux.kind).toBe('tmux');
		expect(body.findings.map(f => f.kind)).toEqual(['pane-gone']);
		expect(r.exitCode).toBe(1);
		const fixed = await runCli(['drift', '--fix', '--mux', 'tmux', '--tmux-socket', socket, '--registry', file], env);
		expect(fixed.stdout).toContain('fixed pane-gone: api');
		expect(fixed.exitCode).toBe(0);
	}, 60_000);
});
