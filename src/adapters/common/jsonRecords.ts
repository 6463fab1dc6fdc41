import fs from 'node:fs';
import {readSmallText} from './rootedFs.js';

/** A JSON object read from an agent's file; any other JSON value is not a record. */
export type JsonRecord = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is JsonRecord {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `record[key]` when it is a non-empty string. */
export function stringField(record: JsonRecord | undefined, key: string): string | undefined {
	const value = record?.[key];
	return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The object records of a JSONL file. A torn line (an agent mid-write) or any non-object line is
 * skipped, never fatal. Undefined when the file cannot be read.
 */
export function readJsonLines(file: string): JsonRecord[] | undefined {
	const text = readSmallText(file);
	if (text === undefined) return undefined;
	const out: JsonRecord[] = [];
	for (const line of text.split('\n')) {
		if (line.trim() === '') continue;
		try {
			const value = JSON.parse(line) as unknown;
			if (isRecord(value)) out.push(value);
		} catch {
			// a torn or foreign line: the rest of the file still counts
		}
	}
	return out;
}

/**
 * A timestamp in any of the shapes agents write: ISO text, epoch seconds (hermes `REAL`), or epoch
 * milliseconds. Undefined when it is none of them.
 */
export function toEpochMs(value: unknown): number | undefined {
	if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
		// Below 1e11 a number is seconds (1e11 s is the year 5138; 1e11 ms is 1973).
		return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
	}
	if (typeof value === 'bigint') return toEpochMs(Number(value));
	if (typeof value === 'string' && value.trim() !== '') {
		if (/^\d+(\.\d+)?$/.test(value.trim())) return toEpochMs(Number(value));
		const parsed = Date.parse(value);
		return Number.isNaN(parsed) ? undefined : parsed;
	}
	return undefined;
}

/** One line of a message for titles: whitespace collapsed, cut at `max` characters. */
export function titleOf(text: string | undefined, max = 80): string | undefined {
	if (!text) return undefined;
	const line = text.replace(/\s+/g, ' ').trim();
	if (line === '') return undefined;
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** How much of a file's head `readFirstRecord` reads: a first record is small (a header line). */
const HEAD_BYTES = 256 * 1024;

/**
 * The first line of a JSONL file as a record, reading only the file's head. Undefined when the
 * file is missing, not a regular file, or its first line is not a JSON object.
 */
export function readFirstRecord(file: string): JsonRecord | undefined {
	let fd: number | undefined;
	try {
		if (!fs.lstatSync(file).isFile()) return undefined;
		fd = fs.openSync(file, 'r');
		const buffer = Buffer.alloc(HEAD_BYTES);
		const read = fs.readSync(fd, buffer, 0, HEAD_BYTES, 0);
		const head = buffer.toString('utf8', 0, read);
		const newline = head.indexOf('\n');
		const value = JSON.parse(newline < 0 ? head : head.slice(0, newline)) as unknown;
		return isRecord(value) ? value : undefined;
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}

/**
 * Serialise `value` the way `original` was written (compact or indented, trailing newline or
 * not), so a rewritten index file changes only in the entries that were removed.
 */
export function jsonLike(original: string | undefined, value: unknown): string {
	const text = original ?? '';
	const indent = /\n([ \t]+)\S/.exec(text)?.[1];
	const body = indent === undefined ? JSON.stringify(value) : JSON.stringify(value, null, indent);
	return text.endsWith('\n') ? `${body}\n` : body;
}
