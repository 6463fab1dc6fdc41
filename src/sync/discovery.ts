import fs from 'node:fs';
import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import {createScanMemo, vouching} from '../adapters/common/memo.js';
import type {AdapterContext, AgentAdapter, InUseHolder} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {isAgentId, type AgentId, type Conversation, type Pane, type ProcessRef, type ResumeState, type SessionRecord} from '../domain/types.js';
import {folderExists} from '../system/folder.js';
import {snapshotTable, type ProcessTable} from '../system/processes.js';
import {keepingReadConnections} from '../system/sqliteRead.js';
import {paneEvidence} from './paneEvidence.js';
import type {PaneEvidence} from '../drift/input.js';
import {withUse, type UseMemo} from './conversationUse.js';
import {FolderWatch} from './folderWatch.js';

/** What one `discover(cwd)` found (parents only, every age), or why it failed. */
export type CwdFacts =
	| {readonly ok: true; readonly conversations: readonly Conversation[]; readonly problems: readonly string[]}
	| {readonly ok: false; readonly error: string};

/** Who uses a conversation, or why that could not be told. */
export type UseFacts = {readonly ok: true; readonly holders: readonly InUseHolder[]} | {readonly ok: false; readonly error: string};

/** Everything the adapters said, keyed so the snapshot can look rows up. */
export interface DiscoveryResult {
	/** By `cwdKey(agent, cwd)`. */
	readonly byCwd: ReadonlyMap<string, CwdFacts>;
	/** By `pinKey(agent, id, cwd)`. */
	readonly verify: ReadonlyMap<string, ResumeState>;
	/** By `inUseKey(agent, id)`: processes using the conversation (checked only where verify said yes). */
	readonly inUse: ReadonlyMap<string, UseFacts>;
	/** Every conversation found in the known cwds, newest first, registered or not. */
	readonly conversations: readonly Conversation[];
	/** By pane id: which conversation the agent of a pane no pinned row accounts for is on (asked only when `panes` were given). */
	readonly paneEvidence?: ReadonlyMap<string, PaneEvidence>;
}

export const cwdKey = (agent: string, cwd: string): string => `${agent}\0${cwd}`;
export const pinKey = (agent: string, id: string, cwd: string): string => `${agent}\0${id}\0${cwd}`;
export const inUseKey = (agent: string, id: string): string => `${agent}\0${id}`;

/** The stat we compare: a changed mtime or size means "look again" (`isDirectory` tells the folder watch what to watch). */
export type StatFn = (file: string) => {readonly mtimeMs: number; readonly size: number; readonly isDirectory?: boolean} | undefined;

const realStat: StatFn = file => {
	try {
		// No exception for a missing path: a refresh stats thousands of paths, some not there yet.
		const st = fs.statSync(file, {throwIfNoEntry: false});
		return st ? {mtimeMs: st.mtimeMs, size: st.size, isDirectory: st.isDirectory()} : undefined;
	} catch {
		return undefined;
	}
};

export interface DiscoveryDeps {
	readonly ctx: AdapterContext;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
	readonly stat?: StatFn;
	/**
	 * Watch the folders of every entry's watch paths (inotify) and call this when one changes.
	 * Then a tick stats only the entries a change was seen in (plus any it could not watch),
	 * instead of every watch path of every entry; `full` refreshes still stat everything.
	 */
	readonly onChange?: () => void;
	/** The cache is asked once (`status`): it stats no watch paths, since no later refresh compares them. */
	readonly once?: boolean;
}

