// opencode's purge plan and deletion: rows by table rule, legacy files, prompt-history and log lines.

import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../../domain/result.js';
import {tableColumns, withReadOnlyDb} from '../../system/sqliteRead.js';
import {str} from '../common/jsonl.js';
import {countLines, parseJsonLine, removeLines, type LineMatch} from '../common/lines.js';
import {isPlainName, joinNames, listDir, lstatOrUndefined} from '../common/paths.js';
import {dirItem, fileItem, makePlan} from '../common/plan.js';
import {deleteRows, type RowDelete} from '../common/sqlitePurge.js';
import type {AdapterContext, KeptPlace, PlanItem, PurgePlan} from '../types.js';
import {
	dataDir,
	dbFiles,
	DELETE_TIMEOUT_MS,
	descendantsOf,
	logFiles,
	MESSAGE_ID,
	promptHistoryFile,
	q,
	readStore,
	roots,
	SESSION_TABLES,
	stateDir,
} from './store.js';

/** The text of every user prompt per session (parts of type text in user messages), for the prompt history. */
function userPrompts(db: string): Map<string, Set<string>> {
	const out = new Map<string, Set<string>>();
	try {
		withReadOnlyDb(db, handle => {
			const tables = tableColumns(handle);
			if (!tables.get('part')?.has('data') || !tables.get('message')?.has('data')) return;
			const rows = handle
				.prepare(
					`SELECT p.session_id AS owner, json_extract(p.data, '$.text') AS text FROM part p JOIN message m ON m.id = p.message_id
					 WHERE json_valid(p.data) AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'user' AND json_extract(p.data, '$.type') = 'text'`,
				)
				.all() as {owner: string; text: unknown}[];
			for (const row of rows) if (typeof row.text === 'string') pushToSet(out, row.owner, row.text);
		});
	} catch {
		// An unreadable store plans no history lines; the database itself is reported by the plan.
	}
	return out;
}

function pushToSet(map: Map<string, Set<string>>, key: string, value: string): void {
	const set = map.get(key) ?? new Set<string>();
	set.add(value);
	map.set(key, set);
}

/**
 * prompt-history.jsonl lines carry no session id, only the typed `input`. Decided (issue 18): a
 * line goes when its input is the text of a prompt of the purged conversation (or a child) and of
 * no other conversation in the store; a prompt that another conversation also has stays, and the
 * plan says so.
 */
function promptLineMatch(ctx: AdapterContext, ids: readonly string[]): {match: LineMatch; shared: number} {
	const mine = new Set<string>();
	const others = new Set<string>();
	const wanted = new Set(ids);
	for (const db of dbFiles(ctx)) {
		for (const [owner, texts] of userPrompts(db)) for (const t of texts) (wanted.has(owner) ? mine : others).add(t);
	}
	const removable = new Set([...mine].filter(t => !others.has(t)));
	const shared = [...mine].filter(t => others.has(t)).length;
	const match: LineMatch = line => {
		const input = parseJsonLine(line)?.['input'];
		return typeof input === 'string' && removable.has(input);
	};
	return {match, shared};
}

/** Log lines that name one of the ids (opencode writes `session.id=<id>`, `id=<id>` and more). */
function logLineMatch(ids: readonly string[]): LineMatch {
	return line => ids.some(id => line.includes(id));
}

/** The text-file lines of a purge: prompt history and logs. */
function textLineItems(ctx: AdapterContext, ids: readonly string[]): {items: PlanItem[]; kept: KeptPlace[]; prompts: LineMatch} {
	const items: PlanItem[] = [];
	const kept: KeptPlace[] = [];
	const history = promptHistoryFile(ctx);
	const prompts = promptLineMatch(ctx, ids);
	const n = countLines(history, prompts.match);
	if (n > 0)
		items.push({
			kind: 'lines',
			path: history,
			count: n,
			bytes: 0,
			sessionId: ids[0] ?? '',
			description: 'prompt-history.jsonl lines (no session id there: the lines whose text is a prompt of this conversation only)',
		});
	if (prompts.shared > 0) kept.push({path: history, reason: `${prompts.shared} prompt text(s) another conversation also has stay in the TUI's prompt history`});
	for (const file of logFiles(ctx)) {
		const count = countLines(file, logLineMatch(ids));
		if (count > 0) items.push({kind: 'lines', path: file, count, bytes: 0, sessionId: ids[0] ?? '', description: 'log lines naming the session'});
	}
	return {items, kept, prompts: prompts.match};
}

/** How a table names a session: the owner column and an optional extra condition, in delete order. */
interface TableRule {
	readonly table: string;
	readonly column: string;
}

