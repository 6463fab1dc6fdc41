// Kept whole (about 500 lines): the DiscoveryCache class is most of it, and its fields, its keep-or-re-read
// step and the pass that runs them share one state; the merge and the result types are already apart.
// Adapter discovery for the registry's cwds, cached across refreshes: the cwds' conversations and
// the pins' resume states by one keep-or-re-read step (`step`), in-use by the process listing, and
// pane evidence (paneEvidence.ts). The list it merges is discoveryMerge.ts; what it returns and
// the keys the join looks it up by are discoveryResult.ts.

import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import {createRefresh, type FileStat, memo, memoKind, ParseCache, statNow} from '../adapters/common/refresh.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {isAgentId, type AgentId, type Conversation, type Pane, type ProcessRef, type ResumeState, type SessionRecord} from '../domain/types.js';
import {folderExists} from '../system/folder.js';
import {snapshotTable, type ProcessTable} from '../system/processes.js';
import {keepingReadConnections, type ReadPool} from '../system/sqliteRead.js';
import {ConversationList, keepUnchanged} from './discoveryMerge.js';
import {cwdKey, inUseKey, pinKey, resumableFolders, type CwdFacts, type DiscoveryResult, type UseFacts} from './discoveryResult.js';
import {FolderWatch} from './folderWatch.js';
import {discoverCwd, PaneEvidenceCache} from './paneEvidence.js';
import {answerMoved, listingChange} from './useChange.js';

const WATCH_PATHS = memoKind<readonly string[]>('watch-paths');

/** The stat we compare: a changed mtime or size means "look again" (`isDirectory` tells the folder watch what to watch). */
export type StatFn = (file: string) => Pick<FileStat, 'mtimeMs' | 'size' | 'isDirectory'> | undefined;

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

/** The signature of an entry re-read on a watch event: never equal to a real one, so a full tick re-checks it. */
const WATCHED = '\0watched';

/** Signature text, watched folders and the paths themselves per watch-path list, for one refresh. */
type Looked = WeakMap<readonly string[], {readonly text: string; readonly folders: readonly string[]; readonly paths: ReadonlySet<string>}>;

/**
 * A watch-path list's stat in a few numbers: each path's hash, mtime and size folded into two
 * 32-bit sums. A signature of the joined `path:mtime:size` text cost a string of megabytes per
 * refresh at 20,000 conversations (a fifth of the first refresh, with its garbage).
 */
class Digest {
	private a = 0x811c9dc5;
	private b = 0x01000193;

	add(pathHash: number, st: ReturnType<StatFn>): void {
		this.mix(pathHash);
		if (!st) return this.mix(-1);
		this.mix(Math.floor(st.mtimeMs));
		this.mix(Math.floor(st.mtimeMs / 2 ** 32));
		this.mix(Math.round((st.mtimeMs % 1) * 1e6));
		this.mix(st.size);
		this.mix(Math.floor(st.size / 2 ** 32));
	}

	text(count: number): string {
		return `${count}:${(this.a >>> 0).toString(36)}:${(this.b >>> 0).toString(36)}`;
	}

	private mix(n: number): void {
		this.a = Math.imul(this.a ^ (n | 0), 0x01000193);
		this.b = Math.imul(this.b + (n | 0), 0x5bd1e995) ^ (this.b >>> 15);
	}
}

/** FNV-1a over a string's UTF-16 units. */
function hashString(text: string): number {
	let h = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	return h;
}

/** A folder is watched itself; a file (or a path not there yet) through its parent. */
function folderOf(p: string, st: ReturnType<StatFn>): string {
	return st?.isDirectory() === true ? p : path.dirname(p);
}

/** What one refresh may look at, and what the folder watch saw since the last one. */
interface Look {
	readonly rescan: boolean;
	readonly full: boolean;
	/** Keys a folder watch saw change since the last refresh. */
	readonly dirty: ReadonlySet<string>;
	/** The watch signature of (adapter, cwd), stat()ed at most once per refresh. */
	readonly signature: (adapter: AgentAdapter, cwd: string) => string | undefined;
}

interface Entry<T> {
	readonly signature: string | undefined;
	readonly value: T;
}

