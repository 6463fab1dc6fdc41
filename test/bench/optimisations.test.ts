// The speed-ups the benchmark drove must not change what mam-tui shows: each cache or shortcut is
// checked against the plain computation it replaces.
import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {createRefresh, ParseCache, type Vouch} from '../../src/adapters/common/refresh.js';
import {listDir} from '../../src/adapters/common/paths.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentAdapter, DiscoverQuery} from '../../src/adapters/types.js';
import {err} from '../../src/domain/result.js';
import type {AgentId, Conversation, Pane, ProcessRef, ResumeState} from '../../src/domain/types.js';
import {createDriftMemo, detectDrift, type DriftInput, type PaneEvidence, type SessionFacts} from '../../src/drift/detect.js';
import {visibleSessions} from '../../src/store/selectors.js';
import {initialState} from '../../src/store/state.js';
import {DiscoveryCache} from '../../src/sync/discovery.js';
import {FolderWatch} from '../../src/sync/folderWatch.js';
import {createProcessTable, pidIndex, processTree, snapshotTable} from '../../src/system/processes.js';
import {candidates as dCandidates, conv as dConv, EPOCH, ID, pane as dPane, proc as dProc, row as dRow} from '../drift/builders.js';
import {ctx, row, UUID} from '../sync/support.js';

let dir: string;
beforeEach(() => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-opt-')));
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

/** Poll until `check` holds (events arrive asynchronously); throws after `timeoutMs`. */
async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
		await new Promise(resolve => setTimeout(resolve, 10));
	}
}

/** An adapter whose conversations per cwd the test scripts; each cwd watches its own stamp file. */
function scriptedAdapter(stamps: string): AgentAdapter & {lists: Map<string, Conversation[]>; discovers: number} {
	const lists = new Map<string, Conversation[]>();
	const adapter = {
		...ADAPTERS.claude,
		lists,
		discovers: 0,
		async discover(_ctx: unknown, query?: DiscoverQuery) {
			adapter.discovers += 1;
			return {conversations: [...(lists.get(query?.cwd ?? '') ?? [])], problems: []};
		},
		watchPaths: (_ctx: unknown, cwd: string) => [path.join(stamps, `${path.basename(cwd)}.stamp`)],
	};
	return adapter;
}

function withAdapter(adapter: AgentAdapter): Record<AgentId, AgentAdapter> {
	return {...ADAPTERS, claude: adapter};
}

describe('the merged conversation list', () => {
	it('updated in place for changed cwds equals a merge from scratch (ties, twins listed by two cwds, removals)', async () => {
		const cwds = ['a', 'b', 'c', 'd', 'e', 'f'].map(name => path.join(dir, name));
		for (const cwd of cwds) fs.mkdirSync(cwd);
		const rows = cwds.map((cwd, i) => row({name: `r${i}`, cwd}));
		const conv = (id: number, createdAt: number, cwd: string): Conversation => ({
			agent: 'claude',
			id: UUID(id),
			cwd,
			createdAt,
			updatedAt: createdAt,
			childCount: 0,
			resumeState: {kind: 'yes'},
		});
		const list = fc.array(fc.record({id: fc.integer({min: 1, max: 40}), at: fc.integer({min: 1, max: 6})}), {maxLength: 8});
		const step = fc.record({cwd: fc.integer({min: 0, max: cwds.length - 1}), list, also: fc.option(fc.integer({min: 0, max: cwds.length - 1}))});
		await fc.assert(
			fc.asyncProperty(fc.array(step, {minLength: 1, maxLength: 12}), async steps => {
				const stamps = fs.mkdtempSync(path.join(dir, 'stamps-'));
				const live = scriptedAdapter(stamps);
				const cache = new DiscoveryCache({ctx, adapters: withAdapter(live)});
				let n = 0;
				for (const s of steps) {
					for (const index of [s.cwd, ...(s.also === null ? [] : [s.also])]) {
						const cwd = cwds[index] as string;
						// Reversed for the second cwd: the same ids in another order, listed twice.
						const made = s.list.map(c => conv(c.id, c.at, cwd));
						live.lists.set(cwd, index === s.cwd ? made : made.reverse());
						fs.writeFileSync(path.join(stamps, `${path.basename(cwd)}.stamp`), String(++n));
					}
					const updated = await cache.refresh(rows, {rescan: true});
					const fresh = scriptedAdapter(stamps);
					for (const [cwd, convs] of live.lists) fresh.lists.set(cwd, convs);
					const scratch = await new DiscoveryCache({ctx, adapters: withAdapter(fresh)}).refresh(rows, {rescan: true});
					expect(updated.conversations).toEqual(scratch.conversations);
				}
			}),
			{numRuns: 60},
		);
	});
});

