// opencode's databases (and legacy JSON sessions): where they are, their sessions read whole
// or asked per id, parents and resume state.

import fs from 'node:fs';
import path from 'node:path';
import type {ResumeState} from '../../domain/types.js';
import {tableColumns, withReadOnlyDb, type ReadDb, type ReadPool} from '../../system/sqliteRead.js';
import {obj, str} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {canonicalCwd, listDir} from '../common/paths.js';
import {indexAfter, type InRefresh, memo, memoKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';
import {childrenFrom, descendants} from '../../system/descendants.js';
import {unlessUnreadable} from '../common/storeRead.js';

const STORES = memoKind<{stores: Store[]; problems: string[]}>('opencode:stores');
/** Every store's child index, for `storedDescendants`. */
const CHILD_INDEX = memoKind<(node: string) => readonly string[]>('opencode:child-index');

/** Session tables of both generations: 1.x `session`, 2.x `session_v2` (a migrated database has both). */
export const SESSION_TABLES = ['session', 'session_v2'] as const;

/** Release channels use `opencode.db`; others `opencode-<channel>.db` (FORMATS 3). */
const DB_FILE = /^opencode(-[A-Za-z0-9._]+)?\.db$/;

export const MESSAGE_ID = /^msg_[0-9A-Za-z]+$/;

export const DELETE_TIMEOUT_MS = 30_000;

/** `$XDG_DATA_HOME/opencode` (only for the caller's own home), else `<home>/.local/share/opencode`. */
export function dataDir(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const xdg = ctx.ownHome ? ctx.env['XDG_DATA_HOME'] : undefined;
	return xdg ? path.join(path.resolve(xdg), 'opencode') : path.join(ctx.home, '.local', 'share', 'opencode');
}

/** The databases to read: `$OPENCODE_DB` (own home only), else every `opencode*.db` in the data dir. */
export function dbFiles(ctx: AdapterContext): string[] {
	const dir = dataDir(ctx);
	const override = ctx.ownHome ? ctx.env['OPENCODE_DB'] : undefined;
	if (override && override !== ':memory:') return [path.isAbsolute(override) ? override : path.join(dir, override)];
	return listDir(dir, ctx)
		.filter(e => e.isFile() && DB_FILE.test(e.name))
		.map(e => path.join(dir, e.name))
		.sort();
}

export function roots(ctx: AdapterContext): string[] {
	const dbDirs = dbFiles(ctx).map(f => path.dirname(f));
	return [...new Set([dataDir(ctx), ...dbDirs, stateDir(ctx)])];
}

/** `$XDG_STATE_HOME/opencode` (own home only), else `<home>/.local/state/opencode`: the TUI's prompt history. */
export function stateDir(ctx: AdapterContext): string {
	const xdg = ctx.ownHome ? ctx.env['XDG_STATE_HOME'] : undefined;
	return xdg ? path.join(path.resolve(xdg), 'opencode') : path.join(ctx.home, '.local', 'state', 'opencode');
}

export function promptHistoryFile(ctx: AdapterContext): string {
	return path.join(stateDir(ctx), 'prompt-history.jsonl');
}

/** The log files of the data dir (`log/*.log`): opencode logs every session id it works on. */
export function logFiles(ctx: AdapterContext): string[] {
	const dir = path.join(dataDir(ctx), 'log');
	return listDir(dir)
		.filter(e => e.isFile() && e.name.endsWith('.log'))
		.map(e => path.join(dir, e.name));
}

/** One session as the database records it (both generations merged under one id). */
interface Session {
	readonly id: string;
	readonly db: string;
	directory: string;
	parentId: string | undefined;
	title: string | undefined;
	createdAt: number;
	updatedAt: number;
	messages: number;
}

/** Everything one database says about its sessions. */
interface Store {
	readonly db: string;
	readonly sessions: Map<string, Session>;
	/** Parent of each child, from parent_id, else from the parent's task-tool part (FORMATS 3: 1.18 bug). */
	readonly parents: Map<string, string>;
}

export const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Every session of the database, or (`only`) just that id's rows and messages (bound parameter). */
function readSessions(handle: ReadDb, db: string, tables: Map<string, Set<string>>, only?: string): Map<string, Session> {
	const args = only === undefined ? [] : [only];
	const sessions = new Map<string, Session>();
	for (const table of SESSION_TABLES) {
		const cols = tables.get(table);
		if (!cols?.has('id') || !cols.has('directory')) continue;
		const pick = (c: string) => (cols.has(c) ? q(c) : 'NULL');
		const rows = handle
			.prepare(
				`SELECT id, directory, ${pick('parent_id')} AS parent, ${pick('title')} AS title, ${pick('time_created')} AS created, ${pick('time_updated')} AS updated FROM ${q(table)}${only === undefined ? '' : ' WHERE id = ?'}`,
			)
			.all(...args) as {id: string; directory: string; parent: string | null; title: string | null; created: number | null; updated: number | null}[];
		for (const row of rows) {
			const seen = sessions.get(row.id);
			const created = Number(row.created ?? 0);
			const updated = Number(row.updated ?? created);
			if (seen) {
				seen.parentId ??= row.parent ?? undefined;
				seen.title ??= row.title ?? undefined;
				seen.createdAt = Math.min(seen.createdAt, created);
				seen.updatedAt = Math.max(seen.updatedAt, updated);
				continue;
			}
			sessions.set(row.id, {
				id: row.id,
				db,
				directory: row.directory,
				parentId: row.parent ?? undefined,
				title: row.title ?? undefined,
				createdAt: created,
				updatedAt: Math.max(updated, created),
				messages: 0,
			});
		}
	}
	for (const table of ['message', 'session_message']) {
		if (!tables.get(table)?.has('session_id')) continue;
		const counts = handle
			.prepare(`SELECT session_id AS id, count(*) AS n FROM ${q(table)}${only === undefined ? '' : ' WHERE session_id = ?'} GROUP BY session_id`)
			.all(...args) as {id: string; n: number}[];
		for (const c of counts) {
			const s = sessions.get(c.id);
			if (s) s.messages += c.n;
		}
	}
	return sessions;
}

/** Children named by a parent's task-tool parts (`state.metadata.sessionId`). */
function taskChildren(handle: ReadDb, tables: Map<string, Set<string>>): Map<string, string> {
	const out = new Map<string, string>();
	const part = tables.get('part');
	if (!part?.has('session_id') || !part.has('data')) return out;
	const rows = handle.prepare(`SELECT session_id AS parent, data FROM part WHERE instr(data, '"tool":"task"') > 0`).all() as {parent: string; data: string}[];
	for (const row of rows) {
		const child = str(obj(obj(parseJsonLine(row.data), 'state'), 'metadata'), 'sessionId');
		if (child && child !== row.parent) out.set(child, row.parent);
	}
	return out;
}

export function readStore(db: string, reads?: ReadPool): Store {
	return withReadOnlyDb(db, reads, handle => {
		const tables = tableColumns(handle);
		const sessions = readSessions(handle, db, tables);
		const parents = new Map<string, string>();
		const byTask = taskChildren(handle, tables);
		for (const s of sessions.values()) {
			const parent = s.parentId ?? byTask.get(s.id);
			if (parent !== undefined && parent !== s.id) parents.set(s.id, parent);
		}
		return {db, sessions, parents};
	});
}

/** Every readable store, plus one problem line per unreadable one; read once per refresh (memo). */
export function readStores(ctx: AdapterContext): {stores: Store[]; problems: string[]} {
	return memo(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

const storesKey = (ctx: AdapterContext) => STORES.of(dataDir(ctx));

/**
 * Answer by `WHERE id = ?` / `WHERE parent_id = ?` queries? Not when the refresh has the index
 * (every session, message count and task part of every database) or asked too many ids.
 */
export function queryDirectly(ctx: AdapterContext): boolean {
	return indexAfter(ctx, storesKey(ctx), () => readStoresNow(ctx)) === undefined;
}

/** A database a query run holds open. */
interface OpenDb {
	readonly db: string;
	readonly handle: ReadDb;
	readonly tables: Map<string, Set<string>>;
}

/**
 * `fn` with every database open, or undefined when one cannot be read: the caller then asks the
 * whole-store index, whose problem lines and skipped stores are the answer's.
 */
export function withEveryDb<T>(
	files: readonly string[],
	fn: (open: readonly OpenDb[]) => T,
	reads: ReadPool | undefined,
	open: readonly OpenDb[] = [],
): {value: T} | undefined {
	const [first, ...rest] = files;
	if (first === undefined) return {value: fn(open)};
	return unlessUnreadable(
		() => {
			return withReadOnlyDb(first, reads, handle => withEveryDb(rest, fn, reads, [...open, {db: first, handle, tables: tableColumns(handle)}]));
		},
		() => undefined,
	);
}

/** The merged session `id` of the first database holding it (the index's `find`). */
export function sessionByQuery(open: readonly OpenDb[], id: string): Session | undefined {
	for (const o of open) {
		const found = readSessions(o.handle, o.db, o.tables, id).get(id);
		if (found) return found;
	}
	return undefined;
}

/** `child`'s parent in one database (parent_id, else the last task part naming it), as readStore records it. */
function parentIn(o: OpenDb, child: string): string | undefined {
	const session = readSessions(o.handle, o.db, o.tables, child).get(child);
	if (!session) return undefined;
	let parent = session.parentId;
	if (parent === undefined && o.tables.get('part')?.has('session_id') && o.tables.get('part')?.has('data')) {
		// Rare (FORMATS 3: the 1.18 bug): the task parts that mention the child, in table order.
		const rows = o.handle.prepare(`SELECT session_id AS parent, data FROM part WHERE instr(data, '"tool":"task"') > 0 AND instr(data, ?) > 0`).all(child) as {
			parent: string;
			data: string;
		}[];
		for (const row of rows) {
			const named = str(obj(obj(parseJsonLine(row.data), 'state'), 'metadata'), 'sessionId');
			if (named === child && named !== row.parent) parent = row.parent;
		}
	}
	return parent !== undefined && parent !== child ? parent : undefined;
}

/** Sessions that may name `id` as parent: by parent_id, or by a task part of `id`. */
function childCandidates(o: OpenDb, id: string): string[] {
	const out: string[] = [];
	for (const table of SESSION_TABLES) {
		if (!o.tables.get(table)?.has('id') || !o.tables.get(table)?.has('parent_id') || !o.tables.get(table)?.has('directory')) continue;
		for (const row of o.handle.prepare(`SELECT id FROM ${q(table)} WHERE parent_id = ?`).all(id) as {id: string}[]) out.push(row.id);
	}
	if (o.tables.get('part')?.has('session_id') && o.tables.get('part')?.has('data')) {
		const rows = o.handle.prepare(`SELECT data FROM part WHERE session_id = ? AND instr(data, '"tool":"task"') > 0`).all(id) as {data: string}[];
		for (const row of rows) {
			const child = str(obj(obj(parseJsonLine(row.data), 'state'), 'metadata'), 'sessionId');
			if (child) out.push(child);
		}
	}
	return out;
}

/** Descendants of `id` by queries: each candidate kept when its parent (the last database's word, as the merged map keeps it) is the one asked. */
export function descendantsByQuery(open: readonly OpenDb[], id: string): string[] {
	const parentOf = (child: string) => open.map(o => parentIn(o, child)).findLast(p => p !== undefined);
	return descendants(id, current => [...new Set(open.flatMap(o => childCandidates(o, current)))].filter(child => parentOf(child) === current));
}

function readStoresNow(ctx: AdapterContext): {stores: Store[]; problems: string[]} {
	const stores: Store[] = [];
	const problems: string[] = [];
	for (const db of dbFiles(ctx)) {
		unlessUnreadable(
			() => {
				stores.push(readStore(db, ctx.reads));
			},
			problem => problems.push(problem),
		);
	}
	return {stores, problems};
}

export function descendantsOf(id: string, parents: ReadonlyMap<string, string>): string[] {
	return descendants(id, childrenFrom(parents));
}

/**
 * `descendantsOf` over every store's parent links, from one child index per refresh (a memo):
 * every in-use candidate asks, and a map of every session per call made the pass quadratic.
 */
export function storedDescendants(ctx: AdapterContext, id: string): string[] {
	const childrenOf = memo(ctx, CHILD_INDEX.of(dataDir(ctx)), () => {
		// One parent per session, the last store's winning (as when each call built the map).
		const parents = new Map<string, string>();
		for (const store of readStores(ctx).stores) for (const [child, parent] of store.parents) parents.set(child, parent);
		return childrenFrom(parents);
	});
	return descendants(id, childrenOf);
}

export function resumeStateOf(s: Session, exists: (cwd: string) => boolean = fs.existsSync): ResumeState {
	if (s.messages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!exists(s.directory)) return {kind: 'no', reason: `cwd ${s.directory} no longer exists`};
	return {kind: 'yes'};
}

export function sameDir(ctx: InRefresh, recorded: string, want: string): boolean {
	return recorded === want || canonicalCwd(ctx, recorded) === want;
}
