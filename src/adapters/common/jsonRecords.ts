import fs from 'node:fs';
import {lstatOrUndefined, rootContaining, tempBeside} from './paths.js';

// Small readers for agents' JSON files that jsonl.ts does not cover: whole-file JSON, timestamps
// in every shape agents write them, and rewriting an index file in its own style.

/** A JSON object read from an agent's file; any other JSON value is not a record. */
export type JsonRecord = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is JsonRecord {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A regular file's text, or undefined when it is missing, not a regular file or larger than `maxBytes`. */
export function readSmallText(file: string, maxBytes = 64 * 1024 * 1024): string | undefined {
	const stat = lstatOrUndefined(file);
	if (!stat?.isFile() || stat.size > maxBytes) return undefined;
	try {
		return fs.readFileSync(file, 'utf8');
	} catch {
		return undefined;
	}
}

/** Parse JSON text; undefined for anything that is not valid JSON. */
export function parseJsonOrUndefined(text: string | undefined): unknown {
	if (text === undefined) return undefined;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
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

/**
 * Replace a JSON index file (inside `roots` only) with `value` in the file's own style, through a
 * temp file and a rename, so a reader never sees half of it. The file keeps its mode.
 */
export function rewriteJsonFile(file: string, roots: readonly string[], original: string | undefined, value: unknown): void {
	if (rootContaining(file, roots) === undefined) throw new Error(`${file}: refused, not inside the agent's folder`);
	const temp = tempBeside(file);
	try {
		fs.writeFileSync(temp, jsonLike(original, value), {mode: (lstatOrUndefined(file)?.mode ?? 0o644) & 0o7777, flag: 'wx'});
		fs.renameSync(temp, file);
	} finally {
		fs.rmSync(temp, {force: true});
	}
}
