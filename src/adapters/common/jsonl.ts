import fs from 'node:fs';
import {parseJsonLine} from './lines.js';

/** Every parseable record of a JSON Lines file (a torn last line is skipped). Throws when unreadable. */
export function readJsonl(file: string): Record<string, unknown>[] {
	const out: Record<string, unknown>[] = [];
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		const record = parseJsonLine(line);
		if (record) out.push(record);
	}
	return out;
}

/**
 * One scratch buffer for every first-line read (reads are synchronous, so it is never shared):
 * allocating and zeroing 64 kB per file cost more than reading 4,000 rollouts' first lines.
 */
const scratch = Buffer.allocUnsafe(64 * 1024);

/** The first line of a file (up to `limit` bytes) parsed as JSON, or undefined. Reads in small chunks. */
export function readFirstJsonLine(file: string, limit = 1024 * 1024): Record<string, unknown> | undefined {
	let fd: number;
	try {
		fd = fs.openSync(file, 'r');
	} catch {
		return undefined;
	}
	try {
		const chunks: Buffer[] = [];
		let total = 0;
		while (total < limit) {
			const n = fs.readSync(fd, scratch, 0, Math.min(scratch.length, limit - total), total);
			if (n === 0) break;
			const part = scratch.subarray(0, n);
			const end = part.indexOf(10);
			if (end >= 0) {
				chunks.push(part.subarray(0, end));
				return parseJsonLine(Buffer.concat(chunks).toString('utf8'));
			}
			// A copy: the scratch buffer is read into again.
			chunks.push(Buffer.from(part));
			total += n;
		}
		return parseJsonLine(Buffer.concat(chunks).toString('utf8'));
	} finally {
		fs.closeSync(fd);
	}
}

/** A string field, or undefined. */
export function str(record: Record<string, unknown> | undefined, key: string): string | undefined {
	const value = record?.[key];
	return typeof value === 'string' ? value : undefined;
}

/** An object field, or undefined. */
export function obj(record: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
	const value = record?.[key];
	return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** ms since the epoch from an ISO timestamp, or undefined. */
export function isoMs(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const ms = Date.parse(value);
	return Number.isFinite(ms) ? ms : undefined;
}

/** One line of text for a title: whitespace collapsed, cut to `max` characters. */
export function oneLine(text: string, max = 80): string {
	const flat = text.replace(/\s+/g, ' ').trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
