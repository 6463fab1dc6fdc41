import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../domain/result.js';
import type {Conversation, ProcessRef, ResumeState} from '../domain/types.js';
import {tableColumns, withReadOnlyDb, type ReadDb} from '../system/sqliteRead.js';
import {measuredExitInput, readCodexScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, hasFlag, idsUse, needsFolders, openFilesOf, projectUse, usersOf, wordAfter, type LiveUse} from './common/liveEvidence.js';
import {isoMs, obj, oneLine, readFirstJsonLine, readJsonl, str} from './common/jsonl.js';
import {countLines, jsonFieldIn, removeLines} from './common/lines.js';
import {canonicalCwd, joinNames, listDir, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {pushTo} from './common/groups.js';
import {memo, memoHas, parseCached, type InRefresh} from './common/refresh.js';
import {fileItem, makePlan, removePaths} from './common/plan.js';
import {chunks, placeholders} from './common/purgeDb.js';
import {scanResidual} from './common/residual.js';
import {deleteRows, eraseDatabases, type RowDelete} from './common/sqlitePurge.js';
import {programOf, runsProgram} from './common/programs.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type PlanItem} from './types.js';
import {childrenFrom, descendants} from '../system/descendants.js';
import {unlessUnreadable} from './common/storeRead.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** `rollout-<local time>-<thread id>.jsonl` (FORMATS 2). */
const ROLLOUT_FILE = new RegExp(`^rollout-\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-(${UUID})\\.jsonl$`);
/** Generation-numbered databases: state_5.sqlite, thread_history_1.sqlite, logs_2.sqlite, … */
const GENERATION_DB = /^[a-z][a-z_]*_\d+\.sqlite$/;
/** Wrapper texts codex injects as user messages; they are not something the user said. */
const INJECTED = /^\s*<(environment_context|user_instructions|skills_instructions|turn_aborted|permissions|user_shell_command)\b/;

/** `CODEX_HOME` (only for the caller's own home), else `<home>/.codex`. */
function codexRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['CODEX_HOME'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.codex');
}

/** `CODEX_SQLITE_HOME` (own home only), else the codex home. */
function sqliteHome(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['CODEX_SQLITE_HOME'] : undefined;
	return override ? path.resolve(override) : codexRoot(ctx);
}

function roots(ctx: AdapterContext): string[] {
	return [...new Set([codexRoot(ctx), sqliteHome(ctx)])];
}

function databases(ctx: AdapterContext): string[] {
	const dir = sqliteHome(ctx);
	return listDir(dir, ctx)
		.filter(e => e.isFile() && GENERATION_DB.test(e.name))
		.map(e => path.join(dir, e.name))
		.sort();
}

/** A rollout file found by name (its id is confirmed from the first line before use). */
interface RolloutFile {
	readonly id: string;
	readonly file: string;
	readonly archived: boolean;
}

/**
 * Every rollout under `sessions/YYYY/MM/DD/` and `archived_sessions/`. Date folders are local
 * time, so they are globbed, never computed. Symlinked folders are not followed.
 */
function rolloutFiles(ctx: InRefresh, root: string): RolloutFile[] {
	const out: RolloutFile[] = [];
	const collect = (dir: string, archived: boolean) => {
		for (const entry of listDir(dir, ctx)) {
			const m = ROLLOUT_FILE.exec(entry.name);
			// Thousands of rollouts: a plain join (dir is already normal; the name has no separator).
			if (m?.[1] && entry.isFile()) out.push({id: m[1], file: `${dir}${path.sep}${entry.name}`, archived});
		}
	};
	const sessions = path.join(root, 'sessions');
	const subdirs = (dir: string, pattern: RegExp) =>
		listDir(dir, ctx)
			.filter(e => e.isDirectory() && pattern.test(e.name))
			.map(e => path.join(dir, e.name));
	for (const year of subdirs(sessions, /^\d{4}$/)) {
		for (const month of subdirs(year, /^\d{2}$/)) {
			for (const day of subdirs(month, /^\d{2}$/)) collect(day, false);
		}
	}
	collect(path.join(root, 'archived_sessions'), true);
	return out;
}

const DAY_MS = 86_400_000;

const THREAD_ID = new RegExp(`^${UUID}$`);

/** The unix time in milliseconds a UUIDv7 carries in its first 48 bits; undefined for other versions. */
export function uuidV7Time(id: string): number | undefined {
	if (!THREAD_ID.test(id) || id[14] !== '7') return undefined;
	return Number.parseInt(`${id.slice(0, 8)}${id.slice(9, 13)}`, 16);
}

/**
 * The rollouts of `id` in the date folders its start can be in, without globbing every folder:
 * codex names the thread with a UUIDv7 and files the rollout under the local date of that moment
 * (FORMATS 2), which on any clock of the world is the UTC date or a day either side. Oldest
 * folder first, as `rolloutFiles` lists them; links on the way are not followed. Undefined when
 * the id carries no time.
 */
function rolloutsByDate(ctx: AdapterContext, root: string, id: string): RolloutFile[] | undefined {
	const at = uuidV7Time(id);
	if (at === undefined) return undefined;
	const days = new Set([at - DAY_MS, at, at + DAY_MS].map(t => new Date(t).toISOString().slice(0, 10)));
	// Year and month folders are shared by the rows of a refresh: each is lstat()ed once.
	const isReal = (dir: string) => memo(ctx, `codex:real-folder:${dir}`, () => lstatOrUndefined(dir)?.isDirectory() === true);
	const out: RolloutFile[] = [];
	for (const day of days) {
		const dir = realFolder(path.join(root, 'sessions'), day.split('-'), isReal);
		for (const entry of dir === undefined ? [] : listDir(dir, ctx)) {
			if (entry.isFile() && ROLLOUT_FILE.exec(entry.name)?.[1] === id) out.push({id, file: `${dir}${path.sep}${entry.name}`, archived: false});
		}
	}
	return out;
}

/** `base/names…` when each step below `base` is a real folder (links are not followed, as in `rolloutFiles`). */
function realFolder(base: string, names: readonly string[], isReal: (dir: string) => boolean): string | undefined {
	let dir = base;
	for (const name of names) {
		dir = `${dir}${path.sep}${name}`;
		if (!isReal(dir)) return undefined;
	}
	return dir;
}

/** Every rollout of the codex home, globbed once per refresh (memo). */
function rollouts(ctx: AdapterContext): RolloutFile[] {
	const root = codexRoot(ctx);
	return memo(ctx, `codex:rollouts:${root}`, () => rolloutFiles(ctx, root));
}

/** The session_meta payload of a rollout, when its first line is one and names `id`. */
function metaOf(ctx: InRefresh, file: string, id: string): Record<string, unknown> | undefined {
	// First lines never change once written: parsed once per file version, not once per question.
	const first = parseCached(ctx, 'codex-first-line', file, '', () => readFirstJsonLine(file));
	const payload = obj(first, 'payload');
	return first?.['type'] === 'session_meta' && str(payload, 'id') === id ? payload : undefined;
}

/** The parent a sub-agent rollout names (`source.subagent.thread_spawn.parent_thread_id`). */
function parentFromMeta(meta: Record<string, unknown> | undefined): string | undefined {
	const spawn = obj(obj(obj(meta, 'source'), 'subagent'), 'thread_spawn');
	return str(spawn, 'parent_thread_id') ?? str(meta, 'parent_thread_id');
}

/** What a rollout says about its conversation. */
interface Rollout {
	readonly id: string;
	readonly file: string;
	readonly cwd: string | undefined;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly parentId: string | undefined;
	readonly realMessages: number;
	readonly firstPrompt: string | undefined;
}

function messageText(payload: Record<string, unknown> | undefined): string {
	const content = payload?.['content'];
	if (!Array.isArray(content)) return '';
	const first = content.find(c => typeof c === 'object' && c !== null && typeof (c as {text?: unknown}).text === 'string') as {text: string} | undefined;
	return first?.text ?? '';
}

/** A rollout, parsed again only when the file changed (a refresh re-reads the one that grew, not all). */
function readRollout(ctx: InRefresh, ref: RolloutFile): Rollout | undefined {
	return parseCached(ctx, 'codex-rollout', ref.file, ref.id, () => parseRollout(ref));
}

function parseRollout(ref: RolloutFile): Rollout | undefined {
	const records = readJsonl(ref.file);
	const first = records[0];
	const meta = obj(first, 'payload');
	if (first?.['type'] !== 'session_meta' || str(meta, 'id') !== ref.id) return undefined;
	let last = isoMs(first['timestamp']);
	let realMessages = 0;
	let firstPrompt: string | undefined;
	for (const record of records) {
		const at = isoMs(record['timestamp']);
		if (at !== undefined) last = Math.max(last ?? at, at);
		const payload = obj(record, 'payload');
		if (record['type'] !== 'response_item' || payload?.['type'] !== 'message') continue;
		const role = payload['role'];
		const text = messageText(payload);
		if (role === 'assistant') realMessages++;
		if (role === 'user' && !INJECTED.test(text)) {
			realMessages++;
			firstPrompt ??= text;
		}
	}
	const createdAt = isoMs(meta?.['timestamp']) ?? isoMs(first['timestamp']) ?? 0;
	return {
		id: ref.id,
		file: ref.file,
		cwd: str(meta, 'cwd'),
		createdAt,
		updatedAt: Math.max(last ?? createdAt, createdAt),
		parentId: parentFromMeta(meta),
		realMessages,
		firstPrompt,
	};
}

/** What the state databases add: names, titles and parent edges. */
interface ThreadIndex {
	readonly titles: Map<string, string>;
	readonly parents: Map<string, string>;
	readonly ids: Set<string>;
	readonly problems: string[];
}

/** The state databases' thread index, read once per refresh (memo). */
function readThreadIndex(ctx: AdapterContext): ThreadIndex {
	return memo(ctx, `codex:index:${sqliteHome(ctx)}`, () => readThreadIndexNow(ctx));
}

function readThreadIndexNow(ctx: AdapterContext): ThreadIndex {
	const index: ThreadIndex = {titles: new Map(), parents: new Map(), ids: new Set(), problems: []};
	for (const db of stateDatabases(ctx)) {
		unlessUnreadable(() => {
			withReadOnlyDb(db, handle => {
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
		}, problem => index.problems.push(problem));
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
			const rows = handle.prepare(`SELECT id, parent_thread_id AS parent FROM threads${where('id', batch)}`).all(...(batch ?? [])) as {id: unknown; parent: unknown}[];
			for (const row of rows) if (typeof row.parent === 'string') links.set(String(row.id), row.parent);
		}
	}
	if (tables.get('thread_spawn_edges')?.has('child_thread_id')) {
		for (const batch of batches) {
			const edges = handle.prepare(`SELECT parent_thread_id AS parent, child_thread_id AS child FROM thread_spawn_edges${where('child_thread_id', batch)}`).all(...(batch ?? [])) as {parent: string; child: string}[];
			for (const edge of edges) links.set(edge.child, edge.parent);
		}
	}
	return links;
}

/** THE parent rule over the index's links: a rollout's own word (its session_meta) wins. */
function withRolloutParents(ctx: InRefresh, links: Map<string, string>, refs: Iterable<RolloutFile>): Map<string, string> {
	for (const ref of refs) {
		const parent = parentFromMeta(metaOf(ctx, ref.file, ref.id));
		if (parent) links.set(ref.id, parent);
	}
	return links;
}

/** Parent of every thread (for descendants), once per refresh. */
function parentMap(ctx: AdapterContext, index: ThreadIndex): Map<string, string> {
	return memo(ctx, `codex:parents:${codexRoot(ctx)}`, () => withRolloutParents(ctx, new Map(index.parents), rollouts(ctx)));
}

/** Children of `id` at every depth, breadth first. */
function descendantsOf(id: string, parents: ReadonlyMap<string, string>): string[] {
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
			() => withReadOnlyDb(db, handle => parentLinks(handle, tableColumns(handle), ids).forEach((parent, child) => links.set(child, parent))),
			() => undefined,
		);
	}
	return withRolloutParents(ctx, links, ids.flatMap(id => rolloutsOf(ctx, id)));
}

