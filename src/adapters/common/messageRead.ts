// Reading a conversation's messages after a point (AgentAdapter.messages): the shared part of the
// cursors. JSON Lines files are read from the byte offset the cursor holds (only whole lines, so a
// line being written is read next time); databases from the last row id or sequence number.
import fs from 'node:fs';
import type {ConversationMessage, TokenUsage} from '../types.js';
import {parseJsonLine} from './lines.js';
import type {FileStat, InRefresh} from './refresh.js';

/** What a cursor holds: per file its inode and the offset read up to, or the last row key; plus adapter state. */
export interface CursorState {
	/** inode → offset read up to, per file (inodes, not paths: a cursor stays a few bytes). */
	readonly files?: Readonly<Record<string, number>>;
	/** The last row id / sequence number read (database stores). */
	readonly row?: number;
	/** A signature of a source that is re-read whole when it changes (size:mtime). */
	readonly sig?: string;
	/** Adapter state carried between reads (running token totals, the last message id). */
	readonly state?: Readonly<Record<string, unknown>>;
}

export function decodeCursor(cursor: string | undefined): CursorState | undefined {
	if (cursor === undefined || cursor === '') return undefined;
	const parsed = parseJsonLine(cursor);
	return parsed as CursorState | undefined;
}

export function encodeCursor(state: CursorState): string {
	return JSON.stringify(state);
}

/** Whether the line in `buf` from `start` to `end` (its newline excluded) is worth parsing. */
export type LineFilter = (buf: Buffer, start: number, end: number) => boolean;

/**
 * A filter passing lines that hold one of `needles` (JSON strings with their quotes, such as
 * `"user"`): a line without any is skipped unparsed. Only a shortcut: the reader still checks
 * every record it gets, so a line let through by mistake costs a parse, nothing else.
 */
export function linesHolding(...needles: readonly string[]): LineFilter {
	const wanted = needles.map(n => Buffer.from(n));
	return (buf, start, end) => {
		const line = buf.subarray(start, end);
		return wanted.some(n => line.includes(n));
	};
}

/** How much of a file is read at a time: a transcript of hundreds of MB is never held whole. */
const BLOCK_BYTES = 1024 * 1024;

/**
 * Each whole line of `file` from byte `from` to `size`, read a block at a time (a line longer
 * than a block grows the buffer); returns the offset after the last whole line.
 */
function eachWholeLine(file: string, from: number, size: number, fn: (record: Record<string, unknown>) => void, wanted?: LineFilter): number {
	if (size <= from) return from;
	const fd = fs.openSync(file, 'r');
	try {
		let buf = Buffer.allocUnsafe(Math.min(BLOCK_BYTES, size - from));
		// buf[0] is at file offset `pos`; its first `carry` bytes are a line not finished yet.
		let pos = from;
		let carry = 0;
		while (pos + carry < size) {
			if (carry === buf.length) {
				const bigger = Buffer.allocUnsafe(buf.length * 2);
				buf.copy(bigger, 0, 0, carry);
				buf = bigger;
			}
			const n = fs.readSync(fd, buf, carry, Math.min(buf.length - carry, size - pos - carry), pos + carry);
			if (n === 0) break;
			const filled = carry + n;
			let start = 0;
			for (let nl = buf.indexOf(10, start); nl >= 0 && nl < filled; nl = buf.indexOf(10, start)) {
				if (nl > start && (!wanted || wanted(buf, start, nl))) {
					const record = parseJsonLine(buf.toString('utf8', start, nl));
					if (record) fn(record);
				}
				start = nl + 1;
			}
			buf.copy(buf, 0, start, filled);
			carry = filled - start;
			pos += start;
		}
		return pos;
	} finally {
		fs.closeSync(fd);
	}
}

/** The lines appended to some files since a cursor (`readFilesSince`). */
export interface FilesRead {
	/** The conversation was rewritten: every file is read from its start. */
	readonly restart: boolean;
	/** Calls `fn` with each record after the cursor, file by file, in order; returns inode → offset read up to. */
	each(fn: (record: Record<string, unknown>) => void, wanted?: LineFilter): Record<string, number>;
}

function statNow(file: string): fs.Stats | undefined {
	return fs.statSync(file, {throwIfNoEntry: false});
}

/**
 * The stat of `file` for a read inside `ctx`'s refresh: the one discovery took in this refresh
 * (a full index sync lists every conversation, then reads each: a second stat per file was a
 * tenth of its reading), else a fresh one.
 */
