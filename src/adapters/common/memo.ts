import fs from 'node:fs';
import type {AdapterContext, ScanMemo} from '../types.js';

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
	};
}

/**
 * `compute()` once per refresh when the context carries a memo, else every time. Only for
 * whole-store scans whose result the caller does not mutate.
 */
export function memo<T>(ctx: Pick<AdapterContext, 'memo'>, key: string, compute: () => T): T {
	return ctx.memo ? ctx.memo.get(key, compute) : compute();
}

interface Parsed {
	readonly stamp: string;
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
	let st: fs.Stats | undefined;
	try {
		st = fs.statSync(file, {throwIfNoEntry: false});
	} catch {
		st = undefined;
	}
	const key = `${kind}\0${file}`;
	if (!st) {
		parsed.delete(key);
		return parse();
	}
	const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}:${also}`;
	const hit = parsed.get(key);
	if (hit?.stamp === stamp) return hit.value as T;
	const value = parse();
	// A transient answer (a locked database) is not kept: the next call asks again.
	if (!keep(value)) {
		parsed.delete(key);
		return value;
	}
	if (parsed.size >= PARSED_LIMIT) parsed.clear();
	parsed.set(key, {stamp, value});
	return value;
}
