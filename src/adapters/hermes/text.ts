// Hermes' text files that hold a conversation's words outside state.db (seen with hermes 0.19.0):
// the TUI's prompt history and the logs.
//
// - `<HERMES_HOME>/.hermes_history`: prompt_toolkit's FileHistory, one entry per submitted prompt,
//   `\n# <local time>\n` followed by `+<line>` for each line of it. It names no session, so an
//   entry goes when its text is a prompt of the purged conversation and of no other one in the store.
// - `<HERMES_HOME>/logs/agent.log` and `errors.log` (rotated to `.1`, `.2`, …): lines tagged
//   `[<session id>]`, some quoting the prompt (`conversation turn: session=<id> … msg='…'`).

import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../../domain/result.js';
import {withReadOnlyDb} from '../../system/sqliteRead.js';
import {countLines, removeLines, type LineMatch} from '../common/lines.js';
import {listDir, tempBeside} from '../common/paths.js';
import {writeReplacing} from '../common/rewrite.js';
import type {KeptPlace, PlanItem} from '../types.js';
import type {HermesStore} from './store.js';

export function historyFile(store: HermesStore): string {
	return path.join(store.home, '.hermes_history');
}

/** The store's log files: `logs/*.log` and their rotations. */
export function logFiles(store: HermesStore): string[] {
	const dir = path.join(store.home, 'logs');
	return listDir(dir)
		.filter(e => e.isFile() && /\.log(\.\d+)?$/.test(e.name))
		.map(e => path.join(dir, e.name))
		.sort();
}

/** One FileHistory entry: its raw text (leading newline and `# time` line included) and the prompt it holds. */
interface HistoryEntry {
	readonly raw: string;
	readonly prompt: string;
}

/** The entries of a FileHistory text, in order; they join back to exactly the text. */
export function historyEntries(text: string): HistoryEntry[] {
	// Every prompt line starts with `+`, so `\n# ` only ever opens an entry.
	return text
		.split(/(?=\n# )/)
		.filter(raw => raw !== '')
		.map(raw => ({
			raw,
			prompt: raw
				.split('\n')
				.filter(line => line.startsWith('+'))
				.map(line => line.slice(1))
				.join('\n'),
		}));
}

/** The user prompts of every session in the store, by session (read before the rows go). */
function userPrompts(store: HermesStore): Map<string, Set<string>> {
	const out = new Map<string, Set<string>>();
	withReadOnlyDb(store.db, db => {
		for (const row of db.prepare<[], {id: string; content: string | null}>("SELECT session_id AS id, content FROM messages WHERE role = 'user'").all()) {
			if (row.content === null) continue;
			const set = out.get(row.id) ?? new Set<string>();
			set.add(row.content);
			out.set(row.id, set);
		}
	});
	return out;
}

/** Which prompts of `ids` may go from the history: theirs and no other session's; how many are shared. */
export function removablePrompts(store: HermesStore, ids: readonly string[]): {prompts: ReadonlySet<string>; shared: number} {
	const wanted = new Set(ids);
	const mine = new Set<string>();
	const others = new Set<string>();
	for (const [owner, texts] of userPrompts(store)) for (const t of texts) (wanted.has(owner) ? mine : others).add(t);
	return {prompts: new Set([...mine].filter(t => !others.has(t))), shared: [...mine].filter(t => others.has(t)).length};
}

function countEntries(file: string, prompts: ReadonlySet<string>): number {
	let text: string;
	try {
		text = fs.readFileSync(file, 'utf8');
	} catch {
		return 0;
	}
	return historyEntries(text).filter(e => prompts.has(e.prompt)).length;
}

/** A log line names one of the ids (hermes tags its lines `[<id>]` and writes `session=<id>`). */
export function logLineMatch(ids: readonly string[]): LineMatch {
	return line => ids.some(id => line.includes(id));
}

/** The plan's text items for one store: history entries and log lines, and what stays. */
export function textItems(
	store: HermesStore,
	id: string,
	ids: readonly string[],
	prompts: {prompts: ReadonlySet<string>; shared: number},
): {items: PlanItem[]; kept: KeptPlace[]} {
	const items: PlanItem[] = [];
	const kept: KeptPlace[] = [];
	const history = historyFile(store);
	const n = countEntries(history, prompts.prompts);
	if (n > 0)
		items.push({
			kind: 'lines',
			path: history,
			count: n,
			bytes: 0,
			sessionId: id,
			description: 'prompt history entries (they name no session: the prompts of this conversation only)',
		});
	if (prompts.shared > 0) kept.push({path: history, reason: `${prompts.shared} prompt text(s) another conversation also has stay in the TUI's prompt history`});
	for (const file of logFiles(store)) {
		const count = countLines(file, logLineMatch(ids));
		if (count > 0) items.push({kind: 'lines', path: file, count, bytes: 0, sessionId: id, description: 'log lines naming the session'});
	}
	return {items, kept};
}

/**
 * Remove the history entries holding `prompts` and every log line naming `ids` (the logs are
 * listed again: hermes' own delete may have just written one). Each file is rewritten to a new
 * file and renamed over the old one.
 */
export function removeText(
	store: HermesStore,
	plan: readonly PlanItem[],
	prompts: ReadonlySet<string>,
	ids: readonly string[],
): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const history = historyFile(store);
	const planned = (file: string) => plan.find(i => i.kind === 'lines' && i.path === file);
	try {
		if (prompts.size > 0) {
			writeReplacing(
				history,
				text => {
					const all = historyEntries(text);
					const keep = all.filter(e => !prompts.has(e.prompt));
					return keep.length === all.length ? undefined : {text: keep.map(e => e.raw).join(''), removed: all.length - keep.length};
				},
				tempBeside,
			);
		}
		const item = planned(history);
		if (item) removed.push(item);
	} catch (error) {
		warnings.push(messageOf(error));
	}
	for (const file of logFiles(store)) {
		try {
			removeLines(file, logLineMatch(ids), [store.home]);
			const item = planned(file);
			if (item) removed.push(item);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	return {removed, warnings};
}