describe('unchanged conversations kept as the same objects', () => {
	it('a re-read cwd keeps the objects of unchanged conversations, shows every changed field, and equals a merge from scratch', async () => {
		const cwds = ['a', 'b', 'c'].map(name => path.join(dir, name));
		for (const cwd of cwds) fs.mkdirSync(cwd);
		const rows = cwds.map((cwd, i) => row({name: `r${i}`, cwd}));
		const item = fc.record({
			id: fc.integer({min: 1, max: 12}),
			at: fc.integer({min: 1, max: 4}),
			updated: fc.integer({min: 1, max: 3}),
			title: fc.option(fc.constantFrom('x', 'y'), {nil: undefined}),
			resumable: fc.boolean(),
		});
		const step = fc.record({cwd: fc.integer({min: 0, max: cwds.length - 1}), list: fc.uniqueArray(item, {maxLength: 8, selector: c => c.id})});
		await fc.assert(
			fc.asyncProperty(fc.array(step, {minLength: 1, maxLength: 10}), async steps => {
				const stamps = fs.mkdtempSync(path.join(dir, 'stamps-'));
				const live = scriptedAdapter(stamps);
				const cache = new DiscoveryCache({ctx, adapters: withAdapter(live)});
				let previous = new Map<string, Conversation>();
				let n = 0;
				for (const s of steps) {
					const cwd = cwds[s.cwd] as string;
					live.lists.set(
						cwd,
						s.list.map(c => ({
							agent: 'claude',
							id: UUID(c.id),
							cwd,
							createdAt: c.at,
							updatedAt: c.at + c.updated,
							...(c.title === undefined ? {} : {title: c.title}),
							childCount: 0,
							resumeState: c.resumable ? {kind: 'yes'} : {kind: 'no', reason: 'no messages yet'},
						})),
					);
					fs.writeFileSync(path.join(stamps, `${path.basename(cwd)}.stamp`), String(++n));
					const updated = await cache.refresh(rows, {rescan: true});
					const fresh = scriptedAdapter(stamps);
					for (const [at, convs] of live.lists) fresh.lists.set(at, convs);
					const scratch = await new DiscoveryCache({ctx, adapters: withAdapter(fresh)}).refresh(rows, {rescan: true});
					// Every field as the adapter says now (a kept object is never a stale one)...
					expect(updated.conversations).toEqual(scratch.conversations);
					// ...and an object equal to the one shown before is that very object.
					for (const c of updated.conversations) {
						const before = previous.get(`${c.cwd}\0${c.id}`);
						if (before && JSON.stringify(before) === JSON.stringify(c)) expect(c).toBe(before);
					}
					previous = new Map(updated.conversations.map(c => [`${c.cwd}\0${c.id}`, c]));
				}
			}),
			{numRuns: 60},
		);
	});
});

