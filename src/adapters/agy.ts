import path from 'node:path';
import {fileURLToPath} from 'node:url';
import type {Conversation, ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {StoreReadError, tableColumns, withReadOnlyDb} from '../system/sqliteRead.js';
import {unverifiedExitInput} from './common/exitSequences.js';
import {pushTo} from './common/groups.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {isRecord, parseJsonOrUndefined, readSmallText, rewriteJsonFile, toEpochMs} from './common/jsonRecords.js';
import {oneLine, readFirstJsonLine} from './common/jsonl.js';
import {canonicalCwd, listDir, lstatOrUndefined, realpathOrUndefined, rootContaining} from './common/paths.js';
import {memo, parseCached, type InRefresh} from './common/refresh.js';
import {dirItem, fileItem, makePlan, removePaths} from './common/plan.js';
import {runsProgram, subcommand} from './common/programs.js';
import {scanResidual} from './common/residual.js';
import {deleteRows} from './common/sqlitePurge.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type DiscoverQuery, type InUseHolder, type PlanItem} from './types.js';
import {childrenFrom, descendants} from '../system/descendants.js';
import {unlessUnreadable} from './common/storeRead.js';

// Antigravity CLI (FORMATS 5): one sqlite database per conversation, a shared summaries
// database, brain/<id>/ artifacts and a workspace → newest-conversation cache.

const ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SUMMARY_TABLE = 'conversation_summaries';

interface AgyPaths {
	readonly root: string;
	readonly conversations: string;
	readonly summariesDb: string;
	readonly brain: string;
	readonly lastConversations: string;
}

/** No `*_HOME` override is known for agy (FORMATS 5): the layout is always under the home. */
function agyPaths(ctx: AdapterContext): AgyPaths {
	const root = path.join(ctx.home, '.gemini', 'antigravity-cli');
	return {
		root,
		conversations: path.join(root, 'conversations'),
		summariesDb: path.join(root, 'conversation_summaries.db'),
		brain: path.join(root, 'brain'),
		lastConversations: path.join(root, 'cache', 'last_conversations.json'),
	};
}

function conversationDb(paths: AgyPaths, id: string): string {
	return path.join(paths.conversations, `${id}.db`);
}

/** One `conversation_summaries` row, reduced to what mam-tui uses. */
interface AgySummary {
	readonly id: string;
	readonly title?: string;
	readonly updatedAt?: number;
	readonly workspaces: readonly string[];
	readonly parentId?: string;
	readonly busy: boolean;
}

/** What the shared files say about every conversation: summaries and workspace claims. */
interface AgyIndex {
	readonly summaries: ReadonlyMap<string, AgySummary>;
	/** conversation id → the workspaces whose newest conversation it is (last_conversations.json). */
	readonly claims: ReadonlyMap<string, readonly string[]>;
	readonly problems: readonly string[];
}

function workspacePath(uri: unknown): string | undefined {
	if (typeof uri !== 'string' || uri === '') return undefined;
	if (uri.startsWith('file://')) {
		try {
			return fileURLToPath(uri);
		} catch {
			return undefined;
		}
	}
	return path.isAbsolute(uri) ? uri : undefined;
}

function parseWorkspaces(value: unknown): string[] {
	const parsed = typeof value === 'string' ? parseJsonOrUndefined(value) : value;
	if (!Array.isArray(parsed)) return [];
	return parsed.map(workspacePath).filter((w): w is string => w !== undefined);
}

function readSummaries(paths: AgyPaths): {summaries: Map<string, AgySummary>; problem?: string} {
	const summaries = new Map<string, AgySummary>();
	if (!lstatOrUndefined(paths.summariesDb)) return {summaries};
	return unlessUnreadable(() => {
		withReadOnlyDb(paths.summariesDb, db => {
			const columns = tableColumns(db).get(SUMMARY_TABLE);
			if (!columns?.has('conversation_id')) return;
			const pick = (name: string) => (columns.has(name) ? name : `NULL AS ${name}`);
			const sql = `SELECT conversation_id, ${['title', 'preview', 'last_modified_time', 'workspace_uris', 'parent_conversation_id', 'not_fully_idle', 'killed'].map(pick).join(', ')} FROM ${SUMMARY_TABLE}`;
			for (const row of db.prepare<[], Record<string, unknown>>(sql).all()) {
				const id = row['conversation_id'];
				if (typeof id !== 'string' || !ID_PATTERN.test(id)) continue;
				const parent = row['parent_conversation_id'];
				const text = String(row['title'] ?? '') || String(row['preview'] ?? '');
				const title = text.trim() ? oneLine(text) : undefined;
				const updatedAt = toEpochMs(row['last_modified_time']);
				summaries.set(id, {
					id,
					...(title ? {title} : {}),
					...(updatedAt ? {updatedAt} : {}),
					workspaces: parseWorkspaces(row['workspace_uris']),
					...(typeof parent === 'string' && ID_PATTERN.test(parent) ? {parentId: parent} : {}),
					busy: Number(row['not_fully_idle'] ?? 0) === 1 && Number(row['killed'] ?? 0) === 0,
				});
			}
		});
		return {summaries};
	}, problem => ({summaries, problem}));
}

/** last_conversations.json: `{"<workspace>": "<conversation id>"}`, inverted. */
function readClaims(paths: AgyPaths): Map<string, string[]> {
	const claims = new Map<string, string[]>();
	const parsed = parseJsonOrUndefined(readSmallText(paths.lastConversations));
	if (!isRecord(parsed)) return claims;
	for (const [workspace, id] of Object.entries(parsed)) {
		if (typeof id !== 'string' || workspace === '') continue;
		pushTo(claims, id, workspace);
	}
	return claims;
}

function readIndex(paths: AgyPaths): AgyIndex {
	const {summaries, problem} = readSummaries(paths);
	return {summaries, claims: readClaims(paths), problems: problem ? [problem] : []};
}

/**
 * The conversation's workspace: the one last_conversations.json names for it, else the last of
 * its workspace URIs (the active project's resource folders are listed ahead of the cwd).
 */
function recordedCwd(index: AgyIndex, id: string): string | undefined {
	return index.claims.get(id)?.[0] ?? index.summaries.get(id)?.workspaces.at(-1);
}

type Belonging = {readonly kind: 'yes'} | {readonly kind: 'no'; readonly reason: string} | {readonly kind: 'unknown'};

/**
 * Does conversation `id` belong to `cwd`? A conversation that last_conversations.json gives to
 * another workspace does not, even when `cwd` appears among its workspace URIs.
 */
function belongsTo(ctx: InRefresh, index: AgyIndex, id: string, cwd: string): Belonging {
	const want = canonicalCwd(ctx, cwd);
	const claimed = index.claims.get(id);
	if (claimed) {
		if (claimed.some(w => canonicalCwd(ctx, w) === want)) return {kind: 'yes'};
		return {kind: 'no', reason: `belongs to workspace ${claimed[0] ?? ''}`};
	}
	const workspaces = index.summaries.get(id)?.workspaces ?? [];
	if (workspaces.length === 0) return {kind: 'unknown'};
	if (workspaces.some(w => canonicalCwd(ctx, w) === want)) return {kind: 'yes'};
	return {kind: 'no', reason: `belongs to workspace ${workspaces.at(-1) ?? ''}`};
}

/** Steps in the conversation's own database, asked again only when the database or its WAL changed. */
function stepsState(ctx: InRefresh, paths: AgyPaths, id: string): ResumeState {
	const file = conversationDb(paths, id);
	const wal = lstatOrUndefined(`${file}-wal`);
	return parseCached(ctx, 'agy-steps', file, `${wal?.mtimeMs}:${wal?.size}`, () => stepsStateNow(paths, id), state => state.kind !== 'unknown');
}

/** Steps in the conversation's own database: resume is safe only when it exists and has some. */
function stepsStateNow(paths: AgyPaths, id: string): ResumeState {
	const file = conversationDb(paths, id);
	if (!lstatOrUndefined(file)) return {kind: 'no', reason: 'no conversation database (agy would silently start a new conversation)'};
	return unlessUnreadable(() => {
		return withReadOnlyDb(file, db => {
			if (!tableColumns(db).has('steps')) return {kind: 'unknown', reason: `${file}: no steps table (unexpected schema)`};
			const row = db.prepare<[], {n: number}>('SELECT count(*) AS n FROM steps').get();
			return (row?.n ?? 0) > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'conversation has no steps yet'};
		});
	}, (reason): ResumeState => ({kind: 'unknown', reason}));
}

