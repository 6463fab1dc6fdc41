import {AsyncLocalStorage} from 'node:async_hooks';
import fs from 'node:fs';
import type {AdapterContext, ScanMemo} from '../types.js';

/**
 * What a folder watch (inotify) can vouch for while a refresh runs: every change event bumps
 * `seq`, so "no event named this file (or, for a listing, this folder) since `seq`" means it
 * is as it was then. Set only around the live snapshot's adapter calls (`vouching.run`); every
 * other caller (actions, purges, status) stats and lists as before.
 */
export interface Vouch {
	/** The number of change events seen so far. */
	readonly seq: number;
	/** Is `file`'s folder watched, with no event naming `file` since `seq`? */
	fileUnchangedSince(file: string, seq: number): boolean;
	/** Is `dir` watched, with nothing created, removed or renamed in it since `seq`? */
	listingUnchangedSince(dir: string, seq: number): boolean;
}

export const vouching = new AsyncLocalStorage<Vouch>();

/** A fresh per-refresh memo (the live snapshot makes one per refresh). */
export function createScanMemo(): ScanMemo {
	const values = new Map<string, unknown>();
	return {
		get<T>(key: string, compute: () => T): T {
			if (values.has(key)) return values.get(key) as T;
			const value = compute();
			values.set(key, value);
			return value;
		},
		has: key => values.has(key),
	};
}

/**
 * `compute()` once per refresh when the context carries a memo, else every time. Only for
 * whole-store scans whose result the caller does not mutate.
 */
export function memo<T>(ctx: Pick<AdapterContext, 'memo'>, key: string, compute: () => T): T {
	return ctx.memo ? ctx.memo.get(key, compute) : compute();
}

/** Does this refresh hold a value under `key` already? (Never outside a refresh.) */
export function memoHas(ctx: Pick<AdapterContext, 'memo'>, key: string): boolean {
	return ctx.memo?.has(key) === true;
}

/**
 * How many ids one refresh looks up directly (an indexed query, one folder) before it reads a
 * whole store once and answers the rest from that: a lookup costs about a millisecond, a whole
 * store tens of milliseconds at thousands of sessions.
 */
let directLookups = 32;

/** For tests: the limit `indexAfter` uses by default (0: every call from the index); returns the old one. */
export function setDirectLookups(n: number): number {
	const before = directLookups;
	directLookups = n;
	return before;
}

/**
 * Per-id lookups or one whole-store index, inside a refresh: the index kept under `key` once the
 * refresh holds it (`discover` built it, say) or once more than `limit` ids were asked of it;
 * before that, undefined: look the id up directly. Outside a refresh, always undefined (one
 * call, one lookup). A few ids (a status run, a refresh after one change) then cost a lookup
 * each instead of reading the whole store, and many ids share one read.
 */
export function indexAfter<T>(ctx: Pick<AdapterContext, 'memo'>, key: string, build: () => T, limit = directLookups): T | undefined {
	const kept = ctx.memo;
	if (!kept) return undefined;
	if (kept.has(key)) return kept.get(key, build);
	const asked = kept.get(`${key}\0asked`, () => ({count: 0}));
	return ++asked.count <= limit ? undefined : kept.get(key, build);
}

interface Parsed {
	readonly stamp: string;
	readonly also: string;
	/** The folder watch's `seq` when this was parsed inside a refresh (else undefined). */
	readonly seq: number | undefined;
	readonly value: unknown;
}

/** Parsed files by path; bounded so a huge home cannot grow it without limit. */
const parsed = new Map<string, Parsed>();
const PARSED_LIMIT = 200_000;

/**
 * `parse()` of a file (one of several `kind`s of parse), remembered until the file changes (its mtime, ctime, size or inode) or
 * `also` does (the stat of another file the parse reads). Re-discovering a folder of 1,000
 * transcripts after one of them grew then reads one file and stats the rest. `parse` must depend
 * on those files only and return a value nobody mutates; a file that cannot be stat()ed is
 * parsed every time (the parser reports why).
 */
export function parseCached<T>(kind: string, file: string, also: string, parse: () => T, keep: (value: T) => boolean = () => true): T {
	const key = `${kind}\0${file}`;
	const vouch = vouching.getStore();
	const known = parsed.get(key);
	// Inside a refresh, a file no change event named since it was read is not even stat()ed: a
	// busy folder re-read after one transcript grew then costs one read, not a thousand stats.
	if (vouch && known?.seq !== undefined && known.also === also && vouch.fileUnchangedSince(file, known.seq)) return known.value as T;
	const seq = vouch?.seq;
	let st: fs.Stats | undefined;
	try {
		st = fs.statSync(file, {throwIfNoEntry: false});
	} catch {
		st = undefined;
	}
	if (!st) {
		parsed.delete(key);
		return parse();
	}
	const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}:${also}`;
	const hit = parsed.get(key);
	if (hit?.stamp === stamp) {
		if (seq !== undefined && hit.seq !== seq) parsed.set(key, {...hit, seq});
		return hit.value as T;
	}
	const value = parse();
	// A transient answer (a locked database) is not kept: the next call asks again.
	if (!keep(value)) {
		parsed.delete(key);
		return value;
	}
	if (parsed.size >= PARSED_LIMIT) parsed.clear();
	parsed.set(key, {stamp, also, seq, value});
	return value;
}

type Listings<T> = Map<string, {readonly seq: number; readonly entries: readonly T[]}>;

const listings: Listings<fs.Dirent> = new Map();
const nameListings: Listings<string> = new Map();

/**
 * `read()` (a readdir of `dir`), or, inside a refresh when the folder watch saw nothing created,
 * removed or renamed in `dir` since, the listing read then (a copy: callers may sort it).
 */
export function listVouched(dir: string, read: () => fs.Dirent[]): fs.Dirent[] {
	return vouchedListing(listings, dir, read);
}

/** `listVouched` for a listing of names only. */
export function namesVouched(dir: string, read: () => string[]): string[] {
	return vouchedListing(nameListings, dir, read);
}

function vouchedListing<T>(cache: Listings<T>, dir: string, read: () => T[]): T[] {
	const vouch = vouching.getStore();
	if (!vouch) return read();
	const known = cache.get(dir);
	if (known && vouch.listingUnchangedSince(dir, known.seq)) return [...known.entries];
	const seq = vouch.seq;
	const entries = read();
	if (cache.size >= PARSED_LIMIT) cache.clear();
	cache.set(dir, {seq, entries});
	return [...entries];
}
