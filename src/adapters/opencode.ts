import {opencodeMessages} from './opencode/messages.js';
import path from 'node:path';
import type {Conversation, ProcessRef} from '../domain/types.js';
import {measuredExitInput, readOpencodeScreen} from './common/exitSequences.js';
import {argvUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, flagValue, idsUse, liveUsesOnce, needsFolders, projectUse, usersOf, type LiveUse} from './common/liveEvidence.js';
import {subcommand as subcommandOf} from './common/programs.js';
import {canonicalCwd, existsOnce} from './common/paths.js';
import {memo, memoKind} from './common/refresh.js';
import {removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {eraseDatabases} from './common/sqlitePurge.js';
import {runsProgram} from './common/programs.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter} from './types.js';
import {agentDelete, deletePlannedRows, deletionFacts, legacyParents, planFor, removeTextLines} from './opencode/plan.js';
import {
	dataDir,
	dbFiles,
	descendantsByQuery,
	descendantsOf,
	logFiles,
	queryDirectly,
	readStores,
	resumeStateOf,
	roots,
	sameDir,
	sessionByQuery,
	storedDescendants,
	withEveryDb,
} from './opencode/store.js';

const CHILDREN = memoKind<Map<string, number>>('opencode:children');

/** The background service that holds the shared database for every session (`serve --service`). */
export function isBackgroundService(argv: readonly string[]): boolean {
	const proc: ProcessRef = {pid: 0, ppid: 0, startTime: 0, name: path.basename(argv[0] ?? ''), argv};
	return runsProgram(proc, opencodeAdapter.processNames) && argv.includes('serve') && argv.includes('--service');
}

const SESSION_ARG = /^ses_[0-9A-Za-z]+$/;

/**
 * Which session each live opencode process is on: argv (`--session ID`, `-s ID`), else its
 * project (the TUI keeps no per-session evidence, and the one database every process holds open
 * says nothing about which session). A server the user started (`serve`, `web`) may act on any
 * session; the background service (`serve --service`) gets no entry.
 */
async function opencodeLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const mine = (await agentProcessesOf(ctx, opencodeAdapter.matchesProcess, procs, {root: dataDir(ctx), rootOf: dataDir})).filter(
		p => !isBackgroundService(p.argv),
	);
	return mine.map(proc => {
		const named = flagValue(proc.argv, ['--session', '-s'], SESSION_ARG);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const sub = subcommandOf(proc.argv);
		if (sub === 'serve' || sub === 'web') {
			return {
				pid: proc.pid,
				startTime: proc.startTime,
				command: proc.argv.join(' '),
				claim: {kind: 'any'},
				reason: `an opencode ${sub} may act on any session`,
			};
		}
		return projectUse(proc, 'opencode');
	});
}

/** The folder a session records, or '/' (every project) when the store cannot say: fail safe. */
function sessionFolder(ctx: AdapterContext, id: string): string {
	const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => sessionByQuery(open, id), ctx.reads) : undefined;
	const session = direct
		? direct.value
		: readStores(ctx)
				.stores.map(s => s.sessions.get(id))
				.find(s => s !== undefined);
	return session?.directory || '/';
}

/** Who uses what, by this agent's own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('opencode', dataDir, opencodeLiveUses);

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
	matchesProcess: proc => runsProgram(proc, opencodeAdapter.processNames),

	async discover(ctx, query = {}) {
		const {stores, problems} = readStores(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const seen = new Set<string>();
		const conversations: Conversation[] = [];
		// One existsSync per folder, not per session.
		const exists = existsOnce();
		for (const store of stores) {
			// Children counted in one pass per store (per session it would cost sessions²).
			const children = memo(ctx, CHILDREN.of(store.db), () => {
				const counts = new Map<string, number>();
				for (const parent of store.parents.values()) counts.set(parent, (counts.get(parent) ?? 0) + 1);
				return counts;
			});
			for (const s of store.sessions.values()) {
				if (seen.has(s.id)) continue;
				seen.add(s.id);
				const parentId = store.parents.get(s.id);
				if (parentId !== undefined && !query.includeChildren) continue;
				if (want !== undefined && !sameDir(ctx, s.directory, want)) continue;
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
					resumeState: resumeStateOf(s, exists),
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
		const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => sessionByQuery(open, id), ctx.reads) : undefined;
		const {stores, problems} = direct ? {stores: [], problems: []} : readStores(ctx);
		const session = direct ? direct.value : stores.map(s => s.sessions.get(id)).find(s => s !== undefined);
		if (!session) return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: 'no session with this id'};
		if (cwd !== undefined && !sameDir(ctx, session.directory, canonicalCwd(ctx, cwd))) {
			return {kind: 'no', reason: `belongs to ${session.directory}, not ${canonicalCwd(ctx, cwd)}`};
		}
		return resumeStateOf(session);
	},

	async messages(ctx, id, since) {
		assertValidId(opencodeAdapter, id);
		return opencodeMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(opencodeAdapter, id);
		return planFor(ctx, id).plan;
	},

	async purge(ctx, plan) {
		assertPlanOf(opencodeAdapter, plan);
		const id = plan.id;
		// The prompt texts are read before the rows go: afterwards nothing says which lines were this conversation's.
		const {directory, dbs, prompts} = deletionFacts(ctx, plan);
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
		const direct = queryDirectly(ctx) ? withEveryDb(dbFiles(ctx), open => descendantsByQuery(open, id), ctx.reads) : undefined;
		const ids = [id, ...(direct?.value ?? storedDescendants(ctx, id))];
		const uses = await liveUses(ctx);
		const cwds = needsFolders(uses) ? [sessionFolder(ctx, id)] : [];
		return uniqueHolders([...usersOf(ctx, uses, {ids, cwds}, 'tree'), ...(await argvUsers(ctx, ids))]);
	},

	liveUses,
};