export interface RefreshOptions {
	/**
	 * A discovery tick: look again wherever something may have changed (by the adapter's watch
	 * paths, or always when it has none). Otherwise (a pane event) only keys never seen are read.
	 */
	readonly rescan: boolean;
	/** The current process table, so `inUse` is re-asked only when processes came or went. */
	readonly processes?: readonly ProcessRef[];
	/** With a folder watch: stat every entry's watch paths on this tick, changed or not (a safety net). */
	readonly full?: boolean;
	/**
	 * false: do not discover the cwds' conversations (`status` shows none and needs no drift
	 * candidates); pins are still verified and asked about. Default true.
	 */
	readonly conversations?: boolean;
	/**
	 * Registry ids of rows whose agent runs in their pane right now. Their resume state is
	 * "live in pane" whatever the disk says, and drift only judges their artifact once the agent
	 * is gone, so neither `verify` nor `inUse` is asked for them (at 500 live rows that is most of
	 * a refresh); when the agent exits, the next refresh asks at once (a key never seen).
	 */
	readonly live?: ReadonlySet<number>;
	/**
	 * The panes of this refresh: the agent of each pane no pinned running row accounts for gets its
	 * evidence (which conversation it is on), for drift's adopt and pin fixes. Asked again only
	 * on a discovery tick or when the pane's agent processes changed.
	 */
	readonly panes?: readonly Pane[] | null;
}

type SignatureOf = (adapter: AgentAdapter, cwd: string) => string | undefined;

/** The merged conversation list and what it takes to update it in place. */
interface Merge {
	readonly facts: readonly CwdFacts[];
	readonly conversations: readonly Conversation[];
	/** Sort rank (cwd index, then position) of every conversation listed, for ties on createdAt. */
	readonly rank: Map<Conversation, number>;
	/** How many cwd lists name each `agent\0id` (a conversation listed by two cwds is shown once). */
	readonly counts: Map<string, number>;
}

const RANK_STRIDE = 10_000_000;
const conversationsOf = (f: CwdFacts | undefined): readonly Conversation[] => (f?.ok ? f.conversations : []);

/** Newest first; equal times in cwd order, then list order (what a stable sort of the concatenation gives). */
function byNewest(rank: ReadonlyMap<Conversation, number>): (a: Conversation, b: Conversation) => number {
	return (a, b) => b.createdAt - a.createdAt || (rank.get(a) ?? 0) - (rank.get(b) ?? 0);
}

