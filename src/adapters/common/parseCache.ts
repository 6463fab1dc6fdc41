import fs from 'node:fs';
import {decodeValue} from '../../system/memoValue.js';
import {sameStamp, type FileStamp, type ParseMemo} from '../../system/parseMemo.js';

// Parsed files kept across refreshes (`ParseCache`) and the one way a parse is looked up in it
// (`parseIn`, behind `Refresh.parse` and `parseCached` in ./refresh.ts): by kind then file,
// checked against the file's stat, and for persisted kinds against the on-disk parse memo.

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

export type Listings<T> = Map<string, {readonly seq: number; readonly entries: readonly T[]}>;

/** Bounded so a huge home cannot grow a cache without limit. */
export const PARSED_LIMIT = 200_000;

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

/** The part of a file's stat a refresh keeps and compares: its stamp and its type. */
export interface FileStat extends FileStamp {
	isFile(): boolean;
	isDirectory(): boolean;
}

/**
 * A stat as a refresh keeps it: fs.Stats on Node 20 also holds four Date objects, made for every
 * stat, and a refresh keeps one per file it looked at (tens of thousands at 20,000 conversations,
 * all alive until the refresh ends).
 */
class KeptStat implements FileStat {
	readonly dev: number;
	readonly ino: number;
	readonly size: number;
	readonly mtimeMs: number;
	readonly ctimeMs: number;
	private readonly kind: 'file' | 'dir' | 'other';

	constructor(st: fs.Stats) {
		this.dev = st.dev;
		this.ino = st.ino;
		this.size = st.size;
		this.mtimeMs = st.mtimeMs;
		this.ctimeMs = st.ctimeMs;
		this.kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
	}

	isFile(): boolean {
		return this.kind === 'file';
	}

	isDirectory(): boolean {
		return this.kind === 'dir';
	}
}

/** `file`'s stat (links followed), or undefined when it is not there or cannot be stat()ed. */
export function statNow(file: string): FileStat | undefined {
	try {
		const st = fs.statSync(file, {throwIfNoEntry: false});
		return st ? new KeptStat(st) : undefined;
	} catch {
		return undefined;
	}
}

function sameFile(known: Parsed, st: FileStat, also: string): boolean {
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
function fromMemo(memo: ParseMemo, kind: string, version: number, file: string, st: FileStat, also: string): {value: unknown} | undefined {
	const row = memo.take(kind, version, file);
	if (!row || row.also !== also || !sameStamp(row, st)) return undefined;
	const decoded = decodeValue(row.value);
	return decoded.ok ? {value: decoded.value} : undefined;
}

/** `Refresh.parse` against `parses`, trusting `vouch` (when given) for files no event named. */
export function parseIn<T>(
	parses: ParseCache,
	vouch: Vouch | undefined,
	statOf: (file: string) => FileStat | undefined,
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
		// Only a value kept before can be on disk: a parse that is transient on every refresh (a
		// locked database) must not cost a write each time.
		if (memo && version !== undefined && known) memo.drop(name, version, file);
		return value;
	}
	parses.parsed.set(files, file, {mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino, dev: st.dev, also, seq, value});
	// Encoded (and refused when not plain data) with the memo's batch, after the refresh.
	if (memo && version !== undefined && !kept) memo.put(name, version, file, st, also, value);
	return value;
}
