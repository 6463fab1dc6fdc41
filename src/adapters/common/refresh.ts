import fs from 'node:fs';
import type {AdapterContext} from '../types.js';

// One refresh's speed-ups, behind one object the caller passes in (`ctx.refresh`): whole-store
// scans kept for the refresh, an index used once enough ids were asked, parsed files kept across
// refreshes, and what a folder watch vouches for. Without it (an action, a purge, a CLI lookup)
// every call reads fresh. No module in src/adapters keeps state of its own.

/**
 * What a folder watch (inotify) can vouch for while a refresh runs: every change event bumps
 * `seq`, so "no event named this file (or, for a listing, this folder) since `seq`" means it
 * is as it was then.
 */
export interface Vouch {
	/** The number of change events seen so far. */
	readonly seq: number;
	/** Is `file`'s folder watched, with no event naming `file` since `seq`? */
	fileUnchangedSince(file: string, seq: number): boolean;
	/** Is `dir` watched, with nothing created, removed or renamed in it since `seq`? */
	listingUnchangedSince(dir: string, seq: number): boolean;
}

interface Parsed {
	readonly stamp: string;
	readonly also: string;
	/** The folder watch's `seq` when this was parsed under a vouch (else undefined). */
	readonly seq: number | undefined;
	readonly value: unknown;
}

type Listings<T> = Map<string, {readonly seq: number; readonly entries: readonly T[]}>;

/** Bounded so a huge home cannot grow a cache without limit. */
const PARSED_LIMIT = 200_000;

/**
 * Parsed files and vouched folder listings, kept across refreshes by their owner (the discovery
 * cache): re-discovering a folder of 1,000 transcripts after one of them grew then reads one
 * file and stats the rest (or, under a vouch, stats nothing).
 */
export class ParseCache {
	readonly parsed = new Map<string, Parsed>();
	readonly listings: Listings<fs.Dirent> = new Map();
	readonly names: Listings<string> = new Map();
}

/** The speed-ups of one refresh (see the top of this file). Made by `createRefresh`. */
export interface Refresh {
	/** The value kept under `key` for this refresh, computed by `compute` on first use. */
	memo<T>(key: string, compute: () => T): T;
	/** Is a value kept under `key` already? */
	has(key: string): boolean;
	/**
	 * `memo` for a value made from the process listing alone (an agent's live uses): kept while the
	 * refresh's listing stands, so a refresh for a file change, which reuses the last listing,
	 * reuses it too. Without a listing scope, kept for this refresh only.
	 */
	perListing<T>(key: string, compute: () => T): T;
	/**
	 * The whole-store index kept under `key` once the refresh holds it (a `memo` built it) or once
	 * more than the refresh's direct-lookup limit of ids were asked of it; before that, undefined:
	 * look the id up directly. A few ids (a status run, a refresh after one change) then cost a
	 * lookup each instead of reading the whole store, and many ids share one read.
	 */
	index<T>(key: string, build: () => T): T | undefined;
	/**
	 * `parse()` of `file` (one `kind` of parse), kept until the file changes (mtime, ctime, size or
	 * inode) or `also` does (the stat of another file the parse reads); under a vouch, a file no
	 * event named since is not even stat()ed. `keep` false: a transient answer (a locked
	 * database) that the next call asks again.
	 */
	parse<T>(kind: string, file: string, also: string, parse: () => T, keep?: (value: T) => boolean): T;
	/** `read()` (a readdir of `dir`), or, under a vouch with nothing come or gone in `dir`, the listing read then (a copy). */
	list(dir: string, read: () => fs.Dirent[]): fs.Dirent[];
	/** `list` for a listing of names only. */
	names(dir: string, read: () => string[]): string[];
}

export interface RefreshOptions {
	/** Parsed files kept across refreshes (the context's `parses`, or the discovery cache's own); absent: a cache for this refresh alone. */
	readonly parses?: ParseCache;
	/** What the folder watch vouches for during this refresh (never on a full tick). */
	readonly vouch?: Vouch;
	/**
	 * How many ids the refresh looks up directly (an indexed query, one folder) before `index`
	 * reads a whole store once and answers the rest from that: a lookup costs about a
	 * millisecond, a whole store tens of milliseconds at thousands of sessions. Tests pass 0
	 * (index from the first id) and 1 (switch after one) to compare both ways.
	 */
	readonly directLookups?: number;
	/** Values kept for the listing the refresh reads (`perListing`), owned by whoever keeps that listing. */
	readonly listing?: Map<string, unknown>;
}

const DIRECT_LOOKUPS = 32;

