import path from 'node:path';
import type {Conversation, ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {StoreReadError, tableColumns, withReadOnlyDb, type ReadDb} from '../system/sqliteRead.js';
import {unverifiedExitInput} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {parseJsonOrUndefined, readSmallText, toEpochMs} from './common/jsonRecords.js';
import {obj, oneLine, readJsonl, str} from './common/jsonl.js';
import {runsProgram, subcommand} from './common/programs.js';
import {canonicalCwd, listDir, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {indexAfter, memo, memoHas, parseCached, type InRefresh} from './common/refresh.js';
import {dirItem, makePlan, removePaths} from './common/plan.js';
import {withPurgeDb} from './common/purgeDb.js';
import {scanResidual} from './common/residual.js';

import {assertValidId, type AdapterContext, type AgentAdapter, type InUseHolder, type PlanItem} from './types.js';
import {sessionDescendants} from './common/groups.js';
import {unlessUnreadable} from './common/storeRead.js';

// Two unrelated products share ~/.grok (FORMATS 7): xAI's Grok Build keeps a folder per session
// (UUID ids, `grok --resume <id>`), the community grok-cli keeps grok.db (12-hex ids,
// `grok --session <id>`). Both can be installed; each id's shape says which one it belongs to.

const BUILD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CLI_ID = /^[0-9a-f]{12}$/;
const ID_PATTERN = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12})$/;
const PROGRAMS = ['grok'];
const SUBAGENT_KINDS = new Set(['subagent', 'subagent_fork']);

type Layout = 'build' | 'cli';

function layoutOf(id: string): Layout {
	return CLI_ID.test(id) ? 'cli' : 'build';
}

