import {describe, expect, it} from 'vitest';
import {reducer} from '../../src/store/reducer.js';
import {visibleSessions} from '../../src/store/selectors.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {session} from '../components/fixtures.js';

const rows = [session({name: 'a'}), session({name: 'b'}), session({name: 'c', status: 'stopped'})];

describe('reducer', () => {
	it('registry/loaded replaces the rows and clamps the cursor', () => {
		const state = reducer(initialState({sessions: rows, ui: {...initialState().ui, cursor: 2}}), {
			type: 'registry/loaded',
			sessions: rows.slice(0, 1),
			at: 7,
		});
		expect(state.sessions).toHaveLength(1);
		expect(state.ui.cursor).toBe(0);
		expect(state.lastRefresh).toBe(7);
	});

	it('cursor moves stay inside the visible rows', () => {
		let state = initialState({sessions: rows});
		state = reducer(state, {type: 'cursor/move', delta: 5});
		expect(state.ui.cursor).toBe(2);
		state = reducer(state, {type: 'cursor/move', delta: -9});
		expect(state.ui.cursor).toBe(0);
		state = reducer(state, {type: 'cursor/bottom'});
		expect(state.ui.cursor).toBe(2);
	});

	it('returns the same object when nothing changes, so the store notifies nobody', () => {
		const state = initialState({sessions: rows});
		expect(reducer(state, {type: 'cursor/move', delta: -1})).toBe(state);
		const store = createStore(reducer, state);
		let calls = 0;
		store.subscribe(() => calls++);
		store.dispatch({type: 'cursor/top'});
		expect(calls).toBe(0);
		store.dispatch({type: 'cursor/move', delta: 1});
		expect(calls).toBe(1);
	});

	it('filter matches name, agent, cwd and status, and resets the cursor', () => {
		let state = reducer(initialState({sessions: rows}), {type: 'cursor/bottom'});
		state = reducer(state, {type: 'filter/set', text: 'STOPPED'});
		expect(visibleSessions(state).map(s => s.name)).toEqual(['c']);
		expect(state.ui.cursor).toBe(0);
	});

	it('help returns to the mode it was opened from', () => {
		let state = reducer(initialState(), {type: 'mode/set', mode: 'findings'});
		state = reducer(state, {type: 'mode/set', mode: 'help'});
		state = reducer(state, {type: 'mode/back'});
		expect(state.ui.mode).toBe('findings');
	});

	it('mark/toggle adds and removes a name', () => {
		let state = reducer(initialState(), {type: 'mark/toggle', name: 'a'});
		expect([...state.ui.marked]).toEqual(['a']);
		state = reducer(state, {type: 'mark/toggle', name: 'a'});
		expect(state.ui.marked.size).toBe(0);
	});
});

describe('selection follows the session', () => {
	it('keeps the cursor on the same session when a reload re-sorts the rows', () => {
		const a = session({name: 'a'});
		const b = session({name: 'b'});
		const c = session({name: 'c'});
		let state = reducer(initialState({sessions: [a, b, c]}), {type: 'cursor/move', delta: 1});
		expect(visibleSessions(state)[state.ui.cursor]?.name).toBe('b');
		// b stops: it sorts after the running rows now
		state = reducer(state, {type: 'registry/loaded', sessions: [a, {...b, status: 'stopped'}, c], at: 1});
		expect(visibleSessions(state).map(s => s.name)).toEqual(['a', 'c', 'b']);
		expect(visibleSessions(state)[state.ui.cursor]?.name).toBe('b');
	});

	it('clamps when the selected session is gone', () => {
		const rows2 = [session({name: 'x'}), session({name: 'y'})];
		let state = reducer(initialState({sessions: rows2}), {type: 'cursor/bottom'});
		state = reducer(state, {type: 'registry/loaded', sessions: rows2.slice(0, 1), at: 1});
		expect(state.ui.cursor).toBe(0);
	});
});
