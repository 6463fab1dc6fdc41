import {describe, expect, it, vi} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentAdapter, AdapterContext} from '../../src/adapters/types.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {silentLogger} from '../../src/system/logger.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {OUTPUT_REFRESH_MS, startDetailLoader} from '../../src/ui/detailLoader.js';
import type {Pane} from '../../src/domain/types.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {eventually} from '../helpers/poll.js';

const ID = '69e68769-2dbb-4664-996b-bc39e1d62900';

const adapter: AgentAdapter = {
	...ADAPTERS.claude,
	artifacts: async (_ctx, id) => ({
		agent: 'claude',
		id,
		descendants: [],
		items: [{kind: 'file', path: `/h/.claude/projects/p/${id}.jsonl`, bytes: 10, sessionId: id, description: 'transcript'}],
		totalBytes: 10,
	}),
};

const processes: ProcessTable = {list: async () => [], get: async () => undefined, holders: async () => []};

describe('detail loader', () => {
	it('loads the selected session: resume command, artifact plan and audit history', async () => {
		const registry = Registry.open(':memory:');
		registry.insert({name: 'docs', agent: 'claude', cwd: '/w', status: 'stopped', epoch: 0, agentSessionId: ID});
		registry.audit({session: 'docs', action: 'stop', step: 'close-pane', outcome: 'ok'});
		const store = createStore(reducer, initialState({sessions: registry.list()}));
		const stop = startDetailLoader({
			store,
			registry,
			adapterFor: () => adapter,
			context: {} as AdapterContext, // the fake adapter reads nothing from it
			processes,
			mux: () => Promise.reject(new Error('no mux in this test')),
			logger: silentLogger,
			now: () => 1,
		});
		await eventually('the condition', () => store.getState().detail !== null, {timeoutMs: 3000});
		const detail = store.getState().detail;
		expect(detail?.resumeCommand).toEqual(['claude', '--resume', ID]);
		expect(detail?.plan?.lines.map(l => l.description)).toEqual(['transcript']);
		expect(detail?.audit.map(a => `${a.action}/${a.step}`)).toEqual(['stop/close-pane']);
		stop();
		registry.close();
	});
});

describe('pane output in the detail panel', () => {
	it('reads the last lines of the selected pane only, again while it stays selected, and stops once it is not', async () => {
		vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']});
		try {
			const registry = Registry.open(':memory:');
			registry.insert({name: 'api', agent: 'claude', cwd: '/w', mux: 'tmux', paneId: '%1', status: 'running', epoch: 0, agentSessionId: ID});
			registry.insert({name: 'old', agent: 'claude', cwd: '/w', status: 'stopped', epoch: 0});
			const pane = (id: string): Pane => ({id, mux: 'tmux', cwd: '/w', agentStatus: 'idle', processes: [], isSelf: false});
			const store = createStore(
				reducer,
				initialState({
					sessions: registry.list(),
					live: {api: {liveStatus: 'idle', resumeState: {kind: 'yes'}, pane: pane('%1')}},
				}),
			);
			const reads: string[] = [];
			let text = 'first';
			const mux = {readOutput: async (id: string) => (reads.push(id), `${id} ${text}`)} as unknown as Multiplexer;
			const stop = startDetailLoader({
				store,
				registry,
				adapterFor: () => adapter,
				context: {} as AdapterContext,
				processes,
				mux: async () => mux,
				logger: silentLogger,
				now: () => 1,
			});
			await vi.advanceTimersByTimeAsync(200);
			expect(reads).toEqual(['%1']);
			expect(store.getState().detail?.output).toBe('%1 first');

			text = 'second';
			await vi.advanceTimersByTimeAsync(OUTPUT_REFRESH_MS);
			expect(reads).toEqual(['%1', '%1']);
			expect(store.getState().detail?.output).toBe('%1 second');

			store.dispatch({type: 'cursor/move', delta: 1});
			await vi.advanceTimersByTimeAsync(200 + 3 * OUTPUT_REFRESH_MS);
			// the stopped row now selected has no pane to read, and api is read no more
			expect(store.getState().detail?.name).toBe('old');
			expect(reads).toEqual(['%1', '%1']);
			store.dispatch({type: 'cursor/top'});
			await vi.advanceTimersByTimeAsync(200);
			expect(reads).toEqual(['%1', '%1', '%1']);
			stop();
			const before = reads.length;
			await vi.advanceTimersByTimeAsync(3 * OUTPUT_REFRESH_MS);
			expect(reads).toHaveLength(before);
			registry.close();
		} finally {
			vi.useRealTimers();
		}
	});
});
