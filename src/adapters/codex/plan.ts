// Codex purge planning and row deletion: every table that names a thread, history lines, files.

import path from 'node:path';
import {messageOf} from '../../domain/result.js';
import {tableColumns, withReadOnlyDb} from '../../system/sqliteRead.js';
import {countLines, jsonFieldIn} from '../common/lines.js';
import {isPlainName, joinNames, listDir} from '../common/paths.js';
import {pushTo} from '../common/groups.js';
import {fileItem, makePlan} from '../common/plan.js';
import {deleteRows, type RowDelete} from '../common/sqlitePurge.js';
import type {AdapterContext, KeptPlace, PlanItem, PurgePlan} from '../types.js';
import {codexRoot, databases, rolloutsOf, roots, sqliteHome} from './rollouts.js';
import {descendantsOf, parentMap, readThreadIndex} from './threads.js';

/** How a table names a thread: the columns to match, in delete order. */
function threadColumns(table: string, columns: ReadonlySet<string>): string[] {
	if (table === 'threads') return columns.has('id') ? ['id'] : [];
	if (table === 'thread_spawn_edges') return ['child_thread_id', 'parent_thread_id'].filter(c => columns.has(c));
	return columns.has('thread_id') ? ['thread_id'] : [];
}

/** Row items for every database table that names one of `ids`. Throws StoreReadError when a database cannot be read. */
function rowItems(ctx: AdapterContext, ids: readonly string[]): PlanItem[] {
	const items: PlanItem[] = [];
	const wanted = new Set(ids);
	const placeholders = ids.map(() => '?').join(', ');
	for (const db of databases(ctx)) {
		withReadOnlyDb(db, ctx.reads, handle => {
			for (const [table, columns] of tableColumns(handle)) {
				const cols = threadColumns(table, columns);
				if (cols.length === 0) continue;
				const where = cols.map(c => `"${c}" IN (${placeholders})`).join(' OR ');
				const rows = handle
					.prepare(`SELECT ${cols.map(c => `"${c}"`).join(', ')} FROM "${table}" WHERE ${where}`)
					.raw()
					.all(...cols.flatMap(() => ids)) as unknown[][];
				const counts = new Map<string, number>();
				for (const row of rows) {
					// A spawn edge belongs to its child (the first column) when the child is purged too.
					const owner = row.find((v): v is string => typeof v === 'string' && wanted.has(v));
					if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
				}
				for (const [owner, count] of counts) {
					items.push({kind: 'rows', path: db, table, count, bytes: 0, sessionId: owner, description: `${table} rows in ${path.basename(db)}`});
				}
			}
		});
	}
	return items;
}

function lineItems(root: string, ids: readonly string[]): PlanItem[] {
	const items: PlanItem[] = [];
	for (const [name, field] of [
		['history.jsonl', 'session_id'],
		['session_index.jsonl', 'id'],
	] as const) {
		const file = path.join(root, name);
		for (const id of ids) {
			const count = countLines(file, jsonFieldIn(field, [id]));
			if (count > 0) items.push({kind: 'lines', path: file, count, bytes: 0, sessionId: id, description: `${name} lines`});
		}
	}
	return items;
}

/** Does the purge of `items` run `codex delete`? Only for what codex itself knows: rows and rollouts. */
export function asksCodex(items: readonly PlanItem[]): boolean {
	return items.some(i => i.kind === 'rows' || i.description.endsWith('rollout'));
}

const LOG_DB = /^logs_\d+\.sqlite$/;

/**
 * What `codex delete` changes besides the plan's items (seen with the real 0.171): it logs its own
 * run into its log database (`logs_2.sqlite`, created when missing; rows that do not name the
 * thread), and it opens every database, which writes each one's `-wal` and `-shm` beside it.
 */
