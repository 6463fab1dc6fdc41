// What a Grok Build purge deletes, measured on grok 1.0.41: the session folder is not all of it.
// Beside it grok keeps, per cwd group, `prompt_history.jsonl` (one line per prompt, with its text
// and `session_id`), `sessions/session_search.sqlite` (its FTS5 search index: `session_docs`
// rows with the title and the prompts' text, indexed by the external-content table
// `session_docs_fts`), and `logs/unified.jsonl` (log lines naming the session id). `grok
// sessions delete ID` removes the folder and the `session_docs` row only: the prompt stays in
// prompt_history.jsonl, in the database's freed pages, and the log lines stay.

import path from 'node:path';
import {messageOf} from '../../domain/result.js';
import {tableColumns, withReadOnlyDb} from '../../system/sqliteRead.js';
import {countLines, jsonFieldIn, removeLines, type LineMatch} from '../common/lines.js';
import {listDir, lstatOrUndefined} from '../common/paths.js';
import {dirItem, removePaths} from '../common/plan.js';
import {deleteRows, eraseDatabases} from '../common/sqlitePurge.js';
import {withPurgeDb} from '../common/purgeDb.js';
import type {AdapterContext, PlanItem, PurgePlan} from '../types.js';
import {buildDescendants, buildGroups, buildRoot, buildSessions} from './build.js';

/** How long `grok sessions delete` may take (it took 0.35 s here). */
const DELETE_TIMEOUT_MS = 30_000;

const PROMPT_HISTORY = 'prompt_history.jsonl';
const SEARCH_TABLE = 'session_docs';
const SEARCH_FTS = 'session_docs_fts';

/** Grok's own FTS5 index of sessions (titles and prompts). */
export function searchDb(ctx: AdapterContext): string {
	return path.join(buildRoot(ctx), 'sessions', 'session_search.sqlite');
}

/** Every cwd group's prompt_history.jsonl (a rerun finds lines whose session folder is gone). */
export function promptHistories(ctx: AdapterContext): string[] {
	return buildGroups(ctx)
		.map(g => path.join(g, PROMPT_HISTORY))
		.filter(f => lstatOrUndefined(f)?.isFile());
}

/** `logs/unified.jsonl` and any rotated `unified*.jsonl` beside it. */
export function unifiedLogs(ctx: AdapterContext): string[] {
	const logs = path.join(buildRoot(ctx), 'logs');
	return listDir(logs)
		.filter(e => e.isFile() && /^unified.*\.jsonl$/.test(e.name))
		.map(e => path.join(logs, e.name));
}

/** A log line names a session when its text holds the id anywhere (`sid`, `ctx.sessionId`, …). */
export function logLineMatch(ids: readonly string[]): LineMatch {
	return line => ids.some(id => line.includes(id));
}

function linesItem(file: string, id: string, count: number, description: string): PlanItem | undefined {
	return count > 0 ? {kind: 'lines', path: file, count, bytes: 0, sessionId: id, description} : undefined;
}

/** `session_docs` rows of the ids (their FTS5 entries go with them through grok's own triggers). */
function searchRows(ctx: AdapterContext, id: string, ids: readonly string[]): PlanItem | undefined {
	const file = searchDb(ctx);
	if (!lstatOrUndefined(file)?.isFile()) return undefined;
	const count = withReadOnlyDb(file, ctx.reads, db => {
		if (!tableColumns(db).get(SEARCH_TABLE)?.has('session_id')) return 0;
		const marks = ids.map(() => '?').join(', ');
		return db.prepare<string[], {n: number}>(`SELECT count(*) AS n FROM ${SEARCH_TABLE} WHERE session_id IN (${marks})`).get(...ids)?.n ?? 0;
	});
	return count > 0
		? {
				kind: 'rows',
				path: file,
				table: SEARCH_TABLE,
				count,
				bytes: 0,
				sessionId: id,
				description: 'search index rows (title and prompts, with their FTS5 entries)',
			}
		: undefined;
}

