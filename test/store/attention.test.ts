import {describe, expect, it} from 'vitest';
import {reducer} from '../../src/store/reducer.js';
import {needYouCount, selectedSession, visibleSessions} from '../../src/store/selectors.js';
import {initialState, type SessionLive} from '../../src/store/state.js';
import {session} from '../components/fixtures.js';

const live = (liveStatus: SessionLive['liveStatus']): SessionLive => ({liveStatus, resumeState: {kind: 'yes'}});

describe('attention first', () => {
	const rows = [
		session({name: 'a-idle'}),
		session({name: 'b-off', status: 'stopped'}),
		session({name: 'c-work'}),
		session({name: 'd-ask'}),
		session({name: 'e-new'}),
		session({name: 'f-ask'}),
	];
	const statuses = {'a-idle': live('idle'), 'b-off': live('stopped'), 'c-work': live('working'), 'd-ask': live('blocked'), 'f-ask': live('blocked')};

	it('sorts blocked first, then working, idle, the rest of the running, stopped', () => {
		const order = visibleSessions({sessions: rows, live: statuses, ui: {filter: ''}}).map(s => s.name);
		expect(order).toEqual(['d-ask', 'f-ask', 'c-work', 'a-idle', 'e-new', 'b-off']);
		expect(needYouCount({sessions: rows, live: statuses})).toBe(2);
	});

	it('keeps the cursor on the same session when a status change moves it (a key acts on what the user looks at)', () => {
		let state = initialState({sessions: rows, live: {...statuses, 'd-ask': live('idle'), 'f-ask': live('idle')}});
		state = reducer(state, {type: 'cursor/top'});
		expect(selectedSession(state)?.name).toBe('c-work');
		state = reducer(state, {type: 'live/updated', live: statuses});
		// c-work moved from first to third: the cursor moved with it.
		expect(visibleSessions(state)[0]?.name).toBe('d-ask');
		expect(selectedSession(state)?.name).toBe('c-work');
	});
});
