import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {applyFix} from '../../src/actions/driftFix.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import type {Finding} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {findingsOf} from '../../src/remote/hub.js';
import {fixByKey} from '../../src/remote/source.js';
import {findingKey, hostView} from '../../src/remote/view.js';
import {reducer, type Action} from '../../src/store/reducer.js';
import {untrackedSummary} from '../../src/store/selectors.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore, type Store} from '../../src/store/store.js';
import {silentLogger} from '../../src/system/logger.js';
import {startAutoPin} from '../../src/ui/autoPin.js';
import {createUiController, type ControllerDeps} from '../../src/ui/controller.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import {tempDir} from '../helpers/tmp.js';

/**
 * Another machine's findings: the findings view lists them (named by host), and `f` asks that
 * machine to fix the finding it knows by its key. This machine's registry is never touched.
 */

let tmp: ReturnType<typeof tempDir>;
let registry: Registry;

beforeEach(() => {
	tmp = tempDir('mam-host-findings-');
	registry = Registry.open(path.join(tmp.dir, 'registry.db'));
});
afterEach(() => {
	registry.close();
	tmp.dispose();
});

const CWD = '/work/alpha';

/** An untracked pane as drift makes it on the machine that runs it. */
function untracked(paneId: string): Finding {
	return {
		kind: 'untracked-pane',
		paneId,
		message: `tmux pane ${paneId} runs Codex CLI, but no session row references it`,
		evidence: [`tmux: pane ${paneId} has agent codex (idle)`],
		candidates: ['01a2521c-6847-7a91-90a1-01cefa6b168f'],
		fix: {type: 'adopt-pane', paneId, agent: 'codex', cwd: CWD, mux: 'tmux'},
	};
}

/** A dashboard's controller on `store` and this test's registry, with no multiplexer (nothing here reaches one). */
function dashboard(store: Store<AppState, Action>, deps: Partial<ControllerDeps> = {}) {
	return createUiController({
		store,
		actions: {} as never,
		registry,
		mux: async () => {
			throw new Error('no multiplexer in this test');
		},
		logger: silentLogger,
		now: Date.now,
		refresh: () => undefined,
		quit: () => undefined,
		config: DEFAULT_CONFIG,
		adapterFor: () => undefined,
		discoverAll: async () => [],
		...deps,
	});
}

/** The host's findings as they reach this side: through the serve's view, then decoded here. */
function overTheWire(host: string, findings: readonly Finding[]): Finding[] {
	const state = initialState();
	const view = hostView({...state, findings}, '/r');
	return findingsOf(host, JSON.parse(JSON.stringify(view.findings)) as typeof view.findings);
}

describe("a host's findings", () => {
	it('arrive named by host, with the key the host knows them by and what its fix would do, and no fix of their own', () => {
		const [got] = overTheWire('devbox', [untracked('%1')]);
		expect(got).toMatchObject({
			kind: 'untracked-pane',
			paneId: '%1',
			candidates: ['01a2521c-6847-7a91-90a1-01cefa6b168f'],
			host: {name: 'devbox', key: findingKey(untracked('%1')), fix: `adopt pane %1 as a new codex session in ${CWD}`},
		});
		expect(got?.fix).toBeUndefined();
		const second = overTheWire('devbox', [{...untracked('%2'), sessionName: 'api', fix: undefined} as Finding])[0];
		expect(second?.sessionName).toBe('devbox:api');
		expect(second?.host?.fix).toBeUndefined();
		// An item without its key, kind or message is dropped, not guessed.
		expect(
			findingsOf('devbox', [
				{kind: 'untracked-pane', message: 'x'},
				{key: 'k', message: 'x'},
			]),
		).toEqual([]);
	});

	it("join this machine's in the store, stay when this machine's change, and leave with their host", () => {
		const local = untracked('%1');
		let state = reducer(initialState(), {type: 'live/updated', findings: [local]});
		state = reducer(state, {
			type: 'remote/updated',
			host: 'devbox',
			rows: {sessions: [], live: {}, findings: overTheWire('devbox', [untracked('%1')])},
			hosts: [{name: 'devbox', state: 'up', rttMs: 3, message: '', since: 0}],
		});
		expect(state.findings.map(f => `${f.host?.name ?? 'local'} ${f.paneId}`)).toEqual(['local %1', 'devbox %1']);
		// The first screen's hint counts both; a host's %1 is not this machine's %1.
		expect(untrackedSummary(state).count).toBe(2);
		state = reducer(state, {type: 'live/updated', findings: []});
		expect(state.findings.map(f => `${f.host?.name ?? 'local'} ${f.paneId}`)).toEqual(['devbox %1']);
		state = reducer(state, {type: 'remote/updated', host: 'devbox', rows: null, hosts: []});
		expect(state.findings).toEqual([]);
	});

	it('are never applied to this machine: not by the auto-pin, and `f` sends their key to their host', async () => {
		const pin: Finding = {
			kind: 'unpinned',
			sessionName: 'devbox:api',
			message: 'api has no pinned conversation',
			evidence: [],
			// A finding carrying a fix and a host is not one drift makes; the guard holds anyway.
			fix: {type: 'pin', sessionId: 1, agentSessionId: '01a2521c-6847-7a91-90a1-01cefa6b168f', named: 'process'},
			host: {name: 'devbox', key: 'k-pin', fix: 'pin 01a2521c'},
		};
		const store = createStore(reducer, initialState());
		const applied: Finding[] = [];
		const stop = startAutoPin({
			getState: () => store.getState(),
			subscribe: listener => store.subscribe(listener),
			apply: finding => (applied.push(finding), applyFix(registry, finding)),
			notify: () => undefined,
			refresh: () => undefined,
		});
		const [adopt] = overTheWire('devbox', [untracked('%1')]);
		store.dispatch({
			type: 'remote/updated',
			host: 'devbox',
			rows: {sessions: [], live: {}, findings: [adopt as Finding, pin]},
			hosts: [{name: 'devbox', state: 'up', rttMs: 3, message: '', since: 0}],
		});
		stop();
		expect(applied).toEqual([]);

		const sent: string[] = [];
		const controller = dashboard(store, {
			fixOnHost: async (host, key) => {
				sent.push(`${host} ${key}`);
				return {ok: true, value: {status: 'applied', message: 'codex-alpha: adopted pane %1'}};
			},
		});
		controller.applyFix(0);
		await expect.poll(() => store.getState().notices.at(-1)?.text).toBe('devbox: codex-alpha: adopted pane %1');
		expect(sent).toEqual([`devbox ${findingKey(untracked('%1'))}`]);
		expect(registry.list()).toEqual([]);
	});
});

