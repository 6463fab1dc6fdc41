// Codex's thread index in the state databases, the one parent rule (index links, a rollout's own
// word over them) and the threads live processes name.

import path from 'node:path';
import {tableColumns, withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import {type InRefresh, memo, memoKind} from '../common/refresh.js';
import {chunks, placeholders} from '../common/purgeDb.js';
import type {AdapterContext} from '../types.js';
import {childrenFrom, descendants} from '../../system/descendants.js';
import {unlessUnreadable} from '../common/storeRead.js';
import {codexRoot, databases, metaParentOf, ROLLOUT_FILE, type RolloutFile, rollouts, rolloutsOf, sqliteHome, UUID} from './rollouts.js';

const THREAD_INDEX = memoKind<ThreadIndex>('codex:index');
const PARENTS = memoKind<Map<string, string>>('codex:parents');
const NAMED_BY_PROCESSES = memoKind<Promise<ReadonlySet<string>>>('codex:named');

/** What the state databases add: names, titles and parent edges. */
interface ThreadIndex {
	readonly titles: Map<string, string>;
	readonly parents: Map<string, string>;
	readonly ids: Set<string>;
	readonly problems: string[];
}

/** The state databases' thread index, read once per refresh (memo). */
export function readThreadIndex(ctx: AdapterContext): ThreadIndex {
	return memo(ctx, THREAD_INDEX.of(sqliteHome(ctx)), () => readThreadIndexNow(ctx));
}

function readThreadIndexNow(ctx: AdapterContext): ThreadIndex {
	const index: ThreadIndex = {titles: new Map(), parents: new Map(), ids: new Set(), problems: []};
	for (const db of stateDatabases(ctx)) {
		unlessUnreadable(
			() => {
				withReadOnlyDb(db, ctx.reads, handle => {
					const tables = tableColumns(handle);
					const threads = tables.get('threads');
					if (threads?.has('id')) {
						const cols = ['id', ...['name', 'title'].filter(c => threads.has(c))];
						const rows = handle.prepare(`SELECT ${cols.join(', ')} FROM threads`).all() as Record<string, unknown>[];
						for (const row of rows) {
							const id = String(row['id']);
							index.ids.add(id);
							const title = [row['name'], row['title']].find(v => typeof v === 'string' && v.trim() !== '');
							if (typeof title === 'string') index.titles.set(id, title);
						}
					}
					for (const [child, parent] of parentLinks(handle, tables)) index.parents.set(child, parent);
				});
			},
			problem => index.problems.push(problem),
		);
	}
	return index;
}

function stateDatabases(ctx: AdapterContext): string[] {
	return databases(ctx).filter(f => path.basename(f).startsWith('state_'));
}

/**
 * THE index's parent links of one state database: `threads.parent_thread_id`, with spawn edges
 * over it. Of every thread, or with `ids` of those children only (bound `IN` lists, for a few).
 */
function parentLinks(handle: ReadDb, tables: ReadonlyMap<string, ReadonlySet<string>>, ids?: readonly string[]): Map<string, string> {
	const links = new Map<string, string>();
	const batches = ids === undefined ? [undefined] : chunks(ids);
	const where = (column: string, batch: readonly string[] | undefined) => (batch === undefined ? '' : ` WHERE ${column} IN (${placeholders(batch.length)})`);
	if (tables.get('threads')?.has('id') && tables.get('threads')?.has('parent_thread_id')) {
		for (const batch of batches) {
			const rows = handle.prepare(`SELECT id, parent_thread_id AS parent FROM threads${where('id', batch)}`).all(...(batch ?? [])) as {
				id: unknown;
				parent: unknown;
			}[];
			for (const row of rows) if (typeof row.parent === 'string') links.set(String(row.id), row.parent);
		}
	}
	if (tables.get('thread_spawn_edges')?.has('child_thread_id')) {
		for (const batch of batches) {
			const edges = handle
				.prepare(`SELECT parent_thread_id AS parent, child_thread_id AS child FROM thread_spawn_edges${where('child_thread_id', batch)}`)
				.all(...(batch ?? [])) as {parent: string; child: string}[];
			for (const edge of edges) links.set(edge.child, edge.parent);
		}
	}
	return links;
}

/** THE parent rule over the index's links: a rollout's own word (its session_meta) wins. */
function withRolloutParents(ctx: InRefresh, links: Map<string, string>, refs: Iterable<RolloutFile>): Map<string, string> {
	for (const ref of refs) {
		const parent = metaParentOf(ctx, ref.file, ref.id);
		if (parent) links.set(ref.id, parent);
	}
	return links;
}

/** Parent of every thread (for descendants), once per refresh. */
export function parentMap(ctx: AdapterContext, index: ThreadIndex): Map<string, string> {
	return memo(ctx, PARENTS.of(codexRoot(ctx)), () => withRolloutParents(ctx, new Map(index.parents), rollouts(ctx)));
}

/** Children of `id` at every depth, breadth first. */
export function descendantsOf(id: string, parents: ReadonlyMap<string, string>): string[] {
	return descendants(id, childrenFrom(parents));
}

/** Thread ids anywhere in a text, overlapping ones too: compiled once (a table has thousands of arguments). */
const THREAD_IDS = new RegExp(`(?=(${UUID}))`, 'g');

/** Every thread id inside `text`, overlapping ones too (`includes` would find each of them). */
function threadIdsIn(text: string, into: Set<string>): void {
	if (text.length < 36) return;
	// matchAll works on a copy of the regex: the shared one keeps no state between calls.
	for (const m of text.matchAll(THREAD_IDS)) if (m[1]) into.add(m[1]);
}

/**
 * The parent of each of `ids` as `parentMap` gives it, without reading every thread of every
 * database or the first line of every rollout: the same links and rule, asked for these ids.
 */
function parentsOf(ctx: AdapterContext, ids: readonly string[]): Map<string, string> {
	const links = new Map<string, string>();
	if (ids.length === 0) return links;
	for (const db of stateDatabases(ctx)) {
		unlessUnreadable(
			() => withReadOnlyDb(db, ctx.reads, handle => parentLinks(handle, tableColumns(handle), ids).forEach((parent, child) => links.set(child, parent))),
			() => undefined,
		);
	}
	return withRolloutParents(
		ctx,
		links,
		ids.flatMap(id => rolloutsOf(ctx, id)),
	);
}

/**
 * The threads some process names (an argv naming the id, a rollout held open) and all their
 * ancestors, once per refresh; undefined when the process table cannot list open files. A
 * conversation outside this set has no user: its family (itself and its descendants) meets no
 * named thread. Asking it of a handful of running threads reads their rollouts only, instead of
 * the first line of every rollout on disk (thousands) to build every thread's family.
 */
export function threadsNamedByProcesses(ctx: AdapterContext): Promise<ReadonlySet<string>> | undefined {
	// A refresh is a view: the table's kept pass (only new or changed processes' fds read); purge
	// and resume ask outside one, and read every process's open files now.
	const table = ctx.processes;
	const openFiles = (ctx.refresh ? (table.openFilesKept ?? table.openFiles) : table.openFiles)?.bind(table);
	if (!openFiles) return undefined;
	return memo(ctx, NAMED_BY_PROCESSES.of(codexRoot(ctx)), async () => {
		const named = new Set<string>();
		for (const proc of await ctx.processes.list()) for (const arg of proc.argv) threadIdsIn(arg, named);
		for (const open of await openFiles()) {
			// Rollouts are real files in real folders (links are never listed), so the name a
			// process holds open is the rollout's own name, wherever the codex home really is.
			const m = ROLLOUT_FILE.exec(path.basename(open.path));
			if (m?.[1]) named.add(m[1]);
		}
		// Up the parent links a level at a time (one batch of lookups per level) to the roots.
		const closure = new Set<string>(named);
		for (let level = [...named]; level.length > 0;) {
			const parents = parentsOf(ctx, level);
			level = [...new Set(parents.values())].filter(p => !closure.has(p));
			for (const p of level) closure.add(p);
		}
		return closure;
	});
}