export function statIn(ctx: InRefresh): (file: string) => FileStat | undefined {
	return ctx.refresh ? file => ctx.refresh?.stat(file) : statNow;
}

/**
 * The records appended to `files` since the cursor (`statOf`: see `statIn`). The read stops at
 * the size in that stat: what was appended after it is read next time. A file that shrank, was replaced (another
 * inode) or went away since means the conversation was rewritten: every file is read again from
 * the start and `restart` is true.
 */
export function readFilesSince(files: readonly string[], since: CursorState | undefined, statOf: (file: string) => FileStat | undefined = statNow): FilesRead {
	const known = since?.files ?? {};
	const stats = files.map(file => ({file, st: statOf(file)}));
	const present = new Map(stats.filter(s => s.st?.isFile()).map(s => [String(s.st?.ino), s.st?.size ?? 0]));
	// A file read before that is gone or replaced (another inode), or shorter than what was read.
	const restart = since !== undefined && Object.entries(known).some(([ino, offset]) => (present.get(ino) ?? -1) < offset);
	const fresh = since === undefined || restart;
	return {
		restart,
		each(fn, wanted) {
			const next: Record<string, number> = {};
			for (const {file, st} of stats) {
				if (!st?.isFile()) continue;
				const ino = String(st.ino);
				next[ino] = eachWholeLine(file, fresh ? 0 : (known[ino] ?? 0), st.size, fn, wanted);
			}
			return next;
		},
	};
}

/**
 * `fs.existsSync(file)` (links followed; any failure to stat is false), inside a refresh from the
 * stat it took already (`statIn`).
 */
export function existsIn(ctx: InRefresh): (file: string) => boolean {
	const statOf = statIn(ctx);
	return file => {
		try {
			return statOf(file) !== undefined;
		} catch {
			return false;
		}
	};
}

/** A file's size and mtime, for sources re-read whole when they change (`statOf`: see `statIn`). */
export function signatureOf(files: readonly string[], statOf: (file: string) => FileStat | undefined = statNow): string {
	return files
		.map(file => {
			const st = statOf(file);
			return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '-';
		})
		.join('|');
}

/** The text of a content value: a string, or the `text` of its blocks (tool calls and images skipped). */
export function textOfContent(content: unknown): string {
	if (typeof content === 'string') return content;
	if (!Array.isArray(content)) {
		if (typeof content === 'object' && content !== null && typeof (content as {text?: unknown}).text === 'string') return (content as {text: string}).text;
		return '';
	}
	const parts: string[] = [];
	for (const block of content) {
		if (typeof block === 'string') parts.push(block);
		else if (typeof block === 'object' && block !== null) {
			const text = (block as {text?: unknown}).text;
			if (typeof text === 'string') parts.push(text);
		}
	}
	return parts.join('\n');
}

/** A message, when it has text. */
export function messageOf(role: string, at: number | undefined, text: string): ConversationMessage | undefined {
	const trimmed = text.trim();
	return trimmed === '' ? undefined : {role, at: at ?? 0, text: trimmed};
}

/** A non-negative integer field, or undefined. */
export function count(value: unknown): number | undefined {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/** Adds two usages field by field; a field unknown on both sides stays unknown. */
export function addUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
	if (!a) return b;
	if (!b) return a;
	const add = (x: number | undefined, y: number | undefined) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
	return compactUsage({
		input: add(a.input, b.input),
		output: add(a.output, b.output),
		cacheRead: add(a.cacheRead, b.cacheRead),
		cacheWrite: add(a.cacheWrite, b.cacheWrite),
	});
}

/** Drops undefined fields; undefined when nothing is known. */
export function compactUsage(u: {
	input?: number | undefined;
	output?: number | undefined;
	cacheRead?: number | undefined;
	cacheWrite?: number | undefined;
}): TokenUsage | undefined {
	const out: {input?: number; output?: number; cacheRead?: number; cacheWrite?: number} = {};
	if (u.input !== undefined) out.input = u.input;
	if (u.output !== undefined) out.output = u.output;
	if (u.cacheRead !== undefined) out.cacheRead = u.cacheRead;
	if (u.cacheWrite !== undefined) out.cacheWrite = u.cacheWrite;
	return Object.keys(out).length === 0 ? undefined : out;
}