function mergeAll(facts: readonly CwdFacts[]): Merge {
	const rank = new Map<Conversation, number>();
	const counts = new Map<string, number>();
	facts.forEach((f, i) =>
		conversationsOf(f).forEach((c, j) => {
			rank.set(c, i * RANK_STRIDE + j);
			const key = inUseKey(c.agent, c.id);
			counts.set(key, (counts.get(key) ?? 0) + 1);
		}),
	);
	const seen = new Set<string>();
	const conversations = [...rank.keys()].sort(byNewest(rank)).filter(c => {
		const key = inUseKey(c.agent, c.id);
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
	return {facts, conversations, rank, counts};
}

/**
 * The merge after a few cwds changed (a file-change refresh): only the conversations that are not
 * the same objects as before (see `keepUnchanged`) leave and enter the list, O(n) with no re-sort
 * of 20,000. Undefined (merge everything) when the cwd list itself changed, many changed, a
 * conversation listed twice is involved, or a changed cwd lists its kept conversations in
 * another order (their ties would then sort differently).
 */
function mergeChanged(last: Merge, facts: readonly CwdFacts[]): Merge | undefined {
	if (last.facts.length !== facts.length) return undefined;
	const changed = facts.flatMap((f, i) => (f === last.facts[i] ? [] : [i]));
	if (changed.length > 4) return undefined;
	const diffs = changed.map(i => {
		const before = conversationsOf(last.facts[i]);
		const after = conversationsOf(facts[i]);
		const was = new Set(before);
		const is = new Set(after);
		return {i, dropped: before.filter(c => !is.has(c)), added: after.filter(c => !was.has(c)), keptBefore: before.filter(c => is.has(c)), keptAfter: after.filter(c => was.has(c)), after};
	});
	if (diffs.some(d => d.keptBefore.some((c, k) => d.keptAfter[k] !== c))) return undefined;
	// Updated in place: `last` is replaced by the result (or by a full merge when this gives up).
	const {rank, counts} = last;
	const dropped = new Set<Conversation>();
	for (const d of diffs) {
		for (const c of d.dropped) {
			const key = inUseKey(c.agent, c.id);
			const left = (counts.get(key) ?? 0) - 1;
			if (left > 0) return undefined;
			counts.delete(key);
			rank.delete(c);
			dropped.add(c);
		}
	}
	const added: Conversation[] = [];
	for (const d of diffs) {
		for (const c of d.added) {
			const key = inUseKey(c.agent, c.id);
			if (counts.has(key)) return undefined;
			counts.set(key, 1);
			added.push(c);
		}
		// Positions in the cwd's list may have moved (one came or went): ranks follow, order kept.
		for (const [j, c] of d.after.entries()) rank.set(c, d.i * RANK_STRIDE + j);
	}
	const order = byNewest(rank);
	added.sort(order);
	// The list stays sorted: each added conversation goes in at the place a binary search finds,
	// not by comparing it with 20,000 others (reading createdAt off seven agents' object shapes).
	const conversations = dropped.size === 0 ? [...last.conversations] : last.conversations.filter(c => !dropped.has(c));
	let from = 0;
	for (const c of added) {
		let lo = from;
		let hi = conversations.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (order(c, conversations[mid] as Conversation) < 0) hi = mid;
			else lo = mid + 1;
		}
		conversations.splice(lo, 0, c);
		from = lo + 1;
	}
	return {facts, conversations, rank, counts};
}

/** Same fields, same values (resumeState compared by content). */
function sameConversation(a: Conversation, b: Conversation): boolean {
	const keys = Object.keys(a) as (keyof Conversation)[];
	if (keys.length !== Object.keys(b).length) return false;
	return keys.every(k => a[k] === b[k] || (k === 'resumeState' && JSON.stringify(a[k]) === JSON.stringify(b[k])));
}

/**
 * A cwd read again (one transcript grew) comes back as all-new objects: keep the old object of
 * every conversation that did not change, and the old facts when nothing did. The merge then
 * moves only what changed, drift's per-list caches stay valid, and the view sees the same
 * objects for unchanged conversations.
 */
function keepUnchanged(old: CwdFacts | undefined, fresh: CwdFacts): CwdFacts {
	if (!old?.ok || !fresh.ok) return fresh;
	const byId = new Map<string, Conversation[]>();
	for (const c of old.conversations) {
		const same = byId.get(c.id);
		if (same) same.push(c);
		else byId.set(c.id, [c]);
	}
	let reused = 0;
	const conversations = fresh.conversations.map(c => {
		const candidates = byId.get(c.id);
		const at = candidates?.findIndex(o => sameConversation(o, c)) ?? -1;
		if (!candidates || at < 0) return c;
		// Each old object once: a list naming one conversation twice keeps two objects.
		const [kept] = candidates.splice(at, 1);
		reused += 1;
		return kept as Conversation;
	});
	const problemsSame = old.problems.length === fresh.problems.length && old.problems.every((p, i) => p === fresh.problems[i]);
	if (problemsSame && reused === old.conversations.length && conversations.length === old.conversations.length && conversations.every((c, i) => c === old.conversations[i])) return old;
	return {ok: true, conversations, problems: problemsSame ? old.problems : fresh.problems};
}

/** The signature of an entry re-read on a watch event: never equal to a real one, so a full tick re-checks it. */
const WATCHED = '\0watched';

/** Signature text, watched folders and the paths themselves per watch-path list, for one refresh. */
/** One pane's agent processes (pid:start, in order) and the evidence last read for them. */
interface PaneFacts {
	readonly key: string;
	readonly evidence: PaneEvidence | undefined;
}

type Looked = WeakMap<readonly string[], {readonly text: string; readonly folders: readonly string[]; readonly paths: ReadonlySet<string>}>;

/** A folder is watched itself; a file (or a path not there yet) through its parent. */
function folderOf(p: string, st: ReturnType<StatFn>): string {
	return st?.isDirectory === true ? p : path.dirname(p);
}

interface Look {
	readonly rescan: boolean;
	readonly full: boolean;
	/** Keys a folder watch saw change since the last refresh. */
	readonly dirty: ReadonlySet<string>;
}

interface Entry<T> {
	readonly signature: string | undefined;
	readonly value: T;
}

/** How many adapter calls run at once: discovery reads files; a few in parallel is plenty. */
const CONCURRENCY = 4;

/** Let keystrokes and mux events in between adapter calls (adapters read synchronously). */
const yieldToLoop = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

async function forEachLimit<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
	const queue = [...items];
	await Promise.all(
		Array.from({length: Math.min(CONCURRENCY, queue.length)}, async () => {
			for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
				await fn(item);
				await yieldToLoop();
			}
		}),
	);
}

