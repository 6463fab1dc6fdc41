import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import type {Pane} from '../../src/domain/types.js';
import {reducer, type Action} from '../../src/store/reducer.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore, type Store} from '../../src/store/store.js';
import {startSupervisor, superviseWhenReady, tickRefresh, type Supervisor} from '../../src/sync/supervisor.js';
import type {LiveSnapshot} from '../../src/sync/snapshot.js';
import {adaptersWith, conversation, countingAdapter, ctx, MemoryMux, pane, proc, row, staticProcesses, UUID} from './support.js';
import {eventually} from '../helpers/poll.js';

let supervisor: Supervisor | undefined;
afterEach(async () => {
	await supervisor?.dispose();
	supervisor = undefined;
});

function setup(mux: MemoryMux | null, rows = [row({name: 'a', paneId: 'w1:p1'})]) {
	const store: Store<AppState, Action> = createStore(reducer, initialState({sessions: rows}));
	const snapshots: LiveSnapshot[] = [];
	const adapter = countingAdapter('claude');
	supervisor = startSupervisor({
		store,
		mux,
		...(mux ? {} : {muxProblem: 'no backend'}),
		ctx,
		processes: staticProcesses([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)]),
		discoverySeconds: 3600,
		coalesceMs: 20,
		adapters: adaptersWith(adapter),
		onSnapshot: s => snapshots.push(s),
	});
	return {store, snapshots, adapter};
}

describe('supervisor', () => {
	it('puts panes, per-session live data and mux health into the store', async () => {
		const mux = new MemoryMux();
		mux.panes = [pane('w1:p1', {agent: 'claude', agentStatus: 'idle', processes: [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)]})];
		const {store} = setup(mux);
		await supervisor?.refresh();
		const state = store.getState();
		expect(state.panes.map(p => p.id)).toEqual(['w1:p1']);
		expect(state.live['a']).toMatchObject({liveStatus: 'idle', pane: {id: 'w1:p1'}});
		expect(state.mux).toMatchObject({kind: 'herdr', ok: true});
	});

	it('gathers a burst of mux events into one refresh, with no disk rescan', async () => {
		const mux = new MemoryMux();
		const {snapshots, adapter} = setup(mux, [row({name: 'a', paneId: 'w1:p1', cwd: '/w/one'})]);
		await supervisor?.refresh();
		const lists = mux.listCalls;
		const discovers = adapter.calls.discover;
		for (let i = 0; i < 10; i++) mux.emit({type: 'pane-created', paneId: `w1:p${i + 2}`});
		mux.emit({type: 'changed'});
		const before = snapshots.length;
		await eventually('a refresh', () => (snapshots.length > before ? true : undefined), {retryErrors: true});
		await supervisor?.refresh();
		// The burst cost one listing; the explicit refresh one more.
		expect(mux.listCalls - lists).toBe(2);
		expect(adapter.calls.discover).toBe(discovers);
	});

	it('a refresh that finds nothing new leaves the store alone (no frame); a changed pane reaches it', async () => {
		const mux = new MemoryMux();
		mux.panes = [pane('w1:p1', {agent: 'claude', agentStatus: 'idle', processes: [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)]})];
		const {store, snapshots} = setup(mux);
		await supervisor?.refresh();
		let changes = 0;
		const stop = store.subscribe(() => (changes += 1));
		await supervisor?.refresh({rescan: true});
		await supervisor?.refresh();
		expect(snapshots.length).toBeGreaterThanOrEqual(3);
		expect(changes).toBe(0);
		mux.panes = [pane('w1:p1', {agent: 'claude', agentStatus: 'blocked', processes: [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)]})];
		await supervisor?.refresh();
		stop();
		expect(changes).toBe(1);
		expect(store.getState().live['a']?.liveStatus).toBe('blocked');
	});

	it('a health change reaches the store at once, without a listing', async () => {
		const mux = new MemoryMux();
		const {store} = setup(mux);
		await supervisor?.refresh();
		const lists = mux.listCalls;
		mux.emit({type: 'health', health: {kind: 'herdr', ok: false, message: 'herdr event stream lost; reconnecting in 1 s'}});
		expect(store.getState().mux).toMatchObject({ok: false, message: expect.stringContaining('reconnecting')});
		expect(mux.listCalls).toBe(lists);
	});

	it('a registry change refreshes so the new row gets its live data', async () => {
		const mux = new MemoryMux();
		mux.panes = [pane('w1:p7', {agent: 'claude', agentStatus: 'blocked'})];
		const {store} = setup(mux);
		await supervisor?.refresh();
		store.dispatch({type: 'registry/loaded', sessions: [...store.getState().sessions, row({name: 'new', paneId: 'w1:p7'})], at: 1});
		await eventually('live data for the new row', () => (store.getState().live['new']?.liveStatus === 'blocked' ? true : undefined), {retryErrors: true});
	});

	it('an unreachable mux still yields live data from the registry and a health that says why', async () => {
		const mux = new MemoryMux();
		mux.fail = 'no herdr socket at /x';
		const {store} = setup(mux);
		await supervisor?.refresh();
		expect(store.getState().mux).toMatchObject({ok: false, message: 'no herdr socket at /x'});
		expect(store.getState().live['a']?.liveStatus).toBe('unknown');
	});

	it('without a backend at all, live data still comes from the registry', async () => {
		const {store} = setup(null);
		await supervisor?.refresh();
		expect(store.getState().live['a']).toBeDefined();
		expect(store.getState().panes).toEqual([]);
	});

	it('dispose unsubscribes from the mux and stops refreshing', async () => {
		const mux = new MemoryMux();
		setup(mux);
		await supervisor?.refresh();
		expect(mux.listenerCount()).toBe(1);
		await supervisor?.dispose();
		supervisor = undefined;
		expect(mux.listenerCount()).toBe(0);
		const lists = mux.listCalls;
		mux.emit({type: 'changed'});
		await new Promise(resolve => setImmediate(resolve));
		expect(mux.listCalls).toBe(lists);
	});

	it('superviseWhenReady waits for the backend, and survives one that failed to start', async () => {
		const store = createStore(reducer, initialState({sessions: [row({name: 'a'})]}));
		const s = superviseWhenReady(Promise.reject(new Error('herdr socket refused')), {store, ctx, processes: staticProcesses(), discoverySeconds: 3600});
		await s.refresh();
		expect(store.getState().live['a']).toBeDefined();
		await s.dispose();
	});
});

