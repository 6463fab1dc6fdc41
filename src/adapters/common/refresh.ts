import fs from 'node:fs';
import type {AdapterContext} from '../types.js';
import {type FileStat, type Listings, PARSED_LIMIT, ParseCache, parseIn, type ParseKind, statNow, type Vouch} from './parseCache.js';

export {type FileStat, ParseCache, parseKind, persistedParseKind, type ParseKind, statNow, type Vouch} from './parseCache.js';

// One refresh's speed-ups, behind one object the caller passes in (`ctx.refresh`): whole-store
// scans kept for the refresh, an index used once enough ids were asked, parsed files kept across
// refreshes, and what a folder watch vouches for. Without it (an action, a purge, a CLI lookup)
// every call reads fresh. No module in src/adapters keeps state of its own.

/** The speed-ups of one refresh (see the top of this file). Made by `createRefresh`. */
export interface Refresh {
	/** The value kept under `key` for this refresh, computed by `compute` on first use. */
	memo<T>(key: KeyParts, compute: () => T): T;
	/** Is a value kept under `key` already? */
	has(key: KeyParts): boolean;
	/**
	 * `memo` for a value made from the process listing alone (an agent's live uses): kept while the
	 * refresh's listing stands, so a refresh for a file change, which reuses the last listing,
	 * reuses it too. Without a listing scope, kept for this refresh only.
	 */
	perListing<T>(key: KeyParts | string, compute: () => T): T;
	/**
	 * The whole-store index kept under `key` once the refresh holds it (a `memo` built it) or once
	 * more than the refresh's direct-lookup limit of ids were asked of it; before that, undefined:
	 * look the id up directly. A few ids (a status run, a refresh after one change) then cost a
	 * lookup each instead of reading the whole store, and many ids share one read.
	 */
	index<T>(key: KeyParts, build: () => T): T | undefined;
	/**
	 * `parse()` of `file` (one `kind` of parse), kept until the file changes (mtime, ctime, size or
	 * inode) or `also` does (the stat of another file the parse reads); under a vouch, a file no
	 * event named since is not even stat()ed. `keep` false: a transient answer (a locked
	 * database) that the next call asks again.
	 */
	parse<T>(kind: string | ParseKind<T>, file: string, also: string, parse: () => T, keep?: (value: T) => boolean): T;
	/** `read()` (a readdir of `dir`) once per refresh, or, under a vouch with nothing come or gone in `dir`, the listing read then (a copy). */
	list(dir: string, read: () => fs.Dirent[]): fs.Dirent[];
	/** `list` for a listing of names only. */
	names(dir: string, read: () => string[]): string[];
	/**
	 * `file`'s stat (following links; undefined when it is not there), taken once per refresh: one
	 * refresh is one moment, and the discovery's watch signature and the parses stat the same files.
	 */
	stat(file: string): FileStat | undefined;
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
	const values = new Map<string, Map<string, unknown>>();
	const parses = options.parses ?? new ParseCache();
	const vouch = options.vouch;
	const limit = options.directLookups ?? DIRECT_LOOKUPS;
	const stats = new Map<string, FileStat | undefined>();
	const statOf = (file: string): FileStat | undefined => {
		if (stats.has(file)) return stats.get(file);
		const st = statNow(file);
		stats.set(file, st);
		return st;
	};
	const memoOf = <T>({kind, part}: KeyParts, compute: () => T): T => {
		let parts = values.get(kind);
		if (parts?.has(part)) return parts.get(part) as T;
		const value = compute();
		if (!parts) values.set(kind, (parts = new Map()));
		parts.set(part, value);
		return value;
	};
	const hasOf = ({kind, part}: KeyParts): boolean => values.get(kind)?.has(part) === true;
	const vouched = <T>(cache: Listings<T>, dir: string, read: () => T[]): readonly T[] => {
		if (!vouch) return read();
		const known = cache.get(dir);
		if (known && vouch.listingUnchangedSince(dir, known.seq)) return known.entries;
		const seq = vouch.seq;
		const entries = read();
		if (cache.size >= PARSED_LIMIT) cache.clear();
		cache.set(dir, {seq, entries});
		return entries;
	};
	// One refresh is one moment, for folders as for stats: each is read once in it (a full index
	// build asks for the same data folder once per conversation); a copy each time, as callers may sort.
	const moments = {list: new Map<string, readonly fs.Dirent[]>(), names: new Map<string, readonly string[]>()};
	const listing = <T>(cache: Listings<T>, moment: Map<string, readonly T[]>, dir: string, read: () => T[]): T[] => {
		let entries = moment.get(dir);
		if (!entries) moment.set(dir, (entries = vouched(cache, dir, read)));
		return [...entries];
	};
	const listed = options.listing;
	return {
		memo: memoOf,
		has: hasOf,
		perListing<T>(key: KeyParts | string, compute: () => T): T {
			// A few live-use scans a refresh: kept by one string, as the listing's owner keeps them.
			const text = typeof key === 'string' ? key : `${key.kind}\0${key.part}`;
			if (!listed) return memoOf({kind: text, part: ''}, compute);
			if (listed.has(text)) return listed.get(text) as T;
			const value = compute();
			listed.set(text, value);
			return value;
		},
		index<T>(key: KeyParts, build: () => T): T | undefined {
			if (hasOf(key)) return memoOf(key, build);
			const asked = memoOf({kind: `${key.kind}\0asked`, part: key.part}, () => ({count: 0}));
			return ++asked.count <= limit ? undefined : memoOf(key, build);
		},
		// One refresh is one moment: each file is stat()ed once in it (`stat`), so a second caller
		// (discovery read it; in-use and verify ask again) gets the kept parse without a syscall.
		parse: (kind, file, also, parse, keep) => parseIn(parses, vouch, statOf, kind, file, also, parse, keep),
		list: (dir, read) => listing(parses.listings, moments.list, dir, read),
		names: (dir, read) => listing(parses.names, moments.names, dir, read),
		stat: statOf,
	};
}

