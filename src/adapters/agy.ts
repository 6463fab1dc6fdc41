import {agyMessages} from './agy/messages.js';
import path from 'node:path';
import type {Conversation, ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {StoreReadError, tableColumns, withReadOnlyDb} from '../system/sqliteRead.js';
import {unverifiedExitInput} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {isRecord, parseJsonOrUndefined, readSmallText, rewriteJsonFile} from './common/jsonRecords.js';
import {canonicalCwd, listDir, lstatOrUndefined, rootContaining} from './common/paths.js';
import {type InRefresh, memo, memoKind} from './common/refresh.js';
import {dirItem, fileItem, makePlan, removePaths} from './common/plan.js';
import {runsProgram, subcommand} from './common/programs.js';
import {scanResidual} from './common/residual.js';
import {deleteRows} from './common/sqlitePurge.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter, type DiscoverQuery, type InUseHolder, type PlanItem} from './types.js';
import {
	type AgyIndex,
	agyPaths,
	type AgyPaths,
	belongsTo,
	childCounts,
	conversationDb,
	conversationIds,
	conversationTimes,
	descendantsOf,
	ID_PATTERN,
	idsIn,
	indexIn,
	readIndex,
	recordedCwd,
	stepsState,
	SUMMARY_TABLE,
	transcriptFile,
} from './agy/store.js';

const CHILDREN = memoKind<ReturnType<typeof childCounts>>('agy:children');
const WATCH = memoKind<string[]>('agy:watch');

// Antigravity CLI (FORMATS 5): one sqlite database per conversation, a shared summaries
// database, brain/<id>/ artifacts and a workspace → newest-conversation cache.

/** The resume state of a listing that asked for facts only (`DiscoverQuery.factsOnly`): not read. */
const NOT_READ: ResumeState = {kind: 'unknown', reason: 'not read (facts only)'};

function toConversation(ctx: InRefresh, paths: AgyPaths, index: AgyIndex, id: string, children: ReadonlyMap<string, number>, factsOnly: boolean): Conversation {
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
		// Opening each conversation's own database is most of a listing's cost.
		resumeState: factsOnly ? NOT_READ : stepsState(ctx, paths, id),
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
			.map(({x, n}): PlanItem => ({
				kind: 'rows',
				path: paths.summariesDb,
				table: SUMMARY_TABLE,
				count: n,
				bytes: 0,
				sessionId: x,
				description: 'conversation summary row',
			}));
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
		const children = memo(ctx, CHILDREN.of(paths.summariesDb), () => childCounts(index));
		const conversations = idsIn(ctx, paths)
			.filter(id => isCandidate(ctx, paths, index, id, query))
			.map(id => toConversation(ctx, paths, index, id, children, query.factsOnly === true))
			.sort((a, b) => b.createdAt - a.createdAt);
		return {conversations, problems: [...index.problems]};
	},

	watchPaths(ctx) {
		const paths = agyPaths(ctx);
		// A conversation added or removed moves the folder; a new step grows its database or WAL.
		// The same for every cwd: built once per refresh.
		return memo(ctx, WATCH.of(paths.conversations), () => {
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

	async messages(ctx, id, since) {
		assertValidId(agyAdapter, id);
		return agyMessages(ctx, id, since);
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

	async purge(ctx, plan) {
		assertPlanOf(agyAdapter, plan);
		const id = plan.id;
		const paths = agyPaths(ctx);
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
			indexFiles: [
				...listDir(cache)
					.filter(e => e.isFile())
					.map(e => path.join(cache, e.name)),
				path.join(paths.root, 'history.jsonl'),
				path.join(paths.root, 'cli.log'),
			],
			databases,
		});
	},

	async inUse(ctx, id) {
		assertValidId(agyAdapter, id);
		const paths = agyPaths(ctx);
		const index = indexIn(ctx, paths);
		const ids = [id, ...descendantsOf(index, id)];
		const files = ids.flatMap(x => {
			const db = conversationDb(paths, x);
			return [db, `${db}-wal`, `${db}-shm`, transcriptFile(paths, x)];
		});
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