/** Grok Build: `GROK_HOME` (own home only), else `<home>/.grok`. */
function buildRoot(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['GROK_HOME'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.grok');
}

/** grok-cli hard-codes `homedir()/.grok` (no env override). */
function cliRoot(ctx: AdapterContext): string {
	return path.join(ctx.home, '.grok');
}

function cliDb(ctx: AdapterContext): string {
	return path.join(cliRoot(ctx), 'grok.db');
}

/** One Grok Build session folder and what its summary.json and updates.jsonl say. */
interface BuildSession {
	readonly id: string;
	readonly dir: string;
	readonly group: string;
	readonly cwd?: string;
	readonly parentId?: string;
	readonly isSubagent: boolean;
	readonly title?: string;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly realMessages: number;
}

/** The cwd a group folder stands for: its `.cwd` file, else the URL-decoded folder name. */
function groupCwd(group: string): string | undefined {
	const file = readSmallText(path.join(group, '.cwd'), 64 * 1024)?.trim();
	if (file) return file;
	try {
		const decoded = decodeURIComponent(path.basename(group));
		return path.isAbsolute(decoded) ? decoded : undefined;
	} catch {
		return undefined;
	}
}

function updateStats(file: string): {messages: number; first?: number; last?: number} {
	let records: Record<string, unknown>[];
	try {
		records = readJsonl(file);
	} catch {
		return {messages: 0};
	}
	let messages = 0;
	let first: number | undefined;
	let last: number | undefined;
	for (const record of records) {
		const at = toEpochMs(record['timestamp']);
		if (at !== undefined) {
			first = Math.min(first ?? at, at);
			last = Math.max(last ?? at, at);
		}
		const update = obj(obj(record, 'params'), 'update');
		const kind = str(update, 'sessionUpdate');
		if (kind === 'user_message_chunk' || kind === 'agent_message_chunk') messages++;
	}
	return {messages, ...(first !== undefined ? {first} : {}), ...(last !== undefined ? {last} : {})};
}

function readBuildSession(group: string, name: string): BuildSession | undefined {
	const dir = path.join(group, name);
	const summary = parseJsonOrUndefined(readSmallText(path.join(dir, 'summary.json'))) as Record<string, unknown> | undefined;
	const info = obj(summary, 'info');
	const id = str(info, 'id') ?? name;
	// The folder name is the id; a summary naming another id is not trusted with either.
	if (id !== name || !BUILD_ID.test(id)) return undefined;
	const stats = updateStats(path.join(dir, 'updates.jsonl'));
	const mtime = Math.round(lstatOrUndefined(dir)?.mtimeMs ?? 0);
	const createdAt = toEpochMs(summary?.['created_at']) ?? stats.first ?? mtime;
	const updatedAt = Math.max(createdAt, toEpochMs(summary?.['updated_at']) ?? 0, stats.last ?? 0);
	const parent = str(summary, 'parent_session_id');
	const kind = str(summary, 'session_kind') ?? '';
	const title = str(summary, 'generated_title') ?? str(summary, 'session_summary');
	const cwd = str(info, 'cwd') ?? groupCwd(group);
	return {
		id,
		dir,
		group,
		createdAt,
		updatedAt,
		realMessages: stats.messages,
		isSubagent: SUBAGENT_KINDS.has(kind) || (parent !== undefined && BUILD_ID.test(parent)),
		...(cwd ? {cwd} : {}),
		...(parent && BUILD_ID.test(parent) ? {parentId: parent} : {}),
		...(title ? {title: oneLine(title)} : {}),
	};
}

/** One session folder, parsed again only when its updates.jsonl or summary.json moved. */
function buildSessionAt(ctx: InRefresh, groupDir: string, name: string): BuildSession | undefined {
	const dir = path.join(groupDir, name);
	const summary = lstatOrUndefined(path.join(dir, 'summary.json'));
	// The parse depends on summary.json too: its stat joins updates.jsonl's in the key.
	return parseCached(ctx, 'grok-build', path.join(dir, 'updates.jsonl'), `${summary?.mtimeMs}:${summary?.size}`, () => readBuildSession(groupDir, name));
}

/** The cwd group folders, in listing order (listed once per refresh). */
function buildGroups(ctx: AdapterContext): string[] {
	const sessions = path.join(buildRoot(ctx), 'sessions');
	return memo(ctx, `grok:groups:${sessions}`, () => listDir(sessions, ctx).filter(e => e.isDirectory()).map(e => path.join(sessions, e.name)));
}

/** Every Grok Build session; read once per refresh (memo), each folder re-read only when its updates.jsonl or summary moved. */
function buildSessions(ctx: AdapterContext): BuildSession[] {
	return memo(ctx, buildKey(ctx), () => buildSessionsNow(ctx));
}

const buildKey = (ctx: AdapterContext): string => `grok:build:${path.join(buildRoot(ctx), 'sessions')}`;

function buildSessionsNow(ctx: AdapterContext): BuildSession[] {
	const out: BuildSession[] = [];
	for (const groupDir of buildGroups(ctx)) {
		for (const entry of listDir(groupDir, ctx).filter(e => e.isDirectory() && BUILD_ID.test(e.name))) {
			const session = buildSessionAt(ctx, groupDir, entry.name);
			if (session) out.push(session);
		}
	}
	return out;
}

/**
 * The whole index when this refresh has it or has asked too many ids directly; else undefined:
 * look in each group for the id's own folder (a stat per group, one summary.json and updates.jsonl).
 */
function indexFor(ctx: AdapterContext): BuildSession[] | undefined {
	return indexAfter(ctx, buildKey(ctx), () => buildSessionsNow(ctx));
}

/** The first group's session folder named `id` (the index's `find`), read alone. */
function buildSessionOf(ctx: AdapterContext, id: string): BuildSession | undefined {
	const index = indexFor(ctx);
	if (index) return index.find(s => s.id === id);
	for (const groupDir of buildGroups(ctx)) {
		// A folder, not a link to one (the listing's Dirent type is the entry's own).
		if (!lstatOrUndefined(path.join(groupDir, id))?.isDirectory()) continue;
		const session = buildSessionAt(ctx, groupDir, id);
		if (session) return session;
	}
	return undefined;
}

/** What inUse needs of a session: its folder and parent (summary.json only, never updates.jsonl). */
interface BuildLink {
	readonly id: string;
	readonly dir: string;
	readonly parentId?: string;
}

function readBuildLink(dir: string, name: string): BuildLink | undefined {
	const summary = parseJsonOrUndefined(readSmallText(path.join(dir, 'summary.json'))) as Record<string, unknown> | undefined;
	const id = str(obj(summary, 'info'), 'id') ?? name;
	// The same validity and parent rules as readBuildSession.
	if (id !== name || !BUILD_ID.test(id)) return undefined;
	const parent = str(summary, 'parent_session_id');
	return {id, dir, ...(parent && BUILD_ID.test(parent) ? {parentId: parent} : {})};
}

/**
 * Every session's folder and parent, for descendants (which no single folder names): the full
 * index when the refresh has it, else the summaries alone (one small file per folder, parsed
 * again only when it moved) instead of every updates.jsonl.
 */
function buildLinks(ctx: AdapterContext): readonly BuildLink[] {
	if (memoHas(ctx, buildKey(ctx))) return buildSessions(ctx);
	return memo(ctx, `grok:links:${buildRoot(ctx)}`, () => {
		const out: BuildLink[] = [];
		for (const groupDir of buildGroups(ctx)) {
			for (const entry of listDir(groupDir, ctx).filter(e => e.isDirectory() && BUILD_ID.test(e.name))) {
				const dir = path.join(groupDir, entry.name);
				const link = parseCached(ctx, 'grok-link', path.join(dir, 'summary.json'), '', () => readBuildLink(dir, entry.name));
				if (link) out.push(link);
			}
		}
		return out;
	});
}

/** Descendants through `parent_session_id` in every session's summary.json, at any depth. */
function buildDescendants<T extends BuildLink>(sessions: readonly T[], id: string): T[] {
	return sessionDescendants(sessions, id);
}

function buildConversation(session: BuildSession, children: ReadonlyMap<string, number>): Conversation {
	return {
		agent: 'grok',
		id: session.id,
		cwd: session.cwd ?? '',
		createdAt: session.createdAt,
		updatedAt: session.updatedAt,
		...(session.parentId ? {parentId: session.parentId} : {}),
		...(session.title ? {title: session.title} : {}),
		childCount: children.get(session.id) ?? 0,
		resumeState: session.realMessages > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'},
	};
}

/** One grok-cli session row with its workspace and real-message count. */
interface CliSession {
	readonly id: string;
	readonly cwd: string;
	readonly cwdLast: string;
	readonly title?: string;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly realMessages: number;
}

function readCliDb(file: string, db: ReadDb, id?: string): CliSession[] {
	const columns = tableColumns(db);
	const sessions = columns.get('sessions');
	if (!sessions || !['id', 'cwd_at_start', 'created_at'].every(c => sessions.has(c))) {
		throw new StoreReadError(`${file}: no sessions table with id, cwd_at_start, created_at (unexpected schema)`, file);
	}
	const pick = (c: string) => (sessions.has(c) ? c : `NULL AS ${c}`);
	const counted = columns.get('messages')?.has('session_id') && columns.get('messages')?.has('role');
	const messages = counted ? "(SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.role IN ('user', 'assistant'))" : '0';
	const sql = `SELECT id, cwd_at_start, ${pick('cwd_last')}, ${pick('title')}, created_at, ${pick('updated_at')}, ${messages} AS n FROM sessions s`;
	const out: CliSession[] = [];
	const rows = id === undefined ? db.prepare<[], Record<string, unknown>>(sql).all() : db.prepare<[string], Record<string, unknown>>(`${sql} WHERE s.id = ?`).all(id);
	for (const row of rows) {
		const id = row['id'];
		const cwd = row['cwd_at_start'];
		if (typeof id !== 'string' || !CLI_ID.test(id) || typeof cwd !== 'string') continue;
		const createdAt = toEpochMs(row['created_at']) ?? 0;
		const title = typeof row['title'] === 'string' && row['title'] !== '' ? oneLine(row['title']) : undefined;
		out.push({
			id,
			cwd,
			cwdLast: typeof row['cwd_last'] === 'string' ? row['cwd_last'] : cwd,
			createdAt,
			updatedAt: Math.max(createdAt, toEpochMs(row['updated_at']) ?? 0),
			realMessages: Number(row['n'] ?? 0),
			...(title ? {title} : {}),
		});
	}
	return out;
}

/** grok-cli's sessions, or a problem line when grok.db exists but cannot be read (read once per refresh). */
function cliSessions(ctx: AdapterContext): {sessions: CliSession[]; problem?: string} {
	const file = cliDb(ctx);
	return memo(ctx, cliKey(file), () => readCliSessions(file));
}

const cliKey = (file: string): string => `grok:cli:${file}`;

function readCliSessions(file: string, id?: string): {sessions: CliSession[]; problem?: string} {
	if (!lstatOrUndefined(file)) return {sessions: []};
	return unlessUnreadable(() => {
		return {sessions: withReadOnlyDb(file, db => readCliDb(file, db, id))};
	}, problem => ({sessions: [], problem}));
}

/**
 * One grok-cli session (and the problem, if grok.db cannot be read): from the refresh's whole
 * read when it made one, else by `WHERE id = ?` (a message count for one session, not a
 * correlated count for every session in grok.db).
 */
function cliSessionOf(ctx: AdapterContext, id: string): {session: CliSession | undefined; problem?: string} {
	const file = cliDb(ctx);
	const {sessions, problem} = indexAfter(ctx, cliKey(file), () => readCliSessions(file)) ?? readCliSessions(file, id);
	return {session: sessions.find(s => s.id === id), ...(problem ? {problem} : {})};
}

function cliConversation(session: CliSession): Conversation {
	return {
		agent: 'grok',
		id: session.id,
		cwd: session.cwd,
		createdAt: session.createdAt,
		updatedAt: session.updatedAt,
		...(session.title ? {title: session.title} : {}),
		childCount: 0,
		resumeState: session.realMessages > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'},
	};
}

function verifyAgainst(ctx: InRefresh, found: {cwd?: string; realMessages: number} | undefined, id: string, cwd: string | undefined): ResumeState {
	if (!found) return {kind: 'no', reason: `no grok session ${id}`};
	if (found.realMessages === 0) return {kind: 'no', reason: 'the session holds no messages'};
	if (cwd === undefined) return {kind: 'yes'};
	if (found.cwd === undefined) return {kind: 'unknown', reason: 'the session records no cwd'};
	return canonicalCwd(ctx, found.cwd) === canonicalCwd(ctx, cwd) ? {kind: 'yes'} : {kind: 'no', reason: `belongs to ${found.cwd}`};
}

/** grok-cli rows of a session: its children first (FORMATS 7b: the cascade, made explicit). */
const CLI_TABLES: readonly (readonly [string, string])[] = [
	['messages', 'messages'],
	['usage_events', 'usage events'],
	['compactions', 'compactions'],
	['tool_calls', 'tool calls'],
	['sessions', 'session row'],
];
const TOOL_RESULTS_WHERE = 'tool_call_row_id IN (SELECT id FROM tool_calls WHERE session_id = ?)';

function cliPlan(ctx: AdapterContext, id: string): PlanItem[] {
	const file = cliDb(ctx);
	if (!lstatOrUndefined(file)) return [];
	return withReadOnlyDb(file, db => {
		const columns = tableColumns(db);
		const count = (table: string, where: string) => (columns.has(table) ? (db.prepare<[string], {n: number}>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(id)?.n ?? 0) : 0);
		const items: PlanItem[] = [];
		const results = columns.get('tool_calls')?.has('session_id') ? count('tool_results', TOOL_RESULTS_WHERE) : 0;
		if (results > 0) items.push({kind: 'rows', path: file, table: 'tool_results', count: results, bytes: 0, sessionId: id, description: 'tool results'});
		for (const [table, description] of CLI_TABLES) {
			const column = table === 'sessions' ? 'id' : 'session_id';
			if (!columns.get(table)?.has(column)) continue;
			const n = count(table, `${column} = ?`);
			if (n > 0) items.push({kind: 'rows', path: file, table, count: n, bytes: 0, sessionId: id, description});
		}
		return items;
	});
}

/** Delete a grok-cli session's rows in one transaction (FORMATS 0.3), children explicitly. */
function cliDelete(ctx: AdapterContext, id: string): void {
	withPurgeDb(cliRoot(ctx), cliDb(ctx), db => {
		const columns = tableColumns(db);
		if (columns.has('tool_results') && columns.get('tool_calls')?.has('session_id')) db.prepare(`DELETE FROM tool_results WHERE ${TOOL_RESULTS_WHERE}`).run(id);
		for (const [table] of CLI_TABLES) {
			const column = table === 'sessions' ? 'id' : 'session_id';
			if (columns.get(table)?.has(column)) db.prepare(`DELETE FROM ${table} WHERE ${column} = ?`).run(id);
		}
	});
}

function buildPlan(ctx: AdapterContext, id: string): {descendants: string[]; items: PlanItem[]} {
	const sessions = buildSessions(ctx);
	const own = sessions.filter(s => s.id === id);
	const descendants = buildDescendants(sessions, id);
	const items: (PlanItem | undefined)[] = [];
	for (const session of [...own, ...descendants]) {
		items.push(dirItem(session.dir, session.id, session.id === id ? 'session folder' : 'sub-agent session folder'));
	}
	return {descendants: descendants.map(s => s.id), items: items.filter((i): i is PlanItem => i !== undefined)};
}

/** grok-cli's schedule daemon keeps grok.db open for everyone (`~/.grok/daemon.pid`). */
function isService(argv: readonly string[]): boolean {
	return runsProgram({name: '', argv}, PROGRAMS) && ['daemon', 'schedule'].includes(subcommand(argv) ?? '');
}

/**
 * grok-cli keeps every session in one shared grok.db and records no per-session liveness: a grok
 * process holding it open counts as a user of a session of its own workspace (or of any, when its
 * cwd cannot be read). A grok process elsewhere is using some other workspace's session.
 */
async function cliDbUsers(ctx: AdapterContext, session: CliSession | undefined): Promise<InUseHolder[]> {
	const db = realpathOrUndefined(cliDb(ctx));
	if (!session || !db) return [];
	const want = new Set([canonicalCwd(ctx, session.cwd), canonicalCwd(ctx, session.cwdLast)]);
	const holders = await fileUsers(ctx, [db], h => isService(h.argv));
	const out: InUseHolder[] = [];
	for (const holder of holders) {
		const cwd = (await ctx.processes.get(holder.pid))?.cwd;
		if (cwd === undefined || want.has(canonicalCwd(ctx, cwd))) out.push(holder);
	}
	return out;
}

export const grokAdapter: AgentAdapter = {
	id: 'grok',
	label: 'Grok',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	exitInput: unverifiedExitInput('/exit'),

	spawn: () => ({argv: ['grok']}),

	resume(_ctx, id) {
		assertValidId(grokAdapter, id);
		return {argv: layoutOf(id) === 'cli' ? ['grok', '--session', id] : ['grok', '--resume', id]};
	},

	matchesProcess: proc => runsProgram(proc, PROGRAMS) && !isService(proc.argv),

	async discover(ctx, query = {}) {
		const build = buildSessions(ctx);
		const cli = cliSessions(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		// Children counted in one pass: per session it would cost sessions² at a thousand sessions.
		const children = new Map<string, number>();
		for (const s of build) if (s.parentId) children.set(s.parentId, (children.get(s.parentId) ?? 0) + 1);
		const conversations = [
			...build.filter(s => query.includeChildren || !s.isSubagent).map(s => buildConversation(s, children)),
			...cli.sessions.map(cliConversation),
		]
			.filter(c => want === undefined || (c.cwd !== '' && canonicalCwd(ctx, c.cwd) === want))
			.filter(c => query.since === undefined || c.createdAt >= query.since)
			.sort((a, b) => b.createdAt - a.createdAt);
		return {conversations, problems: cli.problem ? [cli.problem] : []};
	},

	watchPaths(ctx) {
		const sessions = path.join(buildRoot(ctx), 'sessions');
		// The same for every cwd: listed once per refresh.
		return memo(ctx, `grok:watch:${sessions}`, () => {
			const groups = listDir(sessions, ctx).filter(e => e.isDirectory()).map(e => path.join(sessions, e.name));
			// A session folder added or removed moves its group; a new turn grows updates.jsonl.
			const updates = groups.flatMap(g => listDir(g, ctx).filter(e => e.isDirectory()).map(e => path.join(g, e.name, 'updates.jsonl')));
			return [sessions, ...groups, ...updates, cliDb(ctx), `${cliDb(ctx)}-wal`];
		});
	},

	async verify(ctx, id, cwd) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'build') return verifyAgainst(ctx, buildSessionOf(ctx, id), id, cwd);
		const cli = cliSessionOf(ctx, id);
		if (cli.problem) return {kind: 'unknown', reason: cli.problem};
		return verifyAgainst(ctx, cli.session, id, cwd);
	},

	async artifacts(ctx, id) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'cli') return makePlan('grok', id, [], cliPlan(ctx, id));
		const {descendants, items} = buildPlan(ctx, id);
		return makePlan('grok', id, descendants, items);
	},

	async purge(ctx, id) {
		assertValidId(grokAdapter, id);
		const plan = await grokAdapter.artifacts(ctx, id);
		// The cwd group folder stays even when it empties: it belongs to the cwd, and a grok starting
		// there may be creating its next session folder at this very moment.
		if (layoutOf(id) === 'build') return removePaths(plan.items, [buildRoot(ctx)]);
		if (plan.items.length === 0) return {removed: [], warnings: []};
		try {
			cliDelete(ctx, id);
			return {removed: [...plan.items], warnings: []};
		} catch (error) {
			return {removed: [], warnings: [messageOf(error)]};
		}
	},

	async residual(ctx, id) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'cli') {
			const db = cliDb(ctx);
			return scanResidual({id, descendants: [], roots: [], indexFiles: [], databases: lstatOrUndefined(db) ? [db] : []});
		}
		const root = buildRoot(ctx);
		const logs = path.join(root, 'logs');
		return scanResidual({
			id,
			descendants: buildDescendants(buildSessions(ctx), id).map(s => s.id),
			roots: [path.join(root, 'sessions'), logs],
			indexFiles: listDir(logs).filter(e => e.isFile()).map(e => path.join(logs, e.name)),
			databases: [],
		});
	},

	async inUse(ctx, id) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'cli') {
			const {session} = cliSessionOf(ctx, id);
			return uniqueHolders([...(await argvUsers(ctx, [id])), ...(await cliDbUsers(ctx, session))]);
		}
		const sessions = buildLinks(ctx);
		const family = [...sessions.filter(s => s.id === id), ...buildDescendants(sessions, id)];
		const files = family
			.flatMap(s => listDir(s.dir, ctx).filter(e => e.isFile()).map(e => realpathOrUndefined(path.join(s.dir, e.name))))
			.filter((f): f is string => f !== undefined);
		return uniqueHolders([...(await argvUsers(ctx, [id, ...family.map(s => s.id)])), ...(await fileUsers(ctx, files, h => isService(h.argv)))]);
	},
};