/**
 * The threads some process names (an argv naming the id, a rollout held open) and all their
 * ancestors, once per refresh; undefined when the process table cannot list open files. A
 * conversation outside this set has no user: its family (itself and its descendants) meets no
 * named thread. Asking it of a handful of running threads reads their rollouts only, instead of
 * the first line of every rollout on disk (thousands) to build every thread's family.
 */
function threadsNamedByProcesses(ctx: AdapterContext): Promise<ReadonlySet<string>> | undefined {
	const openFiles = ctx.processes.openFiles?.bind(ctx.processes);
	if (!openFiles) return undefined;
	return memo(ctx, `codex:named:${codexRoot(ctx)}`, async () => {
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
		for (let level = [...named]; level.length > 0; ) {
			const parents = parentsOf(ctx, level);
			level = [...new Set(parents.values())].filter(p => !closure.has(p));
			for (const p of level) closure.add(p);
		}
		return closure;
	});
}

/** codex's app-server daemon (and its pid-update loop) serves every TUI: it is on no one conversation. */
function isCodexService(argv: readonly string[]): boolean {
	return argv.includes('app-server');
}

/**
 * Which thread each live codex process is on: argv (`resume ID`, `fork ID`, `exec resume ID`),
 * else a rollout it holds open (the recorder keeps its own rollout open; the shared state
 * databases say nothing), else its project folder. The app-server daemon gets no entry.
 */
