import path from 'node:path';
import {messageOf} from '../domain/result.js';
import type {Conversation, ProcessRef} from '../domain/types.js';
import {measuredExitInput, readCodexScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {
	agentProcessesOf,
	hasFlag,
	idsUse,
	liveUsesOnce,
	needsFolders,
	openFilesOf,
	projectUse,
	usersOf,
	wordAfter,
	type LiveUse,
} from './common/liveEvidence.js';
import {oneLine} from './common/jsonl.js';
import {jsonFieldIn, removeLines} from './common/lines.js';
import {canonicalCwd, existsOnce} from './common/paths.js';
import {memo, memoKind} from './common/refresh.js';
import {removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {eraseDatabases} from './common/sqlitePurge.js';
import {programOf, runsProgram} from './common/programs.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter} from './types.js';
import {agentDelete, asksCodex, planFor, purgeRows} from './codex/plan.js';
import {codexMessages} from './codex/messages.js';
import {
	codexRoot,
	databases,
	readRollout,
	resumeStateOf,
	type Rollout,
	ROLLOUT_FILE,
	rollouts,
	rolloutsOf,
	roots,
	THREAD_ID,
	UUID,
	verifyRolloutsOf,
} from './codex/rollouts.js';
import {descendantsOf, parentMap, readThreadIndex, threadsNamedByProcesses} from './codex/threads.js';

const READ = memoKind<{problems: string[]; byId: Map<string, Rollout>; children: Map<string, number>}>('codex:read');
const WATCH = memoKind<string[]>('codex:watch');

export {uuidV7Time} from './codex/rollouts.js';

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
	const mine = (await agentProcessesOf(ctx, codexAdapter.matchesProcess, procs, {root: codexRoot(ctx), rootOf: codexRoot})).filter(
		p => !isCodexService(p.argv),
	);
	if (mine.length === 0) return [];
	const open = await openFilesOf(
		ctx,
		mine.map(p => p.pid),
	);
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

/** Who uses what, by this agent's own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('codex', codexRoot, codexLiveUses);

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
		const read = memo(ctx, READ.of(codexRoot(ctx)), () => {
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
		// One existsSync per cwd, not per rollout (thousands of rollouts, a few dozen cwds).
		const exists = existsOnce();
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
				resumeState: resumeStateOf(r, exists),
			});
		}
		conversations.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
		return {conversations, problems};
	},

	watchPaths(ctx) {
		const root = codexRoot(ctx);
		// The same for every cwd: built once per refresh.
		return memo(ctx, WATCH.of(root), () => {
			const rolloutPaths = rollouts(ctx).map(r => r.file);
			// New rollouts change their date folder (any of them: local time); turns grow the rollout;
			// titles and spawn edges live in the state databases and their WAL.
			const days = rolloutPaths.map(f => path.dirname(f));
			const folders = [
				...new Set([
					path.join(root, 'sessions'),
					path.join(root, 'archived_sessions'),
					...days,
					...days.map(d => path.dirname(d)),
					...days.map(d => path.dirname(path.dirname(d))),
				]),
			];
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

	async messages(ctx, id, since) {
		assertValidId(codexAdapter, id);
		return codexMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(codexAdapter, id);
		return planFor(ctx, id);
	},

	async purge(ctx, plan) {
		assertPlanOf(codexAdapter, plan);
		const id = plan.id;
		const ids = [id, ...plan.descendants];
		const allowed = roots(ctx);
		const asked = asksCodex(plan.items) ? await agentDelete(ctx, id) : undefined;
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
		const uses = await liveUses(ctx);
		// A TUI that keeps no evidence of its thread uses every thread of its folder (fail safe).
		const vague = needsFolders(uses) ? usersOf(ctx, uses, {ids: [], cwds: threadCwds(ctx, id)}) : [];
		const named = await threadsNamedByProcesses(ctx);
		if (named && !named.has(id)) return uniqueHolders(vague);
		const ids = [id, ...descendantsOf(id, parentMap(ctx, readThreadIndex(ctx)))];
		// The recorder keeps the rollout open for the thread's lifetime; the databases are shared
		// by every codex process (and the app-server daemon), so holding them says nothing.
		const files = ids.flatMap(owner => rolloutsOf(ctx, owner)).map(r => r.file);
		return uniqueHolders([...usersOf(ctx, uses, {ids, cwds: []}), ...vague, ...(await argvUsers(ctx, ids)), ...(await fileUsers(ctx, files))]);
	},

	liveUses,
};