/** One answer a refresh needs: `key` in its cache, read by `read` from `adapter` about `cwd`. */
interface Ask<T> {
	readonly key: string;
	readonly adapter: AgentAdapter;
	readonly cwd: string;
	/** Ask the adapter (given the entry's last value); a throw becomes `failed`. */
	readonly read: (ctx: AdapterContext, old: T | undefined) => Promise<T>;
	readonly failed: (error: unknown) => T;
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

/** The last listing's process table, what was made from it alone, and its key for in-use. */
interface ListingTable {
	readonly rows: readonly ProcessRef[];
	readonly table: ProcessTable;
	readonly kept: Map<string, unknown>;
	/** `pid:start` of every process: in-use is asked again only when this changes. */
	readonly key: string;
}

/** The cache's answers, replaced whole by each refresh. */
interface Answers {
	readonly byCwd: ReadonlyMap<string, Entry<CwdFacts>>;
	readonly verified: ReadonlyMap<string, Entry<ResumeState>>;
	readonly used: ReadonlyMap<string, UseFacts>;
	/** The `processes` key in-use was last asked under. */
	readonly usedUnder: string | undefined;
	/** That listing's processes: a new listing is compared with it (`listingChange`). */
	readonly usedRows: readonly ProcessRef[] | undefined;
	/** The (agent, cwd) keys whose conversations the last refresh found changed. */
	readonly reread: ReadonlySet<string>;
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
	private readonly watch: FolderWatch | undefined;
	private readonly once: boolean;
	/** Parsed files and vouched listings, kept across refreshes and handed to each refresh (the context's own, when it has one). */
	private readonly parses: ParseCache;
	/** Per cwd key, the watch paths its last signature covered (shared between keys with one list). */
	private readonly signedPaths = new Map<string, ReadonlySet<string>>();
	private readonly list: ConversationList;
	/**
	 * Each cwd list's resumable folders, while that list stands: the join asks whether those
	 * folders exist, and walking all 20,000 conversations for them took milliseconds a refresh
	 * when a file change re-reads one cwd.
	 */
	private readonly foldersOf = new WeakMap<readonly Conversation[], readonly string[]>();
	private readonly evidence: PaneEvidenceCache;
	private answers: Answers = {byCwd: new Map(), verified: new Map(), used: new Map(), usedUnder: undefined, usedRows: undefined, reread: new Set()};
	private listing: ListingTable | undefined;
	/** Each watch path's hash, made once: the same thousands of paths are signed every full tick. */
	private readonly pathHashes = new Map<string, number>();
	/** How many adapter calls the last refresh made (tests and the benchmark read it). */
	lastCalls = 0;

	constructor(deps: DiscoveryDeps) {
		this.ctx = deps.ctx;
		this.parses = deps.ctx.parses ?? new ParseCache();
		this.adapters = deps.adapters ?? ADAPTERS;
		this.stat = deps.stat ?? statNow;
		this.watch = deps.onChange ? new FolderWatch(deps.onChange) : undefined;
		this.once = deps.once === true;
		this.list = new ConversationList(this.adapters);
		this.evidence = new PaneEvidenceCache(this.adapters);
	}

	/**
	 * The process table of one listing. A refresh for a file change reuses the last listing (see
	 * the supervisor), and with it the pass over open files that listing's table made: a file
	 * change costs no second walk of every process's file descriptors.
	 */
	private tableFor(rows: readonly ProcessRef[] | undefined): {readonly table: ProcessTable; readonly kept?: Map<string, unknown>; readonly key?: string} {
		if (rows === undefined) return {table: snapshotTable(this.ctx.processes)};
		if (this.listing?.rows !== rows) {
			this.listing = {rows, table: snapshotTable(this.ctx.processes, rows), kept: new Map(), key: rows.map(p => `${p.pid}:${p.startTime}`).join(',')};
		}
		return this.listing;
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
		const none = new Set<string>();
		for (const [key, entry] of this.answers.byCwd) if (entry.signature === undefined || this.watch.needsLook(key, none)) return true;
		return false;
	}

