import fs from 'node:fs';
import path from 'node:path';
import {rootContaining, tempBeside} from './paths.js';
import {fsyncDir} from './rewrite.js';

/** Decides whether one line (without its newline) belongs to the session being removed. */
export type LineMatch = (line: string) => boolean;

/** A JSON Lines record, or undefined for a torn or non-JSON line. */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
	if (line.trim() === '') return undefined;
	try {
		const value: unknown = JSON.parse(line);
		return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
	} catch {
		return undefined;
	}
}

/** A matcher for JSON lines whose `field` is one of `ids` (exact, so another session's text that quotes an id is kept). */
export function jsonFieldIn(field: string, ids: readonly string[]): LineMatch {
	const wanted = new Set(ids);
	return line => {
		const value = parseJsonLine(line)?.[field];
		return typeof value === 'string' && wanted.has(value);
	};
}

/** Lines of a text file, each with its newline kept (the last may lack one). [] when missing. */
function readLines(file: string): {lines: string[]; stat: fs.Stats} | undefined {
	let stat: fs.Stats;
	try {
		stat = fs.lstatSync(file);
	} catch {
		return undefined;
	}
	if (!stat.isFile()) return undefined;
	const text = fs.readFileSync(file, 'utf8');
	return {lines: text.length === 0 ? [] : text.split(/(?<=\n)/), stat};
}

/** How many lines of `file` match. 0 when the file is missing. */
export function countLines(file: string, match: LineMatch): number {
	const read = readLines(file);
	if (!read) return 0;
	return read.lines.filter(line => match(line.replace(/\r?\n$/, ''))).length;
}

const MAX_ATTEMPTS = 5;

/**
 * Remove the matching lines of a shared file (history.jsonl, session_index.jsonl) by writing the
 * kept lines to a temp file beside it and renaming it over the original: a reader never sees a
 * half-written file, and every other line stays byte-identical. If the agent appends while we
 * work (size or mtime moved), start over. Refuses a symlink or a file outside `roots`.
 * Returns the number of lines removed.
 */
export function removeLines(file: string, match: LineMatch, roots: readonly string[]): number {
	if (rootContaining(file, roots) === undefined) throw new Error(`${file}: refused, not inside the agent's folder`);
	for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		const read = readLines(file);
		if (!read) {
			if (fs.existsSync(file)) throw new Error(`${file}: not a regular file`);
			return 0;
		}
		const kept = read.lines.filter(line => !match(line.replace(/\r?\n$/, '')));
		const removed = read.lines.length - kept.length;
		if (removed === 0) return 0;
		const temp = tempBeside(file);
		try {
			const fd = fs.openSync(temp, 'wx', read.stat.mode & 0o7777);
			try {
				fs.writeSync(fd, kept.join(''));
				fs.fsyncSync(fd);
			} finally {
				fs.closeSync(fd);
			}
			const now = fs.lstatSync(file);
			if (now.size !== read.stat.size || now.mtimeMs !== read.stat.mtimeMs) continue;
			fs.renameSync(temp, file);
			fsyncDir(path.dirname(file));
			return removed;
		} finally {
			fs.rmSync(temp, {force: true});
		}
	}
	throw new Error(`${file}: kept changing while lines were removed; try again`);
}