function adapterOf(adapters: Readonly<Record<AgentId, AgentAdapter>>, agent: string): AgentAdapter | undefined {
	return isAgentId(agent) && Object.hasOwn(adapters, agent) ? adapters[agent] : undefined;
}

/**
 * Adapter discovery for the registry rows' cwds, cached so a refresh costs what changed, not
 * what exists. Each (agent, cwd) entry carries a signature made from the stat of the adapter's
 * `watchPaths` (mtime and size, no reads); a tick re-runs only entries whose signature moved.
 * `inUse` is re-asked only when the set of processes changed (pid and start time), since a
 * conversation is used by a process that exists.
 */
export class DiscoveryCache {
	private readonly ctx: AdapterContext;
	private readonly adapters: Readonly<Record<AgentId, AgentAdapter>>;
	private readonly stat: StatFn;
	private byCwd = new Map<string, Entry<CwdFacts>>();
	private verified = new Map<string, Entry<ResumeState>>();
	private used = new Map<string, UseFacts>();
	private processKey: string | undefined;
	/** The listing `processKey` was made from. */
	private processList: readonly ProcessRef[] | undefined;
	private readonly watch: FolderWatch | undefined;
	private lastMerge: Merge | undefined;
	/** Per pane no pinned row accounts for: its agent processes and the evidence read for them. */
	private paneFacts = new Map<string, PaneFacts>();
	private lastEvidence: ReadonlyMap<string, PaneEvidence> | undefined;
	/** The cwds whose conversations the last refresh found changed (any agent). */
	private reread = new Set<string>();
	private table: {readonly rows: readonly ProcessRef[]; readonly table: ProcessTable} | undefined;
	private lastUse: {readonly merged: readonly Conversation[]; readonly key: string | undefined; readonly out: readonly Conversation[]; readonly memo?: UseMemo} | undefined;
	private readonly once: boolean;
	/** Per cwd key, the watch paths its last signature covered (shared between keys with one list). */
	private readonly signedPaths = new Map<string, ReadonlySet<string>>();
	/** How many adapter calls the last refresh made (tests and the benchmark read it). */
	lastCalls = 0;

	constructor(deps: DiscoveryDeps) {
		this.ctx = deps.ctx;
		this.adapters = deps.adapters ?? ADAPTERS;
		this.stat = deps.stat ?? realStat;
		this.watch = deps.onChange ? new FolderWatch(deps.onChange) : undefined;
		this.once = deps.once === true;
	}

	/**
	 * The process table of one listing. A refresh for a file change reuses the last listing (see
	 * the supervisor), and with it the pass over open files that listing's table made: a file
	 * change costs no second walk of every process's file descriptors.
	 */
	private tableFor(rows: readonly ProcessRef[] | undefined): ProcessTable {
		if (rows === undefined) return snapshotTable(this.ctx.processes);
		if (this.table?.rows !== rows) this.table = {rows, table: snapshotTable(this.ctx.processes, rows)};
		return this.table.table;
	}

	/** Stop watching folders. */
	close(): void {
		this.watch?.close();
	}

	/**
	 * Would a tick find anything to do? Without a folder watch, or with entries the watch does
	 * not cover (no watch paths, a folder it could not watch, a change seen), yes.
	 */
	wantsTick(): boolean {
		if (!this.watch) return true;
		if (this.watch.pending()) return true;
		for (const [key, entry] of this.byCwd) if (entry.signature === undefined || this.watch.needsLook(key, new Set())) return true;
		return false;
	}

