// Hermes's state databases (one per profile): their rows read whole or asked per id, as views
// the lineage rules read alike.

import path from 'node:path';
import {StoreReadError, tableColumns, withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import {pushTo} from '../common/groups.js';
import {isRecord, parseJsonOrUndefined, toEpochMs} from '../common/jsonRecords.js';
import {oneLine} from '../common/jsonl.js';
import {listDir, lstatOrUndefined} from '../common/paths.js';
import {indexAfter, type InRefresh, memo, memoKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';
import {unlessUnreadable} from '../common/storeRead.js';

const STORES = memoKind<{data: StoreData[]; problems: string[]}>('hermes:stores');

export const ID_PATTERN = /^\d{8}_\d{6}_[0-9a-f]{6,8}$/;

/** Any hermes-shaped id inside text (for telling a breadcrumb that names only ours). */
export const ANY_ID = /\d{8}_\d{6}_[0-9a-f]{6,8}/g;

export const PROGRAMS = ['hermes'];

/** Long-lived hermes processes that keep state.db open for every session (FORMATS 6). */
export const SERVICE_COMMANDS: ReadonlySet<string> = new Set(['gateway', 'serve', 'dashboard', 'cron', 'desktop']);

export const DELETE_TIMEOUT_MS = 60_000;

/** One profile store: a HERMES_HOME with its own state.db and session files. */
export interface HermesStore {
	readonly home: string;
	readonly db: string;
}

/**
 * `HERMES_HOME` (own home only; a profile dir means its parent root), else
 * `~/.hermes<HERMES_DATA_DIR_SUFFIX>`; profiles live in `<root>/profiles/<name>/`.
 */
export function hermesRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['HERMES_HOME'] : undefined;
	if (override) {
		const home = path.resolve(ctx.home, override);
		return path.basename(path.dirname(home)) === 'profiles' ? path.dirname(path.dirname(home)) : home;
	}
	const suffix = ctx.ownHome ? (ctx.env['HERMES_DATA_DIR_SUFFIX'] ?? '') : '';
	return path.join(ctx.home, `.hermes${/^[A-Za-z0-9_-]*$/.test(suffix) ? suffix : ''}`);
}

export function storesOf(ctx: InRefresh, root: string): HermesStore[] {
	const profiles = path.join(root, 'profiles');
	const homes = [
		root,
		...listDir(profiles, ctx)
			.filter(e => e.isDirectory())
			.map(e => path.join(profiles, e.name)),
	];
	return homes.map(home => ({home, db: path.join(home, 'state.db')})).filter(s => lstatOrUndefined(s.db)?.isFile());
}

export interface SessionRow {
	readonly id: string;
	readonly source: string;
	readonly parentId?: string;
	readonly startedAt: number;
	readonly endedAt?: number;
	readonly endReason?: string;
	readonly cwd?: string;
	readonly title?: string;
	readonly sessionKey?: string;
	readonly lastActivityAt?: number;
	readonly markers: Readonly<Record<'branched' | 'delegate' | 'reset', string | undefined>>;
}

/** What one store says: its sessions, real-message counts and newest message times. */
export interface StoreData {
	readonly store: HermesStore;
	readonly rows: ReadonlyMap<string, SessionRow>;
	readonly messages: ReadonlyMap<string, number>;
	readonly lastMessageAt: ReadonlyMap<string, number>;
	readonly columns: ReadonlyMap<string, ReadonlySet<string>>;
	/** The whole store as a view (children indexed on first use), made with the data. */
	readonly view: StoreView;
}

const REQUIRED_SESSION_COLUMNS = ['id', 'parent_session_id', 'started_at'];

const OPTIONAL_SESSION_COLUMNS = ['source', 'ended_at', 'end_reason', 'cwd', 'title', 'model_config', 'session_key', 'last_activity_at'];

function text(value: unknown): string | undefined {
	return typeof value === 'string' && value !== '' ? value : undefined;
}

function toRow(raw: Record<string, unknown>): SessionRow | undefined {
	const id = raw['id'];
	if (typeof id !== 'string' || !ID_PATTERN.test(id)) return undefined;
	const config = parseJsonOrUndefined(text(raw['model_config']));
	const marker = (key: string) => (isRecord(config) ? text(config[key]) : undefined);
	const optional = {
		parentId: text(raw['parent_session_id']),
		endedAt: toEpochMs(raw['ended_at']),
		endReason: text(raw['end_reason']),
		cwd: text(raw['cwd']),
		title: text(raw['title']) === undefined ? undefined : oneLine(text(raw['title']) ?? ''),
		sessionKey: text(raw['session_key']),
		lastActivityAt: toEpochMs(raw['last_activity_at']),
	};
	return {
		id,
		source: text(raw['source']) ?? '',
		startedAt: toEpochMs(raw['started_at']) ?? 0,
		markers: {branched: marker('_branched_from'), delegate: marker('_delegate_from'), reset: marker('_reset_from')},
		...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
	};
}

/** The columns to select from `sessions` (absent optional ones as NULL); throws on an unexpected schema. */
function sessionSelect(store: HermesStore, columns: ReadonlyMap<string, ReadonlySet<string>>): string {
	const sessionColumns = columns.get('sessions');
	if (!sessionColumns || REQUIRED_SESSION_COLUMNS.some(c => !sessionColumns.has(c))) {
		throw new StoreReadError(`${store.db}: no sessions table with id, parent_session_id, started_at (unexpected schema)`, store.db);
	}
	return [...REQUIRED_SESSION_COLUMNS, ...OPTIONAL_SESSION_COLUMNS.map(c => (sessionColumns.has(c) ? c : `NULL AS ${c}`))].join(', ');
}

function countsMessages(columns: ReadonlyMap<string, ReadonlySet<string>>): boolean {
	const messageColumns = columns.get('messages');
	return messageColumns?.has('session_id') === true && messageColumns.has('role');
}

function readStoreDb(store: HermesStore, db: ReadDb): StoreData {
	const columns = tableColumns(db);
	const select = sessionSelect(store, columns);
	const rows = new Map<string, SessionRow>();
	for (const raw of db.prepare<[], Record<string, unknown>>(`SELECT ${select} FROM sessions`).all()) {
		const row = toRow(raw);
		if (row) rows.set(row.id, row);
	}
	const messages = new Map<string, number>();
	const lastMessageAt = new Map<string, number>();
	if (countsMessages(columns)) {
		const stamp = columns.get('messages')?.has('timestamp') ? 'max(timestamp)' : 'NULL';
		const sql = `SELECT session_id AS id, count(*) AS n, ${stamp} AS last FROM messages WHERE role IN ('user', 'assistant') GROUP BY session_id`;
		for (const r of db.prepare<[], {id: string; n: number; last: unknown}>(sql).all()) {
			messages.set(r.id, r.n);
			const last = toEpochMs(r.last);
			if (last) lastMessageAt.set(r.id, last);
		}
	}
	return withView({store, rows, messages, lastMessageAt, columns});
}

/**
 * What the lineage rules need from one store: a row, the rows naming it as parent (in store
 * order), a message count. Answered from the whole-store index or, for a few ids, by queries.
 */
export interface StoreView {
	readonly store: HermesStore;
	row(id: string): SessionRow | undefined;
	children(id: string): readonly SessionRow[];
	messages(id: string): number;
}

/** The whole-store index as a view; children indexed once (a filter per call cost rows² in discover). */
function withView(data: Omit<StoreData, 'view'>): StoreData {
	let byParent: Map<string, SessionRow[]> | undefined;
	const view: StoreView = {
		store: data.store,
		row: id => data.rows.get(id),
		children(id) {
			if (!byParent) {
				byParent = new Map();
				for (const row of data.rows.values()) if (row.parentId !== undefined) pushTo(byParent, row.parentId, row);
			}
			return byParent.get(id) ?? [];
		},
		messages: id => data.messages.get(id) ?? 0,
	};
	return {...data, view};
}

export function viewOf(data: StoreData): StoreView {
	return data.view;
}

/**
 * A view asking the open database for each id (bound parameters): a handful of indexed lookups
 * instead of every row of the store. The last valid row of an id wins, as in the index.
 */
function queryView(store: HermesStore, db: ReadDb): StoreView & {readonly columns: ReadonlyMap<string, ReadonlySet<string>>} {
	const columns = tableColumns(db);
	const select = sessionSelect(store, columns);
	const byId = db.prepare<[string], Record<string, unknown>>(`SELECT ${select} FROM sessions WHERE id = ?`);
	const byParent = db.prepare<[string], Record<string, unknown>>(`SELECT ${select} FROM sessions WHERE parent_session_id = ?`);
	const counted = countsMessages(columns);
	const count = counted
		? db.prepare<[string], {n: number}>("SELECT count(*) AS n FROM messages WHERE session_id = ? AND role IN ('user', 'assistant')")
		: undefined;
	// `id` is the table's primary key: one row per id, as the index holds it.
	const rows = new Map<string, SessionRow | undefined>();
	const row = (id: string) => {
		if (!rows.has(id))
			rows.set(
				id,
				byId
					.all(id)
					.map(toRow)
					.findLast(r => r !== undefined),
			);
		return rows.get(id);
	};
	return {
		store,
		columns,
		row,
		children(id) {
			const found = byParent
				.all(id)
				.map(toRow)
				.filter((r): r is SessionRow => r !== undefined);
			for (const r of found) rows.set(r.id, r);
			return found;
		},
		messages: id => count?.get(id)?.n ?? 0,
	};
}

/** Every readable store's data, plus one problem line per store that could not be read; read once per refresh (memo). */
export function readStores(ctx: AdapterContext): {data: StoreData[]; problems: string[]} {
	return memo(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

const storesKey = (ctx: AdapterContext) => STORES.of(hermesRoot(ctx));

function readStoresNow(ctx: AdapterContext): {data: StoreData[]; problems: string[]} {
	const data: StoreData[] = [];
	const problems: string[] = [];
	for (const store of storesOf(ctx, hermesRoot(ctx))) {
		unlessUnreadable(
			() => {
				data.push(withReadOnlyDb(store.db, ctx.reads, db => readStoreDb(store, db)));
			},
			problem => problems.push(problem),
		);
	}
	return {data, problems};
}

/**
 * The whole-store index when this refresh has it or has asked too many ids for queries; else
 * undefined: query (an open and a few indexed lookups per store).
 */
export function indexFor(ctx: AdapterContext): {data: StoreData[]; problems: string[]} | undefined {
	return indexAfter(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

/**
 * `ask` with a query view of each readable store, in store order: the first answer wins.
 * Unreadable stores are listed in `problems`.
 */
export function askStores<T>(ctx: AdapterContext, ask: (view: ReturnType<typeof queryView>, db: ReadDb) => T | undefined): {found: T[]; problems: string[]} {
	const found: T[] = [];
	const problems: string[] = [];
	for (const store of storesOf(ctx, hermesRoot(ctx))) {
		unlessUnreadable(
			() => {
				const answer = withReadOnlyDb(store.db, ctx.reads, db => ask(queryView(store, db), db));
				if (answer !== undefined) found.push(answer);
			},
			problem => problems.push(problem),
		);
	}
	return {found, problems};
}
