// The grok CLI's sqlite sessions, the purge plans of both layouts, and who holds the database.

import type {Conversation, ResumeState} from '../../domain/types.js';
import {StoreReadError, tableColumns, withReadOnlyDb, type ReadDb, type ReadPool} from '../../system/sqliteRead.js';
import {fileUsers} from '../common/inUse.js';
import {toEpochMs} from '../common/jsonRecords.js';
import {oneLine} from '../common/jsonl.js';
import {runsProgram, subcommand} from '../common/programs.js';
import {canonicalCwd, lstatOrUndefined, realpathOrUndefined} from '../common/paths.js';
import {indexAfter, type InRefresh, memo, memoKind} from '../common/refresh.js';
import {withPurgeDb} from '../common/purgeDb.js';
import type {AdapterContext, InUseHolder, PlanItem} from '../types.js';
import {unlessUnreadable} from '../common/storeRead.js';
import {CLI_ID, cliDb, cliRoot, PROGRAMS} from './build.js';

const CLI_SESSIONS = memoKind<{sessions: CliSession[]; problem?: string}>('grok:cli');

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
	const rows =
		id === undefined ? db.prepare<[], Record<string, unknown>>(sql).all() : db.prepare<[string], Record<string, unknown>>(`${sql} WHERE s.id = ?`).all(id);
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
export function cliSessions(ctx: AdapterContext): {sessions: CliSession[]; problem?: string} {
	const file = cliDb(ctx);
	return memo(ctx, cliKey(file), () => readCliSessions(file, ctx.reads));
}

const cliKey = (file: string) => CLI_SESSIONS.of(file);

function readCliSessions(file: string, reads: ReadPool | undefined, id?: string): {sessions: CliSession[]; problem?: string} {
	if (!lstatOrUndefined(file)) return {sessions: []};
	return unlessUnreadable(
		() => {
			return {sessions: withReadOnlyDb(file, reads, db => readCliDb(file, db, id))};
		},
		problem => ({sessions: [], problem}),
	);
}

/**
 * One grok-cli session (and the problem, if grok.db cannot be read): from the refresh's whole
 * read when it made one, else by `WHERE id = ?` (a message count for one session, not a
 * correlated count for every session in grok.db).
 */
export function cliSessionOf(ctx: AdapterContext, id: string): {session: CliSession | undefined; problem?: string} {
	const file = cliDb(ctx);
	const {sessions, problem} = indexAfter(ctx, cliKey(file), () => readCliSessions(file, ctx.reads)) ?? readCliSessions(file, ctx.reads, id);
	return {session: sessions.find(s => s.id === id), ...(problem ? {problem} : {})};
}

export function cliConversation(session: CliSession): Conversation {
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

export function verifyAgainst(ctx: InRefresh, found: {cwd?: string; realMessages: number} | undefined, id: string, cwd: string | undefined): ResumeState {
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

export function cliPlan(ctx: AdapterContext, id: string): PlanItem[] {
	const file = cliDb(ctx);
	if (!lstatOrUndefined(file)) return [];
	return withReadOnlyDb(file, ctx.reads, db => {
		const columns = tableColumns(db);
		const count = (table: string, where: string) =>
			columns.has(table) ? (db.prepare<[string], {n: number}>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(id)?.n ?? 0) : 0;
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
export function cliDelete(ctx: AdapterContext, id: string): void {
	withPurgeDb(cliRoot(ctx), cliDb(ctx), db => {
		const columns = tableColumns(db);
		if (columns.has('tool_results') && columns.get('tool_calls')?.has('session_id')) db.prepare(`DELETE FROM tool_results WHERE ${TOOL_RESULTS_WHERE}`).run(id);
		for (const [table] of CLI_TABLES) {
			const column = table === 'sessions' ? 'id' : 'session_id';
			if (columns.get(table)?.has(column)) db.prepare(`DELETE FROM ${table} WHERE ${column} = ?`).run(id);
		}
	});
}

/** grok-cli's schedule daemon keeps grok.db open for everyone (`~/.grok/daemon.pid`). */
export function isService(argv: readonly string[]): boolean {
	return runsProgram({name: '', argv}, PROGRAMS) && ['daemon', 'schedule'].includes(subcommand(argv) ?? '');
}

/**
 * grok-cli keeps every session in one shared grok.db and records no per-session liveness: a grok
 * process holding it open counts as a user of a session of its own workspace (or of any, when its
 * cwd cannot be read). A grok process elsewhere is using some other workspace's session.
 */
export async function cliDbUsers(ctx: AdapterContext, session: CliSession | undefined): Promise<InUseHolder[]> {
	if (!session) return [];
	const db = realpathOrUndefined(cliDb(ctx));
	if (!db) return [];
	const want = new Set([canonicalCwd(ctx, session.cwd), canonicalCwd(ctx, session.cwdLast)]);
	const holders = await fileUsers(ctx, [db], h => isService(h.argv));
	const out: InUseHolder[] = [];
	for (const holder of holders) {
		const cwd = (await ctx.processes.get(holder.pid))?.cwd;
		if (cwd === undefined || want.has(canonicalCwd(ctx, cwd))) out.push(holder);
	}
	return out;
}