/**
 * Tables to purge, children first: parts, every other `session_id` table, events (by
 * `aggregate_id`), then the session rows of both generations.
 */
function purgeRules(tables: Map<string, Set<string>>): TableRule[] {
	const rules: TableRule[] = [];
	const has = (t: string, c: string) => tables.get(t)?.has(c) === true;
	if (has('part', 'session_id')) rules.push({table: 'part', column: 'session_id'});
	for (const [table, cols] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
		if (table !== 'part' && !SESSION_TABLES.includes(table as (typeof SESSION_TABLES)[number]) && cols.has('session_id'))
			rules.push({table, column: 'session_id'});
	}
	if (has('event', 'aggregate_id')) rules.push({table: 'event', column: 'aggregate_id'});
	if (has('event_sequence', 'aggregate_id')) rules.push({table: 'event_sequence', column: 'aggregate_id'});
	for (const table of SESSION_TABLES) if (has(table, 'id')) rules.push({table, column: 'id'});
	return rules;
}

function rowItems(db: string, ids: readonly string[]): PlanItem[] {
	const placeholders = ids.map(() => '?').join(', ');
	return withReadOnlyDb(db, handle => {
		const items: PlanItem[] = [];
		for (const rule of purgeRules(tableColumns(handle))) {
			const rows = handle
				.prepare(`SELECT ${q(rule.column)} AS owner, count(*) AS n FROM ${q(rule.table)} WHERE ${q(rule.column)} IN (${placeholders}) GROUP BY 1`)
				.all(...ids) as {
				owner: string;
				n: number;
			}[];
			for (const row of rows) {
				items.push({kind: 'rows', path: db, table: rule.table, count: row.n, bytes: 0, sessionId: row.owner, description: `${rule.table} rows`});
			}
		}
		return items;
	});
}

/** Pre-SQLite JSON files (`storage/`) of the sessions, when still on disk. */
function legacyItems(ctx: AdapterContext, ids: readonly string[]): (PlanItem | undefined)[] {
	const storage = path.join(dataDir(ctx), 'storage');
	const items: (PlanItem | undefined)[] = [];
	for (const id of ids) {
		for (const project of listDir(path.join(storage, 'session')).filter(e => e.isDirectory() && isPlainName(e.name))) {
			items.push(fileItem(joinNames(storage, 'session', project.name, `${id}.json`), id, 'legacy session file'));
		}
		const messages = joinNames(storage, 'message', id);
		// A linked folder is only unlinked: never read message ids through it (they would name parts to delete).
		const realFolder = lstatOrUndefined(messages)?.isDirectory() === true;
		for (const entry of realFolder ? listDir(messages) : []) {
			const msg = entry.name.replace(/\.json$/, '');
			if (MESSAGE_ID.test(msg)) items.push(dirItem(joinNames(storage, 'part', msg), id, 'legacy message parts'));
		}
		items.push(dirItem(messages, id, 'legacy messages'));
		for (const folder of ['todo', 'session_diff', 'session_share'])
			items.push(fileItem(joinNames(storage, folder, `${id}.json`), id, `legacy ${folder.replace('_', ' ')}`));
	}
	return items;
}

/** Parent links of legacy JSON sessions (`parentID`), for descendants that only exist as files. */
export function legacyParents(ctx: AdapterContext): Map<string, string> {
	const out = new Map<string, string>();
	const sessionDir = path.join(dataDir(ctx), 'storage', 'session');
	for (const project of listDir(sessionDir).filter(e => e.isDirectory())) {
		for (const entry of listDir(path.join(sessionDir, project.name))) {
			if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
			try {
				const record = parseJsonLine(fs.readFileSync(path.join(sessionDir, project.name, entry.name), 'utf8').replace(/\n/g, ' '));
				const id = str(record, 'id');
				const parent = str(record, 'parentID');
				if (id && parent) out.set(id, parent);
			} catch {
				// an unreadable legacy file is left to the residual scan
			}
		}
	}
	return out;
}

/** What deleting a plan needs beyond its items, read from the store just before the rows go. */
interface DeletionFacts {
	/** The session's recorded directory, where `opencode session delete` must run. */
	readonly directory: string | undefined;
	readonly dbs: readonly string[];
	/** Which prompt-history lines are this conversation's (read from its rows, so before they go). */
	readonly prompts: LineMatch;
}

interface Planned extends DeletionFacts {
	readonly plan: PurgePlan;
}