describe('drift detection with a memo (the live view detects on every refresh)', () => {
	const claude = (pin?: string) => ['claude', ...(pin ? ['--resume', pin] : [])];
	const sessions = [
		dRow(1),
		dRow(2),
		dRow(3, {agentSessionId: ID.a}),
		dRow(4, {status: 'stopped', paneId: null, agentSessionId: ID.b, extra: {stop: {processes: [{pid: 501, startTime: 5010}]}}}),
		dRow(5, {status: 'stopped', agentSessionId: ID.c}),
		dRow(6, {agent: 'codex', paneId: 'w1:p9', agentSessionId: ID.d}),
		dRow(7, {status: 'stopped', paneId: null, agentSessionId: ID.d}),
	];
	const panes = [
		dPane('w1:p1', {agentArgv: claude()}),
		dPane('w1:p2', {agentArgv: claude()}),
		dPane('w1:p3', {agentArgv: claude(ID.a)}),
		dPane('w1:p5', {agentArgv: claude(ID.c)}),
		dPane('w1:p6', {agentArgv: claude()}),
	];
	// Free ids (e, f) are candidates two unpinned rows may contest; the others are claimed, too old or a child.
	const FREE = ['55555555-5555-4555-8555-555555555555', '66666666-6666-4666-8666-666666666666'] as const;
	const pool = [dConv(ID.a), dConv(ID.b), dConv(ID.c, {createdAt: EPOCH - 60_000}), dConv(ID.d), dConv(ID.d, {parentId: ID.a}), dConv(FREE[0]), dConv(FREE[1])];
	const verifyArb = fc.constantFrom<ResumeState | undefined>(
		undefined,
		{kind: 'yes'},
		{kind: 'no', reason: 'no transcript on disk'},
		{kind: 'no', reason: 'no messages yet'},
		{kind: 'unknown', reason: 'locked'},
	);
	const candidatesArb = fc.oneof(fc.constant('same' as const), fc.constant('error' as const), fc.subarray(pool));
	// What the agents' evidence says of pane p1 (row 1's) and the untracked p6: ids named, or recent ones.
	const evidenceOf = (ids: readonly string[], recent?: readonly string[], seen = 'pid 1: a record'): PaneEvidence => ({
		agent: 'claude',
		startedAt: EPOCH - 1000,
		ids,
		...(recent ? {recent} : {}),
		seen: [seen],
	});
	const evidenceArb = fc.constantFrom<PaneEvidence | undefined>(
		undefined,
		evidenceOf([]),
		evidenceOf([ID.a]),
		evidenceOf([FREE[0]]),
		evidenceOf([], [FREE[0]]),
		evidenceOf([], [FREE[0], FREE[1]]),
		evidenceOf([], [FREE[1]], 'pid 2: another record'),
		{...evidenceOf([FREE[0]]), agent: 'codex'},
	);
	const stepArb = fc.record({
		facts: fc.array(fc.record({verify: verifyArb, candidates: candidatesArb, realCwd: fc.option(fc.constant('/real/api'), {nil: undefined})}), {
			minLength: sessions.length,
			maxLength: sessions.length,
		}),
		listing: fc.constantFrom('same', 'same', 'new', 'changed'),
		evidence: fc.option(fc.tuple(evidenceArb, evidenceArb), {nil: undefined}),
	});

	it('finds what a detection from scratch finds, as facts change under the same rows and listing', () => {
		fc.assert(
			fc.property(fc.array(stepArb, {minLength: 1, maxLength: 8}), steps => {
				const memo = createDriftMemo();
				let listing = {
					panes: panes as readonly Pane[],
					processes: [...panes.flatMap(p => p.processes), dProc(501, claude(ID.b), {startTime: 5010})] as readonly ProcessRef[],
				};
				const lists = new Map<number, SessionFacts['candidates']>();
				let evidence: ReadonlyMap<string, PaneEvidence> | undefined;
				for (const step of steps) {
					if (step.listing === 'new') listing = {panes: [...listing.panes], processes: [...listing.processes]};
					if (step.listing === 'changed') listing = {panes: listing.panes.slice(1), processes: listing.processes.slice(0, -1)};
					const facts = new Map<number, SessionFacts>();
					step.facts.forEach((f, i) => {
						const id = sessions[i]?.id ?? 0;
						const candidates =
							f.candidates === 'same' ? (lists.get(id) ?? dCandidates([])) : f.candidates === 'error' ? err('store locked') : dCandidates(f.candidates);
						lists.set(id, candidates);
						facts.set(id, {...(f.verify ? {verify: f.verify} : {}), candidates, ...(f.realCwd ? {realCwd: f.realCwd} : {})});
					});
					// A new evidence map each step it is given (as a refresh that re-read a pane makes), else the last one.
					if (step.evidence) {
						const [p1, p6] = step.evidence;
						evidence = new Map([...(p1 ? [['w1:p1', p1] as const] : []), ...(p6 ? [['w1:p6', p6] as const] : [])]);
					}
					const input: DriftInput = {
						sessions,
						mux: 'herdr',
						panes: listing.panes,
						facts,
						processes: listing.processes,
						...(evidence ? {paneEvidence: evidence} : {}),
					};
					expect(detectDrift(input, ADAPTERS, memo)).toEqual(detectDrift(input));
				}
			}),
			{numRuns: 200},
		);
	});

	it('keeps the finding objects of rows whose facts did not change', () => {
		const memo = createDriftMemo();
		const processes = panes.flatMap(p => p.processes);
		const list = dCandidates([pool[0] as Conversation]);
		const factsOf = (verify4: ResumeState): Map<number, SessionFacts> =>
			new Map(sessions.map(r => [r.id, {candidates: list, verify: r.id === 4 ? verify4 : {kind: 'no', reason: 'no transcript on disk'}}]));
		const input = (verify4: ResumeState): DriftInput => ({sessions, mux: 'herdr', panes, facts: factsOf(verify4), processes});
		const first = detectDrift(input({kind: 'yes'}), ADAPTERS, memo);
		const again = detectDrift(input({kind: 'yes'}), ADAPTERS, memo);
		expect(again).toEqual(first);
		// Nothing judged again: the same array.
		expect(again).toBe(first);
		const changed = detectDrift(input({kind: 'no', reason: 'gone'}), ADAPTERS, memo);
		expect(changed).toEqual(detectDrift(input({kind: 'no', reason: 'gone'})));
		expect(changed.filter(f => f.sessionId === 4 && f.kind === 'artifact-missing')).toHaveLength(1);
		for (const f of changed) if (f.sessionId !== 4) expect(first).toContain(f);
	});
});