	/** The watch signature for (adapter, cwd), or undefined when the adapter names no paths. */
	private signature(ctx: AdapterContext, adapter: AgentAdapter, cwd: string, stat: StatFn, looked: Looked): string | undefined {
		if (!adapter.watchPaths) return undefined;
		let paths: readonly string[];
		try {
			paths = adapter.watchPaths(ctx, cwd);
		} catch {
			return undefined;
		}
		// An adapter whose paths do not depend on the cwd hands every cwd the same list (one
		// per refresh): its text and folders are made once, not once per cwd (thousands of paths each).
		let seen = looked.get(paths);
		if (!seen) {
			const folders = new Set<string>();
			const text = paths
				.map(p => {
					const st = stat(p);
					folders.add(folderOf(p, st));
					return st ? `${p}:${st.mtimeMs}:${st.size}` : `${p}:-`;
				})
				.join('\n');
			seen = {text, folders: [...folders], paths: new Set(paths)};
			looked.set(paths, seen);
		}
		const key = cwdKey(adapter.id, cwd);
		this.watch?.track(key, seen.folders);
		this.signedPaths.set(key, seen.paths);
		return seen.text;
	}

	/**
	 * A change the folder watch reported, in a key it fully covers: read again without stat()ing
	 * every watch path for a signature (a busy project folder: a thousand transcripts), since the
	 * event already said "changed". The entry is marked WATCHED; the next full tick signs it (and
	 * reads it once more). Folders that appeared (a new date folder) are watched from now on.
	 */
	private changeSeen(ctx: AdapterContext, adapter: AgentAdapter, cwd: string, look: Look): boolean {
		const key = cwdKey(adapter.id, cwd);
		const known = this.signedPaths.get(key);
		if (!this.watch || !look.rescan || look.full || !look.dirty.has(key) || !this.watch.covers(key) || !adapter.watchPaths || !known) return false;
		let paths: readonly string[];
		try {
			paths = adapter.watchPaths(ctx, cwd);
		} catch {
			return false;
		}
		// Only paths that were not there at the last signature are stat()ed (to know their folder).
		const fresh = paths.filter(p => !known.has(p));
		this.watch.track(key, [...new Set(fresh.map(p => folderOf(p, this.stat(p))))]);
		if (fresh.length > 0) this.signedPaths.set(key, new Set([...known, ...fresh]));
		return true;
	}

	/**
	 * May a tick keep `entry` without looking? Yes when a folder watch covers its key and saw no
	 * change since the entry was made (and the tick is not a full one).
	 */
	private unchanged<T>(entry: Entry<T> | undefined, key: string, options: {rescan: boolean; full: boolean; dirty: ReadonlySet<string>}): entry is Entry<T> {
		if (!entry || !this.watch || !options.rescan || options.full || entry.signature === undefined) return false;
		return !this.watch.needsLook(key, options.dirty);
	}

	private stale<T>(entry: Entry<T> | undefined, signature: string | undefined, rescan: boolean): boolean {
		if (!entry) return true;
		if (!rescan) return false;
		return signature === undefined || entry.signature !== signature;
	}