/** The deletion facts of a plan that was built earlier: its databases, the directory, the prompts. */
export function deletionFacts(ctx: AdapterContext, plan: PurgePlan): DeletionFacts {
	const dbs = [...new Set(plan.items.filter(i => i.kind === 'rows').map(i => i.path))];
	let directory: string | undefined;
	for (const db of dbFiles(ctx)) directory ??= readStore(db, ctx.reads).sessions.get(plan.id)?.directory;
	return {directory, dbs, prompts: promptLineMatch(ctx, [plan.id, ...plan.descendants]).match};
}

/** The plan; throws StoreReadError when a database that may hold the session cannot be read. */
export function planFor(ctx: AdapterContext, id: string): Planned {
	const parents = legacyParents(ctx);
	const stores = dbFiles(ctx).map(db => readStore(db, ctx.reads));
	for (const store of stores) for (const [child, parent] of store.parents) parents.set(child, parent);
	const descendants = descendantsOf(id, parents);
	const ids = [id, ...descendants];
	const items: (PlanItem | undefined)[] = [];
	const dbs: string[] = [];
	let directory: string | undefined;
	for (const store of stores) {
		const rows = rowItems(store.db, ids);
		if (rows.length > 0) dbs.push(store.db);
		items.push(...rows);
		directory ??= store.sessions.get(id)?.directory;
	}
	items.push(...legacyItems(ctx, ids));
	const text = textLineItems(ctx, ids);
	items.push(...text.items);
	const plan = makePlan('opencode', id, descendants, items, roots(ctx));
	// `opencode session delete` (run per database with rows) takes its lock: a folder under `locks/` (seen with the real 1.18).
	const changed = dbs.length > 0 ? [{path: path.join(stateDir(ctx), 'locks'), reason: "changed by opencode's own delete: its lock folder"}] : [];
	const shown = {...plan, ...(text.kept.length > 0 ? {kept: text.kept} : {}), ...(changed.length > 0 ? {changed} : {})};
	return {plan: shown, directory, dbs, prompts: text.prompts};
}

/** Ask opencode itself first (it unshares and recurses); returns a warning when it did not work. */
export async function agentDelete(ctx: AdapterContext, id: string, db: string, directory: string | undefined): Promise<string | undefined> {
	if (!directory || !fs.existsSync(directory))
		return `opencode session delete skipped: the session's directory ${directory ?? '(unknown)'} is gone; deleted the rows directly`;
	const result = await ctx.exec('opencode', ['session', 'delete', id], {
		cwd: directory,
		// Point opencode at exactly this data: never the caller's own store when reading another home.
		env: {HOME: ctx.home, XDG_DATA_HOME: path.dirname(dataDir(ctx)), XDG_STATE_HOME: path.dirname(stateDir(ctx)), OPENCODE_DB: db},
		timeoutMs: DELETE_TIMEOUT_MS,
	});
	if (result.failure) return `opencode session delete could not run (${result.failure}); deleted the rows directly`;
	if (result.exitCode !== 0) {
		const detail = result.stderr.trim().split('\n').at(-1) ?? '';
		return `opencode session delete ${id} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}; deleted the rows directly`;
	}
	return undefined;
}

/**
 * Remove the planned prompt-history lines and every log line naming the ids; the logs are listed
 * again here because `opencode session delete` has just logged the id, maybe in a new file.
 */
export function removeTextLines(ctx: AdapterContext, plan: PurgePlan, prompts: LineMatch, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const history = plan.items.filter(i => i.kind === 'lines' && i.path === promptHistoryFile(ctx));
	const targets: [string, LineMatch, PlanItem | undefined][] = [
		...history.map((item): [string, LineMatch, PlanItem] => [item.path, prompts, item]),
		...logFiles(ctx).map((file): [string, LineMatch, PlanItem | undefined] => [
			file,
			logLineMatch(ids),
			plan.items.find(i => i.kind === 'lines' && i.path === file),
		]),
	];
	for (const [file, match, item] of targets) {
		try {
			removeLines(file, match, roots(ctx));
			if (item) removed.push(item);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	return {removed, warnings};
}

/** Delete what is left of the planned rows, one transaction per database. */
export function deletePlannedRows(plan: PurgePlan, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const dbs = [...new Set(plan.items.filter(i => i.kind === 'rows').map(i => i.path))];
	for (const db of dbs) {
		try {
			const steps: RowDelete[] = withReadOnlyDb(db, handle => purgeRules(tableColumns(handle))).map(rule => ({...rule, ids}));
			deleteRows(db, steps);
			removed.push(...plan.items.filter(i => i.kind === 'rows' && i.path === db));
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	return {removed, warnings};
}
