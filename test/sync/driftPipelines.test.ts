import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest';
import {projectSlug} from '../../src/adapters/claude.js';
import {createDriftCommand, type DriftJson} from '../../src/cli/driftCommand.js';
import type {Finding, Pane} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {startSupervisor} from '../../src/sync/supervisor.js';
import {createWorld, type World} from '../../src/world/world.js';
import {claudeTranscript} from '../adapters/fixtures/claude.js';
import {fakeProcessTable, pane, spyMux, type Spy} from '../drift/builders.js';
import {tempDir} from '../helpers/tmp.js';

/**
 * One drift policy: `mam-tui drift --json` and the dashboard's snapshot judge the same world to
 * the same findings, evidence included. (They used to gather their input in two pipelines: the
 * CLI asked discovery for conversations since the row's epoch, the dashboard for every age, so
 * the CLI's `unpinned` finding left out what the dashboard's said it had excluded.)
 */
const HOUR = 3_600_000;
let tmp: ReturnType<typeof tempDir>;
let worlds: World[];
beforeEach(() => {
	tmp = tempDir('mam-drift-pipelines-');
	worlds = [];
});
afterEach(() => {
	for (const w of worlds) w.close();
	tmp.dispose();
	vi.restoreAllMocks();
});

function transcript(home: string, id: string, dir: string, createdAt: number): void {
	const file = path.join(home, '.claude', 'projects', projectSlug(dir), `${id}.jsonl`);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, claudeTranscript(id, dir, createdAt, 'hello'));
}

async function cliFindings(world: World, panes: readonly Pane[]): Promise<readonly Finding[]> {
	const spy: Spy = {calls: []};
	let stdout = '';
	const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
		stdout += String(chunk);
		return true;
	});
	try {
		await createDriftCommand(async () => ({mux: spyMux(() => panes, spy)})).run(world, {fix: false}, []);
	} finally {
		write.mockRestore();
	}
	expect(spy.calls).toEqual([]);
	return (JSON.parse(stdout) as DriftJson).findings;
}

async function dashboardFindings(world: World, panes: readonly Pane[]): Promise<readonly Finding[]> {
	const store = createStore(reducer, initialState({sessions: world.registry().list()}));
	const supervisor = startSupervisor({
		store,
		mux: spyMux(() => panes, {calls: []}),
		ctx: world.adapterContext(),
		processes: world.processes,
		discoverySeconds: 3600,
	});
	try {
		await supervisor.refresh({rescan: true});
		return store.getState().findings;
	} finally {
		await supervisor.dispose();
	}
}

describe('drift findings: the CLI and the dashboard agree', () => {
	it('on one world with an unpinned row, a gone pane, a missing artifact and an untracked pane', async () => {
		const home = path.join(tmp.dir, 'home');
		const api = path.join(tmp.dir, 'work', 'api');
		const web = path.join(tmp.dir, 'work', 'web');
		for (const dir of [api, web]) fs.mkdirSync(dir, {recursive: true});
		const epoch = Date.now() - 2 * HOUR;
		const ids = {before: crypto.randomUUID(), after: crypto.randomUUID(), missing: crypto.randomUUID()};
		// One conversation from before the row started (never a candidate), one since.
		transcript(home, ids.before, api, epoch - HOUR);
		transcript(home, ids.after, api, epoch + HOUR);
		const registryFile = path.join(tmp.dir, 'registry.db');
		const registry = Registry.open(registryFile);
		registry.insert({name: 'api', agent: 'claude', cwd: api, mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch});
		registry.insert({name: 'gone', agent: 'claude', cwd: web, mux: 'herdr', paneId: 'w9:p9', status: 'running', epoch, agentSessionId: ids.missing});
		registry.close();
		const panes = [pane('w1:p1', {cwd: api, agentArgv: ['claude']}), pane('w1:p2', {cwd: web, agentArgv: ['codex']})];
		const processes = fakeProcessTable(() => panes.flatMap(p => p.processes));
		const base = createWorld({registry: registryFile, json: true, verbose: false}, {HOME: home, MAM_HOME: path.join(tmp.dir, 'state')});
		const world: World = {...base, processes, adapterContext: () => ({...base.adapterContext(), processes})};
		worlds.push(base);

		const cli = await cliFindings(world, panes);
		const dashboard = await dashboardFindings(world, panes);
		expect(cli.map(f => f.kind).sort()).toEqual(['artifact-missing', 'pane-gone', 'unpinned', 'untracked-pane']);
		expect(cli.find(f => f.kind === 'unpinned')?.evidence).toContainEqual(expect.stringContaining(`not a candidate: ${ids.before}`));
		expect(JSON.parse(JSON.stringify(dashboard))).toEqual(cli);
	});
});
