import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {applyFix} from '../../src/actions/driftFix.js';
import type {Finding} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {namedPins, startAutoPin} from '../../src/ui/autoPin.js';
import {tempDir} from '../helpers/tmp.js';
import {CWD, EPOCH, ID} from '../drift/builders.js';

let tmp: ReturnType<typeof tempDir>;
let registry: Registry;

beforeEach(() => {
	tmp = tempDir('mam-auto-pin-');
	registry = Registry.open(path.join(tmp.dir, 'registry.db'));
});
afterEach(() => {
	registry.close();
	tmp.dispose();
});

function row(name: string): {id: number; version: number} {
	const r = registry.insert({name, agent: 'claude', cwd: CWD, mux: 'tmux', paneId: '%1', status: 'running', epoch: EPOCH});
	return {id: r.id, version: r.version};
}

/** An `unpinned` finding as drift makes it (src/drift/unpinned.ts). */
function unpinned(name: string, at: {id: number; version: number}, id: string, named?: 'mux' | 'process'): Finding {
	return {
		kind: 'unpinned',
		sessionId: at.id,
		sessionName: name,
		sessionVersion: at.version,
		message: `${name} has no pinned conversation`,
		evidence: [],
		candidates: [id],
		fix: {type: 'pin', sessionId: at.id, agentSessionId: id, ...(named ? {named} : {})},
	};
}

function follow(findings: readonly Finding[]) {
	const store = createStore(reducer, initialState({sessions: registry.list()}));
	const notices: string[] = [];
	let refreshes = 0;
	const stop = startAutoPin({
		getState: () => store.getState(),
		subscribe: listener => store.subscribe(listener),
		apply: finding => applyFix(registry, finding),
		notify: (level, text) => notices.push(`${level}: ${text}`),
		refresh: () => void (refreshes += 1),
	});
	store.dispatch({type: 'live/updated', findings});
	return {store, notices, refreshes: () => refreshes, stop};
}

describe('the dashboard pins a row its own pane names', () => {
	it('a registry that throws is a message, not a crash', () => {
		const a = row('api');
		const store = createStore(reducer, initialState({sessions: registry.list()}));
		const notices: string[] = [];
		const stop = startAutoPin({
			getState: () => store.getState(),
			subscribe: listener => store.subscribe(listener),
			apply: () => {
				throw new Error('database is locked');
			},
			notify: (level, text) => notices.push(`${level}: ${text}`),
			refresh: () => undefined,
		});
		expect(() => store.dispatch({type: 'live/updated', findings: [unpinned('api', a, ID.a, 'process')]})).not.toThrow();
		stop();
		expect(notices).toEqual(['error: auto-pin: database is locked']);
	});

	it("pins from the agent process's own evidence or the mux's report, audited like f", () => {
		const a = row('new-claude');
		const b = row('adopted');
		const {notices, refreshes, stop} = follow([unpinned('new-claude', a, ID.a, 'process'), unpinned('adopted', b, ID.b, 'mux')]);
		stop();
		expect(registry.getById(a.id)?.agentSessionId).toBe(ID.a);
		expect(registry.getById(b.id)?.agentSessionId).toBe(ID.b);
		expect(notices).toEqual([`ok: pinned new-claude to ${ID.a} (its agent process's own evidence)`, `ok: pinned adopted to ${ID.b} (its pane reports it)`]);
		expect(refreshes()).toBe(1);
		expect(registry.auditLog('new-claude').some(e => e.action === 'drift-fix' && e.step === 'pin' && e.outcome === 'ok')).toBe(true);
	});

	it('leaves the only conversation of the folder since the row started for the user to confirm', () => {
		const a = row('api');
		const folderOnly = unpinned('api', a, ID.a);
		expect(namedPins([folderOnly])).toEqual([]);
		const {notices, stop} = follow([folderOnly]);
		stop();
		expect(registry.getById(a.id)?.agentSessionId).toBeNull();
		expect(notices).toEqual([]);
	});

	it('tries a refused pin once, not on every refresh', () => {
		const a = row('api');
		const stale = unpinned('api', a, ID.a, 'process');
		// Someone pinned the row meanwhile: the finding's version is old, the fix is refused.
		registry.update(a.id, {agentSessionId: ID.c}, a.version);
		const {store, notices, stop} = follow([stale]);
		store.dispatch({type: 'live/updated', findings: [stale]});
		store.dispatch({type: 'live/updated', findings: [{...stale}]});
		stop();
		expect(registry.getById(a.id)?.agentSessionId).toBe(ID.c);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatch(/^error: auto-pin: /);
	});
});