describe('drift.fix on the host', () => {
	it('fixes the finding it sees now under that key, in its own registry, and nothing else', () => {
		const findings = [untracked('%1'), untracked('%2')];
		let reloads = 0;
		const answer = fixByKey(
			findings,
			findingKey(untracked('%2')),
			f => applyFix(registry, f),
			() => void reloads++,
		);
		expect(answer).toMatchObject({ok: true, value: {status: 'applied'}});
		expect(registry.list().map(r => r.paneId)).toEqual(['%2']);
		expect(reloads).toBe(1);
	});

	it('refuses a key it does not see (fixed, or changed since), a finding without a fix, and a finding of another machine', () => {
		const apply = (f: Finding) => applyFix(registry, f);
		expect(fixByKey([untracked('%1')], findingKey(untracked('%7')), apply, () => undefined)).toMatchObject({ok: false, error: {kind: 'not-found'}});
		const plain = {...untracked('%1'), fix: undefined} as Finding;
		expect(fixByKey([plain], findingKey(plain), apply, () => undefined)).toMatchObject({ok: false, error: {kind: 'unsupported'}});
		const relayed = {...untracked('%1'), host: {name: 'other', key: 'x'}};
		expect(fixByKey([relayed], findingKey(relayed), apply, () => undefined)).toMatchObject({ok: false, error: {kind: 'not-found'}});
		expect(registry.list()).toEqual([]);
	});
});

describe("a host's row in this dashboard's dialogs", () => {
	it('the stop dialog names its agent, pane and exit input; enter says where it runs instead of focusing a pane here', async () => {
		const store = createStore(reducer, initialState());
		const record = {
			id: -1,
			name: 'devbox:grok-beta',
			host: 'devbox',
			agent: 'grok' as const,
			cwd: CWD,
			mux: 'tmux' as const,
			paneId: '%2',
			agentSessionId: null,
			status: 'running' as const,
			epoch: 0,
			createdAt: 0,
			updatedAt: 0,
			version: 0,
			extra: {},
		};
		store.dispatch({
			type: 'remote/updated',
			host: 'devbox',
			rows: {sessions: [record], live: {}, findings: []},
			hosts: [{name: 'devbox', state: 'up', rttMs: 3, message: '', since: 0}],
		});
		const controller = dashboard(store, {
			config: {...DEFAULT_CONFIG, agents: {...DEFAULT_CONFIG.agents, grok: {exitInput: '/quit-here'}}},
			adapterFor: agent => ADAPTERS[agent as keyof typeof ADAPTERS],
		});
		controller.openStop(['devbox:grok-beta']);
		// This machine's exit-input setting is not the host's: the agent's own is shown.
		expect(store.getState().stopDialog?.targets).toEqual([{name: 'devbox:grok-beta', agent: 'grok', pane: '%2', exitText: '/exit'}]);
		controller.focus('devbox:grok-beta');
		await expect.poll(() => store.getState().notices.at(-1)?.text).toBe('devbox:grok-beta runs on devbox, in its pane %2: focus it there');
	});
});
