import {spawn} from 'node:child_process';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import type {StopProgress} from '../../src/actions/stop.js';
import {stopSession} from '../../src/actions/stop.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {agentPids, killLeftovers, startAgentInPane, startTimeOf} from './support/agents.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from './support/tmux.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {eventually} from '../helpers/poll.js';

const FAST = {graceMs: 1500, killWaitMs: 1500};

let server: TmuxServer;
let mux: Multiplexer;
let world: TestWorld;
const cleanup: Array<{pid: number; startTime: number}> = [];

beforeAll(async () => {
	server = await startTmuxServer({PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp'});
	mux = await tmuxBackend(server);
});

afterAll(async () => {
	await mux.dispose();
	await server.kill();
	killLeftovers(cleanup);
	disposeStandinScript();
});

afterEach(() => {
	killLeftovers(cleanup);
	world?.dispose();
});

function newWorld(): TestWorld {
	world = createTestWorld('mam-stop-');
	return world;
}

function steps(events: readonly StopProgress[]): string[] {
	// Ticks while waiting ("waiting for …") are for the live display; the step changes are what count.
	return events.filter(e => !e.message.startsWith('waiting')).map(e => `${e.step}:${e.state}`);
}

describe('stop escalation over a real tmux server', {timeout: 30_000}, () => {
	it('ends at step 1 when the agent obeys /exit', async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux, {children: 1});
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const events: StopProgress[] = [];
		const result = await createActions(w.deps(mux)).stop({name: agent.session.name}, {...FAST, onProgress: e => events.push(e)});
		expect(result.ok && result.value.endedBy).toBe('exit-input');
		expect(result.ok && result.value.survivors).toEqual([]);
		expect(steps(events)).toEqual(['capture:running', 'capture:done', 'exit-input:running', 'exit-input:done']);
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
		const row = w.registry.get(agent.session.name);
		expect(row?.status).toBe('stopped');
		const recorded = (row?.extra['stop'] as {processes: Array<{pid: number; startTime: number}>}).processes;
		expect(recorded.map(p => p.pid)).toContain(agent.record.pid);
		expect(recorded.find(p => p.pid === agent.record.pid)?.startTime).toBe(pids[0]?.startTime);
		const audit = w.registry.auditLog(agent.session.name).map(a => `${a.step ?? '-'}:${a.outcome}`);
		expect(audit).toEqual(['capture:started', 'capture:ok', 'exit-input:started', 'exit-input:ok', '-:ok']);
	});

	it('ends at step 2 when the agent ignores /exit but dies with its pane', async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux, {ignoreExit: true, children: 1});
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const events: StopProgress[] = [];
		const result = await createActions(w.deps(mux)).stop({name: agent.session.name}, {...FAST, onProgress: e => events.push(e)});
		expect(result.ok && result.value.endedBy).toBe('close-pane');
		expect(steps(events)).toEqual(['capture:running', 'capture:done', 'exit-input:running', 'exit-input:failed', 'close-pane:running', 'close-pane:done']);
		expect((await server.panes()).map(p => p.id)).not.toContain(agent.paneId);
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
		expect(w.registry.get(agent.session.name)?.paneId).toBeNull();
	});

	it('ends at step 3 with zero survivors when the agent ignores everything and leaves a child outside the pane', async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux, {ignoreExit: true, ignoreSignals: true, children: 1, orphan: true});
		const pids = agentPids(agent);
		expect(pids).toHaveLength(3);
		cleanup.push(...pids);
		const events: StopProgress[] = [];
		const result = await createActions(w.deps(mux)).stop({name: agent.session.name}, {...FAST, onProgress: e => events.push(e)});
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		expect(result.value.endedBy).toBe('sigkill');
		expect(result.value.survivors).toEqual([]);
		expect(steps(events)).toEqual([
			'capture:running',
			'capture:done',
			'exit-input:running',
			'exit-input:failed',
			'close-pane:running',
			'close-pane:failed',
			'sigkill:running',
			'sigkill:done',
		]);
		// Checked in the process table itself, not only in the outcome.
		const table = await createProcessTable().list();
		for (const p of pids) expect(table.some(t => t.pid === p.pid && t.startTime === p.startTime)).toBe(false);
		expect(w.registry.auditLog(agent.session.name).some(a => a.step === 'sigkill' && a.outcome === 'ok')).toBe(true);
	});

	it('never signals a pid whose start time differs from the captured one (pid reuse)', async () => {
		const w = newWorld();
		const bystander = spawn('sleep', ['600'], {stdio: 'ignore'});
		const pid = bystander.pid ?? -1;
		const startTime = startTimeOf(pid);
		cleanup.push({pid, startTime});
		const signalled: number[] = [];
		const deps = w.deps(mux, {
			kill: (target, signal) => {
				signalled.push(target);
				process.kill(target, signal);
			},
		});
		// A stopped row whose recorded process "is" the bystander's pid, but from another start.
		const row = w.registry.insert({
			name: 'reused',
			agent: 'claude',
			cwd: w.project,
			status: 'stopped',
			epoch: 0,
			extra: {stop: {processes: [{pid, ppid: 1, startTime: startTime + 1, name: 'claude', argv: []}]}},
		});
		const result = await stopSession(deps, row, FAST);
		expect(result.ok && result.value.endedBy).toBe('nothing-running');
		expect(signalled).not.toContain(pid);
		expect(aliveWithStart(pid, startTime)).toBe(true);

		// Control: with its real start time the same leftover is ended at step 3.
		const same = w.registry.insert({
			name: 'leftover',
			agent: 'claude',
			cwd: w.project,
			status: 'stopped',
			epoch: 0,
			extra: {stop: {processes: [{pid, ppid: 1, startTime, name: 'sleep', argv: ['sleep']}]}},
		});
		const killed = await stopSession(deps, same, FAST);
		expect(killed.ok && killed.value.endedBy).toBe('sigkill');
		expect(signalled).toContain(pid);
		expect(aliveWithStart(pid, startTime)).toBe(false);
	});

	it('does not close a pane that got a new process while the stop ran', async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux, {ignoreExit: true, ignoreSignals: true});
		const pids = agentPids(agent);
		cleanup.push(...pids);
		let respawned: Promise<string> | undefined;
		const onProgress = (e: StopProgress) => {
			if (e.step === 'exit-input' && e.state === 'running' && !respawned) {
				// The user (or herdr) reuses the pane for something else mid-stop.
				respawned = server.run(['respawn-pane', '-k', '-t', agent.paneId, 'sleep', '600']);
			}
		};
		const result = await stopSession(w.deps(mux), agent.session, {...FAST, onProgress});
		await respawned;
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		const pane = (await server.panes()).find(p => p.id === agent.paneId);
		expect(pane).toBeDefined();
		expect(pane?.pid).not.toBe(agent.record.pid);
		cleanup.push({pid: pane?.pid ?? -1, startTime: startTimeOf(pane?.pid ?? -1)});
		expect(result.value.paneClosed).toBe(false);
		expect(result.value.notes.join('\n')).toMatch(/now runs another process.*not closed/);
		// The old agent (same pid and start time) is still ended; the new process is untouched.
		expect(result.value.endedBy).toBe('sigkill');
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
		expect(aliveWithStart(pane?.pid ?? -1, startTimeOf(pane?.pid ?? -1))).toBe(true);
	});

	it('types nothing into a pane that got a new process before step 1', async () => {
		const w = newWorld();
		const old = await startAgentInPane(w, mux, {ignoreExit: true, ignoreSignals: true});
		const oldPids = agentPids(old);
		cleanup.push(...oldPids);
		const next = installTestStandin(`${w.dir}/next-bin`, 'claude', {});
		const table = createProcessTable();
		let reused = false;
		// The pane is reused right after the capture read the process table.
		const processes = {
			...table,
			list: async () => {
				const all = await table.list();
				if (!reused) {
					reused = true;
					await server.run(['respawn-pane', '-k', '-t', old.paneId, next.file]);
					// Ready to read, so anything typed into the pane from now on would reach it.
					await eventually('the new process', () => readStandinRecords(next.recordFile)[0]);
					await eventually('its prompt', async () => (await mux.readOutput(old.paneId, 20)).includes('to quit'));
				}
				return all;
			},
		};
		const result = await stopSession(w.deps(mux, {processes}), old.session, FAST);
		const fresh = await eventually('the new process', () => readStandinRecords(next.recordFile)[0]);
		const freshStart = startTimeOf(fresh.pid);
		cleanup.push({pid: fresh.pid, startTime: freshStart});
		expect(result.ok && result.value.notes.join('\n')).toMatch(/now runs another process/);
		expect(aliveWithStart(fresh.pid, freshStart)).toBe(true);
		expect(await mux.readOutput(old.paneId, 30)).not.toMatch(/\/exit$/m);
		expect((await server.panes()).map(p => p.id)).toContain(old.paneId);
		for (const p of oldPids) expect(aliveWithStart(p.pid, p.startTime)).toBe(false);
	});

	it('ends a leftover recorded with only pid and start time, and skips malformed records', async () => {
		const w = newWorld();
		const leftover = spawn('sleep', ['600'], {stdio: 'ignore'});
		const pid = leftover.pid ?? -1;
		const startTime = startTimeOf(pid);
		cleanup.push({pid, startTime});
		const row = w.registry.insert({
			name: 'partial',
			agent: 'claude',
			cwd: w.project,
			status: 'stopped',
			epoch: 0,
			extra: {stop: {processes: [{pid, startTime}, {pid: 'x'}, null, 7, {startTime: 1}]}},
		});
		const result = await stopSession(w.deps(mux), row, FAST);
		expect(result.ok && result.value.endedBy).toBe('sigkill');
		expect(aliveWithStart(pid, startTime)).toBe(false);
	});

	it('never signals mam-tui itself or its ancestors, even when a record names them', async () => {
		const w = newWorld();
		const signalled: number[] = [];
		const deps = w.deps(mux, {kill: target => signalled.push(target)});
		const own = [process.pid, process.ppid].map(pid => ({pid, ppid: 0, startTime: startTimeOf(pid), name: 'node', argv: []}));
		const row = w.registry.insert({name: 'self', agent: 'claude', cwd: w.project, status: 'stopped', epoch: 0, extra: {stop: {processes: own}}});
		const result = await stopSession(deps, row, FAST);
		expect(result.ok && result.value.endedBy).toBe('nothing-running');
		expect(signalled).toEqual([]);
	});

	it("refuses to stop mam-tui's own pane and types nothing into it", async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux, {});
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const selfMux = await tmuxBackend(server, agent.paneId);
		const result = await createActions(w.deps(selfMux)).stop({name: agent.session.name}, FAST);
		expect(result.ok).toBe(false);
		expect(!result.ok && result.error.kind).toBe('self-pane');
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(true);
		expect(await mux.readOutput(agent.paneId, 20)).not.toMatch(/^> \/exit/m);
		expect(w.registry.get(agent.session.name)?.status).toBe('running');
	});

	it('reports a session whose pane is gone as nothing-running and marks it stopped', async () => {
		const w = newWorld();
		const row = w.registry.insert({name: 'ghost', agent: 'claude', cwd: w.project, mux: 'tmux', paneId: '%9999', status: 'running', epoch: 0});
		const result = await stopSession(w.deps(mux), row, FAST);
		expect(result.ok && result.value.endedBy).toBe('nothing-running');
		expect(w.registry.get('ghost')?.status).toBe('stopped');
	});

	it('refuses a session recorded in another multiplexer', async () => {
		const w = newWorld();
		const row = w.registry.insert({name: 'elsewhere', agent: 'claude', cwd: w.project, mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: 0});
		const result = await stopSession(w.deps(mux), row, FAST);
		expect(!result.ok && result.error.kind).toBe('mux-mismatch');
	});

	it('stops an unknown session name with not-found', async () => {
		const w = newWorld();
		const result = await createActions(w.deps(mux)).stop({name: 'nope'});
		expect(!result.ok && result.error.kind).toBe('not-found');
		await eventually('nothing', () => true);
	});
});

// Issue 17 item 3: a pane id of another (or a restarted) tmux server is another pane; stopping a
// row recorded in one server never signals the process that now has its pane id in another.
describe('stop and the pane server', {timeout: 30_000}, () => {
	it('leaves alone the agent in a same-id pane of another server', async () => {
		const w = newWorld();
		const agent = await startAgentInPane(w, mux);
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const listed = (await mux.listPanes()).find(p => p.id === agent.paneId);
		expect(listed?.server).toMatch(/^tmux:/);
		// The row was recorded in another server (the one before a restart).
		w.registry.update(agent.session.id, {extra: {paneServer: 'tmux:/tmp/elsewhere:1:1'}});
		const result = await createActions(w.deps(mux)).stop({name: agent.session.name}, {graceMs: 1000, killWaitMs: 1000});
		expect(result.ok && result.value.endedBy).toBe('nothing-running');
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(true);
		expect((await mux.listPanes()).map(p => p.id)).toContain(agent.paneId);
	});
});