/** The whole Grok Build plan: folders (the session's and its sub-agents'), then every other place naming them. */
export function buildPlan(ctx: AdapterContext, id: string): {descendants: string[]; items: PlanItem[]} {
	const sessions = buildSessions(ctx);
	const own = sessions.filter(s => s.id === id);
	const descendants = buildDescendants(sessions, id);
	const ids = [id, ...descendants.map(s => s.id)];
	const items: (PlanItem | undefined)[] = [];
	for (const session of [...own, ...descendants]) {
		items.push(dirItem(session.dir, session.id, session.id === id ? 'session folder' : 'sub-agent session folder'));
	}
	for (const file of promptHistories(ctx))
		items.push(linesItem(file, id, countLines(file, jsonFieldIn('session_id', ids)), "prompt history lines (the prompts' text)"));
	items.push(searchRows(ctx, id, ids));
	for (const file of unifiedLogs(ctx)) items.push(linesItem(file, id, countLines(file, logLineMatch(ids)), 'log lines naming the session'));
	return {descendants: descendants.map(s => s.id), items: items.filter((i): i is PlanItem => i !== undefined)};
}

/** Ask grok itself first (`grok sessions delete ID`); a warning when it did not work. */
async function agentDelete(ctx: AdapterContext, id: string): Promise<string | undefined> {
	const result = await ctx.exec('grok', ['sessions', 'delete', id], {
		// Exactly this store: never the caller's own ~/.grok when reading another home.
		env: {HOME: ctx.home, GROK_HOME: buildRoot(ctx), GROK_DISABLE_AUTOUPDATER: '1'},
		timeoutMs: DELETE_TIMEOUT_MS,
		input: '',
	});
	if (result.failure) return `grok sessions delete could not run (${result.failure}); deleted everything directly`;
	if (result.exitCode !== 0) {
		const detail = result.stderr.trim().split('\n').at(-1) ?? '';
		return `grok sessions delete ${id} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}; deleted what it left directly`;
	}
	return undefined;
}

/**
 * Merge the FTS5 index into one segment: a deleted row's tokens otherwise stay in older segments
 * (FTS5 records a delete as a new entry) until grok happens to merge them.
 */
function optimizeFts(file: string): void {
	withPurgeDb(path.dirname(file), file, db => {
		const fts =
			db.prepare<[string], {n: number}>("SELECT count(*) AS n FROM sqlite_master WHERE name = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'").get(SEARCH_FTS)?.n ?? 0;
		if (fts > 0) db.prepare(`INSERT INTO ${SEARCH_FTS}(${SEARCH_FTS}) VALUES ('optimize')`).run();
	});
}

/**
 * Delete exactly the plan: grok's own deleter first (while the session folder is there for it),
 * then the folders it left, the search rows (FTS5 merged, the database rebuilt so freed pages
 * hold nothing), and the lines of prompt_history.jsonl and unified.jsonl naming the ids.
 */
export async function purgeBuild(ctx: AdapterContext, plan: PurgePlan): Promise<{removed: PlanItem[]; warnings: string[]; held: string[]}> {
	const ids = [plan.id, ...plan.descendants];
	const root = buildRoot(ctx);
	const hasFolder = plan.items.some(i => i.kind === 'dir' && i.sessionId === plan.id);
	const asked = hasFolder ? await agentDelete(ctx, plan.id) : undefined;
	// The cwd group folder stays even when it empties: it belongs to the cwd, and a grok starting
	// there may be creating its next session folder at this very moment.
	const files = removePaths(plan.items, [root]);
	const removed = [...files.removed];
	const warnings = [...(asked ? [asked] : []), ...files.warnings];
	const rows = plan.items.filter(i => i.kind === 'rows');
	for (const item of rows) {
		try {
			deleteRows(item.path, [{table: SEARCH_TABLE, column: 'session_id', ids}]);
			optimizeFts(item.path);
			removed.push(item);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	for (const item of plan.items.filter(i => i.kind === 'lines')) {
		const match = path.basename(item.path) === PROMPT_HISTORY ? jsonFieldIn('session_id', ids) : logLineMatch(ids);
		try {
			removeLines(item.path, match, [root]);
			removed.push(item);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	const db = searchDb(ctx);
	const erased = lstatOrUndefined(db) ? eraseDatabases([db], new Set(rows.map(i => i.path)), 'grok') : {held: [], warnings: []};
	return {removed, warnings: [...warnings, ...erased.warnings], held: erased.held};
}
