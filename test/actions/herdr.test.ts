import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import type {StopProgress} from '../../src/actions/stop.js';
import {createHerdrMux} from '../../src/mux/herdr/index.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords, type StandinInstall} from '../support/standin.js';
import type {StandinOptions} from '../../src/demo/standin.js';
import {agentPids, killLeftovers, startTimeOf, type StartedAgent} from './support/agents.js';
import {writeFixtureConversation} from './support/fixtureAdapter.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {eventually} from '../helpers/poll.js';

const FAST = {graceMs: 1500, killWaitMs: 1500};

let dir: string;
let fake: FakeHerdr;
let mux: Multiplexer;
let world: TestWorld;
const cleanup: Array<{pid: number; startTime: number}> = [];
let counter = 0;
let resumeStandin: StandinInstall;

beforeAll(async () => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-stop-herdr-')));
	const socket = path.join(dir, 'herdr.sock');
	// `claude` on the panes' PATH is a stand-in recording its argv and cwd (for resume).
	resumeStandin = installTestStandin(path.join(dir, 'resume-bin'), 'claude');
	fake = await startFakeHerdr({socketPath: socket, eventTickMs: 20, paneEnv: {PATH: `${resumeStandin.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`}});
	// The user's own pane, which mam-tui splits from.
	await fake.openWorkspace(dir);
	mux = createHerdrMux({socketPath: socket, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 400}, resyncMs: 100});
});

afterAll(async () => {
	await mux.dispose();
	await fake.stop();
	killLeftovers(cleanup);
	killLeftovers(
		readStandinRecords(resumeStandin.recordFile)
			.flatMap(r => [r.pid, ...r.childPids])
			.flatMap(pid => {
				try {
					return [{pid, startTime: startTimeOf(pid)}];
				} catch {
					return [];
				}
			}),
	);
	fs.rmSync(dir, {recursive: true, force: true});
	disposeStandinScript();
});

afterEach(() => {
	expect(fake.violations).toEqual([]);
	killLeftovers(cleanup);
	world?.dispose();
});

/** herdr runs an argv the way it restores agents: a shell pane, the argv typed into it. */
async function startInHerdr(w: TestWorld, options: Partial<StandinOptions>): Promise<StartedAgent> {
	counter += 1;
	const install = installTestStandin(path.join(w.dir, `bin-${counter}`), 'claude', options);
	const paneId = await mux.openPane({argv: [install.file], cwd: w.project});
	const record = await eventually('the stand-in in the herdr pane', () => readStandinRecords(install.recordFile)[0]);
	await eventually('the stand-in prompt', async () => (await mux.readOutput(paneId, 20)).includes('to quit'));
	const session = w.registry.insert({name: `h-${counter}`, agent: 'claude', cwd: w.project, mux: 'herdr', paneId, status: 'running', epoch: Date.now()});
	return {paneId, record, session, recordFile: install.recordFile};
}

function steps(events: readonly StopProgress[]): string[] {
	return events.filter(e => !e.message.startsWith('waiting')).map(e => `${e.step}:${e.state}`);
}

describe('stop through the (fake) herdr backend', {timeout: 30_000}, () => {
	it('ends at step 1 and leaves the pane with its shell when the agent obeys /exit', async () => {
		world = createTestWorld('mam-stop-herdr-');
		const agent = await startInHerdr(world, {children: 1});
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const result = await createActions(world.deps(mux)).stop({name: agent.session.name}, FAST);
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		expect(result.value.endedBy).toBe('exit-input');
		expect(result.value.survivors).toEqual([]);
		expect(result.value.paneClosed).toBe(false);
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
		const pane = (await mux.listPanes()).find(p => p.id === agent.paneId);
		expect(pane?.processes[0]?.name).toBe('sh');
		expect(world.registry.get(agent.session.name)).toMatchObject({status: 'stopped', paneId: agent.paneId});
	});

	it('ends at step 3 with zero survivors when the agent ignores everything', async () => {
		world = createTestWorld('mam-stop-herdr-');
		const agent = await startInHerdr(world, {ignoreExit: true, ignoreSignals: true, children: 1, orphan: true});
		const pids = agentPids(agent);
		expect(pids).toHaveLength(3);
		cleanup.push(...pids);
		const events: StopProgress[] = [];
		const result = await createActions(world.deps(mux)).stop({name: agent.session.name}, {...FAST, onProgress: e => events.push(e)});
		expect(result.ok && result.value.endedBy).toBe('sigkill');
		expect(result.ok && result.value.survivors).toEqual([]);
		expect(steps(events).slice(-4)).toEqual(['close-pane:running', 'close-pane:failed', 'sigkill:running', 'sigkill:done']);
		// herdr drops the pane when its last process is reaped, a moment after the kill (seen under load).
		await eventually('the killed pane gone from herdr', async () => !(await mux.listPanes()).some(p => p.id === agent.paneId));
		const table = await createProcessTable().list();
		for (const p of pids) expect(table.some(t => t.pid === p.pid && t.startTime === p.startTime)).toBe(false);
	});

	it('resumes into a new herdr pane: the exact resume argv typed into a shell in the session cwd', async () => {
		world = createTestWorld('mam-resume-herdr-');
		const id = crypto.randomUUID();
		writeFixtureConversation(world.home, {id, cwd: world.project});
		const row = world.registry.insert({name: 'again', agent: 'claude', cwd: world.project, agentSessionId: id, status: 'stopped', epoch: 0});
		const before = readStandinRecords(resumeStandin.recordFile).length;
		const result = await createActions(world.deps(mux)).resume({name: row.name});
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		const record = await eventually('the resumed stand-in', () => readStandinRecords(resumeStandin.recordFile)[before]);
		expect(record.argv).toEqual(['claude', '--resume', id]);
		expect(record.cwd).toBe(world.project);
		expect(world.registry.get('again')).toMatchObject({status: 'running', mux: 'herdr', paneId: result.value.paneId});
		const stopped = await createActions(world.deps(mux)).stop({name: 'again'}, FAST);
		expect(stopped.ok && stopped.value.endedBy).toBe('exit-input');
	});
});
