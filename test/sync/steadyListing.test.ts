import {describe, expect, it} from 'vitest';
import {memoKind, memoPerListing} from '../../src/adapters/common/refresh.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import type {LiveUse} from '../../src/adapters/common/liveEvidence.js';
import type {ProcessRef} from '../../src/domain/types.js';
import {createRefreshPipeline, steadyListing} from '../../src/sync/pipeline.js';
import type {Listing} from '../../src/sync/refresh.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {adaptersWith, conversation, countingAdapter, ctx, MemoryMux, pane, proc, row, UUID} from './support.js';

// An idle minute's listing that finds the machine as it was keeps what was made from the last one
// (live uses, open files, in-use answers, drift's indexes); anything else, or a full refresh, reads anew.

const USES = memoKind<Promise<LiveUse[]>>('test-live-uses');

/** A table that hands out equal but new rows on every pass (as /proc does), from `rows()`. */
function freshRows(rows: () => readonly ProcessRef[]): ProcessTable {
	return {list: async () => rows().map(p => ({...p, argv: [...p.argv]})), get: async () => undefined, holders: async () => []};
}

function listing(processes: readonly ProcessRef[], panes: Listing['panes'] = []): Listing {
	return {panes, processes};
}

describe('steadyListing', () => {
	const panes = [pane('w1:p1')];
	const before = listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], panes);

	it('keeps the last listing when the panes are the same array and the processes are equal', () => {
		const next = listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], panes);
		expect(steadyListing(before, next, false)).toBe(before);
	});

	it('ignores kernel threads coming and going', () => {
		const next = listing(
			[
				{pid: 2, ppid: 0, startTime: 1, name: 'kthreadd', argv: []},
				proc(10, 'sh'),
				{pid: 99, ppid: 2, startTime: 5, name: 'kworker/0:1', argv: []},
				proc(11, 'claude', ['claude'], 10),
			],
			panes,
		);
		expect(steadyListing(before, next, false)).toBe(before);
	});

	it('takes the new listing when a process came, went or changed its argv, when a pane changed, or on a full refresh', () => {
		const equal = listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], panes);
		for (const next of [
			listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10), proc(12, 'node')], panes),
			listing([proc(10, 'sh')], panes),
			listing([proc(10, 'sh'), proc(11, 'claude', ['claude', '--resume', UUID(1)], 10)], panes),
			listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], [pane('w1:p1')]),
			listing([proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], null),
		])
			expect(steadyListing(before, next, false)).toBe(next);
		expect(steadyListing(before, equal, true)).toBe(equal);
		expect(steadyListing(undefined, equal, false)).toBe(equal);
		expect(steadyListing({panes, processes: null}, equal, false)).toBe(equal);
	});

	it("a pipeline's listing refresh on an unchanged machine reuses the live uses; a changed one reads them again", async () => {
		let rows: readonly ProcessRef[] = [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)];
		const processes = freshRows(() => rows);
		const adapter = countingAdapter('claude');
		adapter.conversations = [conversation(UUID(1), {cwd: '/w/one'})];
		let reads = 0;
		const uses = (c: AdapterContext): Promise<LiveUse[]> =>
			memoPerListing(c, USES.of('claude'), () => {
				reads += 1;
				return Promise.resolve([]);
			});
		const mux = new MemoryMux();
		mux.panes = [pane('w1:p1', {agent: 'claude', processes: rows})];
		const pipeline = createRefreshPipeline({ctx: {...ctx, processes}, mux, processes, adapters: adaptersWith({...adapter, liveUses: uses})});
		const sessions = [row({name: 'a', paneId: 'w1:p1', cwd: '/w/one'})];
		try {
			const first = await pipeline.refresh(sessions, {rescan: true});
			const second = await pipeline.refresh(sessions, {rescan: true});
			expect(reads).toBe(1);
			// Drift kept its work too: the very findings array of last time.
			expect(second.findings).toBe(first.findings);
			rows = [...rows, proc(12, 'node', ['node', 'x.js'])];
			await pipeline.refresh(sessions, {rescan: true});
			expect(reads).toBe(2);
			await pipeline.refresh(sessions, {rescan: true, full: true});
			expect(reads).toBe(3);
		} finally {
			pipeline.close();
		}
	});
});