/** Ids with a conversation database on disk. */
function conversationIds(ctx: InRefresh, paths: AgyPaths): string[] {
	return listDir(paths.conversations, ctx)
		.filter(entry => entry.isFile() && entry.name.endsWith('.db'))
		.map(entry => entry.name.slice(0, -'.db'.length))
		.filter(id => ID_PATTERN.test(id));
}

function transcriptFile(paths: AgyPaths, id: string): string {
	return path.join(paths.brain, id, '.system_generated', 'logs', 'transcript.jsonl');
}

/**
 * When the conversation started: the first transcript record's `created_at`, else the earliest
 * time its database file shows (birth or modification, whichever is older).
 */
function conversationTimes(paths: AgyPaths, id: string): {createdAt: number; updatedAt: number} {
	const db = conversationDb(paths, id);
	const main = lstatOrUndefined(db);
	const wal = lstatOrUndefined(`${db}-wal`);
	const fileTimes = [main?.birthtimeMs, main?.mtimeMs].filter((t): t is number => t !== undefined && t > 0);
	const recorded = toEpochMs(readFirstJsonLine(transcriptFile(paths, id))?.['created_at']);
	const createdAt = recorded ?? Math.round(Math.min(...fileTimes, Number.MAX_SAFE_INTEGER));
	return {createdAt, updatedAt: Math.round(Math.max(createdAt, main?.mtimeMs ?? 0, wal?.mtimeMs ?? 0))};
}

