import path from 'node:path';
import type {Conversation, ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {StoreReadError, tableColumns, withReadOnlyDb, type ReadDb} from '../system/sqliteRead.js';
import {unverifiedExitInput} from './common/exitSequences.js';
import {pushTo} from './common/groups.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {isRecord, parseJsonOrUndefined, readSmallText, toEpochMs} from './common/jsonRecords.js';
import {oneLine} from './common/jsonl.js';
import {canonicalCwd, listDir, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {indexAfter, memo, type InRefresh} from './common/refresh.js';
import {fileItem, makePlan, removePaths} from './common/plan.js';
import {runsProgram, subcommand} from './common/programs.js';
import {chunks, deleteWhereIn, placeholders, quoteIdent, withPurgeDb, type WriteDb} from './common/purgeDb.js';
import {scanResidual} from './common/residual.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type InUseHolder, type PlanItem} from './types.js';
import {descendants} from '../system/descendants.js';
import {unlessUnreadable} from './common/storeRead.js';

// Hermes Agent (FORMATS 6): a state.db per profile store holding sessions and messages, plus
// per-session files. A conversation is a root session with its delegate (sub-agent) children and
// its compression continuations; /branch and reset children are separate conversations.

const ID_PATTERN = /^\d{8}_\d{6}_[0-9a-f]{6,8}$/;
/** Any hermes-shaped id inside text (for telling a breadcrumb that names only ours). */
const ANY_ID = /\d{8}_\d{6}_[0-9a-f]{6,8}/g;
const PROGRAMS = ['hermes'];
/** Long-lived hermes processes that keep state.db open for every session (FORMATS 6). */
const SERVICE_COMMANDS = new Set(['gateway', 'serve', 'dashboard', 'cron', 'desktop']);
const DELETE_TIMEOUT_MS = 60_000;

/** One profile store: a HERMES_HOME with its own state.db and session files. */
interface HermesStore {
	readonly home: string;
	readonly db: string;
}

/**
 * `HERMES_HOME` (own home only; a profile dir means its parent root), else
 * `~/.hermes<HERMES_DATA_DIR_SUFFIX>`; profiles live in `<root>/profiles/<name>/`.
 */
function hermesRoot(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['HERMES_HOME'] : undefined;
	if (override) {
		const home = path.resolve(ctx.home, override);
		return path.basename(path.dirname(home)) === 'profiles' ? path.dirname(path.dirname(home)) : home;
	}
	const suffix = ctx.ownHome ? (ctx.env['HERMES_DATA_DIR_SUFFIX'] ?? '') : '';
	return path.join(ctx.home, `.hermes${/^[A-Za-z0-9_-]*$/.test(suffix) ? suffix : ''}`);
}

function storesOf(ctx: InRefresh, root: string): HermesStore[] {
	const profiles = path.join(root, 'profiles');
	const homes = [root, ...listDir(profiles, ctx).filter(e => e.isDirectory()).map(e => path.join(profiles, e.name))];
	return homes.map(home => ({home, db: path.join(home, 'state.db')})).filter(s => lstatOrUndefined(s.db)?.isFile());
}

interface SessionRow {
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
interface StoreData {
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
interface StoreView {
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

function viewOf(data: StoreData): StoreView {
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
	const count = counted ? db.prepare<[string], {n: number}>("SELECT count(*) AS n FROM messages WHERE session_id = ? AND role IN ('user', 'assistant')") : undefined;
	// `id` is the table's primary key: one row per id, as the index holds it.
	const rows = new Map<string, SessionRow | undefined>();
	const row = (id: string) => {
		if (!rows.has(id)) rows.set(id, byId.all(id).map(toRow).findLast(r => r !== undefined));
		return rows.get(id);
	};
	return {
		store,
		columns,
		row,
		children(id) {
			const found = byParent.all(id).map(toRow).filter((r): r is SessionRow => r !== undefined);
			for (const r of found) rows.set(r.id, r);
			return found;
		},
		messages: id => count?.get(id)?.n ?? 0,
	};
}

/** Every readable store's data, plus one problem line per store that could not be read; read once per refresh (memo). */
function readStores(ctx: AdapterContext): {data: StoreData[]; problems: string[]} {
	return memo(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

const storesKey = (ctx: AdapterContext): string => `hermes:stores:${hermesRoot(ctx)}`;

function readStoresNow(ctx: AdapterContext): {data: StoreData[]; problems: string[]} {
	const data: StoreData[] = [];
	const problems: string[] = [];
	for (const store of storesOf(ctx, hermesRoot(ctx))) {
		unlessUnreadable(() => {
			data.push(withReadOnlyDb(store.db, db => readStoreDb(store, db)));
		}, problem => problems.push(problem));
	}
	return {data, problems};
}

/**
 * The whole-store index when this refresh has it or has asked too many ids for queries; else
 * undefined: query (an open and a few indexed lookups per store).
 */
function indexFor(ctx: AdapterContext): {data: StoreData[]; problems: string[]} | undefined {
	return indexAfter(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

/**
 * `ask` with a query view of each readable store, in store order: the first answer wins.
 * Unreadable stores are listed in `problems`.
 */
function askStores<T>(ctx: AdapterContext, ask: (view: ReturnType<typeof queryView>, db: ReadDb) => T | undefined): {found: T[]; problems: string[]} {
	const found: T[] = [];
	const problems: string[] = [];
	for (const store of storesOf(ctx, hermesRoot(ctx))) {
		unlessUnreadable(() => {
			const answer = withReadOnlyDb(store.db, db => ask(queryView(store, db), db));
			if (answer !== undefined) found.push(answer);
		}, problem => problems.push(problem));
	}
	return {found, problems};
}

const RESET_END_REASONS = new Set(['session_reset', 'session_switch', 'idle', 'daily', 'suspended', 'resume_pending_expired']);

/**
 * How a child relates to its parent (hermes_state_common lineage predicates): a delegate run or a
 * compression continuation belongs to the parent's conversation; a /branch, reset or tool child is
 * a conversation of its own. A child whose parent row is gone (a purge cut short) and that carries
 * no independence marker is treated as part of the vanished conversation.
 */
function childKind(view: StoreView, row: SessionRow): 'root' | 'delegate' | 'continuation' | 'independent' {
	const parentId = row.parentId;
	if (!parentId) return 'root';
	if (row.markers.branched === parentId || row.markers.reset === parentId || row.source === 'tool') return 'independent';
	if (row.markers.delegate === parentId || row.source === 'subagent') return 'delegate';
	const parent = view.row(parentId);
	if (!parent) return 'continuation';
	if (parent.endReason === 'compression') return 'continuation';
	if (parent.endReason === 'branched') return 'independent';
	if (parent.endReason && RESET_END_REASONS.has(parent.endReason) && row.sessionKey && row.sessionKey === parent.sessionKey) return 'independent';
	// Any other child with a parent link is a sub-agent run (hermes `_ephemeral_child_sql`).
	return 'delegate';
}

function belongsToParent(view: StoreView, row: SessionRow): boolean {
	const kind = childKind(view, row);
	return kind === 'delegate' || kind === 'continuation';
}

/** Children that are part of `id`'s conversation. */
function ownChildren(view: StoreView, id: string): SessionRow[] {
	return view.children(id).filter(row => belongsToParent(view, row));
}

/** Every descendant of `id` in this store (delegates and continuations, at any depth). */
function descendantsIn(view: StoreView, id: string): string[] {
	return descendants(id, x => ownChildren(view, x).map(r => r.id));
}

/** A session's cwd, or the nearest ancestor's when it recorded none. */
function cwdOf(view: StoreView, id: string): string | undefined {
	const seen = new Set<string>();
	let row = view.row(id);
	while (row && !seen.has(row.id)) {
		if (row.cwd) return row.cwd;
		seen.add(row.id);
		row = row.parentId ? view.row(row.parentId) : undefined;
	}
	return undefined;
}

/** The continuation chain of a session (its compression tail), for messages and activity. */
function continuationChain(view: StoreView, id: string): string[] {
	return [id, ...descendantsIn(view, id).filter(x => {
		const row = view.row(x);
		return row !== undefined && childKind(view, row) === 'continuation';
	})];
}

function resumeStateOf(view: StoreView, id: string): ResumeState {
	const count = continuationChain(view, id).reduce((n, x) => n + view.messages(x), 0);
	return count > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'};
}

function toConversation(data: StoreData, row: SessionRow): Conversation {
	const view = viewOf(data);
	const chain = continuationChain(view, row.id);
	const updatedAt = Math.max(row.startedAt, ...chain.flatMap(x => {
		const r = data.rows.get(x);
		return [r?.lastActivityAt ?? 0, r?.endedAt ?? 0, data.lastMessageAt.get(x) ?? 0];
	}));
	const parentId = row.parentId && belongsToParent(view, row) ? row.parentId : undefined;
	return {
		agent: 'hermes',
		id: row.id,
		cwd: cwdOf(view, row.id) ?? '',
		createdAt: row.startedAt,
		updatedAt,
		...(parentId ? {parentId} : {}),
		...(row.title ? {title: row.title} : {}),
		childCount: ownChildren(view, row.id).length,
		resumeState: resumeStateOf(view, row.id),
	};
}

/** Per-session files in a store: transcripts and gateway request dumps (hermes `_remove_session_files`). */
function sessionFiles(store: HermesStore, id: string, dumpNames: readonly string[] = requestDumps(store)): string[] {
	const dir = path.join(store.home, 'sessions');
	const named = [path.join(dir, `${id}.json`), path.join(dir, `${id}.jsonl`)];
	const dumps = dumpNames.filter(name => name.startsWith(`request_dump_${id}_`) && name.endsWith('.json')).map(name => path.join(dir, name));
	return [...named, ...dumps];
}

/** The request dump names in a store's sessions folder (thousands of transcripts beside them). */
function requestDumps(store: HermesStore, ctx: InRefresh = {}): string[] {
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

function storePlan(data: StoreData, id: string): {descendants: string[]; items: PlanItem[]} {
	const descendants = descendantsIn(viewOf(data), id);
	const ids = [id, ...descendants];
	const items = withReadOnlyDb(data.store.db, db => rowItems(data, db, ids));
	const unlinked = independentChildren(data, ids);
	if (unlinked.length > 0) {
		items.push({kind: 'rows', path: data.store.db, table: 'sessions', count: unlinked.length, bytes: 0, sessionId: id, description: `parent link of ${unlinked.length} branch/reset session(s) cleared; those sessions stay`});
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
	return {descendants, items};
}

/** Stores that hold `id` or rows of its vanished conversation (children pointing at it). */
function storesNaming(data: readonly StoreData[], id: string): StoreData[] {
	return data.filter(d => d.rows.has(id) || [...d.rows.values()].some(r => r.parentId === id));
}

/** The remaining rows of `ids` in one transaction (FORMATS 0.3); unlinks independent children. */
function deleteRows(data: StoreData, ids: readonly string[]): void {
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
async function agentDelete(ctx: AdapterContext, data: StoreData, ids: readonly string[], warnings: string[]): Promise<string | undefined> {
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

function isService(argv: readonly string[]): boolean {
	return runsProgram({name: '', argv}, PROGRAMS) && SERVICE_COMMANDS.has(subcommand(argv) ?? '');
}

interface LeaseRow {
	readonly holder: string;
	readonly expires: unknown;
	readonly id: string;
}

/** Turn leases and compression locks (holder `pid=<n>`) of `ids`. */
function leaseRows(db: ReadDb, columns: ReadonlyMap<string, ReadonlySet<string>>, ids: readonly string[]): LeaseRow[] {
	const out: LeaseRow[] = [];
	for (const [table, column] of [['session_turn_leases', 'conversation_id'], ['compression_locks', 'session_id']] as const) {
		const have = columns.get(table);
		if (!have?.has(column) || !have.has('holder') || !have.has('expires_at')) continue;
		for (const part of chunks(ids)) {
			const sql = `SELECT holder, expires_at AS expires, ${column} AS id FROM ${table} WHERE ${column} IN (${placeholders(part.length)})`;
			out.push(...db.prepare<string[], LeaseRow>(sql).all(...part));
		}
	}
	return out;
}

/** The leases whose pid still runs and has not expired. */
async function liveLeaseHolders(ctx: AdapterContext, leases: readonly LeaseRow[]): Promise<InUseHolder[]> {
	const found: InUseHolder[] = [];
	for (const lease of leases) {
		const pid = Number(/pid=(\d+)/.exec(String(lease.holder))?.[1]);
		const expires = toEpochMs(lease.expires) ?? 0;
		if (!Number.isInteger(pid) || pid <= 0 || expires < ctx.now()) continue;
		const proc = await ctx.processes.get(pid);
		if (proc) found.push({pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, reason: `holds the lease of ${lease.id}`});
	}
	return found;
}

/** What inUse needs from one store naming `id`: its sessions of the conversation, whether one is open, their leases. */
interface StoreUse {
	readonly store: HermesStore;
	readonly own: readonly string[];
	readonly open: boolean;
	readonly leases: readonly LeaseRow[];
}

function storeUse(view: StoreView, db: ReadDb, columns: ReadonlyMap<string, ReadonlySet<string>>, id: string): StoreUse | undefined {
	// Stores that hold `id` or rows of its vanished conversation (children pointing at it).
	if (!view.row(id) && view.children(id).length === 0) return undefined;
	const own = [id, ...descendantsIn(view, id)];
	const open = own.some(x => {
		const row = view.row(x);
		return row !== undefined && row.endedAt === undefined;
	});
	return {store: view.store, own, open, leases: leaseRows(db, columns, own)};
}

/** One verdict for `id` in the store holding its row (index and queries alike). */
function verdictIn(ctx: InRefresh, view: StoreView, id: string, cwd: string | undefined): ResumeState {
	const state = resumeStateOf(view, id);
	if (state.kind !== 'yes' || cwd === undefined) return state;
	const recorded = cwdOf(view, id);
	if (recorded === undefined) return {kind: 'unknown', reason: 'the session records no cwd'};
	return canonicalCwd(ctx, recorded) === canonicalCwd(ctx, cwd) ? state : {kind: 'no', reason: `belongs to ${recorded}`};
}

export const hermesAdapter: AgentAdapter = {
	id: 'hermes',
	label: 'Hermes Agent',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	exitInput: unverifiedExitInput('/quit'),

	spawn: () => ({argv: ['hermes']}),

	resume(_ctx, id) {
		assertValidId(hermesAdapter, id);
		return {argv: ['hermes', '--resume', id]};
	},

	matchesProcess: proc => runsProgram(proc, PROGRAMS) && !isService(proc.argv),

	async discover(ctx, query = {}) {
		const {data, problems} = readStores(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const conversations: Conversation[] = [];
		for (const store of data) {
			for (const row of store.rows.values()) {
				if (row.source === 'tool') continue;
				if (!query.includeChildren && belongsToParent(viewOf(store), row)) continue;
				if (query.since !== undefined && row.startedAt < query.since) continue;
				const cwd = cwdOf(viewOf(store), row.id);
				if (want !== undefined && (cwd === undefined || canonicalCwd(ctx, cwd) !== want)) continue;
				conversations.push(toConversation(store, row));
			}
		}
		return {conversations: conversations.sort((a, b) => b.createdAt - a.createdAt), problems: [...problems]};
	},

	watchPaths(ctx) {
		const root = hermesRoot(ctx);
		// Every session change lands in a store's state.db or, while hermes runs, in its WAL.
		return [root, path.join(root, 'profiles'), ...storesOf(ctx, root).flatMap(s => [s.db, `${s.db}-wal`])];
	},

	async verify(ctx, id, cwd) {
		assertValidId(hermesAdapter, id);
		const index = indexFor(ctx);
		if (!index) {
			// A few ids: the stores are asked for this id's rows only (see indexAfter).
			const {found, problems} = askStores(ctx, view => (view.row(id) ? verdictIn(ctx, view, id, cwd) : undefined));
			const first = found[0];
			if (first) return first;
			return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: `no hermes session ${id}`};
		}
		const {data, problems} = index;
		const store = data.find(d => d.rows.has(id));
		if (!store) return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: `no hermes session ${id}`};
		return verdictIn(ctx, viewOf(store), id, cwd);
	},

	async artifacts(ctx, id) {
		assertValidId(hermesAdapter, id);
		const {data, problems} = readStores(ctx);
		// An unreadable store may hold rows of this conversation: a partial plan would be a silent lie.
		if (problems.length > 0) throw new StoreReadError(`cannot build the purge plan: ${problems.join('; ')}`, hermesRoot(ctx));
		const descendants = new Set<string>();
		const items: PlanItem[] = [];
		for (const store of storesNaming(data, id)) {
			const plan = storePlan(store, id);
			for (const d of plan.descendants) descendants.add(d);
			items.push(...plan.items);
		}
		return makePlan('hermes', id, [...descendants], items);
	},

	async purge(ctx, id) {
		assertValidId(hermesAdapter, id);
		const plan = await hermesAdapter.artifacts(ctx, id);
		const {data} = readStores(ctx);
		const warnings: string[] = [];
		const removed: PlanItem[] = [];
		for (const store of storesNaming(data, id)) {
			const ids = [id, ...descendantsIn(viewOf(store), id)];
			const chain = continuationChain(viewOf(store), id).reverse();
			const refusal = await agentDelete(ctx, store, chain, warnings);
			if (refusal) {
				warnings.push(`${refusal}; nothing else was deleted in ${store.store.db}`);
				continue;
			}
			// Files first, rows last: the rows are how a rerun finds the files and the descendants,
			// so a purge killed half-way must not lose them before everything else is gone.
			const files = plan.items.filter(i => (i.kind === 'file' || i.kind === 'dir') && path.dirname(path.dirname(i.path)) === store.store.home);
			const outcome = removePaths(files, [store.store.home]);
			removed.push(...outcome.removed);
			warnings.push(...outcome.warnings);
			try {
				deleteRows(store, ids);
				removed.push(...plan.items.filter(i => i.kind === 'rows' && i.path === store.store.db));
			} catch (error) {
				warnings.push(messageOf(error));
			}
		}
		return {removed, warnings};
	},

	async residual(ctx, id) {
		assertValidId(hermesAdapter, id);
		const root = hermesRoot(ctx);
		const {data} = readStores(ctx);
		const descendants = new Set<string>();
		for (const store of data) for (const d of descendantsIn(viewOf(store), id)) descendants.add(d);
		const stores = storesOf(ctx, root);
		const crumbs = stores.flatMap(s => listDir(path.join(s.home, 'terminal-sessions')).filter(e => e.isFile()).map(e => path.join(s.home, 'terminal-sessions', e.name)));
		return scanResidual({
			id,
			descendants: [...descendants],
			roots: [root],
			indexFiles: crumbs,
			databases: stores.map(s => s.db),
			skip: abs => /state\.db-(wal|shm|journal)$/.test(abs),
		});
	},

	async inUse(ctx, id) {
		assertValidId(hermesAdapter, id);
		const index = indexFor(ctx);
		let uses: StoreUse[];
		if (index) {
			uses = [];
			for (const data of storesNaming(index.data, id)) {
				const use = withReadOnlyDb(data.store.db, db => storeUse(viewOf(data), db, data.columns, id));
				if (use) uses.push(use);
			}
		} else {
			// Unreadable stores are skipped, as the index skips them.
			uses = askStores(ctx, (view, db) => storeUse(view, db, view.columns, id)).found;
		}
		const ids = new Set([id]);
		const files: string[] = [];
		const leases: InUseHolder[] = [];
		for (const use of uses) {
			for (const x of use.own) ids.add(x);
			// One listing of the sessions folder per refresh, not one per id.
			const dumps = memo(ctx, `hermes:dumps:${use.store.home}`, () => requestDumps(use.store, ctx));
			files.push(...use.own.flatMap(x => sessionFiles(use.store, x, dumps)));
			// state.db is shared: holding it counts only while one of these sessions is still open.
			if (use.open) files.push(use.store.db, `${use.store.db}-wal`);
			leases.push(...(await liveLeaseHolders(ctx, use.leases)));
		}
		const real = files.map(realpathOrUndefined).filter((f): f is string => f !== undefined);
		return uniqueHolders([...(await argvUsers(ctx, [...ids])), ...(await fileUsers(ctx, real, h => isService(h.argv))), ...leases]);
	},
};

/** For tests: the store root this context resolves to. */
export function hermesRootFor(ctx: AdapterContext): string {
	return hermesRoot(ctx);
}
