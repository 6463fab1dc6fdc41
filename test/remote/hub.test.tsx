import {PassThrough} from 'node:stream';
import {renderToString} from 'ink';
import {afterEach, describe, expect, it} from 'vitest';
import {AppProvider} from '../../components/StoreContext.js';
import {SessionsScreen} from '../../components/screens/SessionsScreen.js';
import type {Actions} from '../../src/actions/index.js';
import {confirmPurge, expectedConfirmation} from '../../src/actions/purge.js';
import {refusal} from '../../src/actions/types.js';
import type {HostConfig} from '../../src/config/hosts.js';
import type {Channel} from '../../src/remote/channel.js';
import type {HostStatus} from '../../src/remote/client.js';
import {hostRowOf, rowsOf, startHosts, type HostsHub, type RowMemo} from '../../src/remote/hub.js';
import type {HostView} from '../../src/remote/protocol.js';
import {routedActions} from '../../src/remote/router.js';
import {serve, type ServeSource} from '../../src/remote/serve.js';
import {reducer} from '../../src/store/reducer.js';
import {selectSessionsView} from '../../src/store/selectors.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {eventually} from '../helpers/poll.js';
import {fakeActions as uiActions} from '../components/fakeActions.js';
import {session} from '../components/fixtures.js';

/** The dashboard's side of many machines: the hub's rows in the store, as a host comes and goes. */

const HOST: HostConfig = {name: 'devbox', ssh: 'me@devbox', sshOptions: {}, command: ['mam-tui']};
const view = (sessions: Record<string, unknown>[]): HostView => ({
	registry: '/r',
	sessions,
	panes: [],
	findings: [],
	conversations: [],
	attention: [],
	mux: {kind: 'tmux', ok: true, message: 'ok'},
});

function recordingActions(calls: string[], purgeId = '20260101-000000-aaaa'): Actions {
	const no = async () => refusal('unsupported', 'not in this fake');
	return {
		resume: no,
		stop: async ref => (calls.push(`stop ${JSON.stringify(ref)}`), {ok: true, value: {} as never}),
		purgePlan: no,
		expectedConfirmation,
		confirmPurge,
		purge: no,
		newSession: no,
		adopt: no,
		restore: async purgeId => (calls.push(`restore ${purgeId}`), {ok: true, value: {} as never}),
		trashList: async () => ({
			ok: true,
			value: [{purgeId, agent: 'claude', conversation: 'c1', label: 'old', state: 'done', createdAt: 0, ageMs: 0, bytes: 1, items: 1}],
		}),
		trashEmptyOne: async purgeId => (calls.push(`empty ${purgeId}`), {ok: true, value: undefined as never}),
		park: async selection =>
			'names' in selection
				? selection.names.map(s => {
						calls.push(`park ${s}`);
						return {session: s, outcome: 'refused', check: 'idle', why: 'working'} as const;
					})
				: [],
		wake: async selection =>
			'names' in selection
				? selection.names.map(s => {
						calls.push(`wake ${s}`);
						return {session: s, outcome: 'refused', kind: 'not-parked', why: 'running'} as const;
					})
				: [],
	};
}

const cuts: (() => void)[] = [];
const hubs: HostsHub[] = [];
afterEach(() => {
	for (const hub of hubs.splice(0)) hub.dispose();
	for (const cut of cuts.splice(0)) cut();
});

/** A hub with one host whose first channel is a real serve over streams; later ones are refused at once. */
function hubWithHost(calls: string[], localCalls: string[] = []) {
	let current = view([
		{name: 'a', agent: 'claude', status: 'running', liveStatus: 'idle', resumeState: 'no: pane is live'},
		{name: 'b', agent: 'claude', status: 'stopped'},
	]);
	const listeners = new Set<() => void>();
	const source: ServeSource = {
		view: () => current,
		subscribe: fn => (listeners.add(fn), () => listeners.delete(fn)),
		ready: async () => undefined,
		fix: async () => ({ok: false, error: {kind: 'unsupported', message: 'not in this test'}}),
		dispose: async () => undefined,
	};
	let opened = 0;
	let cutFirst: () => void = () => undefined;
	const open = (): Channel => {
		opened++;
		if (opened > 1) {
			const errors = new PassThrough();
			errors.end('ssh: connect to host devbox port 22: Connection refused\n');
			return {input: new PassThrough(), output: new PassThrough(), errors, ended: Promise.resolve(255), close: () => undefined};
		}
		const toServe = new PassThrough();
		const fromServe = new PassThrough();
		let end: (code: number | null) => void = () => undefined;
		void serve({input: toServe, output: fromServe, version: '9.9.9', actions: recordingActions(calls), source: () => source});
		cutFirst = () => {
			toServe.end();
			end(255);
		};
		cuts.push(cutFirst);
		return {input: fromServe, output: toServe, ended: new Promise(resolve => (end = resolve)), close: cutFirst};
	};
	const store = createStore(reducer, initialState({sessions: [session({name: 'here'})]}));
	const hub = startHosts({hosts: [HOST], store, audit: () => undefined, open});
	hubs.push(hub);
	const actions = routedActions(
		recordingActions(localCalls, '20260101-000000-bbbb'),
		hub,
		() => store.getState().sessions,
		() => ['devbox'],
	);
	return {
		store,
		hub,
		actions,
		cut: () => cutFirst(),
		change(next: HostView) {
			current = next;
			for (const fn of listeners) fn();
		},
	};
}