	private pathHash(p: string): number {
		let h = this.pathHashes.get(p);
		if (h === undefined) {
			// Paths of deleted conversations stay until the map is this big; then it starts again.
			if (this.pathHashes.size >= 500_000) this.pathHashes.clear();
			this.pathHashes.set(p, (h = hashString(p)));
		}
		return h;
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
			const digest = new Digest();
			for (const p of paths) {
				const st = stat(p);
				folders.add(folderOf(p, st));
				digest.add(this.pathHash(p), st);
			}
			seen = {text: digest.text(paths.length), folders: [...folders], paths: new Set(paths)};
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
			paths = memo(ctx, WATCH_PATHS.of(key), () => adapter.watchPaths?.(ctx, cwd) ?? []);
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
	 * Keep `entry`, or read it again (with the signature the new entry carries)? The one decision
	 * for cwds and pins alike, cheapest evidence first.
	 */
	private decide<T>(ctx: AdapterContext, entry: Entry<T> | undefined, ask: Ask<T>, look: Look): {keep: Entry<T>} | {read: string | undefined} {
		if (!entry) return {read: look.signature(ask.adapter, ask.cwd)};
		const watchKey = cwdKey(ask.adapter.id, ask.cwd);
		// A folder watch covers the key and saw no change since the entry was made.
		if (this.watch && look.rescan && !look.full && entry.signature !== undefined && !this.watch.needsLook(watchKey, look.dirty)) return {keep: entry};
		// The watch saw this key change: read again without signing.
		if (this.changeSeen(ctx, ask.adapter, ask.cwd, look)) return {read: WATCHED};
		// A pane event keeps every entry it has: no signature is needed to decide that (signing
		// stat()s every watch path of every cwd: a quarter of a second at 20,000 conversations).
		if (!look.rescan) return {keep: entry};
		const signature = look.signature(ask.adapter, ask.cwd);
		return signature !== undefined && entry.signature === signature ? {keep: entry} : {read: signature};
	}

	/** The keep-or-re-read step: every ask kept or read again (a few at a time), in ask order. */
	private async step<T>(
		ctx: AdapterContext,
		known: ReadonlyMap<string, Entry<T>>,
		asks: ReadonlyMap<string, Ask<T>>,
		look: Look,
	): Promise<Map<string, Entry<T>>> {
		const next = new Map<string, Entry<T>>();
		const todo: {ask: Ask<T>; signature: string | undefined}[] = [];
		for (const [key, ask] of asks) {
			const entry = known.get(key);
			const decision = this.decide(ctx, entry, ask, look);
			if ('keep' in decision) next.set(key, decision.keep);
			else todo.push({ask, signature: decision.read});
		}
		await forEachLimit(todo, async ({ask, signature}) => {
			this.lastCalls += 1;
			let value: T;
			try {
				value = await ask.read(ctx, known.get(ask.key)?.value);
			} catch (error) {
				value = ask.failed(error);
			}
			next.set(ask.key, {signature, value});
		});
		// In ask order, however the entries were read: conversations of equal age then list the
		// same way every refresh, and an unchanged cwd keeps its place for the in-place merge.
		return new Map(
			[...asks.keys()].flatMap(key => {
				const entry = next.get(key);
				return entry ? [[key, entry] as const] : [];
			}),
		);
	}

	/** One ask per (agent, cwd) of the rows: its conversations. */
	private cwdAsks(rows: readonly SessionRecord[]): Map<string, Ask<CwdFacts>> {
		const asks = new Map<string, Ask<CwdFacts>>();
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			const key = cwdKey(row.agent, row.cwd);
			if (!adapter || asks.has(key)) continue;
			asks.set(key, {
				key,
				adapter,
				cwd: row.cwd,
				read: async (ctx, old) => {
					const found = await discoverCwd(adapter, ctx, row.cwd);
					return keepUnchanged(old, {ok: true, conversations: found.conversations, problems: found.problems});
				},
				failed: error => ({ok: false, error: `${adapter.label} discovery failed: ${messageOf(error)}`}),
			});
		}
		return asks;
	}