describe('supervisor: file changes', () => {
	it('takes the first file change after a quiet spell at once, not at the end of the coalescing window', async () => {
		const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-sup-')));
		try {
			const stamp = path.join(dir, 'app.stamp');
			fs.writeFileSync(stamp, '1');
			const store: Store<AppState, Action> = createStore(reducer, initialState({sessions: [row({name: 'a', cwd: dir})]}));
			const adapter = countingAdapter('claude');
			adapter.watch = [stamp];
			adapter.conversations = [conversation(UUID(1), {cwd: dir, updatedAt: 1})];
			supervisor = startSupervisor({
				store,
				mux: null,
				muxProblem: 'no backend',
				ctx,
				processes: staticProcesses([]),
				discoverySeconds: 3600,
				// A window no test waits out: the change must not wait for it.
				coalesceMs: 3_600_000,
				adapters: adaptersWith(adapter),
			});
			const shows = (updatedAt: number) => () => (store.getState().conversations.some(c => c.updatedAt === updatedAt) ? true : undefined);
			await eventually('the first listing', shows(1), {retryErrors: true});
			adapter.conversations = [conversation(UUID(1), {cwd: dir, updatedAt: 2})];
			fs.appendFileSync(stamp, '2');
			await eventually('the change, before the window ends', shows(2), {retryErrors: true});
		} finally {
			await supervisor?.dispose();
			supervisor = undefined;
			fs.rmSync(dir, {recursive: true, force: true});
		}
	});
});