function frame(state: AppState): string {
	const store = createStore(reducer, state);
	return renderToString(
		<AppProvider store={store} actions={uiActions()}>
			<SessionsScreen state={selectSessionsView(state)} height={14} width={120} home="/home/u" now={0} />
		</AppProvider>,
		{columns: 120},
	);
}

describe('a host that goes down', () => {
	it('keeps its rows, greyed with its state and since when; their actions refuse with a message and send nothing', async () => {
		const calls: string[] = [];
		const {store, actions, cut} = hubWithHost(calls);
		await eventually("devbox's rows", () => (store.getState().sessions.some(s => s.name === 'devbox:a') ? true : undefined));
		expect(frame(store.getState())).toMatch(/devbox\s+a\s+claude\s+\S+\s+idle/);
		cut();
		await eventually('devbox down', () => (store.getState().hosts[0]?.state === 'down' ? true : undefined));
		const state = store.getState();
		expect(state.sessions.map(s => s.name)).toEqual(['here', 'devbox:a', 'devbox:b']);
		expect(state.hosts[0]).toMatchObject({name: 'devbox', state: 'down', since: expect.any(Number)});
		const shown = frame({...state, ui: {...state.ui, cursor: 1}});
		expect(shown).toMatch(/devbox\s+a\s+claude\s+\S+\s+down\s/);
		expect(shown).toMatch(/devbox down since \d\d:\d\d:\d\d: \S.*Shown as it last reported/);
		const stopped = await actions.stop({name: 'devbox:a'});
		expect(stopped).toMatchObject({ok: false, error: {kind: 'failed'}});
		if (!stopped.ok) expect(stopped.error.message).toMatch(/^devbox is (down|connecting) since \d\d:\d\d:\d\d \(.+\); nothing was sent/);
		expect(calls).toEqual([]);
	});
});

describe('what a push costs here', () => {
	it('a ping within its jitter leaves the host row as shown; a real change does not', () => {
		const status = (rttMs: number | null, state: HostStatus['state'] = 'up'): HostStatus => ({
			name: 'devbox',
			state,
			rttMs,
			message: 'mam-tui 1, protocol 1',
			since: 1,
		});
		const shown = hostRowOf(status(12), undefined);
		expect(hostRowOf(status(13), shown)).toBe(shown);
		expect(hostRowOf(status(10), shown)).toBe(shown);
		expect(hostRowOf(status(40), shown)).toMatchObject({rttMs: 40});
		expect(hostRowOf(status(null, 'down'), shown)).toMatchObject({state: 'down'});
	});

	it('a change to one session rebuilds that row only: the others keep their records and live entries', () => {
		const ids = new Map<string, number>();
		let n = 0;
		const memo: RowMemo = new WeakMap();
		const a = {name: 'a', status: 'running', liveStatus: 'idle', resumeState: 'yes'};
		const b = {name: 'b', status: 'running', liveStatus: 'idle', resumeState: 'yes'};
		const first = rowsOf('devbox', view([a, b]), ids, () => --n, memo);
		const second = rowsOf('devbox', view([a, {...b, liveStatus: 'working'}]), ids, () => --n, memo);
		expect(second.sessions[0]).toBe(first.sessions[0]);
		expect(second.live['devbox:a']).toBe(first.live['devbox:a']);
		expect(second.sessions[1]).not.toBe(first.sessions[1]);
		expect(second.sessions[1]?.id).toBe(first.sessions[1]?.id);
		expect(second.live['devbox:b']?.liveStatus).toBe('working');
	});

	it('a push that leaves the sessions as they were dispatches nothing', async () => {
		const {store, change} = hubWithHost([]);
		await eventually("devbox's rows", () => (store.getState().sessions.some(s => s.name === 'devbox:a') ? true : undefined));
		const before = store.getState();
		change({
			...view([
				{name: 'a', agent: 'claude', status: 'running', liveStatus: 'idle', resumeState: 'no: pane is live'},
				{name: 'b', agent: 'claude', status: 'stopped'},
			]),
			mux: {kind: 'tmux', ok: false, message: 'flapped'},
		});
		await new Promise(resolve => setTimeout(resolve, 50));
		expect(store.getState()).toBe(before);
	});
});

describe("the dashboard's trash, park and wake reach a row's machine", () => {
	it("lists every machine's purges, restores and empties on the machine that holds one, parks and wakes there", async () => {
		const calls: string[] = [];
		const here: string[] = [];
		const {store, actions} = hubWithHost(calls, here);
		await eventually("devbox's rows", () => (store.getState().sessions.some(s => s.name === 'devbox:a') ? true : undefined));
		const listed = await actions.trashList();
		if (!listed.ok) throw new Error(listed.error.message);
		expect(listed.value.map(t => t.label)).toEqual(['old', 'devbox:old']);
		await actions.restore('20260101-000000-aaaa');
		await actions.trashEmptyOne('20260101-000000-aaaa');
		expect(await actions.park({names: ['devbox:a']})).toEqual([{session: 'devbox:a', outcome: 'refused', check: 'idle', why: 'working'}]);
		expect((await actions.wake({names: ['devbox:b']})).map(r => r.session)).toEqual(['devbox:b']);
		await actions.restore('20260101-000000-bbbb');
		expect(calls).toEqual(['restore 20260101-000000-aaaa', 'empty 20260101-000000-aaaa', 'park a', 'wake b']);
		expect(here).toEqual(['restore 20260101-000000-bbbb']);
	});
});
