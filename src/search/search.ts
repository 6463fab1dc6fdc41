// Full-text search over every agent's conversations: keeping the index up to date from the
// agents' own files (through each adapter's `messages`), and answering queries with hits that
// were checked against their source a moment before.
import {createRefresh} from '../adapters/common/refresh.js';
import type {AdapterContext, AgentAdapter, MessageRead, TokenUsage} from '../adapters/types.js';
import {keepingReadConnections, type ReadPool} from '../system/sqliteRead.js';
import type {AgentId, Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {IndexedConversation, QueryFilter, RawHit, SearchStore} from './store.js';
import {addTokenUsage} from '../domain/usage.js';

export interface SearchDeps {
	readonly context: AdapterContext;
	readonly adapters: readonly AgentAdapter[];
	readonly store: SearchStore;
	/** Problems worth a line (an unreadable store); the search goes on without that part. */
	readonly warn?: (line: string) => void;
	/** Conversations read per transaction before other work may run (default 200; the dashboard uses fewer). */
	readonly chunk?: number;
}

/** One search result, as `search --json` prints it. */
export interface SearchHit {
	readonly agent: AgentId;
	readonly id: string;
	readonly cwd: string;
	readonly title: string;
	/** A piece of the best message, the query's words between `[` and `]`. */
	readonly snippet: string;
	/** bm25 relevance (higher is better). */
	readonly score: number;
	/** ms since the epoch. */
	readonly updatedAt: number;
	readonly parentId?: string;
	readonly headless?: boolean;
	/** Tokens the agent recorded for the conversation; absent when it records none. */
	readonly usage?: TokenUsage;
}

export interface SearchOptions {
	readonly agent?: string;
	readonly cwd?: string;
	readonly since?: number;
	readonly all?: boolean;
	readonly limit?: number;
	/** Skip bringing the index up to date first (the dashboard syncs on file changes instead). */
	readonly noSync?: boolean;
}

/** What one sync did. */
export interface SyncStats {
	readonly conversations: number;
	readonly read: number;
	readonly messages: number;
	readonly forgotten: number;
}

/** How many conversations one transaction writes: small enough that a reader never waits long. */
const CHUNK = 200;

/** Characters of message text one transaction writes at most (besides the CHUNK bound). */
const BATCH_TEXT = 4_000_000;

/** Let other work run between chunks (the dashboard's keys, a watch event). */
const yieldToLoop = () => new Promise<void>(resolve => setImmediate(resolve));

/** Every conversation of `adapter`, children included; undefined when part of its store could not be read. */
async function listed(
	adapter: AgentAdapter,
	ctx: AdapterContext,
	warn: (line: string) => void,
): Promise<{conversations: readonly Conversation[]; complete: boolean}> {
	try {
		const found = await adapter.discover(ctx, {includeChildren: true, factsOnly: true});
		for (const p of found.problems) warn(`${adapter.id}: ${p}`);
		return {conversations: found.conversations, complete: found.problems.length === 0};
	} catch (error) {
		warn(`${adapter.id}: ${messageOf(error)}`);
		return {conversations: [], complete: false};
	}
}

type Readable = Conversation | IndexedConversation;

/** What `conv` gained since the index last read it; undefined when its source is gone. */
async function readNew(adapter: AgentAdapter, ctx: AdapterContext, known: IndexedConversation | undefined, conv: Readable) {
	return adapter.messages(ctx, conv.id, known?.cursor);
}

/** Store what was read of `conv` (`staged`: see SearchStore.put). */
function storeRead(deps: SearchDeps, adapter: AgentAdapter, conv: Readable, known: IndexedConversation | undefined, read: MessageRead, staged = false): void {
	const parent = 'parentId' in conv ? conv.parentId : (conv as IndexedConversation).parent;
	const usage = read.usage ?? (read.restart ? undefined : known?.usage);
	deps.store.put(
		{
			agent: adapter.id,
			id: conv.id,
			...(parent ? {parent} : {}),
			cwd: conv.cwd,
			...(conv.title ? {title: conv.title} : {}),
			createdAt: conv.createdAt,
			updatedAt: conv.updatedAt,
			stamp: 'stamp' in conv ? conv.stamp : conv.updatedAt,
			cursor: read.cursor,
			...(usage ? {usage} : {}),
			headless: read.headless ?? known?.headless ?? false,
		},
		read.messages,
		read.restart,
		staged,
	);
}

/**
 * Bring the index up to date with the agents' files: conversations whose discovery `updatedAt`
 * moved are read from their cursor on (new ones from the start), and conversations no longer on
 * disk are erased. `only` limits it to these conversations (a watch event named them).
 */
export async function syncIndex(deps: SearchDeps, only?: readonly Conversation[]): Promise<SyncStats> {
	// One read-only connection per agent database for the whole sync, not one per conversation.
	return keepingReadConnections(reads => syncNow(deps, reads, only));
}

interface Counts {
	conversations: number;
	read: number;
	messages: number;
	forgotten: number;
}

async function syncNow(deps: SearchDeps, reads: ReadPool, only?: readonly Conversation[]): Promise<SyncStats> {
	// A watch event names a few conversations: only those rows are looked up, not the whole index.
	const rows = only ? only.map(c => deps.store.get(c.agent, c.id)).filter((c): c is IndexedConversation => c !== undefined) : deps.store.all();
	const known = new Map(rows.map(c => [`${c.agent}\u0000${c.id}`, c]));
	const counts: Counts = {conversations: 0, read: 0, messages: 0, forgotten: 0};
	try {
		// One agent at a time, each listed in a refresh of its own: what its discovery parsed
		// (tens of MB for a large history) is dropped before the next agent is listed. A whole
		// sync stages the messages and indexes them at its end, oldest first (SearchStore.flushStaged).
		for (const adapter of deps.adapters) await syncAgent(deps, reads, adapter, known, counts, only);
	} finally {
		if (!only) deps.store.flushStaged();
	}
	return counts;
}

/** `syncNow` for one agent. */
async function syncAgent(
	deps: SearchDeps,
	reads: ReadPool,
	adapter: AgentAdapter,
	known: ReadonlyMap<string, IndexedConversation>,
	counts: Counts,
	only?: readonly Conversation[],
): Promise<void> {
	const warn = deps.warn ?? (() => {});
	// A whole sync shares one refresh per agent (its store listed once for thousands of reads); a
	// few named conversations are looked up directly, which costs far less than listing every store again.
	const ctx: AdapterContext = only
		? {...deps.context, reads}
		: {...deps.context, reads, refresh: createRefresh(deps.context.parses ? {parses: deps.context.parses} : {})};
	const list = only ? {conversations: only.filter(c => c.agent === adapter.id), complete: false} : await listed(adapter, ctx, warn);
	const changed = list.conversations.filter(c => known.get(`${adapter.id}\u0000${c.id}`)?.stamp !== c.updatedAt);
	changed.sort((a, b) => a.updatedAt - b.updatedAt);
	const size = deps.chunk ?? CHUNK;
	let results: {conv: Conversation; known: IndexedConversation | undefined; read: MessageRead}[] = [];
	let bytes = 0;
	// One transaction per batch: one WAL commit for 200 conversations, not one per message. A
	// batch also ends at BATCH_TEXT characters: a few long conversations never sit in memory together.
	const write = async (more: boolean) => {
		deps.store.transaction(() => {
			for (const r of results) storeRead(deps, adapter, r.conv, r.known, r.read, !only);
		});
		counts.read += results.length;
		counts.messages += results.reduce((sum, r) => sum + r.read.messages.length, 0);
		results = [];
		bytes = 0;
		if (more) await yieldToLoop();
	};
	for (const [i, conv] of changed.entries()) {
		const was = known.get(`${adapter.id}\u0000${conv.id}`);
		try {
			const got = await readNew(adapter, ctx, was, conv);
			if (got) {
				results.push({conv, known: was, read: got});
				bytes += got.messages.reduce((sum, m) => sum + m.text.length, 0);
			}
		} catch (error) {
			warn(`${adapter.id} ${conv.id}: ${messageOf(error)}`);
		}
		if (results.length >= size || bytes >= BATCH_TEXT) await write(i + 1 < changed.length);
	}
	if (results.length > 0) await write(false);
	counts.conversations += list.conversations.length;
	if (!list.complete) return;
	const present = new Set(list.conversations.map(c => c.id));
	const gone = [...known.values()].filter(c => c.agent === adapter.id && !present.has(c.id)).map(c => c.id);
	counts.forgotten += deps.store.forget(adapter.id, gone);
}

/**
 * The user's words as an FTS5 query: each word cut where the index's tokenizer cuts it (letters
 * and digits), each piece quoted (so `-`, `:` or `OR` are text, not syntax), all required; a
 * trailing `*` keeps its prefix meaning. Pieces, not phrases: the index keeps no positions.
 */
export function matchExpression(query: string): string {
	const terms: string[] = [];
	for (const word of query.split(/\s+/)) {
		const prefix = word.endsWith('*');
		const pieces = word.split(/[^\p{L}\p{N}]+/u).filter(p => p !== '');
		pieces.forEach((piece, i) => terms.push(prefix && i === pieces.length - 1 ? `"${piece}"*` : `"${piece}"`));
	}
	if (terms.length === 0) throw new Error('search needs at least one word');
	return terms.join(' ');
}

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The words of a query, for marking them in a snippet. */
export function queryWords(query: string): string[] {
	return query
		.split(/\s+/)
		.map(w => w.replaceAll('"', '').replace(/\*+$/, ''))
		.filter(w => w !== '');
}

/** Up to `width` characters of `text` around the first matched word, each match between `[` and `]`, on one line. */
export function makeSnippet(text: string, words: readonly string[], width = 160): string {
	const flat = text.replace(/\s+/g, ' ').trim();
	if (words.length === 0) return flat.slice(0, width);
	const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${words.map(escapeRegExp).join('|')})`, 'giu');
	const first = pattern.exec(flat);
	pattern.lastIndex = 0;
	const center = first ? first.index : 0;
	const start = Math.max(0, Math.min(center - Math.floor(width / 3), flat.length - width));
	let piece = flat.slice(start, start + width);
	// Never cut a marked word in two at the window's end.
	piece = piece.replace(pattern, match => `[${match}]`);
	return `${start > 0 ? '…' : ''}${piece}${start + width < flat.length ? '…' : ''}`;
}

/**
 * Look the hit's conversation up at its source: read what it gained since the index read it
 * (its snippet may change with it), or erase it when it is gone. False: gone.
 */
async function recheck(deps: SearchDeps, ctx: AdapterContext, hit: RawHit): Promise<boolean> {
	const adapter = deps.adapters.find(a => a.id === hit.conversation.agent);
	if (!adapter) return false;
	try {
		const read = await readNew(adapter, ctx, hit.conversation, hit.conversation);
		if (!read) {
			deps.store.forget(adapter.id, [hit.conversation.id]);
			return false;
		}
		if (read.messages.length > 0 || read.restart) deps.store.transaction(() => storeRead(deps, adapter, hit.conversation, hit.conversation, read));
		return true;
	} catch (error) {
		deps.warn?.(`${adapter.id} ${hit.conversation.id}: ${messageOf(error)}`);
		return false;
	}
}

/**
 * `mam-tui search`: bring the index up to date (unless `noSync`), then the conversations whose
 * messages hold every word of `query`, best first (bm25; equal scores: the newer first). Each hit
 * was re-checked against its source just before: a conversation that is gone is not listed (and
 * leaves the index). Sub-agent and headless conversations only with `all`.
 */
export async function searchConversations(deps: SearchDeps, query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
	const match = matchExpression(query);
	if (!opts.noSync) await syncIndex(deps);
	const limit = opts.limit ?? 20;
	const filter: QueryFilter = {
		...(opts.agent ? {agent: opts.agent} : {}),
		...(opts.cwd ? {cwd: opts.cwd} : {}),
		...(opts.since !== undefined ? {since: opts.since} : {}),
		...(opts.all ? {all: true} : {}),
		// A few more than asked: some may turn out gone.
		limit: limit + 10,
	};
	const words = queryWords(query);
	const hits: SearchHit[] = [];
	// Each hit is looked up directly (a few stats), never by listing every store.
	const ctx = deps.context;
	for (const raw of deps.store.query(match, filter)) {
		if (hits.length >= limit) break;
		if (!(await recheck(deps, ctx, raw))) continue;
		const c = raw.conversation;
		hits.push({
			agent: c.agent,
			id: c.id,
			cwd: c.cwd,
			title: c.title ?? '',
			snippet: makeSnippet(raw.text, words),
			// bm25 is lower-is-better and negative; shown the other way round.
			score: Math.round(-raw.score * 1000) / 1000,
			updatedAt: c.updatedAt,
			...(c.parent ? {parentId: c.parent} : {}),
			...(c.headless ? {headless: true} : {}),
			...(c.usage ? {usage: c.usage} : {}),
		});
	}
	return hits;
}

/** `7d`, `12h`, `30m`, `2w` or a date: the time (ms) a `--since` means, or undefined when it means nothing. */
export function parseSince(value: string, now: number): number | undefined {
	const m = /^(\d+)\s*([mhdw])$/.exec(value.trim());
	if (m) {
		const unit = {m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000}[m[2] as 'm' | 'h' | 'd' | 'w'];
		return now - Number(m[1]) * unit;
	}
	const date = Date.parse(value);
	return Number.isFinite(date) ? date : undefined;
}

/** Tokens summed per folder over the index's conversations (unknown fields stay unknown). */
export function usageByFolder(conversations: readonly IndexedConversation[]): Map<string, {usage?: TokenUsage; conversations: number; known: number}> {
	const out = new Map<string, {usage?: TokenUsage; conversations: number; known: number}>();
	for (const c of conversations) {
		const entry = out.get(c.cwd) ?? {conversations: 0, known: 0};
		entry.conversations++;
		if (c.usage) {
			entry.known++;
			entry.usage = addTokenUsage(entry.usage, c.usage);
		}
		out.set(c.cwd, entry);
	}
	return out;
}
