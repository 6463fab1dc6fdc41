import fs from 'node:fs';
import type {AdapterContext} from '../types.js';
import {decodeValue, sameStamp, type ParseMemo} from '../../system/parseMemo.js';

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
	/** The file's stat when it was parsed (compared as numbers: a refresh asks about 20,000 files). */
	readonly mtimeMs: number;
	readonly ctimeMs: number;
	readonly size: number;
	readonly ino: number;
	readonly dev: number;
	readonly also: string;
	/** The folder watch's `seq` when this was parsed under a vouch (else undefined). */
	readonly seq: number | undefined;
	readonly value: unknown;
}

type Listings<T> = Map<string, {readonly seq: number; readonly entries: readonly T[]}>;

/** Bounded so a huge home cannot grow a cache without limit. */
const PARSED_LIMIT = 200_000;

/**
 * A kind of parse: its name, and for a parse whose value is plain JSON data (strings, finite
 * numbers, booleans, null, arrays, plain objects: no Map, Set or Date), the version of that
 * value's shape, which lets the value be kept on disk across starts (the parse memo, see
 * src/system/parseMemo.ts). Bump `version` whenever the parse's output changes, or an old
 * start's values come back. `T` ties the kind to its value's type.
 */
export interface ParseKind<T> {
	readonly name: string;
	/** Kept across starts with this shape version; absent: kept in memory only. */
	readonly version?: number;
	/** Never set: ties the kind to its value's type (invariant in T). */
	readonly valueType?: (value: T) => T;
}

/** A parse kind kept in memory only. */
export function parseKind<T>(name: string): ParseKind<T> {
	return {name};
}

/** A parse kind whose plain-data values are kept on disk across starts (shape `version`). */
export function persistedParseKind<T>(name: string, version: number): ParseKind<T> {
	return {name, version};
}

/** Parsed files by kind, then file: no key string is built per call (a refresh asks about 20,000 files). */
class ParsedFiles {
	private readonly kinds = new Map<string, Map<string, Parsed>>();
	private count = 0;

	of(kind: string): Map<string, Parsed> {
		let files = this.kinds.get(kind);
		if (!files) this.kinds.set(kind, (files = new Map()));
		return files;
	}

	get(kind: string, file: string): Parsed | undefined {
		return this.kinds.get(kind)?.get(file);
	}

	set(files: Map<string, Parsed>, file: string, parsed: Parsed): void {
		if (!files.has(file)) {
			if (this.count >= PARSED_LIMIT) this.clear();
			this.count += 1;
		}
		files.set(file, parsed);
	}

	delete(files: Map<string, Parsed>, file: string): void {
		if (files.delete(file)) this.count -= 1;
	}

	clear(): void {
		for (const files of this.kinds.values()) files.clear();
		this.count = 0;
	}

	get size(): number {
		return this.count;
	}

	/** `kind\0file` of every kept parse (for tests and diagnostics: built on demand, never per call). */
	*keys(): IterableIterator<string> {
		for (const [kind, files] of this.kinds) for (const file of files.keys()) yield `${kind}\0${file}`;
	}
}

/**
 * Parsed files and vouched folder listings, kept across refreshes by their owner (the discovery
 * cache): re-discovering a folder of 1,000 transcripts after one of them grew then reads one
 * file and stats the rest (or, under a vouch, stats nothing). With a `memo`, parses of persisted
 * kinds are also kept on disk: a new process stats each file and loads what the last one parsed.
 */
export class ParseCache {
	readonly parsed = new ParsedFiles();
	readonly listings: Listings<fs.Dirent> = new Map();
	readonly names: Listings<string> = new Map();
	/** The on-disk memo (src/system/parseMemo.ts), when this process keeps one. */
	readonly memo: ParseMemo | undefined;

	constructor(memo?: ParseMemo) {
		this.memo = memo;
	}

	/** Write the memo's pending batch now (it is also written on its own shortly after the last change). */
	persist(): void {
		this.memo?.flush();
	}

	/** Write the memo's pending batch and close it. */
	close(): void {
		this.memo?.close();
	}
}

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
	/** `read()` (a readdir of `dir`), or, under a vouch with nothing come or gone in `dir`, the listing read then (a copy). */
	list(dir: string, read: () => fs.Dirent[]): fs.Dirent[];
	/** `list` for a listing of names only. */
	names(dir: string, read: () => string[]): string[];
	/**
	 * `file`'s stat (following links; undefined when it is not there), taken once per refresh: one
	 * refresh is one moment, and the discovery's watch signature and the parses stat the same files.
	 */
	stat(file: string): fs.Stats | undefined;
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
	const stats = new Map<string, fs.Stats | undefined>();
	const statOf = (file: string): fs.Stats | undefined => {
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
		list: (dir, read) => listing(parses.listings, dir, read),
		names: (dir, read) => listing(parses.names, dir, read),
		stat: statOf,
	};
}

function statNow(file: string): fs.Stats | undefined {
	try {
		return fs.statSync(file, {throwIfNoEntry: false});
	} catch {
		return undefined;
	}
}

function sameFile(known: Parsed, st: fs.Stats, also: string): boolean {
	return (
		known.mtimeMs === st.mtimeMs &&
		known.ctimeMs === st.ctimeMs &&
		known.size === st.size &&
		known.ino === st.ino &&
		known.dev === st.dev &&
		known.also === also
	);
}

/** What the on-disk memo kept for `file` when it still matches the stat and `also`, else undefined. */
function fromMemo(memo: ParseMemo, kind: string, version: number, file: string, st: fs.Stats, also: string): {value: unknown} | undefined {
	const row = memo.take(kind, version, file);
	if (!row || row.also !== also || !sameStamp(row, st)) return undefined;
	const decoded = decodeValue(row.value);
	return decoded.ok ? {value: decoded.value} : undefined;
}

/** `Refresh.parse` against `parses`, trusting `vouch` (when given) for files no event named. */
function parseIn<T>(
	parses: ParseCache,
	vouch: Vouch | undefined,
	statOf: (file: string) => fs.Stats | undefined,
	kind: string | ParseKind<T>,
	file: string,
	also: string,
	parse: () => T,
	keep: (value: T) => boolean = () => true,
): T {
	const name = typeof kind === 'string' ? kind : kind.name;
	const version = typeof kind === 'string' ? undefined : kind.version;
	const files = parses.parsed.of(name);
	const known = files.get(file);
	// A file no change event named since it was read is not even stat()ed: a busy folder
	// re-read after one transcript grew then costs one read, not a thousand stats.
	if (vouch && known?.seq !== undefined && known.also === also && vouch.fileUnchangedSince(file, known.seq)) return known.value as T;
	const seq = vouch?.seq;
	const st = statOf(file);
	if (!st) {
		parses.parsed.delete(files, file);
		return parse();
	}
	if (known && sameFile(known, st, also)) {
		if (seq !== undefined && known.seq !== seq) files.set(file, {...known, seq});
		return known.value as T;
	}
	const memo = version === undefined ? undefined : parses.memo;
	const kept = !known && memo && version !== undefined ? fromMemo(memo, name, version, file, st, also) : undefined;
	const value = kept ? (kept.value as T) : parse();
	if (!keep(value)) {
		parses.parsed.delete(files, file);
		if (memo && version !== undefined) memo.drop(name, version, file);
		return value;
	}
	parses.parsed.set(files, file, {mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino, dev: st.dev, also, seq, value});
	// Encoded (and refused when not plain data) with the memo's batch, after the refresh.
	if (memo && version !== undefined && !kept) memo.put(name, version, file, st, also, value);
	return value;
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