	async refresh(sessions: readonly SessionRecord[], options: RefreshOptions): Promise<DiscoveryResult> {
		this.lastCalls = 0;
		const rows = sessions.filter(s => s.status !== 'purged');
		const checked = options.live ? rows.filter(r => !options.live?.has(r.id)) : rows;
		// Only a refresh that looks at the disk takes the changes seen; a pane refresh leaves them for the next one.
		const dirty = options.rescan ? this.watch?.take() : undefined;
		const look = {rescan: options.rescan, full: options.full === true, dirty: dirty ?? new Set<string>()};
		// One refresh is one moment: adapters share their whole-store scans (memo), one process
		// table and one pass over open files, and each (agent, cwd) signature is stat()ed once.
		const ctx: AdapterContext = {...this.ctx, memo: createScanMemo(), processes: this.tableFor(options.processes)};
		const signatures = new Map<string, string | undefined>();
		const looked: Looked = new WeakMap();
		const stats = new Map<string, ReturnType<StatFn>>();
		const statOnce: StatFn = file => {
			if (!stats.has(file)) stats.set(file, this.stat(file));
			return stats.get(file);
		};
		const signature = (adapter: AgentAdapter, cwd: string) => {
			if (this.once) return undefined;
			const key = cwdKey(adapter.id, cwd);
			if (!signatures.has(key)) signatures.set(key, this.signature(ctx, adapter, cwd, statOnce, looked));
			return signatures.get(key);
		};
		// Adapter reads trust the folder watch for files and folders no event named (not on a full
		// tick: that one checks everything, in case an event was lost).
		const read = async () => {
			const byCwd = options.conversations === false ? new Map<string, Entry<CwdFacts>>() : await this.refreshCwds(ctx, rows, look, signature);
			const verified = await this.refreshPins(ctx, checked, look, signature);
			await this.refreshUse(ctx, checked, verified, options);
			const conversations = await this.withUse(ctx, this.merged([...byCwd.values()].map(e => e.value)), options);
			const paneEvidence = options.panes === undefined ? undefined : await this.evidenceFor(ctx, rows, options, look);
			return {byCwd, verified, conversations, paneEvidence};
		};
		// Each store a call reads stays open for the refresh's other calls (keepingReadConnections).
		const kept = () => keepingReadConnections(read);
		const {byCwd, verified, conversations, paneEvidence} = this.watch && !look.full ? await vouching.run(this.watch.vouch(), kept) : await kept();
		return {
			byCwd: new Map([...byCwd].map(([k, e]) => [k, e.value])),
			verify: new Map([...verified].map(([k, e]) => [k, e.value])),
			inUse: new Map(this.used),
			conversations,
			...(paneEvidence ? {paneEvidence} : {}),
		};
	}

	/**
	 * Pane evidence (sync/paneEvidence.ts) for panes no pinned running row accounts for. A pane is
	 * asked again when its agent processes changed, when a change was seen in its folder or its
	 * folder's conversations were found changed (its agent wrote one there; a full tick finds what
	 * an event missed), and on every tick without a folder watch; otherwise it keeps its evidence
	 * (the same map while nothing changed), since reading it costs a discovery of the pane's folder.
	 */
	private async evidenceFor(ctx: AdapterContext, rows: readonly SessionRecord[], options: RefreshOptions, look: Look): Promise<ReadonlyMap<string, PaneEvidence>> {
		const accounted = new Set(rows.filter(r => r.status === 'running' && r.agentSessionId !== null && r.paneId !== null).map(r => r.paneId as string));
		const panes = (options.panes ?? []).filter(p => !p.isSelf && !accounted.has(p.id) && p.processes.length > 0);
		const dirtyCwds = new Set([...look.dirty].map(key => key.slice(key.indexOf('\0') + 1)).concat([...this.reread]));
		const next = new Map<string, PaneFacts>();
		let changed = panes.length !== this.paneFacts.size;
		for (const pane of panes) {
			const key = pane.processes.map(q => `${q.pid}:${q.startTime}`).join(',');
			const known = this.paneFacts.get(pane.id);
			const cwds = [pane.processes[0]?.cwd, pane.foregroundCwd, pane.cwd];
			const stale = !known || known.key !== key || (look.rescan && (!this.watch || cwds.some(cwd => cwd !== undefined && dirtyCwds.has(cwd))));
			if (!stale) {
				next.set(pane.id, known);
				continue;
			}
			let evidence: PaneEvidence | undefined;
			try {
				evidence = await paneEvidence(pane, this.adapters, ctx);
			} catch {
				evidence = undefined;
			}
			if (!known || JSON.stringify(known.evidence) !== JSON.stringify(evidence)) changed = true;
			next.set(pane.id, {key, evidence: known && JSON.stringify(known.evidence) === JSON.stringify(evidence) ? known.evidence : evidence});
		}
		this.paneFacts = next;
		// Equal evidence keeps the same map, so drift keeps its findings.
		if (!changed && this.lastEvidence) return this.lastEvidence;
		const value = new Map<string, PaneEvidence>();
		for (const [id, facts] of next) if (facts.evidence) value.set(id, facts.evidence);
		this.lastEvidence = value;
		return value;
	}

