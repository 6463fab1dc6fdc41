import {describe, expect, it} from 'vitest';
import type {IndexWorker} from '../../src/search/worker.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {startTextSearch} from '../../src/ui/textSearch.js';

const quiet = {debug: () => {}, info: () => {}, warn: () => {}, error: () => {}};

function fakeIndex(jobs: string[]): IndexWorker {
	return {
		sync: async () => {
			jobs.push('sync');
			return {read: 0, conversations: 0, messages: 0, bytes: 0, removed: 0, ms: 0} as unknown as Awaited<ReturnType<IndexWorker['sync']>>;
		},
		search: async () => [],
		usage: async () => new Map(),
		close: async () => {},
	};
}

describe("the dashboard's search index", () => {
	it('starts the first time the conversations view opens, not before, and only once', async () => {
		const store = createStore(reducer, initialState({}));
		const jobs: string[] = [];
		let started = 0;
		const stop = startTextSearch({store, startIndex: () => (started++, fakeIndex(jobs)), logger: quiet});
		try {
			store.dispatch({type: 'mode/set', mode: 'findings'});
			store.dispatch({type: 'mode/set', mode: 'sessions'});
			// Longer than the 2 s after start at which the index used to start on its own.
			await new Promise(resolve => setTimeout(resolve, 2_100));
			expect(started).toBe(0);
			store.dispatch({type: 'mode/set', mode: 'conversations'});
			store.dispatch({type: 'mode/set', mode: 'sessions'});
			store.dispatch({type: 'mode/set', mode: 'conversations'});
			await new Promise(resolve => setTimeout(resolve, 50));
			expect(started).toBe(1);
			expect(jobs).toEqual(['sync']);
		} finally {
			stop();
		}
	});
});
