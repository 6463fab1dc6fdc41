import {describe, expect, it} from 'vitest';
import {confirmPurge, expectedConfirmation} from '../../src/actions/purge.js';
import {refusal} from '../../src/actions/types.js';
import type {SessionRecord} from '../../src/domain/types.js';
import {parseResumeState, rowsOf, type HostsHub} from '../../src/remote/hub.js';
import type {HostActions} from '../../src/remote/remoteActions.js';
import {routedActions} from '../../src/remote/router.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {parkedFreed, parkedSummary, visibleSessions} from '../../src/store/selectors.js';

const row = (name: string, host?: string): SessionRecord => ({
	id: 1,
	name,
	agent: 'claude',
	cwd: '/w',
	mux: 'tmux',
	paneId: null,
	agentSessionId: null,
	status: 'running',
	epoch: 0,
	createdAt: 0,
	updatedAt: 0,
	version: 1,
	extra: {},
	...(host ? {host} : {}),
});

function recorder(where: string, calls: string[]): HostActions {
	const no = async () => refusal('unsupported', 'no');
	return {
		fixFinding: async key => (calls.push(`${where} fix ${key}`), no()),
		resume: async ref => (calls.push(`${where} resume ${JSON.stringify(ref)}`), no()),
		stop: async ref => (calls.push(`${where} stop ${JSON.stringify(ref)}`), {ok: true, value: {} as never}),
		purgePlan: async ref => {
			calls.push(`${where} plan ${JSON.stringify(ref)}`);
			return {
				ok: true,
				value: {
					agent: 'claude',
					id: 'i',
					label: 'name' in ref ? ref.name : ref.id,
					plan: {agent: 'claude', id: 'i', descendants: [], items: [], totalBytes: 0},
					fingerprint: 'f',
				},
			};
		},
		expectedConfirmation,
		confirmPurge,
		purge: async (plans, typed) => (
			calls.push(`${where} purge ${plans.map(p => p.label).join(',')} typed=${typed}`),
			{ok: true, value: plans.map(p => ({agent: p.agent, id: p.id, trashId: `${where}-trash-${p.label}`, residual: []}) as never)}
		),
		newSession: no,
		adopt: no,
		restore: async purgeId => (calls.push(`${where} restore ${purgeId}`), no()),
		trashList: no,
		trashEmptyOne: no,
		park: async () => [],
		wake: async () => [],
	};
}

describe("a row's action goes to its machine", () => {
	it('routes by the row, strips the host from the name, and refuses a name two rows share', async () => {
		const calls: string[] = [];
		const hub: HostsHub = {actionsFor: h => (h === 'devbox' ? recorder('devbox', calls) : undefined), dispose: () => undefined};
		let rows = [row('api'), row('devbox:api', 'devbox')];
		const actions = routedActions(recorder('local', calls), hub, () => rows);
		await actions.stop({name: 'api'});
		await actions.stop({name: 'devbox:api'});
		expect(calls).toEqual(['local stop {"name":"api"}', 'devbox stop {"name":"api"}']);
		rows = [row('devbox:api'), row('devbox:api', 'devbox')];
		calls.length = 0;
		expect(await actions.stop({name: 'devbox:api'})).toMatchObject({ok: false, error: {kind: 'bad-input'}});
		expect(calls).toEqual([]);
	});

	it("a host's purge is confirmed as host:name here and as name there", async () => {
		const calls: string[] = [];
		const hub: HostsHub = {actionsFor: () => recorder('devbox', calls), dispose: () => undefined};
		const actions = routedActions(recorder('local', calls), hub, () => [row('devbox:old', 'devbox')]);
		const plan = await actions.purgePlan({name: 'devbox:old'});
		if (!plan.ok) throw new Error('no plan');
		expect(actions.expectedConfirmation([plan.value])).toBe('devbox:old');
		expect(await actions.purge([plan.value], 'old')).toMatchObject({ok: false, error: {kind: 'not-confirmed'}});
		expect(await actions.purge([plan.value], 'devbox:old')).toMatchObject({ok: true});
		expect(calls).toEqual(['devbox plan {"name":"old"}', 'devbox purge old typed=old']);
		// `u` right after: the purge's trash entry is restored on the machine that holds it.
		calls.length = 0;
		await actions.restore('devbox-trash-old');
		expect(calls).toEqual(['devbox restore devbox-trash-old']);
	});
});