/** A project whose scripted adapter lists conv(1), with a discovery cache watching its stamp file. */
function watchedProject() {
	const cwd = path.join(dir, 'proj');
	fs.mkdirSync(cwd);
	const stamps = path.join(dir, 'stamps');
	fs.mkdirSync(stamps);
	const stamp = path.join(stamps, 'proj.stamp');
	fs.writeFileSync(stamp, '1');
	const adapter = scriptedAdapter(stamps);
	const conv = (id: number): Conversation => ({agent: 'claude', id: UUID(id), cwd, createdAt: id, updatedAt: id, childCount: 0, resumeState: {kind: 'yes'}});
	adapter.lists.set(cwd, [conv(1)]);
	let seen = 0;
	const cache = new DiscoveryCache({ctx, adapters: withAdapter(adapter), onChange: () => (seen += 1)});
	return {cwd, stamp, adapter, conv, cache, changes: () => seen};
}

describe('the folder watch', () => {
	it('reports a file growing in a watched folder, and only for the keys watching it', async () => {
		const seen: string[] = [];
		const watch = new FolderWatch(() => seen.push('change'));
		try {
			const watched = path.join(dir, 'watched');
			const other = path.join(dir, 'other');
			fs.mkdirSync(watched);
			fs.mkdirSync(other);
			fs.writeFileSync(path.join(watched, 't.jsonl'), '{}\n');
			watch.track('k1', [watched]);
			watch.track('k2', [other]);
			expect(watch.covers('k1')).toBe(true);
			fs.appendFileSync(path.join(watched, 't.jsonl'), '{}\n');
			await until('the change is seen', () => watch.pending());
			expect([...watch.take()]).toEqual(['k1']);
			expect(watch.pending()).toBe(false);
		} finally {
			watch.close();
		}
	});

	it('a missing folder is watched through its parent, so its creation is seen', async () => {
		const watch = new FolderWatch(() => undefined);
		try {
			watch.track('k', [path.join(dir, 'later', 'deeper')]);
			fs.mkdirSync(path.join(dir, 'later'));
			await until('the new folder is seen', () => watch.pending());
			expect(watch.take().has('k')).toBe(true);
		} finally {
			watch.close();
		}
	});

	it('a watch path that is a folder is watched itself: a file written inside it is seen', async () => {
		const cwd = path.join(dir, 'proj');
		const folder = path.join(dir, 'sessions');
		fs.mkdirSync(cwd);
		fs.mkdirSync(folder);
		const adapter = {...scriptedAdapter(dir), watchPaths: () => [folder]};
		adapter.lists.set(cwd, []);
		let seen = 0;
		const cache = new DiscoveryCache({ctx, adapters: withAdapter(adapter), onChange: () => (seen += 1)});
		try {
			await cache.refresh([row({name: 'p', cwd})], {rescan: true});
			fs.writeFileSync(path.join(folder, 'new.jsonl'), '{}\n');
			await until('the write inside the folder is seen', () => seen > 0);
		} finally {
			cache.close();
		}
	});

	it('the discovery cache reads a cwd again after a reported change, and not before', async () => {
		const {cwd, stamp, adapter, conv, cache, changes} = watchedProject();
		try {
			const rows = [row({name: 'p', cwd})];
			await cache.refresh(rows, {rescan: true});
			await cache.refresh(rows, {rescan: true});
			expect(adapter.discovers).toBe(1);
			expect(cache.wantsTick()).toBe(false);
			adapter.lists.set(cwd, [conv(2), conv(1)]);
			fs.appendFileSync(stamp, '2');
			await until('the change is reported', () => changes() > 0);
			expect(cache.wantsTick()).toBe(true);
			const after = await cache.refresh(rows, {rescan: true});
			expect(adapter.discovers).toBe(2);
			expect(after.conversations.map(c => c.id)).toEqual([UUID(2), UUID(1)]);
			// A full tick signs the entry re-read on the event, and reads it once more.
			await cache.refresh(rows, {rescan: true, full: true});
			expect(adapter.discovers).toBe(3);
			await cache.refresh(rows, {rescan: true, full: true});
			expect(adapter.discovers).toBe(3);
		} finally {
			cache.close();
		}
	});

	it('a pane-event refresh between a change and the disk refresh does not swallow the change', async () => {
		// The supervisor runs a pane refresh (rescan false) whenever the mux speaks; a file change
		// reported just before it must still be read by the disk refresh that follows.
		const {cwd, stamp, adapter, conv, cache, changes} = watchedProject();
		try {
			const rows = [row({name: 'p', cwd})];
			await cache.refresh(rows, {rescan: true});
			adapter.lists.set(cwd, [conv(2), conv(1)]);
			fs.appendFileSync(stamp, '2');
			await until('the change is reported', () => changes() > 0);
			await cache.refresh(rows, {rescan: false});
			expect(cache.wantsTick()).toBe(true);
			const after = await cache.refresh(rows, {rescan: true});
			expect(after.conversations.map(c => c.id)).toEqual([UUID(2), UUID(1)]);
		} finally {
			cache.close();
		}
	});
});

