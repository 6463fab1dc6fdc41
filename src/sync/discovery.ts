// Adapter discovery for the registry's cwds, cached across refreshes. Longer than ~350 lines on
// purpose: DiscoveryCache is one cache whose refresh steps (cwds, pins, in use, pane evidence)
// share its entries, its folder watch and its parse cache; the conversations list it merges
// lives in discoveryMerge.ts.

import fs from 'node:fs';
import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import {createRefresh, memo, ParseCache} from '../adapters/common/refresh.js';
import type {AdapterContext, AgentAdapter, InUseHolder} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {isAgentId, type AgentId, type Conversation, type Pane, type ProcessRef, type ResumeState, type SessionRecord} from '../domain/types.js';
import {folderExists} from '../system/folder.js';
import {snapshotTable, type ProcessTable} from '../system/processes.js';
import {keepingReadConnections} from '../system/sqliteRead.js';
import {paneEvidence} from './paneEvidence.js';
import type {PaneEvidence} from '../drift/input.js';
import {withUseEach, type UseMemo} from './conversationUse.js';
import {FolderWatch} from './folderWatch.js';
import {keepUnchanged, type Merge, mergeAll, mergeChanged} from './discoveryMerge.js';

/** The list of a cwd that could not be read (one array, so it never counts as a changed list). */
const NO_CONVERSATIONS: readonly Conversation[] = [];

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
	/** The (agent, cwd) keys whose conversations the last refresh found changed. */
	private reread = new Set<string>();
	/** The last listing's table, and what was made from it alone (`Refresh.perListing`). */
	private table: {readonly rows: readonly ProcessRef[]; readonly table: ProcessTable; readonly kept: Map<string, unknown>} | undefined;
	private useMemo: UseMemo | undefined;
	/** Each cwd's facts with the in-use rule applied, while its answered list stands. */
	private answeredFacts = new WeakMap<CwdFacts, {readonly list: readonly Conversation[]; readonly facts: CwdFacts}>();
	private readonly once: boolean;
	/** Per cwd key, the watch paths its last signature covered (shared between keys with one list). */
	private readonly signedPaths = new Map<string, ReadonlySet<string>>();
	/** Parsed files and vouched listings, kept across refreshes and handed to each refresh (the context's own, when it has one). */
	private readonly parses: ParseCache;
	/** How many adapter calls the last refresh made (tests and the benchmark read it). */
	lastCalls = 0;

	constructor(deps: DiscoveryDeps) {
		this.ctx = deps.ctx;
		this.parses = deps.ctx.parses ?? new ParseCache();
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
	private tableFor(rows: readonly ProcessRef[] | undefined): {readonly table: ProcessTable; readonly kept?: Map<string, unknown>} {
		if (rows === undefined) return {table: snapshotTable(this.ctx.processes)};
		if (this.table?.rows !== rows) this.table = {rows, table: snapshotTable(this.ctx.processes, rows), kept: new Map()};
		return this.table;
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
			// Asked by the cwd list and the pins alike: listed once per refresh.
			paths = memo(ctx, `watch-paths:${key}`, () => adapter.watchPaths?.(ctx, cwd) ?? []);
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
		// One refresh is one moment: adapters share their whole-store scans (ctx.refresh), one process
		// table and one pass over open files, and each (agent, cwd) signature is stat()ed once.
		// Adapter reads trust the folder watch for files and folders no event named (not on a full
		// tick: that one checks everything, in case an event was lost).
		const vouch = this.watch && !look.full ? this.watch.vouch() : undefined;
		const listing = this.tableFor(options.processes);
		const refresh = createRefresh({parses: this.parses, ...(vouch ? {vouch} : {}), ...(listing.kept ? {listing: listing.kept} : {})});
		const ctx: AdapterContext = {...this.ctx, refresh, processes: listing.table};
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
		const read = async () => {
			const byCwd = options.conversations === false ? new Map<string, Entry<CwdFacts>>() : await this.refreshCwds(ctx, rows, look, signature);
			const verified = await this.refreshPins(ctx, checked, look, signature);
			await this.refreshUse(ctx, checked, verified, options);
			const answered = await this.withUse(ctx, [...byCwd.values()].map(e => e.value));
			const conversations = this.merged(answered);
			const paneEvidence = options.panes === undefined ? undefined : await this.evidenceFor(ctx, rows, options, look);
			return {byCwd, verified, conversations, paneEvidence};
		};
		// Each store a call reads stays open for the refresh's other calls (keepingReadConnections).
		const {byCwd, verified, conversations, paneEvidence} = await keepingReadConnections(read);
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
	 * asked again when its agent processes changed, when a change was seen in its agent's
	 * conversations of its folder or they were found changed (its agent wrote one there; a full
	 * tick finds what an event missed), and on every tick without a folder watch; otherwise it keeps its evidence
	 * (the same map while nothing changed), since reading it costs a discovery of the pane's folder.
	 */
	private async evidenceFor(ctx: AdapterContext, rows: readonly SessionRecord[], options: RefreshOptions, look: Look): Promise<ReadonlyMap<string, PaneEvidence>> {
		const accounted = new Set(rows.filter(r => r.status === 'running' && r.agentSessionId !== null && r.paneId !== null).map(r => r.paneId as string));
		const panes = (options.panes ?? []).filter(p => !p.isSelf && !accounted.has(p.id) && p.processes.length > 0);
		// By (agent, cwd): a claude transcript that grew re-reads the claude panes of its folder only.
		const changedKeys = new Set([...look.dirty, ...this.reread]);
		const next = new Map<string, PaneFacts>();
		let changed = panes.length !== this.paneFacts.size;
		for (const pane of panes) {
			const key = pane.processes.map(q => `${q.pid}:${q.startTime}`).join(',');
			const known = this.paneFacts.get(pane.id);
			const cwds = [pane.processes[0]?.cwd, pane.foregroundCwd, pane.cwd];
			const agent = known?.evidence?.agent;
			const stale = !known || known.key !== key || (look.rescan && (!this.watch || (agent !== undefined && cwds.some(cwd => cwd !== undefined && changedKeys.has(cwdKey(agent, cwd))))));
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
	 * Each cwd's facts with the in-use rule applied (a live TUI's conversations read `no: in use`).
	 * Only a list that changed, or all of them when the live uses did, is asked again; facts whose
	 * answers did not change stay the same objects, so the merge moves only what changed.
	 */
	private async withUse(ctx: AdapterContext, facts: readonly CwdFacts[]): Promise<readonly CwdFacts[]> {
		const lists = facts.map(f => (f.ok ? f.conversations : NO_CONVERSATIONS));
		try {
			const used = await withUseEach(ctx, lists, this.adapters, this.useMemo);
			if (used.memo) this.useMemo = used.memo;
			return facts.map((f, i) => {
				const list = used.lists[i];
				if (!f.ok || list === undefined || list === f.conversations) return f;
				const known = this.answeredFacts.get(f);
				if (known?.list === list) return known.facts;
				const answered: CwdFacts = {...f, conversations: list};
				this.answeredFacts.set(f, {list, facts: answered});
				return answered;
			});
		} catch {
			// The list still shows; purge and resume ask the rule themselves.
			return facts;
		}
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
		this.reread = new Set([...ordered].filter(([key, entry]) => this.byCwd.get(key)?.value !== entry.value).map(([key]) => key));
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