/**
 * A typed key of a refresh's memo: its kind names what is kept and `T` the type kept there; `of`
 * adds the store it was read from. Call sites that share a value share the kind's constant (never
 * a string copied by hand), and one kind cannot hold two types.
 */
export interface MemoKey<T> extends KeyParts {
	/** The key as one string (`kind\0part`), built on demand. */
	readonly text: string;
	/** Never set: ties the key to its value's type (invariant in T). */
	readonly valueType?: (value: T) => T;
}

export interface MemoKind<T> {
	of(...parts: readonly string[]): MemoKey<T>;
}

/** Where a refresh keeps a value: its kind, then the store it was read from (no string built per call). */
export interface KeyParts {
	readonly kind: string;
	readonly part: string;
}

/** The kind `kind` of memo keys, holding values of type T. */
export function memoKind<T>(kind: string): MemoKind<T> {
	// Every key names one store (a root, a database): that part alone, not a joined string.
	return {of: (...parts) => new Key(kind, parts.length === 1 ? (parts[0] ?? '') : parts.join('\0'))};
}

/** A memo key: two fields, and its one-string form only when asked (a class: one shape, a getter on its prototype). */
class Key implements KeyParts {
	readonly kind: string;
	readonly part: string;

	constructor(kind: string, part: string) {
		this.kind = kind;
		this.part = part;
	}

	get text(): string {
		return `${this.kind}\0${this.part}`;
	}
}

/** What the helpers below need of a context: its refresh, if it is inside one (and its read connections). */
export type InRefresh = Pick<AdapterContext, 'refresh' | 'parses' | 'reads'>;

/**
 * `compute()` once per refresh when the context is inside one, else every time. Only for
 * whole-store scans whose result the caller does not mutate.
 */
export function memo<T>(ctx: InRefresh, key: MemoKey<T>, compute: () => T): T {
	return ctx.refresh ? ctx.refresh.memo(key, compute) : compute();
}

/** `Refresh.perListing` inside a refresh, else `compute()` every time. */
export function memoPerListing<T>(ctx: InRefresh, key: MemoKey<T>, compute: () => T): T {
	return ctx.refresh ? ctx.refresh.perListing(key, compute) : compute();
}

/** Does this refresh hold a value under `key` already? (Never outside a refresh.) */
export function memoHas<T>(ctx: InRefresh, key: MemoKey<T>): boolean {
	return ctx.refresh?.has(key) === true;
}

/** `Refresh.index` inside a refresh; outside one, always undefined (one call, one lookup). */
export function indexAfter<T>(ctx: InRefresh, key: MemoKey<T>, build: () => T): T | undefined {
	return ctx.refresh?.index(key, build);
}

/**
 * `Refresh.parse` inside a refresh; outside one, against the context's long-lived parse cache
 * (stat()ed, never vouched), else `parse()`.
 */
export function parseCached<T>(ctx: InRefresh, kind: string | ParseKind<T>, file: string, also: string, parse: () => T, keep?: (value: T) => boolean): T {
	if (ctx.refresh) return ctx.refresh.parse(kind, file, also, parse, keep);
	return ctx.parses ? parseIn(ctx.parses, undefined, statNow, kind, file, also, parse, keep) : parse();
}