describe('the parse cache', () => {
	// Kept across refreshes by its owner (the discovery cache), each refresh a new object.
	const kept = new ParseCache();
	const parseCached = <T>(kind: string, file: string, also: string, parse: () => T, keep?: (value: T) => boolean): T =>
		createRefresh({parses: kept}).parse(kind, file, also, parse, keep);

	it('parses again when the file changes (same size, new mtime), keeps the answer otherwise', () => {
		const file = path.join(dir, 'f.jsonl');
		fs.writeFileSync(file, 'aaaa');
		let parses = 0;
		const parse = () => {
			parses += 1;
			return fs.readFileSync(file, 'utf8');
		};
		expect(parseCached('test', file, '', parse)).toBe('aaaa');
		expect(parseCached('test', file, '', parse)).toBe('aaaa');
		expect(parses).toBe(1);
		fs.writeFileSync(file, 'bbbb');
		fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
		expect(parseCached('test', file, '', parse)).toBe('bbbb');
		expect(parseCached('test', file, 'another file moved', parse)).toBe('bbbb');
		expect(parses).toBe(3);
	});

	it('one refresh is one moment: a file kept once in it is not looked at again in it; the next refresh sees the change', () => {
		const file = path.join(dir, 'moment.jsonl');
		fs.writeFileSync(file, 'aaaa');
		const parse = () => fs.readFileSync(file, 'utf8');
		const refresh = createRefresh({parses: kept});
		expect(refresh.parse('moment', file, '', parse)).toBe('aaaa');
		fs.writeFileSync(file, 'bbbbbb');
		expect(refresh.parse('moment', file, '', parse)).toBe('aaaa');
		// Another `also` (another file the parse reads moved) is looked at again.
		expect(refresh.parse('moment', file, 'moved', parse)).toBe('bbbbbb');
		expect(createRefresh({parses: kept}).parse('moment', file, 'moved', parse)).toBe('bbbbbb');
		fs.writeFileSync(file, 'c');
		expect(createRefresh({parses: kept}).parse('moment', file, 'moved', parse)).toBe('c');
	});

	it('does not keep a transient answer', () => {
		const file = path.join(dir, 'db');
		fs.writeFileSync(file, 'x');
		let parses = 0;
		const parse = () => ++parses;
		parseCached('transient', file, '', parse, () => false);
		parseCached('transient', file, '', parse, () => false);
		expect(parses).toBe(2);
	});
});

