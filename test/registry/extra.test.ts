import {afterEach, describe, expect, it} from 'vitest';
import {stopSession} from '../../src/actions/stop.js';
import {adapterFor} from '../../src/adapters/index.js';
import type {ProcessRef} from '../../src/domain/types.js';
import {detectDrift} from '../../src/drift/detect.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {
	adoptedByExtra,
	decodeProcess,
	paneServerExtra,
	purgeExtra,
	recordedProcesses,
	resumeExtra,
	stopExtra,
	withPaneServer,
} from '../../src/registry/extra.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {createTestWorld, type TestWorld} from '../actions/support/world.js';
import {row} from '../drift/builders.js';

describe('one codec per extra key', () => {
	it('reads back what it writes, and keeps the other keys', () => {
		const stop = {at: 5, endedBy: 'sigkill' as const, processes: [{pid: 7, ppid: 1, startTime: 70, name: 'claude', argv: ['claude']}], survivors: [7]};
		const extra = stopExtra.write({note: 'x'}, stop);
		expect(extra).toEqual({note: 'x', stop});
		expect(stopExtra.read(extra)).toEqual(stop);
		expect(stopExtra.remove(extra)).toEqual({note: 'x'});
		expect(resumeExtra.read(resumeExtra.write({}, {at: 1, pid: 2, paneId: '%3'}))).toEqual({at: 1, pid: 2, paneId: '%3'});
		expect(purgeExtra.read(purgeExtra.write({}, {state: 'done', at: 9, items: 2}))).toEqual({state: 'done', at: 9, items: 2});
		expect(adoptedByExtra.read(adoptedByExtra.write({}, 'drift'))).toBe('drift');
		expect(paneServerExtra.read(withPaneServer({}, 'tmux:/s:1:1'))).toBe('tmux:/s:1:1');
		expect(withPaneServer({a: 1}, undefined)).toEqual({a: 1});
	});

	it('drops what it cannot trust instead of throwing', () => {
		expect(stopExtra.read({stop: 'no'})).toBeUndefined();
		expect(stopExtra.read({stop: {processes: [null, 3, {pid: 'x'}, {pid: 5, startTime: 50}], endedBy: 'magic'}})).toEqual({
			processes: [{pid: 5, ppid: 0, startTime: 50, name: '', argv: []}],
			survivors: [],
		});
		expect(resumeExtra.read({resume: {pid: 1}})).toBeUndefined();
		expect(purgeExtra.read({purge: {state: 'gone', at: 1}})).toBeUndefined();
		expect(adoptedByExtra.read({adoptedBy: 'someone'})).toBeUndefined();
		expect(paneServerExtra.read({paneServer: ''})).toBeUndefined();
	});

	it('never trusts a pid that is not a positive integer (kill(0) and kill(-1) signal whole groups)', () => {
		for (const pid of [0, -1, 1.5, Number.NaN]) expect(decodeProcess({pid, startTime: 10})).toBeUndefined();
		expect(decodeProcess({pid: 3, startTime: Number.POSITIVE_INFINITY})).toBeUndefined();
		expect(decodeProcess({pid: 3, startTime: 10})?.pid).toBe(3);
	});
});

describe('drift and stop read the same recorded processes', () => {
	let world: TestWorld | undefined;
	afterEach(() => world?.dispose());

	const leftover: ProcessRef = {pid: 4242, ppid: 1, startTime: 777, name: 'claude', argv: ['claude']};
	const table = (alive: Set<number>): ProcessTable => ({
		list: async () => (alive.has(leftover.pid) ? [leftover] : []),
		get: async pid => (alive.has(pid) && pid === leftover.pid ? leftover : undefined),
		holders: async () => [],
	});
	const noMux = (): Promise<Multiplexer> => Promise.reject(new Error('a row without a pane needs no mux'));

	// Before one codec, drift read `extra.processes` (older rows) too, and stop did not: drift
	// offered "stop escalation: SIGKILL pid 4242" and the stop it offered ended nothing.
	it.each([
		['extra.stop.processes', {stop: {processes: [leftover]}}],
		['the older extra.processes', {processes: [leftover]}],
	])('a leftover recorded in %s is the stale process drift names and the one the stop kills', async (_where, extra) => {
		const stopped = row(1, {status: 'stopped', paneId: null, mux: null, agentSessionId: null, extra});
		expect(recordedProcesses(stopped)).toEqual([expect.objectContaining({pid: leftover.pid, startTime: leftover.startTime})]);
		const findings = detectDrift({sessions: [stopped], mux: null, panes: null, facts: new Map(), processes: [leftover]});
		expect(findings.find(f => f.kind === 'stale-process')?.offer).toContain(`SIGKILL pid ${leftover.pid}`);

		world = createTestWorld('mam-extra-');
		const alive = new Set([leftover.pid]);
		const killed: number[] = [];
		const deps = world.deps(undefined, {
			adapterFor,
			mux: noMux,
			processes: table(alive),
			kill: (pid, signal) => {
				killed.push(pid);
				if (signal === 'SIGKILL') alive.delete(pid);
			},
			selfPid: 999_999,
		});
		const registered = world.registry.insert({name: 'old', agent: 'claude', cwd: world.project, status: 'stopped', epoch: 0, extra});
		const clock = {t: 0, now: () => clock.t, sleep: async (ms: number) => void (clock.t += ms)};
		const result = await stopSession(deps, registered, {clock});
		expect(result.ok && result.value.endedBy).toBe('sigkill');
		expect(killed).toEqual([leftover.pid]);
	});
});