/** Every descendant of `id` (sub-agent conversations at any depth), via parent_conversation_id. */
function descendantsOf(index: AgyIndex, id: string): string[] {
	const links = [...index.summaries.values()].flatMap(s => (s.parentId ? [[s.id, s.parentId] as const] : []));
	return descendants(id, childrenFrom(links));
}

/** The index and the ids on disk, read once per refresh (memo) for the refresh's many calls. */
function indexIn(ctx: AdapterContext, paths: AgyPaths): AgyIndex {
	return memo(ctx, `agy:index:${paths.summariesDb}`, () => readIndex(paths));
}

function idsIn(ctx: AdapterContext, paths: AgyPaths): string[] {
	return memo(ctx, `agy:ids:${paths.conversations}`, () => conversationIds(ctx, paths));
}

/** Children per parent, counted in one pass (per conversation it would cost conversations²). */
function childCounts(index: AgyIndex): Map<string, number> {
	const counts = new Map<string, number>();
	for (const s of index.summaries.values()) if (s.parentId) counts.set(s.parentId, (counts.get(s.parentId) ?? 0) + 1);
	return counts;
}

function toConversation(ctx: InRefresh, paths: AgyPaths, index: AgyIndex, id: string, children: ReadonlyMap<string, number>): Conversation {
	const summary = index.summaries.get(id);
	const times = conversationTimes(paths, id);
	const childCount = children.get(id) ?? 0;
	return {
		agent: 'agy',
		id,
		cwd: recordedCwd(index, id) ?? '',
		createdAt: times.createdAt,
		updatedAt: Math.max(times.updatedAt, summary?.updatedAt ?? 0),
		...(summary?.parentId ? {parentId: summary.parentId} : {}),
		...(summary?.title ? {title: summary.title} : {}),
		childCount,
		resumeState: stepsState(ctx, paths, id),
	};
}

function isCandidate(ctx: InRefresh, paths: AgyPaths, index: AgyIndex, id: string, query: DiscoverQuery): boolean {
	if (!query.includeChildren && index.summaries.get(id)?.parentId) return false;
	if (query.since !== undefined && conversationTimes(paths, id).createdAt < query.since) return false;
	return query.cwd === undefined || belongsTo(ctx, index, id, query.cwd).kind === 'yes';
}