async function codexLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const mine = (await agentProcessesOf(ctx, codexAdapter.matchesProcess, procs, {root: codexRoot(ctx), rootOf: codexRoot})).filter(p => !isCodexService(p.argv));
	if (mine.length === 0) return [];
	const open = await openFilesOf(ctx, mine.map(p => p.pid));
	return mine.map(proc => {
		const named = hasFlag(proc.argv, ['--last']) ? undefined : wordAfter(proc.argv, ['resume', 'fork'], THREAD_ID);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const held = (open.get(proc.pid) ?? []).flatMap(f => ROLLOUT_FILE.exec(path.basename(f))?.[1] ?? []);
		if (held.length > 0) return idsUse(proc, [...new Set(held)], 'holds its rollout open');
		return projectUse(proc, 'codex');
	});
}

/** The folders a thread's rollouts record (for the project rule). */
function threadCwds(ctx: AdapterContext, id: string): string[] {
	return [...new Set(rolloutsOf(ctx, id).flatMap(r => readRollout(ctx, r)?.cwd ?? []))];
}

/**
 * The rollouts verify reads. While the refresh holds no index of every rollout, the few date
 * folders of the id (`rolloutsByDate`) are looked in first: globbing every folder was most of a
 * `status` run's codex time (4,000 rollouts in 200 folders). verify answers from the first live
 * (not archived) rollout, the one in the thread's start folder; when none is there, every
 * rollout of the id, as before.
 */