describe('reads vouched for by the folder watch', () => {
	it('skip files and listings no event named, and read again what an event named', async () => {
		const watched = path.join(dir, 'watched');
		const unwatched = path.join(dir, 'unwatched');
		fs.mkdirSync(watched);
		fs.mkdirSync(unwatched);
		const file = path.join(watched, 't.jsonl');
		const other = path.join(unwatched, 'u.jsonl');
		fs.writeFileSync(file, 'one');
		fs.writeFileSync(other, 'one');
		const watch = new FolderWatch(() => undefined);
		try {
			watch.track('k', [watched]);
			let parses = 0;
			// One refresh per read, each with the watch's vouch of that moment and one long-lived cache.
			const cache = new ParseCache();
			const inRefresh = (vouch: Vouch) => ({refresh: createRefresh({parses: cache, vouch})});
			const read = (f: string) => inRefresh(watch.vouch()).refresh.parse('vouch-test', f, '', () => ((parses += 1), fs.readFileSync(f, 'utf8')));
			expect(read(file)).toBe('one');
			expect(read(file)).toBe('one');
			expect(parses).toBe(1);
			fs.writeFileSync(file, 'two!');
			await until('the change is seen', () => watch.pending());
			expect(read(file)).toBe('two!');
			expect(parses).toBe(2);
			// Outside the watch nothing is trusted: the stat sees the change.
			expect(read(other)).toBe('one');
			fs.writeFileSync(other, 'three');
			expect(read(other)).toBe('three');
			// A listing is reused until something is created in the folder.
			const names = () =>
				listDir(watched, inRefresh(watch.vouch()))
					.map(e => e.name)
					.sort();
			expect(names()).toEqual(['t.jsonl']);
			watch.take();
			fs.writeFileSync(path.join(watched, 'new.jsonl'), '');
			await until('the new file is seen', () => watch.pending());
			expect(names()).toEqual(['new.jsonl', 't.jsonl']);
		} finally {
			watch.close();
		}
	});
});