	/**
	 * The merged list with the in-use rule applied (a live TUI's conversations read `no: in use`),
	 * asked again only when the list or the set of processes changed.
	 */
	private async withUse(ctx: AdapterContext, merged: readonly Conversation[], options: RefreshOptions): Promise<readonly Conversation[]> {
		const key = options.processes?.map(p => `${p.pid}:${p.startTime}`).join(',');
		const last = this.lastUse;
		if (last && last.merged === merged && key !== undefined && last.key === key) return last.out;
		let out: readonly Conversation[] = merged;
		let memo = last?.memo;
		try {
			const used = await withUse(ctx, merged, this.adapters, memo);
			out = used.conversations;
			memo = used.memo;
		} catch {
			// The list still shows; purge and resume ask the rule themselves.
		}
		this.lastUse = {merged, key, out, ...(memo ? {memo} : {})};
		return out;
	}

	/**
	 * Every cwd's conversations in one list, newest first, each once. The same list (same array)
	 * while no cwd's facts changed: merging and sorting 20,000 conversations on every refresh cost
	 * more than the refresh, and an unchanged array lets the view skip its work too.
	 */
	private merged(facts: readonly CwdFacts[]): readonly Conversation[] {
		const last = this.lastMerge;
		if (last && last.facts.length === facts.length && last.facts.every((f, i) => f === facts[i])) return last.conversations;
		const next = (last && mergeChanged(last, facts)) ?? mergeAll(facts);
		this.lastMerge = next;
		return next.conversations;
	}