	/** One ask per (agent, pin, cwd) of the rows: the pin's resume state on disk. */
	private pinAsks(rows: readonly SessionRecord[]): Map<string, Ask<ResumeState>> {
		const asks = new Map<string, Ask<ResumeState>>();
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			const id = row.agentSessionId;
			if (!adapter || id === null) continue;
			const key = pinKey(row.agent, id, row.cwd);
			if (asks.has(key)) continue;
			asks.set(key, {
				key,
				adapter,
				cwd: row.cwd,
				read: ctx => adapter.verify(ctx, id, row.cwd),
				// An id the adapter rejects, a locked store: a per-row `unknown`, never a crash.
				failed: error => ({kind: 'unknown', reason: `${adapter.label}: ${messageOf(error)}`}),
			});
		}
		return asks;
	}

	async refresh(sessions: readonly SessionRecord[], options: RefreshOptions): Promise<DiscoveryResult> {
		this.lastCalls = 0;
		const rows = sessions.filter(s => s.status !== 'purged');
		const checked = options.live ? rows.filter(r => !options.live?.has(r.id)) : rows;
		// Only a refresh that looks at the disk takes the changes seen; a pane refresh leaves them for the next one.
		const dirty = (options.rescan ? this.watch?.take() : undefined) ?? new Set<string>();
		const full = options.full === true;
		// One refresh is one moment: adapters share their whole-store scans (ctx.refresh), one process
		// table and one pass over open files, and each (agent, cwd) signature is stat()ed once.
		// Adapter reads trust the folder watch for files and folders no event named (not on a full
		// tick: that one checks everything, in case an event was lost).
		const vouch = this.watch && !full ? this.watch.vouch() : undefined;
		const listing = this.tableFor(options.processes);
		const refresh = createRefresh({parses: this.parses, ...(vouch ? {vouch} : {}), ...(listing.kept ? {listing: listing.kept} : {})});
		const before = this.answers;
		// Each store a call reads stays open for the refresh's other calls (ctx.reads), closed when it ends.
		const read = async (reads: ReadPool) => {
			const ctx: AdapterContext = {...this.ctx, refresh, processes: listing.table, reads};
			const look: Look = {rescan: options.rescan, full, dirty, signature: this.signer(ctx)};
			const byCwd = options.conversations === false ? new Map<string, Entry<CwdFacts>>() : await this.step(ctx, before.byCwd, this.cwdAsks(rows), look);
			const verified = await this.step(ctx, before.verified, this.pinAsks(checked), look);
			const use = await this.refreshUse(ctx, checked, verified, {key: listing.key, rows: options.processes}, options.rescan);
			const conversations = await this.list.update(
				ctx,
				[...byCwd.values()].map(e => e.value),
			);
			const reread = new Set([...byCwd].filter(([key, entry]) => before.byCwd.get(key)?.value !== entry.value).map(([key]) => key));
			// Keys never read keep last time's entries (a status-only refresh reads no cwds).
			this.answers = {
				byCwd: options.conversations === false ? before.byCwd : byCwd,
				verified,
				...use,
				reread: options.conversations === false ? before.reread : reread,
			};
			const paneEvidence = options.panes === undefined ? undefined : await this.evidence.update(ctx, rows, options.panes ?? [], this.evidenceLook(look));
			return {byCwd, verified, used: use.used, conversations, paneEvidence};
		};
		const {byCwd, verified, used, conversations, paneEvidence} = await keepingReadConnections(read);
		return {
			byCwd: new Map([...byCwd].map(([k, e]) => [k, e.value])),
			verify: new Map([...verified].map(([k, e]) => [k, e.value])),
			inUse: used,
			conversations,
			...(paneEvidence ? {paneEvidence} : {}),
			folders: this.folders(this.answers.byCwd),
		};
	}

	/**
	 * The resumable folders of every cwd list the merged list comes from: a superset of the merged
	 * list's (the in-use rule only turns verdicts to no, and a conversation two cwds list shows once).
	 */
	private folders(byCwd: ReadonlyMap<string, Entry<CwdFacts>>): readonly string[] {
		const all = new Set<string>();
		for (const {value} of byCwd.values()) {
			if (!value.ok) continue;
			let folders = this.foldersOf.get(value.conversations);
			if (!folders) {
				folders = resumableFolders(value.conversations);
				this.foldersOf.set(value.conversations, folders);
			}
			for (const folder of folders) all.add(folder);
		}
		return [...all];
	}