function verifyRolloutsOf(ctx: AdapterContext, id: string): RolloutFile[] {
	const root = codexRoot(ctx);
	if (!memoHas(ctx, `codex:rollouts:${root}`)) {
		const dated = rolloutsByDate(ctx, root, id)?.filter(r => metaOf(ctx, r.file, id) !== undefined);
		if (dated && dated.length > 0) return dated;
	}
	return rolloutsOf(ctx, id);
}

/** Rollout files of `id` whose first line confirms the id. */
function rolloutsOf(ctx: AdapterContext, id: string): RolloutFile[] {
	const byId = memo(ctx, `codex:rollouts-by-id:${codexRoot(ctx)}`, () => {
		const map = new Map<string, RolloutFile[]>();
		for (const r of rollouts(ctx)) pushTo(map, r.id, r);
		return map;
	});
	return (byId.get(id) ?? []).filter(r => metaOf(ctx, r.file, id) !== undefined);
}

function resumeStateOf(r: Rollout): ResumeState {
	if (r.realMessages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!r.cwd) return {kind: 'unknown', reason: 'the rollout records no cwd'};
	if (!fs.existsSync(r.cwd)) return {kind: 'no', reason: `cwd ${r.cwd} no longer exists`};
	return {kind: 'yes'};
}

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
		withReadOnlyDb(db, handle => {
			for (const [table, columns] of tableColumns(handle)) {
				const cols = threadColumns(table, columns);
				if (cols.length === 0) continue;
				const where = cols.map(c => `"${c}" IN (${placeholders})`).join(' OR ');
				const rows = handle.prepare(`SELECT ${cols.map(c => `"${c}"`).join(', ')} FROM "${table}" WHERE ${where}`).raw().all(...cols.flatMap(() => ids)) as unknown[][];
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

function planFor(ctx: AdapterContext, id: string) {
	const root = codexRoot(ctx);
	const descendants = descendantsOf(id, parentMap(ctx, readThreadIndex(ctx)));
	const ids = [id, ...descendants];
	const items: (PlanItem | undefined)[] = [];
	for (const owner of ids) {
		for (const ref of rolloutsOf(ctx, owner)) items.push(fileItem(ref.file, owner, ref.archived ? 'archived rollout' : 'rollout'));
		for (const entry of listDir(path.join(root, 'shell_snapshots'))) {
			if (entry.name.startsWith(`${owner}.`)) items.push(fileItem(joinNames(root, 'shell_snapshots', entry.name), owner, 'shell snapshot'));
		}
		// The TUI's per-thread markers (issue 18): an empty capabilities file and a writer lock.
		items.push(fileItem(joinNames(root, 'tui-thread-reference-capabilities', owner), owner, 'TUI thread marker'));
		items.push(fileItem(joinNames(root, 'thread-writer-locks', `${owner}.lock`), owner, 'thread writer lock'));
	}
	items.push(...rowItems(ctx, ids), ...lineItems(root, ids));
	return makePlan('codex', id, descendants, items, roots(ctx));
}

/** How long `codex delete` may take (it starts the whole CLI and opens every database). */
const DELETE_TIMEOUT_MS = 30_000;

/**
 * Ask codex itself first (0.171's `codex delete --force <id>` removes the rollouts, the thread
 * rows and the spawn edges, children included). 0.171 often stops with "failed to delete session"
 * part-way (seen with the real binary: a child's rollout gone, the rows still there); whatever it
 * left is deleted directly afterwards, so its failure is only a warning.
 */
async function agentDelete(ctx: AdapterContext, id: string): Promise<string | undefined> {
	const result = await ctx.exec('codex', ['delete', '--force', id], {
		env: {HOME: ctx.home, CODEX_HOME: codexRoot(ctx), CODEX_SQLITE_HOME: sqliteHome(ctx)},
		timeoutMs: DELETE_TIMEOUT_MS,
		input: '',
	});
	if (result.failure) return `codex delete could not run (${result.failure}); deleted everything directly`;
	if (result.exitCode !== 0) {
		const detail = result.stderr.trim().split('\n').find(l => l.startsWith('Error:')) ?? '';
		return `codex delete --force ${id} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}; deleted what it left directly`;
	}
	return undefined;
}

/** Delete the planned rows, one transaction per database; trigger-added rows are caught by a second pass. */
function purgeRows(plan: ReturnType<typeof planFor>, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
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

export const codexAdapter: AgentAdapter = {
	id: 'codex',
	label: 'Codex CLI',
	capabilities: {resume: true, purge: true},
	idPattern: new RegExp(`^${UUID}$`),
	processNames: ['codex'],
	residentChildren: ['app-server', 'mcp-server'],
	exitInput: measuredExitInput('/quit', readCodexScreen),

	spawn: () => ({argv: ['codex']}),
	resume(_ctx, id) {
		assertValidId(codexAdapter, id);
		return {argv: ['codex', 'resume', id]};
	},
	matchesProcess: proc => runsProgram(proc, codexAdapter.processNames) || /^codex-[a-z0-9_-]+$/.test(path.basename(programOf(proc.argv) || proc.name)),

	async discover(ctx, query = {}) {
		const index = readThreadIndex(ctx);
		const parents = parentMap(ctx, index);
		const wantCwd = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const read = memo(ctx, `codex:read:${codexRoot(ctx)}`, () => {
			const problems: string[] = [];
			const byId = new Map<string, Rollout>();
			for (const ref of rollouts(ctx)) {
				if (byId.has(ref.id) && ref.archived) continue;
				try {
					const rollout = readRollout(ctx, ref);
					if (rollout) byId.set(ref.id, rollout);
				} catch (error) {
					problems.push(`${ref.file}: ${messageOf(error)}`);
				}
			}
			// Children counted in one pass (per rollout it would cost rollouts² at thousands).
			const children = new Map<string, number>();
			for (const parent of parents.values()) children.set(parent, (children.get(parent) ?? 0) + 1);
			return {byId, problems, children};
		});
		const problems = [...index.problems, ...read.problems];
		const childCount = (id: string) => read.children.get(id) ?? 0;
		const conversations: Conversation[] = [];
		for (const r of read.byId.values()) {
			const parentId = r.parentId ?? parents.get(r.id);
			if (parentId !== undefined && !query.includeChildren) continue;
			if (!r.cwd || (wantCwd !== undefined && r.cwd !== wantCwd)) continue;
			if (query.since !== undefined && r.createdAt < query.since) continue;
			const title = index.titles.get(r.id) ?? (r.firstPrompt ? oneLine(r.firstPrompt) : undefined);
			conversations.push({
				agent: 'codex',
				id: r.id,
				cwd: r.cwd,
				createdAt: r.createdAt,
				updatedAt: r.updatedAt,
				...(parentId ? {parentId} : {}),
				...(title ? {title} : {}),
				childCount: childCount(r.id),
				resumeState: resumeStateOf(r),
			});
		}
		conversations.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
		return {conversations, problems};
	},

	watchPaths(ctx) {
		const root = codexRoot(ctx);
		// The same for every cwd: built once per refresh.
		return memo(ctx, `codex:watch:${root}`, () => {
			const rolloutPaths = rollouts(ctx).map(r => r.file);
			// New rollouts change their date folder (any of them: local time); turns grow the rollout;
			// titles and spawn edges live in the state databases and their WAL.
			const days = rolloutPaths.map(f => path.dirname(f));
			const folders = [...new Set([path.join(root, 'sessions'), path.join(root, 'archived_sessions'), ...days, ...days.map(d => path.dirname(d)), ...days.map(d => path.dirname(path.dirname(d)))])];
			const state = databases(ctx).filter(f => path.basename(f).startsWith('state_'));
			return [...folders, ...rolloutPaths, ...state.flatMap(db => [db, `${db}-wal`])];
		});
	},

	async verify(ctx, id, cwd) {
		assertValidId(codexAdapter, id);
		const refs = verifyRolloutsOf(ctx, id);
		if (refs.length === 0) {
			const index = readThreadIndex(ctx);
			if (index.ids.has(id)) return {kind: 'no', reason: 'thread row without a rollout file ("no rollout found")'};
			return {kind: 'no', reason: 'no conversation yet (codex writes the rollout at the first prompt)'};
		}
		let rollouts: Rollout[];
		try {
			rollouts = refs.map(ref => readRollout(ctx, ref)).filter((r): r is Rollout => r !== undefined);
		} catch (error) {
			return {kind: 'unknown', reason: messageOf(error)};
		}
		const first = rollouts.find(r => !refs.find(ref => ref.file === r.file)?.archived) ?? rollouts[0];
		if (!first) return {kind: 'unknown', reason: 'rollout unreadable'};
		if (cwd !== undefined && first.cwd !== canonicalCwd(ctx, cwd)) {
			return {kind: 'no', reason: `belongs to ${first.cwd ?? 'an unknown cwd'}, not ${canonicalCwd(ctx, cwd)}`};
		}
		return resumeStateOf(first);
	},

	async artifacts(ctx, id) {
		assertValidId(codexAdapter, id);
		return planFor(ctx, id);
	},

	async purge(ctx, id) {
		assertValidId(codexAdapter, id);
		const plan = planFor(ctx, id);
		const ids = [id, ...plan.descendants];
		const allowed = roots(ctx);
		const asked = plan.items.some(i => i.kind === 'rows' || i.description.endsWith('rollout')) ? await agentDelete(ctx, id) : undefined;
		// Rollouts first: a thread row without its rollout is inert, while a rollout left behind is re-indexed.
		const files = removePaths(plan.items, allowed);
		const rows = purgeRows(plan, ids);
		const removed = [...files.removed, ...rows.removed];
		const warnings = [...(asked ? [asked] : []), ...files.warnings, ...rows.warnings];
		for (const item of plan.items.filter(i => i.kind === 'lines')) {
			const field = path.basename(item.path) === 'history.jsonl' ? 'session_id' : 'id';
			try {
				removeLines(item.path, jsonFieldIn(field, [item.sessionId]), allowed);
				removed.push(item);
			} catch (error) {
				warnings.push(messageOf(error));
			}
		}
		const touched = new Set(plan.items.filter(i => i.kind === 'rows').map(i => i.path));
		const erased = eraseDatabases(databases(ctx), touched, 'codex');
		return {removed, warnings: [...warnings, ...erased.warnings], held: erased.held};
	},

	async residual(ctx, id) {
		assertValidId(codexAdapter, id);
		const root = codexRoot(ctx);
		const index = readThreadIndex(ctx);
		return scanResidual({
			id,
			descendants: descendantsOf(id, parentMap(ctx, index)),
			roots: roots(ctx),
			indexFiles: [path.join(root, 'history.jsonl'), path.join(root, 'session_index.jsonl')],
			databases: databases(ctx),
		});
	},

	async inUse(ctx, id) {
		assertValidId(codexAdapter, id);
		const uses = await memo(ctx, `codex:uses:${codexRoot(ctx)}`, () => codexLiveUses(ctx));
		// A TUI that keeps no evidence of its thread uses every thread of its folder (fail safe).
		const vague = needsFolders(uses) ? usersOf(uses.filter(u => u.claim.kind !== 'ids'), {ids: [id], cwds: threadCwds(ctx, id)}) : [];
		const named = await threadsNamedByProcesses(ctx);
		if (named && !named.has(id)) return uniqueHolders(vague);
		const ids = [id, ...descendantsOf(id, parentMap(ctx, readThreadIndex(ctx)))];
		// The recorder keeps the rollout open for the thread's lifetime; the databases are shared
		// by every codex process (and the app-server daemon), so holding them says nothing.
		const files = ids
			.flatMap(owner => rolloutsOf(ctx, owner))
			.map(r => realpathOrUndefined(r.file))
			.filter((f): f is string => f !== undefined);
		return uniqueHolders([...usersOf(uses, {ids, cwds: []}), ...vague, ...(await argvUsers(ctx, ids)), ...(await fileUsers(ctx, files))]);
	},

	liveUses: (ctx, procs) => codexLiveUses(ctx, procs),
};
