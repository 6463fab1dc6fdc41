import '../support/sqliteUri.js';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentId} from '../../src/domain/types.js';
import {DiscoveryCache} from '../../src/sync/discovery.js';
import {pinKey} from '../../src/sync/discoveryResult.js';
import {buildGrokFixture} from '../adapters/fixtures/grok.js';
import {buildHermesFixture} from '../adapters/fixtures/hermes.js';
import {buildOpencodeFixture} from '../adapters/fixtures/opencode.js';
import type {FixtureBuilder} from '../adapters/fixtures/types.js';
import {row} from './support.js';

// Every sqlite open of the process, by the URI or path it was given: the real open still runs.
const opens = vi.hoisted(() => [] as string[]);
vi.mock('../../src/system/sqlite.js', async importOriginal => {
	const real = await importOriginal<typeof import('../../src/system/sqlite.js')>();
	return {
		...real,
		openDatabase: (...args: Parameters<typeof real.openDatabase>) => {
			opens.push(args[0]);
			return real.openDatabase(...args);
		},
	};
});

// Real processes and sqlite files; a ceiling for a loaded machine, not a timing assertion.
vi.setConfig({testTimeout: 30_000});

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

describe('one discovery refresh and its read connections (ctx.reads)', () => {
	// The agents whose every row reads one shared store directly (codex and agy read theirs once
	// per refresh through a memo, pool or not).
	const worlds: [AgentId, FixtureBuilder][] = [
		['hermes', buildHermesFixture],
		['opencode', buildOpencodeFixture],
		['grok', buildGrokFixture],
	];

	it.each(worlds)('%s: opens each database once, however many rows read it', async (agent, build) => {
		const w = await build();
		cleanups.push(() => w.cleanup());
		const pinned = [...w.sessions.filter(s => s.parentId === undefined), {id: w.ids.absent, cwd: w.cwds[0]}];
		const rows = pinned.map((s, i) => row({name: `r${i}`, agent, cwd: s.cwd, agentSessionId: s.id, status: 'stopped'}));
		const cache = new DiscoveryCache({ctx: w.ctx, adapters: ADAPTERS, once: true});
		opens.length = 0;
		// A status refresh (no cwd listing): each row's verify and inUse looks its id up in the store.
		const result = await cache.refresh(rows, {rescan: true, conversations: false});
		// The refresh did read every row: the pinned ids verified against the stores.
		expect(result.verify.get(pinKey(agent, w.ids.target, w.cwds[0]))).toEqual({kind: 'yes'});
		expect(result.verify.get(pinKey(agent, w.ids.absent, w.cwds[0]))?.kind).toBe('no');
		expect(result.inUse.size).toBeGreaterThan(0);
		// Each database once (a shared store, not once per row's verify and inUse).
		const files = opens.map(uri => uri.replace(/^file:/, '').replace(/\?.*$/, ''));
		expect(files.length).toBeGreaterThan(0);
		expect(files).toHaveLength(new Set(files).size);
	});
});
