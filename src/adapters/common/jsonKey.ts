import fs from 'node:fs';
import {rootContaining, tempBeside} from './paths.js';
import {writeReplacing} from './rewrite.js';

/** `"key": "value"` as JSON writes it, any spacing; `value` is an id (validated: no quotes or backslashes). */
function memberPattern(key: string, value: string): string {
	const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
	return `"${esc(key)}"\\s*:\\s*"${esc(value)}"`;
}

/** Every object under `node` with the member removed; counts what went. */
function withoutMember(node: unknown, key: string, value: string, count: {n: number}): unknown {
	if (Array.isArray(node)) return node.map(v => withoutMember(v, key, value, count));
	if (typeof node !== 'object' || node === null) return node;
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(node)) {
		if (k === key && v === value) {
			count.n++;
			continue;
		}
		out[k] = withoutMember(v, key, value, count);
	}
	return out;
}

function parseOrUndefined(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

/** How many objects of the JSON file carry `"key": "value"`; 0 when missing or not JSON. */
export function countJsonMembers(file: string, key: string, value: string): number {
	let text: string;
	try {
		text = fs.readFileSync(file, 'utf8');
	} catch {
		return 0;
	}
	const count = {n: 0};
	if (!text.includes(value)) return 0;
	const parsed = parseOrUndefined(text);
	if (parsed === undefined) return 0;
	withoutMember(parsed, key, value, count);
	return count.n;
}

/**
 * The text with every `"key": "value"` member cut out and nothing else touched: the comma on one
 * side goes with it, every other byte stays. Undefined when the cut text does not parse to the
 * same document minus those members (an unusual layout): the caller then re-serialises.
 */
export function cutMembers(text: string, key: string, value: string): string | undefined {
	const member = memberPattern(key, value);
	const cut = text
		.replace(new RegExp(`,\\s*${member}`, 'g'), '')
		.replace(new RegExp(`${member}\\s*,\\s*`, 'g'), '')
		.replace(new RegExp(member, 'g'), '');
	const expected = withoutMember(parseOrUndefined(text), key, value, {n: 0});
	const got = parseOrUndefined(cut);
	return got !== undefined && JSON.stringify(got) === JSON.stringify(expected) ? cut : undefined;
}

/**
 * Remove the `"key": "value"` members of a JSON file (claude's `.claude.json`
 * `projects[cwd].lastSessionId`): only those members go, the rest of the file keeps its bytes
 * where the layout allows (else it is written back as 2-space JSON, claude's own layout). Written
 * to a new file, fsynced and renamed over the old one, so a reader sees the old file or the new
 * one. Refuses a file outside `roots`. Returns how many members went.
 */
export function removeJsonMembers(file: string, key: string, value: string, roots: readonly string[]): number {
	if (rootContaining(file, roots) === undefined) throw new Error(`${file}: refused, not inside the agent's folder`);
	return writeReplacing(
		file,
		text => {
			const count = {n: 0};
			const parsed = parseOrUndefined(text);
			if (parsed === undefined) return undefined;
			const stripped = withoutMember(parsed, key, value, count);
			if (count.n === 0) return undefined;
			return {text: cutMembers(text, key, value) ?? `${JSON.stringify(stripped, null, 2)}\n`, removed: count.n};
		},
		tempBeside,
	);
}
