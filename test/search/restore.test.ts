import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {purgeConfirmed, purgePlan} from '../../src/actions/purge.js';
import {searchIndexPort} from '../../src/actions/searchIndex.js';
import {restorePurge} from '../../src/actions/trashActions.js';
import type {ActionDeps} from '../../src/actions/types.js';
import {claudeAdapter} from '../../src/adapters/claude.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import {Registry} from '../../src/registry/registry.js';
import {openSearchStore, searchConversations, syncIndex} from '../../src/search/index.js';
import {buildClaudeFixture} from '../adapters/fixtures/claude.js';

// Purge takes a conversation out of the search index; restore puts it back at once, so the
// dashboard's `/` (which asks the index without a sync) finds it before the next watch pass.

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

describe('restore and the search index', () => {
	it('indexes the restored conversation again right away', async () => {
		const fx = buildClaudeFixture();
		cleanups.push(() => fx.cleanup());
		const state = fs.mkdtempSync(path.join(fx.ctx.tmpDir, 'mam-'));
		const registry = Registry.open(path.join(state, 'registry.db'));
		cleanups.push(() => registry.close());
		const deps: ActionDeps = {
			registry,
			mux: () => Promise.reject(new Error('no multiplexer in this test')),
			adapterFor: agent => (agent === 'claude' ? claudeAdapter : undefined),
			context: fx.ctx,
			processes: fx.ctx.processes,
			config: DEFAULT_CONFIG,
			now: Date.now,
			trashDir: path.join(state, 'trash'),
			searchIndex: searchIndexPort(state),
		};
		const store = openSearchStore(state);
		cleanups.push(() => store.close());
		const search = {context: fx.ctx, adapters: [claudeAdapter], store};
		await syncIndex(search);
		const found = async () => (await searchConversations(search, 'SPAWN_SUBAGENT', {noSync: true, all: true})).map(h => h.id);
		const target = fx.ids.target;
		expect(await found()).toContain(target);
		const indexed = () => store.get('claude', target) !== undefined;
		expect(indexed()).toBe(true);

		const plan = await purgePlan(deps, {agent: 'claude', id: target});
		if (!plan.ok) throw new Error(plan.error.message);
		const purged = await purgeConfirmed(deps, [plan.value], plan.value.label, {hard: false});
		if (!purged.ok) throw new Error(purged.error.message);
		expect(await found()).not.toContain(target);
		expect(indexed()).toBe(false);

		const restored = await restorePurge(deps, purged.value[0]?.trashId ?? '');
		if (!restored.ok) throw new Error(restored.error.message);
		expect(restored.value.notes.filter(n => n.includes('search index'))).toEqual([]);
		// No sync in between: found because restore read it into the index.
		expect(await found()).toContain(target);
		expect(indexed()).toBe(true);
	});
});