describe("a host's rows in the store", () => {
	it('keep every status the host reports, parked included', () => {
		const ids = new Map<string, number>();
		let n = 0;
		const sessions = (['running', 'stopped', 'parked'] as const).map(status => ({
			name: status,
			agent: 'codex',
			status,
			cwd: '/r',
			epoch: '2026-01-01T00:00:00.000Z',
		}));
		const rows = rowsOf(
			'devbox',
			{registry: '', sessions, panes: [], findings: [], conversations: [], attention: [], mux: {kind: 'tmux', ok: true, message: ''}},
			ids,
			() => --n,
		);
		expect(rows.sessions.map(s => [s.name, s.status])).toEqual([
			['devbox:running', 'running'],
			['devbox:stopped', 'stopped'],
			['devbox:parked', 'parked'],
		]);
	});

	it('come after local rows, keep local live data, and go when the host is removed', () => {
		const ids = new Map<string, number>();
		let n = 0;
		const rows = rowsOf(
			'devbox',
			{
				registry: '',
				sessions: [
					{
						name: 'api',
						agent: 'codex',
						status: 'running',
						liveStatus: 'blocked',
						resumeState: 'no: pane is live',
						cwd: '/r',
						epoch: '2026-01-01T00:00:00.000Z',
					},
				],
				panes: [],
				findings: [],
				conversations: [],
				attention: [],
				mux: {kind: 'tmux', ok: true, message: ''},
			},
			ids,
			() => --n,
		);
		let state = initialState({sessions: [row('zz')], live: {zz: {liveStatus: 'idle', resumeState: {kind: 'yes'}}}});
		state = reducer(state, {type: 'remote/updated', host: 'devbox', rows, hosts: [{name: 'devbox', state: 'up', rttMs: 3, message: '', since: 0}]});
		expect(visibleSessions(state).map(s => s.name)).toEqual(['zz', 'devbox:api']);
		expect(state.live['devbox:api']).toEqual({liveStatus: 'blocked', resumeState: {kind: 'no', reason: 'pane is live'}});
		state = reducer(state, {type: 'registry/loaded', sessions: [row('zz'), row('aa')], at: 1});
		expect(state.sessions.map(s => s.name)).toEqual(['zz', 'aa', 'devbox:api']);
		state = reducer(state, {type: 'live/updated', live: {zz: {liveStatus: 'working', resumeState: {kind: 'yes'}}}});
		expect(Object.keys(state.live).sort()).toEqual(['devbox:api', 'zz']);
		state = reducer(state, {
			type: 'remote/updated',
			host: 'devbox',
			rows: null,
			hosts: [{name: 'devbox', state: 'down', rttMs: null, message: 'connection refused', since: 0}],
		});
		expect(state.sessions.map(s => s.name)).toEqual(['zz', 'aa']);
		expect(Object.keys(state.live)).toEqual(['zz']);
		expect(parseResumeState('unknown: a: b')).toEqual({kind: 'unknown', reason: 'a: b'});
	});

	it("a parked host row shows the memory its park freed there, in the list and the status bar's sum", () => {
		const session = (name: string, parked?: unknown) => ({
			name,
			agent: 'opencode',
			status: parked ? 'parked' : 'running',
			cwd: '/r',
			...(parked ? {parked} : {}),
		});
		const view = {
			registry: '/r',
			sessions: [session('a', {at: '2026-01-01T00:00:00.000Z', freedBytes: 120e6, idleSeconds: 700}), session('b', {freedBytes: -1}), session('c')],
			panes: [],
			findings: [],
			conversations: [],
			attention: [],
			mux: {kind: 'tmux', ok: true, message: ''},
		};
		let n = 0;
		const rows = rowsOf('devbox', view, new Map(), () => --n);
		expect(rows.sessions.map(parkedFreed)).toEqual([120e6, undefined, undefined]);
		expect(parkedSummary(rows.sessions)).toEqual({count: 2, freedBytes: 120e6});
	});
});