function planFor(paths: AgyPaths, index: AgyIndex, id: string, descendants: readonly string[]): PlanItem[] {
	const ids = [...descendants.slice().reverse(), id];
	const items: (PlanItem | undefined)[] = [];
	for (const x of ids) {
		const db = conversationDb(paths, x);
		const label = x === id ? 'conversation' : 'sub-agent conversation';
		// Per-conversation databases are not shared (FORMATS 5): their sidecars go with them.
		items.push(
			fileItem(db, x, `${label} database`),
			fileItem(`${db}-wal`, x, `${label} database WAL`),
			fileItem(`${db}-shm`, x, `${label} database shared memory`),
			fileItem(`${db}-journal`, x, `${label} database journal`),
			dirItem(path.join(paths.brain, x), x, `${label} brain folder (artifacts, transcript)`),
		);
	}
	for (const x of ids.filter(c => index.claims.has(c))) {
		const count = index.claims.get(x)?.length ?? 0;
		items.push({kind: 'lines', path: paths.lastConversations, count, bytes: 0, sessionId: x, description: 'last_conversations.json entries'});
	}
	items.push(...summaryRowItems(paths, ids));
	return items.filter((i): i is PlanItem => i !== undefined);
}

function summaryRowItems(paths: AgyPaths, ids: readonly string[]): PlanItem[] {
	if (!lstatOrUndefined(paths.summariesDb)) return [];
	return withReadOnlyDb(paths.summariesDb, db => {
		if (!tableColumns(db).get(SUMMARY_TABLE)?.has('conversation_id')) return [];
		const count = db.prepare<[string], {n: number}>(`SELECT count(*) AS n FROM ${SUMMARY_TABLE} WHERE conversation_id = ?`);
		return ids
			.map(x => ({x, n: count.get(x)?.n ?? 0}))
			.filter(({n}) => n > 0)
			.map(({x, n}): PlanItem => ({kind: 'rows', path: paths.summariesDb, table: SUMMARY_TABLE, count: n, bytes: 0, sessionId: x, description: 'conversation summary row'}));
	});
}

/** Rewrite last_conversations.json without the entries that point at `ids`. */
function dropClaims(paths: AgyPaths, ids: readonly string[]): number {
	const text = readSmallText(paths.lastConversations);
	const parsed = parseJsonOrUndefined(text);
	if (!isRecord(parsed)) return 0;
	const kept = Object.entries(parsed).filter(([, value]) => !(typeof value === 'string' && ids.includes(value)));
	const dropped = Object.keys(parsed).length - kept.length;
	if (dropped > 0) rewriteJsonFile(paths.lastConversations, [paths.root], text, Object.fromEntries(kept));
	return dropped;
}

const PROGRAMS = ['agy', 'antigravity'];

/** The remote-control daemon (systemd unit `antigravity-cli-daemon`) may hold files for everyone. */
function isService(argv: readonly string[]): boolean {
	return argv.some(arg => path.basename(arg) === 'antigravity-cli-daemon') || (runsProgram({name: '', argv}, PROGRAMS) && subcommand(argv) === 'daemon');
}