describe('the per-refresh process table', () => {
	let holder: ChildProcess | undefined;
	afterEach(() => {
		holder?.kill('SIGKILL');
		holder = undefined;
	});

	it('finds the same holders as the real table, from one pass over every open file', async () => {
		const file = path.join(dir, 'held.jsonl');
		fs.writeFileSync(file, '{}\n');
		holder = spawn(process.execPath, ['-e', `require('fs').openSync(${JSON.stringify(file)}, 'r'); setInterval(() => {}, 1000)`], {stdio: 'ignore'});
		const real = createProcessTable();
		await until('the holder holds the file', () =>
			fs.readdirSync(`/proc/${holder?.pid}/fd`).some(fd => {
				try {
					return fs.readlinkSync(`/proc/${holder?.pid}/fd/${fd}`) === file;
				} catch {
					return false;
				}
			}),
		);
		const direct = await real.holders([file, path.join(dir, 'nobody-holds-this')]);
		const snapshot = await snapshotTable(real).holders([file, path.join(dir, 'nobody-holds-this')]);
		expect(direct.map(h => h.pid)).toContain(holder.pid);
		expect(snapshot.map(h => ({pid: h.pid, path: h.path})).sort((a, b) => a.pid - b.pid)).toEqual(
			direct.map(h => ({pid: h.pid, path: h.path})).sort((a, b) => a.pid - b.pid),
		);
	});

	it("keeps a listing's indexes with the listing; other rows are indexed afresh", async () => {
		const rows = await createProcessTable().list();
		expect(pidIndex(rows)).toBe(pidIndex(rows));
		const copy = [...rows];
		expect(pidIndex(copy)).not.toBe(pidIndex(copy));
		expect(pidIndex(copy)).toEqual(pidIndex(rows));
		expect(processTree(rows, process.pid)[0]?.pid).toBe(process.pid);
	});

	it('answers list and get from one listing', async () => {
		let lists = 0;
		const base = {list: async () => (lists++, [{pid: 7, ppid: 1, startTime: 70, name: 'x', argv: ['x']}]), get: async () => undefined, holders: async () => []};
		const table = snapshotTable(base);
		await table.list();
		await table.list();
		expect(await table.get(7)).toMatchObject({pid: 7});
		expect(lists).toBe(1);
	});
});

describe('the visible rows', () => {
	it("are remembered per rows array and filter (in the store's memo), and match a fresh sort", () => {
		const sessions = ['beta', 'alpha', 'gamma'].map((name, i) => row({name, status: i === 1 ? 'stopped' : 'running'}));
		const state = initialState({sessions});
		const first = visibleSessions(state);
		// A later state of the same store (a spread, as the reducer makes) keeps the memo.
		expect(visibleSessions({...state, ui: {...state.ui}})).toBe(first);
		// Another store's state keeps its own.
		expect(visibleSessions(initialState({sessions}))).not.toBe(first);
		expect(first.map(s => s.name)).toEqual(['beta', 'gamma', 'alpha']);
		const filtered = visibleSessions({...state, ui: {...state.ui, filter: 'gamma'}});
		expect(filtered.map(s => s.name)).toEqual(['gamma']);
		expect(visibleSessions(state).map(s => s.name)).toEqual(['beta', 'gamma', 'alpha']);
		expect(visibleSessions(initialState({sessions: [...sessions]})).map(s => s.name)).toEqual(['beta', 'gamma', 'alpha']);
	});
});