	/** Each (agent, cwd) signature at most once per refresh (none for a one-shot cache: nothing compares them later). */
	private signer(ctx: AdapterContext): Look['signature'] {
		const signatures = new Map<string, string | undefined>();
		const looked: Looked = new WeakMap();
		const stats = new Map<string, ReturnType<StatFn>>();
		// The real stat is the refresh's own (the parses that follow stat the same files); a stand-in is asked once per path.
		const refreshStat = ctx.refresh?.stat.bind(ctx.refresh);
		const statOnce: StatFn =
			this.stat === statNow && refreshStat
				? refreshStat
				: file => {
						if (!stats.has(file)) stats.set(file, this.stat(file));
						return stats.get(file);
					};
		return (adapter, cwd) => {
			if (this.once) return undefined;
			const key = cwdKey(adapter.id, cwd);
			if (!signatures.has(key)) signatures.set(key, this.signature(ctx, adapter, cwd, statOnce, looked));
			return signatures.get(key);
		};
	}

	/** A pane's agent may have written a conversation: a change seen in, or found in, its (agent, cwd). */
	private evidenceLook(look: Look): {rescan: boolean; changed?: (agent: AgentId, cwd: string) => boolean} {
		if (!this.watch) return {rescan: look.rescan};
		const reread = this.answers.reread;
		return {rescan: look.rescan, changed: (agent, cwd) => look.dirty.has(cwdKey(agent, cwd)) || reread.has(cwdKey(agent, cwd))};
	}

	/** inUse for rows whose conversation verified: the last condition of "resumable". */
	private async refreshUse(
		ctx: AdapterContext,
		rows: readonly SessionRecord[],
		verified: ReadonlyMap<string, Entry<ResumeState>>,
		processes: {readonly key: string | undefined; readonly rows: readonly ProcessRef[] | undefined},
		rescan: boolean,
	): Promise<Pick<Answers, 'used' | 'usedUnder' | 'usedRows'>> {
		const {used, usedUnder, usedRows} = this.answers;
		const processesMoved = processes.key === undefined || processes.key !== usedUnder;
		// Asked again only what the change can move: answers naming a process that left, or all
		// when a new process could use a conversation (without both listings, all).
		const change =
			rescan && processesMoved && usedRows && processes.rows
				? await listingChange(ctx, this.adapters, usedRows, processes.rows, new Set(rows.flatMap(r => r.agentSessionId ?? [])))
				: undefined;
		const moved = (known: UseFacts) => rescan && processesMoved && (change === undefined || answerMoved(change, known));
		const next = new Map<string, UseFacts>();
		const todo = new Map<string, {adapter: AgentAdapter; id: string}>();
		// Per cwd, not per row (500 rows share a few dozen cwds).
		const exists = new Map<string, boolean>();
		for (const row of rows) {
			const adapter = adapterOf(this.adapters, row.agent);
			const id = row.agentSessionId;
			if (!adapter || id === null) continue;
			if (verified.get(pinKey(row.agent, id, row.cwd))?.value.kind !== 'yes') continue;
			if (!exists.has(row.cwd)) exists.set(row.cwd, folderExists(row.cwd));
			if (exists.get(row.cwd) !== true) continue;
			const key = inUseKey(row.agent, id);
			if (next.has(key) || todo.has(key)) continue;
			const known = used.get(key);
			if (known && !moved(known)) next.set(key, known);
			else todo.set(key, {adapter, id});
		}
		await forEachLimit([...todo], async ([key, {adapter, id}]) => {
			this.lastCalls += 1;
			try {
				next.set(key, {ok: true, holders: await adapter.inUse(ctx, id)});
			} catch (error) {
				next.set(key, {ok: false, error: `${adapter.label} could not tell who uses it: ${messageOf(error)}`});
			}
		});
		return rescan ? {used: next, usedUnder: processes.key, usedRows: processes.rows} : {used: next, usedUnder, usedRows};
	}
}
