// Hermes's purge plan and deletion: session files, request dumps, breadcrumbs and rows.

import path from 'node:path';
import {tableColumns, withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import {readSmallText} from '../common/jsonRecords.js';
import {listDir} from '../common/paths.js';
import type {InRefresh} from '../common/refresh.js';
import {fileItem} from '../common/plan.js';
import {chunks, deleteWhereIn, placeholders, quoteIdent, withPurgeDb, type WriteDb} from '../common/purgeDb.js';
import {eraseDatabases} from '../common/sqlitePurge.js';
import type {AdapterContext, KeptPlace, PlanItem} from '../types.js';
import {descendantsIn} from './lineage.js';
import {ANY_ID, DELETE_TIMEOUT_MS, type HermesStore, type StoreData, viewOf} from './store.js';
import {removablePrompts, textItems} from './text.js';

/** Per-session files in a store: transcripts and gateway request dumps (hermes `_remove_session_files`). */
export function sessionFiles(store: HermesStore, id: string, dumpNames: readonly string[] = requestDumps(store)): string[] {
	const dir = path.join(store.home, 'sessions');
	const named = [path.join(dir, `${id}.json`), path.join(dir, `${id}.jsonl`)];
	const dumps = dumpNames.filter(name => name.startsWith(`request_dump_${id}_`) && name.endsWith('.json')).map(name => path.join(dir, name));
	return [...named, ...dumps];
}

/** The request dump names in a store's sessions folder (thousands of transcripts beside them). */
export function requestDumps(store: HermesStore, ctx: InRefresh = {}): string[] {
	return listDir(path.join(store.home, 'sessions'), ctx)
		.map(e => e.name)
		.filter(name => name.startsWith('request_dump_'));
}

/**
 * Terminal breadcrumbs (used by bare `-c`; format UNCONFIRMED): a file in terminal-sessions/ that
 * is named after the id, or a small file whose every hermes id is one of `ids`.
 */
function breadcrumbs(store: HermesStore, id: string, ids: readonly string[]): string[] {
	const dir = path.join(store.home, 'terminal-sessions');
	return listDir(dir)
		.filter(e => e.isFile())
		.map(e => path.join(dir, e.name))
		.filter(file => {
			if (path.basename(file).includes(id)) return true;
			const found: string[] = readSmallText(file, 64 * 1024)?.match(ANY_ID) ?? [];
			return found.includes(id) && found.every(x => ids.includes(x));
		});
}

/** Tables and the columns naming a session, deleted in this order (children before sessions). */
const ROW_TABLES: readonly (readonly [string, readonly string[], string])[] = [
	['messages', ['session_id'], 'messages'],
	['session_model_usage', ['session_id'], 'model usage rows'],
	['compression_locks', ['session_id'], 'compression lock'],
	['session_turn_leases', ['conversation_id'], 'turn lease'],
	['async_delegations', ['origin_session', 'parent_session_id', 'origin_session_id'], 'async delegation rows'],
	['sessions', ['id'], 'session row'],
];

function rowItems(data: StoreData, db: ReadDb, ids: readonly string[]): PlanItem[] {
	const items: PlanItem[] = [];
	for (const [table, columns, description] of ROW_TABLES) {
		const present = columns.filter(c => data.columns.get(table)?.has(c));
		for (const id of ids) {
			const n = countNaming(db, table, present, id);
			if (n > 0) items.push({kind: 'rows', path: data.store.db, table, count: n, bytes: 0, sessionId: id, description});
		}
	}
	return items;
}

function countNaming(db: ReadDb, table: string, columns: readonly string[], id: string): number {
	if (columns.length === 0) return 0;
	const where = columns.map(c => `${quoteIdent(c)} = ?`).join(' OR ');
	return db.prepare<string[], {n: number}>(`SELECT count(*) AS n FROM ${quoteIdent(table)} WHERE ${where}`).get(...columns.map(() => id))?.n ?? 0;
}

/** Branch/reset/tool children outside the conversation keep living, unlinked as hermes does. */
function independentChildren(data: StoreData, ids: readonly string[]): string[] {
	return [...data.rows.values()].filter(r => r.parentId !== undefined && ids.includes(r.parentId) && !ids.includes(r.id)).map(r => r.id);
}

export function storePlan(data: StoreData, id: string): {descendants: string[]; items: PlanItem[]; kept: KeptPlace[]} {
	const descendants = descendantsIn(viewOf(data), id);
	const ids = [id, ...descendants];
	const items = withReadOnlyDb(data.store.db, db => rowItems(data, db, ids));
	const text = textItems(data.store, id, ids, removablePrompts(data.store, ids));
	items.push(...text.items);
	const unlinked = independentChildren(data, ids);
	if (unlinked.length > 0) {
		items.push({
			kind: 'rows',
			path: data.store.db,
			table: 'sessions',
			count: unlinked.length,
			bytes: 0,
			sessionId: id,
			description: `parent link of ${unlinked.length} branch/reset session(s) cleared; those sessions stay`,
		});
	}
	for (const x of ids) {
		const label = x === id ? '' : 'child ';
		for (const file of sessionFiles(data.store, x)) {
			const item = fileItem(file, x, `${label}session file ${path.basename(file)}`);
			if (item) items.push(item);
		}
		for (const file of breadcrumbs(data.store, x, ids)) {
			const item = fileItem(file, x, 'terminal breadcrumb');
			if (item) items.push(item);
		}
	}
	return {descendants, items, kept: text.kept};
}

/** Stores that hold `id` or rows of its vanished conversation (children pointing at it). */
export function storesNaming(data: readonly StoreData[], id: string): StoreData[] {
	return data.filter(d => d.rows.has(id) || [...d.rows.values()].some(r => r.parentId === id));
}

/**
 * Merge every FTS5 index of the store into one segment ('optimize'): deleting a message removes
 * its row from `messages_fts_content`, but its tokens stay in the index's older segments until
 * they are merged (hermes 0.19 keeps `messages_fts` and `messages_fts_trigram`, plain FTS5 tables
 * with their own copy of the text, kept in step by triggers).
 */
export function mergeFtsIndexes(store: HermesStore): void {
	withPurgeDb(path.dirname(store.db), store.db, db => {
		const fts = db.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'").all();
		for (const {name} of fts) db.prepare(`INSERT INTO ${quoteIdent(name)} (${quoteIdent(name)}) VALUES ('optimize')`).run();
	});
}

/**
 * After the rows went: merge the FTS indexes, then rebuild the touched databases and checkpoint
 * their WAL (common/sqlitePurge.ts), so the deleted text is in no free page or WAL frame.
 * Returns the residual lines of databases hermes still holds, and warnings.
 */
export function eraseStores(stores: readonly HermesStore[], touched: ReadonlySet<string>): {held: string[]; warnings: string[]} {
	const warnings: string[] = [];
	for (const store of stores) {
		if (!touched.has(store.db)) continue;
		try {
			mergeFtsIndexes(store);
		} catch (error) {
			warnings.push(`${store.db}: its search index was not merged (${error instanceof Error ? error.message : String(error)})`);
		}
	}
	const erased = eraseDatabases(
		stores.map(s => s.db),
		touched,
		'hermes',
	);
	return {held: erased.held, warnings: [...warnings, ...erased.warnings]};
}

/** The remaining rows of `ids` in one transaction (FORMATS 0.3); unlinks independent children. */
export function deleteRows(data: StoreData, ids: readonly string[]): void {
	const root = path.dirname(data.store.db);
	withPurgeDb(root, data.store.db, db => {
		// Parents and children go in separate IN-chunks: check the foreign keys at commit.
		db.pragma('defer_foreign_keys = ON');
		const columns = tableColumns(db);
		for (const [table, names] of ROW_TABLES) {
			if (table === 'sessions') unlinkChildren(db, ids);
			for (const column of names) if (columns.get(table)?.has(column)) deleteWhereIn(db, table, column, ids);
		}
	});
}

function unlinkChildren(db: WriteDb, ids: readonly string[]): void {
	for (const part of chunks(ids)) {
		const sql = `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN (${placeholders(part.length)}) AND id NOT IN (${placeholders(ids.length)})`;
		db.prepare(sql).run(...part, ...ids);
	}
}

/**
 * hermes' own delete (`hermes sessions delete <id> --yes`) for the target and its continuation
 * chain, deepest first, so no continuation is orphaned before it is deleted. Only ids that still
 * have a row are asked for. Returns a refusal message when hermes ran and said no.
 */
export async function agentDelete(ctx: AdapterContext, data: StoreData, ids: readonly string[], warnings: string[]): Promise<string | undefined> {
	const path_ = ctx.env['PATH'];
	for (const id of ids) {
		if (!data.rows.has(id)) continue;
		const env = {HERMES_HOME: data.store.home, ...(path_ ? {PATH: path_} : {})};
		const result = await ctx.exec('hermes', ['sessions', 'delete', id, '--yes'], {env, timeoutMs: DELETE_TIMEOUT_MS});
		if (result.failure) {
			warnings.push(`hermes could not run (${result.failure}); deleting ${id} directly`);
			return undefined;
		}
		if (result.exitCode !== 0) return `hermes refused to delete ${id} (exit ${result.exitCode}): ${(result.stderr || result.stdout).trim()}`;
	}
	return undefined;
}