export const agyAdapter: AgentAdapter = {
	id: 'agy',
	label: 'Antigravity CLI',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	exitInput: unverifiedExitInput('/exit'),

	spawn: () => ({argv: ['agy']}),

	resume(_ctx, id) {
		assertValidId(agyAdapter, id);
		return {argv: ['agy', '--conversation', id]};
	},

	matchesProcess: proc => runsProgram(proc, PROGRAMS) && !isService(proc.argv),

	async discover(ctx, query = {}) {
		const paths = agyPaths(ctx);
		const index = indexIn(ctx, paths);
		const children = memo(ctx, `agy:children:${paths.summariesDb}`, () => childCounts(index));
		const conversations = idsIn(ctx, paths)
			.filter(id => isCandidate(ctx, paths, index, id, query))
			.map(id => toConversation(ctx, paths, index, id, children))
			.sort((a, b) => b.createdAt - a.createdAt);
		return {conversations, problems: [...index.problems]};
	},

	watchPaths(ctx) {
		const paths = agyPaths(ctx);
		// A conversation added or removed moves the folder; a new step grows its database or WAL.
		// The same for every cwd: built once per refresh.
		return memo(ctx, `agy:watch:${paths.conversations}`, () => {
			const databases = idsIn(ctx, paths).flatMap(id => [conversationDb(paths, id), `${conversationDb(paths, id)}-wal`]);
			return [paths.conversations, paths.summariesDb, `${paths.summariesDb}-wal`, paths.lastConversations, ...databases];
		});
	},

	async verify(ctx, id, cwd) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const steps = stepsState(ctx, paths, id);
		if (steps.kind !== 'yes' || cwd === undefined) return steps;
		const index = indexIn(ctx, paths);
		const belonging = belongsTo(ctx, index, id, cwd);
		if (belonging.kind === 'yes') return steps;
		if (belonging.kind === 'no') return {kind: 'no', reason: belonging.reason};
		return {kind: 'unknown', reason: index.problems[0] ?? 'the conversation records no workspace'};
	},

	async artifacts(ctx, id) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const index = readIndex(paths);
		// Without the summaries the sub-agents are unknown: a partial plan would be a silent lie.
		if (index.problems.length > 0) throw new StoreReadError(`cannot build the purge plan: ${index.problems.join('; ')}`, paths.summariesDb);
		const descendants = descendantsOf(index, id);
		return makePlan('agy', id, descendants, planFor(paths, index, id, descendants));
	},

	async purge(ctx, id) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const plan = await agyAdapter.artifacts(ctx, id);
		// Files first, rows last: a purge cut short still finds the descendants on a rerun.
		const {removed, warnings} = removePaths(plan.items, [paths.root]);
		const ids = [id, ...plan.descendants];
		const lineItems = plan.items.filter(item => item.kind === 'lines');
		if (lineItems.length > 0) {
			try {
				dropClaims(paths, ids);
				removed.push(...lineItems);
			} catch (error) {
				warnings.push(`${paths.lastConversations}: ${messageOf(error)}`);
			}
		}
		const rowItems = plan.items.filter(item => item.kind === 'rows');
		if (rowItems.length > 0) {
			try {
				if (rootContaining(paths.summariesDb, [paths.root]) === undefined) throw new Error(`${paths.summariesDb}: refused, not inside the agent's folder`);
				deleteRows(paths.summariesDb, [{table: SUMMARY_TABLE, column: 'conversation_id', ids}]);
				removed.push(...rowItems);
			} catch (error) {
				warnings.push(messageOf(error));
			}
		}
		return {removed, warnings};
	},

	async residual(ctx, id) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const cache = path.join(paths.root, 'cache');
		const databases = [paths.summariesDb, ...conversationIds(ctx, paths).map(x => conversationDb(paths, x))].filter(f => lstatOrUndefined(f)?.isFile());
		return scanResidual({
			id,
			descendants: descendantsOf(readIndex(paths), id),
			roots: [paths.root],
			indexFiles: [...listDir(cache).filter(e => e.isFile()).map(e => path.join(cache, e.name)), path.join(paths.root, 'history.jsonl'), path.join(paths.root, 'cli.log')],
			databases,
		});
	},

	async inUse(ctx, id) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const index = indexIn(ctx, paths);
		const ids = [id, ...descendantsOf(index, id)];
		const files = ids
			.flatMap(x => {
				const db = conversationDb(paths, x);
				return [db, `${db}-wal`, `${db}-shm`, transcriptFile(paths, x)];
			})
			.map(realpathOrUndefined)
			.filter((f): f is string => f !== undefined);
		const users = uniqueHolders([...(await argvUsers(ctx, ids)), ...(await fileUsers(ctx, files, h => isService(h.argv)))]);
		return [...users, ...(await busyInWorkspace(ctx, index, id, users))];
	},
};

/**
 * agy started with `--continue` names no id: when the summary says the conversation is not idle
 * and not killed, an agy process running in its workspace counts as its user (FORMATS 5).
 */
async function busyInWorkspace(ctx: AdapterContext, index: AgyIndex, id: string, known: readonly InUseHolder[]): Promise<InUseHolder[]> {
	const cwd = recordedCwd(index, id);
	if (!index.summaries.get(id)?.busy || cwd === undefined) return [];
	const want = canonicalCwd(ctx, cwd);
	const out: InUseHolder[] = [];
	for (const proc of await ctx.processes.list()) {
		if (!agyAdapter.matchesProcess(proc) || known.some(h => h.pid === proc.pid) || proc.cwd === undefined) continue;
		if (canonicalCwd(ctx, proc.cwd) !== want || proc.argv.some(arg => ID_PATTERN.test(arg.replace(/^.*=/, '')))) continue;
		out.push({pid: proc.pid, startTime: proc.startTime, command: proc.argv.join(' '), reason: 'agy runs in the workspace while the conversation is not idle'});
	}
	return out;
}