function changedByCodex(ctx: AdapterContext, items: readonly PlanItem[]): KeptPlace[] {
	if (!asksCodex(items)) return [];
	// Every sqlite file codex keeps, not only the thread stores: 0.171 also opens goals_1,
	// memories_1 and queue_1 (seen in the real suite), and a later codex may add more.
	const dir = sqliteHome(ctx);
	const others = listDir(dir)
		.filter(e => e.isFile() && e.name.endsWith('.sqlite'))
		.map(e => path.join(dir, e.name));
	const all = [...new Set([...databases(ctx), ...others])].sort();
	const logs = all.filter(db => LOG_DB.test(path.basename(db)));
	const planned = new Set(items.filter(i => i.kind === 'rows').map(i => i.path));
	const opened = all.filter(db => !planned.has(db) && !logs.includes(db));
	return [
		...(logs.length > 0 ? logs : [path.join(sqliteHome(ctx), 'logs_2.sqlite')]).map(file => ({
			path: file,
			reason: "changed by codex's own delete: its log database",
		})),
		...opened.flatMap(db => ['-wal', '-shm'].map(end => ({path: `${db}${end}`, reason: "changed by codex's own delete: it opens every database of codex"}))),
		// Its start stages the plugin marketplace there (a lock and a checkout), offline or not.
		{path: path.join(codexRoot(ctx), '.tmp'), reason: "changed by codex's own delete: its staging folder (plugin marketplace)"},
	];
}

export function planFor(ctx: AdapterContext, id: string): PurgePlan {
	const root = codexRoot(ctx);
	const descendants = descendantsOf(id, parentMap(ctx, readThreadIndex(ctx)));
	const ids = [id, ...descendants];
	const items: (PlanItem | undefined)[] = [];
	for (const owner of ids) {
		for (const ref of rolloutsOf(ctx, owner)) items.push(fileItem(ref.file, owner, ref.archived ? 'archived rollout' : 'rollout'));
		for (const entry of listDir(path.join(root, 'shell_snapshots'))) {
			// A name with a backslash is no snapshot codex wrote (and not a plain name to join): left alone.
			if (entry.name.startsWith(`${owner}.`) && isPlainName(entry.name))
				items.push(fileItem(joinNames(root, 'shell_snapshots', entry.name), owner, 'shell snapshot'));
		}
		// The TUI's per-thread markers (issue 18): an empty capabilities file and a writer lock.
		items.push(fileItem(joinNames(root, 'tui-thread-reference-capabilities', owner), owner, 'TUI thread marker'));
		items.push(fileItem(joinNames(root, 'thread-writer-locks', `${owner}.lock`), owner, 'thread writer lock'));
	}
	items.push(...rowItems(ctx, ids), ...lineItems(root, ids));
	const plan = makePlan('codex', id, descendants, items, roots(ctx));
	const changed = changedByCodex(ctx, plan.items);
	return changed.length > 0 ? {...plan, changed} : plan;
}

/** How long `codex delete` may take (it starts the whole CLI and opens every database). */
const DELETE_TIMEOUT_MS = 30_000;

/**
 * Ask codex itself first (0.171's `codex delete --force <id>` removes the rollouts, the thread
 * rows and the spawn edges, children included). 0.171 often stops with "failed to delete session"
 * part-way (seen with the real binary: a child's rollout gone, the rows still there); whatever it
 * left is deleted directly afterwards, so its failure is only a warning.
 */
export async function agentDelete(ctx: AdapterContext, id: string): Promise<string | undefined> {
	const result = await ctx.exec('codex', ['delete', '--force', id], {
		env: {HOME: ctx.home, CODEX_HOME: codexRoot(ctx), CODEX_SQLITE_HOME: sqliteHome(ctx)},
		timeoutMs: DELETE_TIMEOUT_MS,
		input: '',
	});
	if (result.failure) return `codex delete could not run (${result.failure}); deleted everything directly`;
	if (result.exitCode !== 0) {
		const detail =
			result.stderr
				.trim()
				.split('\n')
				.find(l => l.startsWith('Error:')) ?? '';
		return `codex delete --force ${id} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}; deleted what it left directly`;
	}
	return undefined;
}

/** Delete the planned rows, one transaction per database; trigger-added rows are caught by a second pass. */
export function purgeRows(plan: PurgePlan, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const byDb = new Map<string, PlanItem[]>();
	for (const item of plan.items.filter(i => i.kind === 'rows')) pushTo(byDb, item.path, item);
	for (const [db, items] of byDb) {
		try {
			const columns = withReadOnlyDb(db, handle => tableColumns(handle));
			const perTable: RowDelete[] = [];
			for (const [table, cols] of columns) {
				if (table === 'threads') continue;
				for (const column of threadColumns(table, cols)) perTable.push({table, column, ids});
			}
			const threads = columns.get('threads');
			const steps = [...perTable, ...(threads?.has('id') ? [{table: 'threads', column: 'id', ids}] : []), ...perTable];
			deleteRows(db, steps);
			removed.push(...items);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	return {removed, warnings};
}