export function createRefresh(options: RefreshOptions = {}): Refresh {
	const values = new Map<string, unknown>();
	const parses = options.parses ?? new ParseCache();
	const vouch = options.vouch;
	const limit = options.directLookups ?? DIRECT_LOOKUPS;
	const memoOf = <T>(key: string, compute: () => T): T => {
		if (values.has(key)) return values.get(key) as T;
		const value = compute();
		values.set(key, value);
		return value;
	};
	const listing = <T>(cache: Listings<T>, dir: string, read: () => T[]): T[] => {
		if (!vouch) return read();
		const known = cache.get(dir);
		if (known && vouch.listingUnchangedSince(dir, known.seq)) return [...known.entries];
		const seq = vouch.seq;
		const entries = read();
		if (cache.size >= PARSED_LIMIT) cache.clear();
		cache.set(dir, {seq, entries});
		return [...entries];
	};
	const listed = options.listing;
	return {
		memo: memoOf,
		has: key => values.has(key),
		perListing<T>(key: string, compute: () => T): T {
			if (!listed) return memoOf(key, compute);
			if (listed.has(key)) return listed.get(key) as T;
			const value = compute();
			listed.set(key, value);
			return value;
		},
		index<T>(key: string, build: () => T): T | undefined {
			if (values.has(key)) return memoOf(key, build);
			const asked = memoOf(`${key}\0asked`, () => ({count: 0}));
			return ++asked.count <= limit ? undefined : memoOf(key, build);
		},
		parse: (kind, file, also, parse, keep) => parseIn(parses, vouch, kind, file, also, parse, keep),
		list: (dir, read) => listing(parses.listings, dir, read),
		names: (dir, read) => listing(parses.names, dir, read),
	};
}

/** `Refresh.parse` against `parses`, trusting `vouch` (when given) for files no event named. */
function parseIn<T>(
	parses: ParseCache,
	vouch: Vouch | undefined,
	kind: string,
	file: string,
	also: string,
	parse: () => T,
	keep: (value: T) => boolean = () => true,
): T {
	const key = `${kind}\0${file}`;
	const known = parses.parsed.get(key);
	// A file no change event named since it was read is not even stat()ed: a busy folder
	// re-read after one transcript grew then costs one read, not a thousand stats.
	if (vouch && known?.seq !== undefined && known.also === also && vouch.fileUnchangedSince(file, known.seq)) return known.value as T;
	const seq = vouch?.seq;
	let st: fs.Stats | undefined;
	try {
		st = fs.statSync(file, {throwIfNoEntry: false});
	} catch {
		st = undefined;
	}
	if (!st) {
		parses.parsed.delete(key);
		return parse();
	}
	const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}:${also}`;
	if (known?.stamp === stamp) {
		if (seq !== undefined && known.seq !== seq) parses.parsed.set(key, {...known, seq});
		return known.value as T;
	}
	const value = parse();
	if (!keep(value)) {
		parses.parsed.delete(key);
		return value;
	}
	if (parses.parsed.size >= PARSED_LIMIT) parses.parsed.clear();
	parses.parsed.set(key, {stamp, also, seq, value});
	return value;
}

/**
 * A typed key of a refresh's memo: its kind names what is kept and `T` the type kept there; `of`
 * adds the store it was read from. Call sites that share a value share the kind's constant (never
 * a string copied by hand), and one kind cannot hold two types.
 */
export interface MemoKey<T> {
	readonly text: string;
	/** Never set: ties the key to its value's type (invariant in T). */
	readonly valueType?: (value: T) => T;
}

export interface MemoKind<T> {
	of(...parts: readonly string[]): MemoKey<T>;
}

/** The kind `kind` of memo keys, holding values of type T. */
export function memoKind<T>(kind: string): MemoKind<T> {
	return {of: (...parts) => ({text: [kind, ...parts].join('\0')})};
}

/** What the helpers below need of a context: its refresh, if it is inside one (and its read connections). */
export type InRefresh = Pick<AdapterContext, 'refresh' | 'parses' | 'reads'>;

/**
 * `compute()` once per refresh when the context is inside one, else every time. Only for
 * whole-store scans whose result the caller does not mutate.
 */
export function memo<T>(ctx: InRefresh, key: MemoKey<T>, compute: () => T): T {
	return ctx.refresh ? ctx.refresh.memo(key.text, compute) : compute();
}

/** `Refresh.perListing` inside a refresh, else `compute()` every time. */
export function memoPerListing<T>(ctx: InRefresh, key: MemoKey<T>, compute: () => T): T {
	return ctx.refresh ? ctx.refresh.perListing(key.text, compute) : compute();
}

/** Does this refresh hold a value under `key` already? (Never outside a refresh.) */
export function memoHas<T>(ctx: InRefresh, key: MemoKey<T>): boolean {
	return ctx.refresh?.has(key.text) === true;
}

/** `Refresh.index` inside a refresh; outside one, always undefined (one call, one lookup). */
export function indexAfter<T>(ctx: InRefresh, key: MemoKey<T>, build: () => T): T | undefined {
	return ctx.refresh?.index(key.text, build);
}

/**
 * `Refresh.parse` inside a refresh; outside one, against the context's long-lived parse cache
 * (stat()ed, never vouched), else `parse()`.
 */
export function parseCached<T>(ctx: InRefresh, kind: string, file: string, also: string, parse: () => T, keep?: (value: T) => boolean): T {
	if (ctx.refresh) return ctx.refresh.parse(kind, file, also, parse, keep);
	return ctx.parses ? parseIn(ctx.parses, undefined, kind, file, also, parse, keep) : parse();
}
