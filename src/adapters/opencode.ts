import fs from 'node:fs';
import path from 'node:path';
import type {Conversation, ProcessRef, ResumeState} from '../domain/types.js';
import {StoreReadError, tableColumns, withReadOnlyDb, type ReadDb} from '../system/sqliteRead.js';
import {measuredExitInput, readOpencodeScreen} from './common/exitSequences.js';
import {argvUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, flagValue, idsUse, needsFolders, projectUse, sameResolvedTree, usersOf, type LiveUse} from './common/liveEvidence.js';
import {subcommand as subcommandOf} from './common/programs.js';
import {obj, str} from './common/jsonl.js';
import {countLines, parseJsonLine, removeLines, type LineMatch} from './common/lines.js';
import {canonicalCwd, isPlainName, joinNames, listDir, lstatOrUndefined} from './common/paths.js';
import {indexAfter, memo} from './common/memo.js';
import {dirItem, fileItem, makePlan, removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {deleteRows, eraseDatabases, type RowDelete} from './common/sqlitePurge.js';
import {argvNames} from './stub.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type KeptPlace, type PlanItem, type PurgePlan} from './types.js';

/** Session tables of both generations: 1.x `session`, 2.x `session_v2` (a migrated database has both). */
const SESSION_TABLES = ['session', 'session_v2'] as const;
/** Release channels use `opencode.db`; others `opencode-<channel>.db` (FORMATS 3). */
const DB_FILE = /^opencode(-[A-Za-z0-9._]+)?\.db$/;
const MESSAGE_ID = /^msg_[0-9A-Za-z]+$/;
const DELETE_TIMEOUT_MS = 30_000;

/** `$XDG_DATA_HOME/opencode` (only for the caller's own home), else `<home>/.local/share/opencode`. */
function dataDir(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const xdg = ctx.ownHome ? ctx.env['XDG_DATA_HOME'] : undefined;
	return xdg ? path.join(path.resolve(xdg), 'opencode') : path.join(ctx.home, '.local', 'share', 'opencode');
}

/** The databases to read: `$OPENCODE_DB` (own home only), else every `opencode*.db` in the data dir. */
function dbFiles(ctx: AdapterContext): string[] {
	const dir = dataDir(ctx);
	const override = ctx.ownHome ? ctx.env['OPENCODE_DB'] : undefined;
	if (override && override !== ':memory:') return [path.isAbsolute(override) ? override : path.join(dir, override)];
	return listDir(dir)
		.filter(e => e.isFile() && DB_FILE.test(e.name))
		.map(e => path.join(dir, e.name))
		.sort();
}

function roots(ctx: AdapterContext): string[] {
	const dbDirs = dbFiles(ctx).map(f => path.dirname(f));
	return [...new Set([dataDir(ctx), ...dbDirs, stateDir(ctx)])];
}

/** `$XDG_STATE_HOME/opencode` (own home only), else `<home>/.local/state/opencode`: the TUI's prompt history. */
function stateDir(ctx: AdapterContext): string {
	const xdg = ctx.ownHome ? ctx.env['XDG_STATE_HOME'] : undefined;
	return xdg ? path.join(path.resolve(xdg), 'opencode') : path.join(ctx.home, '.local', 'state', 'opencode');
}

function promptHistoryFile(ctx: AdapterContext): string {
	return path.join(stateDir(ctx), 'prompt-history.jsonl');
}

/** The log files of the data dir (`log/*.log`): opencode logs every session id it works on. */
function logFiles(ctx: AdapterContext): string[] {
	const dir = path.join(dataDir(ctx), 'log');
	return listDir(dir)
		.filter(e => e.isFile() && e.name.endsWith('.log'))
		.map(e => path.join(dir, e.name));
}

/** The text of every user prompt per session (parts of type text in user messages), for the prompt history. */
function userPrompts(db: string): Map<string, Set<string>> {
	const out = new Map<string, Set<string>>();
	try {
		withReadOnlyDb(db, handle => {
			const tables = tableColumns(handle);
			if (!tables.get('part')?.has('data') || !tables.get('message')?.has('data')) return;
			const rows = handle
				.prepare(
					`SELECT p.session_id AS owner, json_extract(p.data, '$.text') AS text FROM part p JOIN message m ON m.id = p.message_id
					 WHERE json_valid(p.data) AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'user' AND json_extract(p.data, '$.type') = 'text'`,
				)
				.all() as {owner: string; text: unknown}[];
			for (const row of rows) if (typeof row.text === 'string') pushToSet(out, row.owner, row.text);
		});
	} catch {
		// An unreadable store plans no history lines; the database itself is reported by the plan.
	}
	return out;
}

function pushToSet(map: Map<string, Set<string>>, key: string, value: string): void {
	const set = map.get(key) ?? new Set<string>();
	set.add(value);
	map.set(key, set);
}

/**
 * prompt-history.jsonl lines carry no session id, only the typed `input`. Decided (issue 18): a
 * line goes when its input is the text of a prompt of the purged conversation (or a child) and of
 * no other conversation in the store; a prompt that another conversation also has stays, and the
 * plan says so.
 */
function promptLineMatch(ctx: AdapterContext, ids: readonly string[]): {match: LineMatch; shared: number} {
	const mine = new Set<string>();
	const others = new Set<string>();
	const wanted = new Set(ids);
	for (const db of dbFiles(ctx)) {
		for (const [owner, texts] of userPrompts(db)) for (const t of texts) (wanted.has(owner) ? mine : others).add(t);
	}
	const removable = new Set([...mine].filter(t => !others.has(t)));
	const shared = [...mine].filter(t => others.has(t)).length;
	const match: LineMatch = line => {
		const input = parseJsonLine(line)?.['input'];
		return typeof input === 'string' && removable.has(input);
	};
	return {match, shared};
}

/** Log lines that name one of the ids (opencode writes `session.id=<id>`, `id=<id>` and more). */
function logLineMatch(ids: readonly string[]): LineMatch {
	return line => ids.some(id => line.includes(id));
}

/** The text-file lines of a purge: prompt history and logs. */
function textLineItems(ctx: AdapterContext, ids: readonly string[]): {items: PlanItem[]; kept: KeptPlace[]; prompts: LineMatch} {
	const items: PlanItem[] = [];
	const kept: KeptPlace[] = [];
	const history = promptHistoryFile(ctx);
	const prompts = promptLineMatch(ctx, ids);
	const n = countLines(history, prompts.match);
	if (n > 0) items.push({kind: 'lines', path: history, count: n, bytes: 0, sessionId: ids[0] ?? '', description: 'prompt-history.jsonl lines (no session id there: the lines whose text is a prompt of this conversation only)'});
	if (prompts.shared > 0) kept.push({path: history, reason: `${prompts.shared} prompt text(s) another conversation also has stay in the TUI's prompt history`});
	for (const file of logFiles(ctx)) {
		const count = countLines(file, logLineMatch(ids));
		if (count > 0) items.push({kind: 'lines', path: file, count, bytes: 0, sessionId: ids[0] ?? '', description: 'log lines naming the session'});
	}
	return {items, kept, prompts: prompts.match};
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

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Every session of the database, or (`only`) just that id's rows and messages (bound parameter). */
function readSessions(handle: ReadDb, db: string, tables: Map<string, Set<string>>, only?: string): Map<string, Session> {
	const args = only === undefined ? [] : [only];
	const sessions = new Map<string, Session>();
	for (const table of SESSION_TABLES) {
		const cols = tables.get(table);
		if (!cols?.has('id') || !cols.has('directory')) continue;
		const pick = (c: string) => (cols.has(c) ? q(c) : 'NULL');
		const rows = handle
			.prepare(`SELECT id, directory, ${pick('parent_id')} AS parent, ${pick('title')} AS title, ${pick('time_created')} AS created, ${pick('time_updated')} AS updated FROM ${q(table)}${only === undefined ? '' : ' WHERE id = ?'}`)
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
			sessions.set(row.id, {id: row.id, db, directory: row.directory, parentId: row.parent ?? undefined, title: row.title ?? undefined, createdAt: created, updatedAt: Math.max(updated, created), messages: 0});
		}
	}
	for (const table of ['message', 'session_message']) {
		if (!tables.get(table)?.has('session_id')) continue;
		const counts = handle.prepare(`SELECT session_id AS id, count(*) AS n FROM ${q(table)}${only === undefined ? '' : ' WHERE session_id = ?'} GROUP BY session_id`).all(...args) as {id: string; n: number}[];
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

function readStore(db: string): Store {
	return withReadOnlyDb(db, handle => {
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
function readStores(ctx: AdapterContext): {stores: Store[]; problems: string[]} {
	return memo(ctx, storesKey(ctx), () => readStoresNow(ctx));
}

const storesKey = (ctx: AdapterContext): string => `opencode:stores:${dataDir(ctx)}`;

/**
 * Answer by `WHERE id = ?` / `WHERE parent_id = ?` queries? Not when the refresh has the index
 * (every session, message count and task part of every database) or asked too many ids.
 */
function queryDirectly(ctx: AdapterContext): boolean {
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
function withEveryDb<T>(files: readonly string[], fn: (open: readonly OpenDb[]) => T, open: readonly OpenDb[] = []): {value: T} | undefined {
	const [first, ...rest] = files;
	if (first === undefined) return {value: fn(open)};
	try {
		return withReadOnlyDb(first, handle => withEveryDb(rest, fn, [...open, {db: first, handle, tables: tableColumns(handle)}]));
	} catch (error) {
		if (error instanceof StoreReadError) return undefined;
		throw error;
	}
}

/** The merged session `id` of the first database holding it (the index's `find`). */
function sessionByQuery(open: readonly OpenDb[], id: string): Session | undefined {
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
		const rows = o.handle.prepare(`SELECT session_id AS parent, data FROM part WHERE instr(data, '"tool":"task"') > 0 AND instr(data, ?) > 0`).all(child) as {parent: string; data: string}[];
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
function descendantsByQuery(open: readonly OpenDb[], id: string): string[] {
	const parentOf = (child: string) => open.map(o => parentIn(o, child)).findLast(p => p !== undefined);
	const out: string[] = [];
	const queue = [id];
	while (queue.length > 0) {
		const current = queue.shift();
		if (current === undefined) continue;
		const children = [...new Set(open.flatMap(o => childCandidates(o, current)))].filter(child => child !== id && !out.includes(child) && parentOf(child) === current);
		out.push(...children);
		queue.push(...children);
	}
	return out;
}

function readStoresNow(ctx: AdapterContext): {stores: Store[]; problems: string[]} {
	const stores: Store[] = [];
	const problems: string[] = [];
	for (const db of dbFiles(ctx)) {
		try {
			stores.push(readStore(db));
		} catch (error) {
			if (!(error instanceof StoreReadError)) throw error;
			problems.push(error.message);
		}
	}
	return {stores, problems};
}

function descendantsOf(id: string, parents: ReadonlyMap<string, string>): string[] {
	const out: string[] = [];
	const queue = [id];
	while (queue.length > 0) {
		const current = queue.shift();
		for (const [child, parent] of parents) {
			if (parent !== current || child === id || out.includes(child)) continue;
			out.push(child);
			queue.push(child);
		}
	}
	return out;
}

function resumeStateOf(s: Session): ResumeState {
	if (s.messages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!fs.existsSync(s.directory)) return {kind: 'no', reason: `cwd ${s.directory} no longer exists`};
	return {kind: 'yes'};
}

function sameDir(recorded: string, want: string): boolean {
	return recorded === want || canonicalCwd(recorded) === want;
}

/** How a table names a session: the owner column and an optional extra condition, in delete order. */
interface TableRule {
	readonly table: string;
	readonly column: string;
}

/**
 * Tables to purge, children first: parts, every other `session_id` table, events (by
 * `aggregate_id`), then the session rows of both generations.
 */
function purgeRules(tables: Map<string, Set<string>>): TableRule[] {
	const rules: TableRule[] = [];
	const has = (t: string, c: string) => tables.get(t)?.has(c) === true;
	if (has('part', 'session_id')) rules.push({table: 'part', column: 'session_id'});
	for (const [table, cols] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
		if (table !== 'part' && !SESSION_TABLES.includes(table as (typeof SESSION_TABLES)[number]) && cols.has('session_id')) rules.push({table, column: 'session_id'});
	}
	if (has('event', 'aggregate_id')) rules.push({table: 'event', column: 'aggregate_id'});
	if (has('event_sequence', 'aggregate_id')) rules.push({table: 'event_sequence', column: 'aggregate_id'});
	for (const table of SESSION_TABLES) if (has(table, 'id')) rules.push({table, column: 'id'});
	return rules;
}

function rowItems(db: string, ids: readonly string[]): PlanItem[] {
	const placeholders = ids.map(() => '?').join(', ');
	return withReadOnlyDb(db, handle => {
		const items: PlanItem[] = [];
		for (const rule of purgeRules(tableColumns(handle))) {
			const rows = handle.prepare(`SELECT ${q(rule.column)} AS owner, count(*) AS n FROM ${q(rule.table)} WHERE ${q(rule.column)} IN (${placeholders}) GROUP BY 1`).all(...ids) as {
				owner: string;
				n: number;
			}[];
			for (const row of rows) {
				items.push({kind: 'rows', path: db, table: rule.table, count: row.n, bytes: 0, sessionId: row.owner, description: `${rule.table} rows`});
			}
		}
		return items;
	});
}

/** Pre-SQLite JSON files (`storage/`) of the sessions, when still on disk. */
function legacyItems(ctx: AdapterContext, ids: readonly string[]): (PlanItem | undefined)[] {
	const storage = path.join(dataDir(ctx), 'storage');
	const items: (PlanItem | undefined)[] = [];
	for (const id of ids) {
		for (const project of listDir(path.join(storage, 'session')).filter(e => e.isDirectory() && isPlainName(e.name))) {
			items.push(fileItem(joinNames(storage, 'session', project.name, `${id}.json`), id, 'legacy session file'));
		}
		const messages = joinNames(storage, 'message', id);
		// A linked folder is only unlinked: never read message ids through it (they would name parts to delete).
		const realFolder = lstatOrUndefined(messages)?.isDirectory() === true;
		for (const entry of realFolder ? listDir(messages) : []) {
			const msg = entry.name.replace(/\.json$/, '');
			if (MESSAGE_ID.test(msg)) items.push(dirItem(joinNames(storage, 'part', msg), id, 'legacy message parts'));
		}
		items.push(dirItem(messages, id, 'legacy messages'));
		for (const folder of ['todo', 'session_diff', 'session_share']) items.push(fileItem(joinNames(storage, folder, `${id}.json`), id, `legacy ${folder.replace('_', ' ')}`));
	}
	return items;
}

/** Parent links of legacy JSON sessions (`parentID`), for descendants that only exist as files. */
function legacyParents(ctx: AdapterContext): Map<string, string> {
	const out = new Map<string, string>();
	const sessionDir = path.join(dataDir(ctx), 'storage', 'session');
	for (const project of listDir(sessionDir).filter(e => e.isDirectory())) {
		for (const entry of listDir(path.join(sessionDir, project.name))) {
			if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
			try {
				const record = parseJsonLine(fs.readFileSync(path.join(sessionDir, project.name, entry.name), 'utf8').replace(/\n/g, ' '));
				const id = str(record, 'id');
				const parent = str(record, 'parentID');
				if (id && parent) out.set(id, parent);
			} catch {
				// an unreadable legacy file is left to the residual scan
			}
		}
	}
	return out;
}

interface Planned {
	readonly plan: PurgePlan;
	/** The session's recorded directory, where `opencode session delete` must run. */
	readonly directory: string | undefined;
	readonly dbs: readonly string[];
	/** Which prompt-history lines are this conversation's (read from its rows, so before they go). */
	readonly prompts: LineMatch;
}

/** The plan; throws StoreReadError when a database that may hold the session cannot be read. */
function planFor(ctx: AdapterContext, id: string): Planned {
	const parents = legacyParents(ctx);
	const stores = dbFiles(ctx).map(readStore);
	for (const store of stores) for (const [child, parent] of store.parents) parents.set(child, parent);
	const descendants = descendantsOf(id, parents);
	const ids = [id, ...descendants];
	const items: (PlanItem | undefined)[] = [];
	const dbs: string[] = [];
	let directory: string | undefined;
	for (const store of stores) {
		const rows = rowItems(store.db, ids);
		if (rows.length > 0) dbs.push(store.db);
		items.push(...rows);
		directory ??= store.sessions.get(id)?.directory;
	}
	items.push(...legacyItems(ctx, ids));
	const text = textLineItems(ctx, ids);
	items.push(...text.items);
	const plan = makePlan('opencode', id, descendants, items, roots(ctx));
	return {plan: text.kept.length > 0 ? {...plan, kept: text.kept} : plan, directory, dbs, prompts: text.prompts};
}

/** Ask opencode itself first (it unshares and recurses); returns a warning when it did not work. */
async function agentDelete(ctx: AdapterContext, id: string, db: string, directory: string | undefined): Promise<string | undefined> {
	if (!directory || !fs.existsSync(directory)) return `opencode session delete skipped: the session's directory ${directory ?? '(unknown)'} is gone; deleted the rows directly`;
	const result = await ctx.exec('opencode', ['session', 'delete', id], {
		cwd: directory,
		// Point opencode at exactly this data: never the caller's own store when reading another home.
		env: {HOME: ctx.home, XDG_DATA_HOME: path.dirname(dataDir(ctx)), XDG_STATE_HOME: path.dirname(stateDir(ctx)), OPENCODE_DB: db},
		timeoutMs: DELETE_TIMEOUT_MS,
	});
	if (result.failure) return `opencode session delete could not run (${result.failure}); deleted the rows directly`;
	if (result.exitCode !== 0) {
		const detail = result.stderr.trim().split('\n').at(-1) ?? '';
		return `opencode session delete ${id} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}; deleted the rows directly`;
	}
	return undefined;
}

/**
 * Remove the planned prompt-history lines and every log line naming the ids; the logs are listed
 * again here because `opencode session delete` has just logged the id, maybe in a new file.
 */
function removeTextLines(ctx: AdapterContext, plan: PurgePlan, prompts: LineMatch, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const history = plan.items.filter(i => i.kind === 'lines' && i.path === promptHistoryFile(ctx));
	const targets: [string, LineMatch, PlanItem | undefined][] = [
		...history.map((item): [string, LineMatch, PlanItem] => [item.path, prompts, item]),
		...logFiles(ctx).map((file): [string, LineMatch, PlanItem | undefined] => [file, logLineMatch(ids), plan.items.find(i => i.kind === 'lines' && i.path === file)]),
	];
	for (const [file, match, item] of targets) {
		try {
			removeLines(file, match, roots(ctx));
			if (item) removed.push(item);
		} catch (error) {
			warnings.push(error instanceof Error ? error.message : String(error));
		}
	}
	return {removed, warnings};
}

/** Delete what is left of the planned rows, one transaction per database. */
function deletePlannedRows(plan: PurgePlan, ids: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const dbs = [...new Set(plan.items.filter(i => i.kind === 'rows').map(i => i.path))];
	for (const db of dbs) {
		try {
			const steps: RowDelete[] = withReadOnlyDb(db, handle => purgeRules(tableColumns(handle))).map(rule => ({...rule, ids}));
			deleteRows(db, steps);
			removed.push(...plan.items.filter(i => i.kind === 'rows' && i.path === db));
		} catch (error) {
			warnings.push(error instanceof Error ? error.message : String(error));
		}
	}
	return {removed, warnings};
}

/** The background service that holds the shared database for every session (`serve --service`). */
export function isBackgroundService(argv: readonly string[]): boolean {
	const proc: ProcessRef = {pid: 0, ppid: 0, startTime: 0, name: path.basename(argv[0] ?? ''), argv};
	return argvNames(proc, opencodeAdapter.processNames) && argv.includes('serve') && argv.includes('--service');
}

const SESSION_ARG = /^ses_[0-9A-Za-z]+$/;

/**
 * Which session each live opencode process is on: argv (`--session ID`, `-s ID`), else its
 * project (the TUI keeps no per-session evidence, and the one database every process holds open
 * says nothing about which session). A server the user started (`serve`, `web`) may act on any
 * session; the background service (`serve --service`) gets no entry.
 */
async function opencodeLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const mine = (await agentProcessesOf(ctx, opencodeAdapter.matchesProcess, procs, {root: dataDir(ctx), rootOf: dataDir})).filter(p => !isBackgroundService(p.argv));
	return mine.map(proc => {
		const named = flagValue(proc.argv, ['--session', '-s'], SESSION_ARG);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const sub = subcommandOf(proc.argv);
		if (sub === 'serve' || sub === 'web') {
			return {pid: proc.pid, startTime: proc.startTime, command: proc.argv.join(' '), claim: {kind: 'any'}, reason: `an opencode ${sub} may act on any session`};
		}
		return projectUse(proc, 'opencode');
	});
}

/** The folder a session records, or '/' (every project) when the store cannot say: fail safe. */
function sessionFolder(ctx: AdapterContext, id: string): string {
	const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => sessionByQuery(open, id)) : undefined;
	const session = direct ? direct.value : readStores(ctx).stores.map(s => s.sessions.get(id)).find(s => s !== undefined);
	return session?.directory || '/';
}

export const opencodeAdapter: AgentAdapter = {
	id: 'opencode',
	label: 'opencode',
	capabilities: {resume: true, purge: true},
	idPattern: /^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$/,
	processNames: ['opencode', 'opencode2'],
	residentChildren: ['serve'],
	exitInput: measuredExitInput('/exit', readOpencodeScreen),

	spawn: () => ({argv: ['opencode']}),
	resume(_ctx, id) {
		assertValidId(opencodeAdapter, id);
		return {argv: ['opencode', '--session', id]};
	},
	matchesProcess: proc => argvNames(proc, opencodeAdapter.processNames),

	async discover(ctx, query = {}) {
		const {stores, problems} = readStores(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(query.cwd);
		const seen = new Set<string>();
		const conversations: Conversation[] = [];
		for (const store of stores) {
			// Children counted in one pass per store (per session it would cost sessions²).
			const children = memo(ctx, `opencode:children:${store.db}`, () => {
				const counts = new Map<string, number>();
				for (const parent of store.parents.values()) counts.set(parent, (counts.get(parent) ?? 0) + 1);
				return counts;
			});
			for (const s of store.sessions.values()) {
				if (seen.has(s.id)) continue;
				seen.add(s.id);
				const parentId = store.parents.get(s.id);
				if (parentId !== undefined && !query.includeChildren) continue;
				if (want !== undefined && !sameDir(s.directory, want)) continue;
				if (query.since !== undefined && s.createdAt < query.since) continue;
				const childCount = children.get(s.id) ?? 0;
				conversations.push({
					agent: 'opencode',
					id: s.id,
					cwd: s.directory,
					createdAt: s.createdAt,
					updatedAt: s.updatedAt,
					...(parentId ? {parentId} : {}),
					...(s.title ? {title: s.title} : {}),
					childCount,
					resumeState: resumeStateOf(s),
				});
			}
		}
		conversations.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
		return {conversations, problems: [...problems]};
	},

	watchPaths(ctx) {
		// One shared database: every change lands in it or (while opencode runs) in its WAL.
		return [dataDir(ctx), ...dbFiles(ctx).flatMap(db => [db, `${db}-wal`])];
	},

	async verify(ctx, id, cwd) {
		assertValidId(opencodeAdapter, id);
		const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => sessionByQuery(open, id)) : undefined;
		const {stores, problems} = direct ? {stores: [], problems: []} : readStores(ctx);
		const session = direct ? direct.value : stores.map(s => s.sessions.get(id)).find(s => s !== undefined);
		if (!session) return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: 'no session with this id'};
		if (cwd !== undefined && !sameDir(session.directory, canonicalCwd(cwd))) {
			return {kind: 'no', reason: `belongs to ${session.directory}, not ${canonicalCwd(cwd)}`};
		}
		return resumeStateOf(session);
	},

	async artifacts(ctx, id) {
		assertValidId(opencodeAdapter, id);
		return planFor(ctx, id).plan;
	},

	async purge(ctx, id) {
		assertValidId(opencodeAdapter, id);
		// The prompt texts are read before the rows go: afterwards nothing says which lines were this conversation's.
		const {plan, directory, dbs, prompts} = planFor(ctx, id);
		const warnings: string[] = [];
		for (const db of dbs) {
			const warning = await agentDelete(ctx, id, db, directory);
			if (warning) warnings.push(warning);
		}
		const ids = [id, ...plan.descendants];
		const rows = deletePlannedRows(plan, ids);
		const files = removePaths(plan.items, roots(ctx));
		const lines = removeTextLines(ctx, plan, prompts, ids);
		const erased = eraseDatabases(dbFiles(ctx), new Set(dbs), 'opencode');
		return {
			removed: [...rows.removed, ...files.removed, ...lines.removed],
			warnings: [...warnings, ...rows.warnings, ...files.warnings, ...lines.warnings, ...erased.warnings],
			held: erased.held,
		};
	},

	async residual(ctx, id) {
		assertValidId(opencodeAdapter, id);
		const parents = legacyParents(ctx);
		for (const store of readStores(ctx).stores) for (const [child, parent] of store.parents) parents.set(child, parent);
		const dbs = dbFiles(ctx);
		return scanResidual({
			id,
			descendants: descendantsOf(id, parents),
			roots: [dataDir(ctx)],
			indexFiles: logFiles(ctx),
			databases: dbs,
		});
	},

	async inUse(ctx, id) {
		assertValidId(opencodeAdapter, id);
		const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => descendantsByQuery(open, id)) : undefined;
		let descendants = direct?.value;
		if (!descendants) {
			const parents = new Map<string, string>();
			for (const store of readStores(ctx).stores) for (const [child, parent] of store.parents) parents.set(child, parent);
			descendants = descendantsOf(id, parents);
		}
		const ids = [id, ...descendants];
		const uses = await memo(ctx, `opencode:uses:${dataDir(ctx)}`, () => opencodeLiveUses(ctx));
		const cwds = needsFolders(uses) ? [sessionFolder(ctx, id)] : [];
		return uniqueHolders([...usersOf(uses, {ids, cwds}, sameResolvedTree), ...(await argvUsers(ctx, ids))]);
	},

	liveUses: (ctx, procs) => opencodeLiveUses(ctx, procs),
};