	private async refreshCwds(ctx: AdapterContext, rows: readonly SessionRecord[], look: Look, signatureOf: SignatureOf): Promise<Map<string, Entry<CwdFacts>>> {
		const next = new Map<string, Entry<CwdFacts>>();
		const todo: {key: string; adapter: AgentAdapter; cwd: string; signature: string | undefined}[] = [];
		const order: string[] = [];
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			const key = cwdKey(row.agent, row.cwd);
			if (!adapter || next.has(key) || todo.some(t => t.key === key)) continue;
			order.push(key);
			const entry = this.byCwd.get(key);
			if (this.unchanged(entry, key, look)) {
				next.set(key, entry);
				continue;
			}
			if (entry && this.changeSeen(ctx, adapter, row.cwd, look)) {
				todo.push({key, adapter, cwd: row.cwd, signature: WATCHED});
				continue;
			}
			// A pane event keeps every entry it has: no signature is needed to decide that (signing
			// stat()s every watch path of every cwd: a quarter of a second at 20,000 conversations).
			if (entry && !look.rescan) {
				next.set(key, entry);
				continue;
			}
			const signature = signatureOf(adapter, row.cwd);
			if (entry && !this.stale(entry, signature, look.rescan)) next.set(key, entry);
			else todo.push({key, adapter, cwd: row.cwd, signature});
		}
		await forEachLimit(todo, async ({key, adapter, cwd, signature}) => {
			this.lastCalls += 1;
			let value: CwdFacts;
			try {
				const found = await adapter.discover(ctx, {cwd, includeChildren: false});
				value = keepUnchanged(this.byCwd.get(key)?.value, {ok: true, conversations: found.conversations, problems: found.problems});
			} catch (error) {
				value = {ok: false, error: `${adapter.label} discovery failed: ${messageOf(error)}`};
			}
			next.set(key, {signature, value});
		});
		// In row order, however the entries were read: conversations of equal age then list the
		// same way every refresh, and an unchanged cwd keeps its place for the in-place merge.
		const ordered = new Map<string, Entry<CwdFacts>>();
		for (const key of order) {
			const entry = next.get(key);
			if (entry) ordered.set(key, entry);
		}
		this.reread = new Set([...ordered].filter(([key, entry]) => this.byCwd.get(key)?.value !== entry.value).map(([key]) => key.slice(key.indexOf('\0') + 1)));
		this.byCwd = ordered;
		return ordered;
	}

	private async refreshPins(ctx: AdapterContext, rows: readonly SessionRecord[], look: Look, signatureOf: SignatureOf): Promise<Map<string, Entry<ResumeState>>> {
		const next = new Map<string, Entry<ResumeState>>();
		const todo: {key: string; adapter: AgentAdapter; id: string; cwd: string; signature: string | undefined}[] = [];
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			if (!adapter || row.agentSessionId === null) continue;
			const key = pinKey(row.agent, row.agentSessionId, row.cwd);
			if (next.has(key) || todo.some(t => t.key === key)) continue;
			const entry = this.verified.get(key);
			if (this.unchanged(entry, cwdKey(row.agent, row.cwd), look)) {
				next.set(key, entry);
				continue;
			}
			if (entry && this.changeSeen(ctx, adapter, row.cwd, look)) {
				todo.push({key, adapter, id: row.agentSessionId, cwd: row.cwd, signature: WATCHED});
				continue;
			}
			// A pane event keeps what it has without signing (see refreshCwds).
			if (entry && !look.rescan) {
				next.set(key, entry);
				continue;
			}
			const signature = signatureOf(adapter, row.cwd);
			if (entry && !this.stale(entry, signature, look.rescan)) next.set(key, entry);
			else todo.push({key, adapter, id: row.agentSessionId, cwd: row.cwd, signature});
		}
		await forEachLimit(todo, async ({key, adapter, id, cwd, signature}) => {
			this.lastCalls += 1;
			let value: ResumeState;
			try {
				value = await adapter.verify(ctx, id, cwd);
			} catch (error) {
				// An id the adapter rejects, a locked store: a per-row `unknown`, never a crash.
				value = {kind: 'unknown', reason: `${adapter.label}: ${messageOf(error)}`};
			}
			next.set(key, {signature, value});
		});
		this.verified = next;
		return next;
	}

	/** inUse for rows whose conversation verified: the last condition of "resumable". */
	private async refreshUse(ctx: AdapterContext, rows: readonly SessionRecord[], verified: ReadonlyMap<string, Entry<ResumeState>>, options: RefreshOptions): Promise<void> {
		// The same listing (a file-change refresh reuses the last one) has the same key: no need to
		// spell out a thousand processes again.
		const same = options.processes !== undefined && options.processes === this.processList;
		const key = same ? this.processKey : options.processes?.map(p => `${p.pid}:${p.startTime}`).join(',');
		const processesMoved = key === undefined || key !== this.processKey;
		if (options.rescan) {
			this.processKey = key;
			this.processList = options.processes;
		}
		const next = new Map<string, UseFacts>();
		const todo: {key: string; adapter: AgentAdapter; id: string}[] = [];
		// Per cwd, not per row (500 rows share a few dozen cwds).
		const exists = new Map<string, boolean>();
		const existsOnce = (cwd: string): boolean => {
			let known = exists.get(cwd);
			if (known === undefined) exists.set(cwd, (known = folderExists(cwd)));
			return known;
		};
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			if (!adapter || row.agentSessionId === null || !existsOnce(row.cwd)) continue;
			if (verified.get(pinKey(row.agent, row.agentSessionId, row.cwd))?.value.kind !== 'yes') continue;
			const k = inUseKey(row.agent, row.agentSessionId);
			if (next.has(k) || todo.some(t => t.key === k)) continue;
			const known = this.used.get(k);
			if (known && !(options.rescan && processesMoved)) next.set(k, known);
			else todo.push({key: k, adapter, id: row.agentSessionId});
		}
		await forEachLimit(todo, async item => {
			this.lastCalls += 1;
			try {
				next.set(item.key, {ok: true, holders: await item.adapter.inUse(ctx, item.id)});
			} catch (error) {
				next.set(item.key, {ok: false, error: `${item.adapter.label} could not tell who uses it: ${messageOf(error)}`});
			}
		});
		this.used = next;
	}
}
