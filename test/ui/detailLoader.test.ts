import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentAdapter, AdapterContext} from '../../src/adapters/types.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {silentLogger} from '../../src/system/logger.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {startDetailLoader} from '../../src/ui/detailLoader.js';

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

async function until(check: () => boolean): Promise<void> {
	const deadline = Date.now() + 3000;
	while (!check()) {
		if (Date.now() > deadline) throw new Error('condition never held');
		await new Promise(r => setTimeout(r, 10));
	}
}

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
		await until(() => store.getState().detail !== null);
		const detail = store.getState().detail;
		expect(detail?.resumeCommand).toEqual(['claude', '--resume', ID]);
		expect(detail?.plan?.lines.map(l => l.description)).toEqual(['transcript']);
		expect(detail?.audit.map(a => `${a.action}/${a.step}`)).toEqual(['stop/close-pane']);
		stop();
		registry.close();
	});
});