describe('supervisor: agent status events', () => {
	/** A mux whose next listing waits until `release()` (the herdr round trip, held open). */
	class HeldMux extends MemoryMux {
		private gate: Promise<void> | undefined;
		release: () => void = () => undefined;
		hold(): void {
			this.gate = new Promise(resolve => (this.release = resolve));
		}
		override async listPanes(): Promise<readonly Pane[]> {
			await this.gate;
			return super.listPanes();
		}
	}
	const claudeIn = (id: string, agentStatus: Pane['agentStatus'], agent = 'claude') =>
		pane(id, {agent, agentStatus, processes: [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)]});

	it("shows a pane's new status from the event at once, then the listing's picture", async () => {
		const mux = new HeldMux();
		mux.panes = [claudeIn('w1:p1', 'idle'), pane('w1:p2', {agentStatus: 'idle', processes: [proc(20, 'sh')]})];
		const {store} = setup(mux, [row({name: 'a', paneId: 'w1:p1'}), row({name: 'b', paneId: 'w1:p2'})]);
		await supervisor?.refresh();
		expect(store.getState().live['a']?.liveStatus).toBe('idle');
		expect(store.getState().live['b']?.liveStatus).toBe('exited');
		const untouched = store.getState().live['b'];
		const listed = mux.listCalls;
		mux.hold();
		mux.panes = [claudeIn('w1:p1', 'working'), mux.panes[1] as Pane];
		mux.emit({type: 'agent-status', paneId: 'w1:p1', status: 'working'});
		// Before any listing (the one the event asked for is held): the event alone.
		expect(mux.listCalls).toBe(listed);
		expect(store.getState().panes.find(p => p.id === 'w1:p1')?.agentStatus).toBe('working');
		expect(store.getState().live['a']).toMatchObject({liveStatus: 'working', pane: {id: 'w1:p1', agentStatus: 'working'}});
		expect(store.getState().live['b']).toBe(untouched);
		// A shell pane's status event does not make its row's agent run there.
		mux.emit({type: 'agent-status', paneId: 'w1:p2', status: 'working'});
		expect(store.getState().live['b']?.liveStatus).toBe('exited');
		mux.release();
		await eventually('the listing after the event', () => (mux.listCalls > listed ? true : undefined), {retryErrors: true});
		await supervisor?.refresh();
		expect(store.getState().live['a']).toMatchObject({liveStatus: 'working', pane: {agentStatus: 'working'}});
		expect(store.getState().live['b']?.liveStatus).toBe('exited');
	});

	it('a disk-only refresh after a status event keeps the status the event showed', async () => {
		const mux = new HeldMux();
		mux.panes = [claudeIn('w1:p1', 'idle')];
		const {store} = setup(mux);
		await supervisor?.refresh();
		mux.hold();
		mux.emit({type: 'agent-status', paneId: 'w1:p1', status: 'working'});
		expect(store.getState().live['a']?.liveStatus).toBe('working');
		// A file changed: the refresh reuses the last listing, which must carry the event's status.
		await supervisor?.refresh({rescan: true, panes: false});
		expect(store.getState().live['a']?.liveStatus).toBe('working');
		mux.release();
	});

	it('waits for the listing when the event names another agent than the pane has', async () => {
		const mux = new HeldMux();
		mux.panes = [claudeIn('w1:p1', 'idle')];
		const {store} = setup(mux);
		await supervisor?.refresh();
		mux.hold();
		mux.emit({type: 'agent-status', paneId: 'w1:p1', status: 'working', agent: 'codex'});
		expect(store.getState().live['a']?.liveStatus).toBe('idle');
		mux.release();
	});
});

describe('the discovery tick (5 s by default)', () => {
	it('looks at the disk only when the discovery cache wants it, lists every minute, stats everything every five', () => {
		expect(tickRefresh(1, false)).toBeUndefined();
		expect(tickRefresh(5, true)).toEqual({rescan: true, panes: false});
		// A minute: panes and processes again, the disk only where a change was seen.
		expect(tickRefresh(12, false)).toEqual({rescan: true, full: false});
		expect(tickRefresh(48, true)).toEqual({rescan: true, full: false});
		// Five minutes: every watch path stat()ed too, in case the folder watch missed an event.
		expect(tickRefresh(60, false)).toEqual({rescan: true, full: true});
		expect(tickRefresh(120, true)).toEqual({rescan: true, full: true});
	});
});
