import {grokMessages} from './grok/messages.js';
import path from 'node:path';
import {messageOf} from '../domain/result.js';
import {measuredExitInput, readGrokScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {runsProgram} from './common/programs.js';
import {canonicalCwd, listDir, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {memo, memoKind} from './common/refresh.js';
import {makePlan} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {agentProcessesOf, flagValue, idsUse, liveUsesOnce, needsFolders, openFilesOf, projectUse, usersOf, type LiveUse} from './common/liveEvidence.js';
import type {ProcessRef} from '../domain/types.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter} from './types.js';
import {
	buildConversation,
	buildDescendants,
	buildFamily,
	buildLinks,
	buildRoot,
	buildSessionOf,
	buildSessions,
	cliDb,
	ID_PATTERN,
	layoutOf,
	PROGRAMS,
} from './grok/build.js';
import {cliConversation, cliDbUsers, cliDelete, cliPlan, cliSessionOf, cliSessions, isService, verifyAgainst} from './grok/cli.js';
import {buildPlan, promptHistories, purgeBuild, searchDb} from './grok/purge.js';

const WATCH = memoKind<string[]>('grok:watch');

// Two unrelated products share ~/.grok (FORMATS 7): xAI's Grok Build keeps a folder per session
// (UUID ids, `grok --resume <id>`), the community grok-cli keeps grok.db (12-hex ids,
// `grok --session <id>`). Both can be installed; each id's shape says which one it belongs to.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Which session each live Grok Build process is on (measured on 1.0.41): argv (`--resume ID`,
 * `-r ID`, `--session-id ID`), else the session folder whose files it holds open (a TUI keeps its
 * session's events.jsonl open from the first prompt on), else its project folder (a TUI on its
 * welcome screen, or `grok --resume` / `-c` without an id).
 */
async function grokLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const root = buildRoot(ctx);
	const mine = (await agentProcessesOf(ctx, grokAdapter.matchesProcess, procs, {root, rootOf: buildRoot})).filter(p => !isService(p.argv));
	if (mine.length === 0) return [];
	const sessions = `${path.join(realpathOrUndefined(root) ?? root, 'sessions')}${path.sep}`;
	const open = await openFilesOf(
		ctx,
		mine.map(p => p.pid),
	);
	return mine.map(proc => {
		const named = flagValue(proc.argv, ['--resume', '-r', '--session-id', '-s', '--session'], ID_PATTERN);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const held = (open.get(proc.pid) ?? [])
			.flatMap(f => (f.startsWith(sessions) ? (f.slice(sessions.length).split(path.sep)[1] ?? []) : []))
			.filter(n => UUID.test(n));
		if (held.length > 0) return idsUse(proc, [...new Set(held)], "holds its session folder's files open");
		return projectUse(proc, 'grok');
	});
}

/** Who uses what, by grok's own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('grok', buildRoot, grokLiveUses);

export const grokAdapter: AgentAdapter = {
	id: 'grok',
	label: 'Grok',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	// Grok Build 1.0.41 (measured): `/quit` and its alias `/exit` both exit; Ctrl+U clears the line.
	exitInput: measuredExitInput('/exit', readGrokScreen),

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
		return memo(ctx, WATCH.of(sessions), () => {
			const groups = listDir(sessions, ctx)
				.filter(e => e.isDirectory())
				.map(e => path.join(sessions, e.name));
			// A session folder added or removed moves its group; a new turn grows updates.jsonl.
			const updates = groups.flatMap(g =>
				listDir(g, ctx)
					.filter(e => e.isDirectory())
					.map(e => path.join(g, e.name, 'updates.jsonl')),
			);
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

	async messages(ctx, id, since) {
		assertValidId(grokAdapter, id);
		return grokMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'cli') return makePlan('grok', id, [], cliPlan(ctx, id));
		const {descendants, items} = buildPlan(ctx, id);
		return makePlan('grok', id, descendants, items);
	},

	async purge(ctx, plan) {
		assertPlanOf(grokAdapter, plan);
		const id = plan.id;
		if (layoutOf(id) === 'build') return purgeBuild(ctx, plan);
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
			indexFiles: [
				...promptHistories(ctx),
				...listDir(logs)
					.filter(e => e.isFile())
					.map(e => path.join(logs, e.name)),
			],
			databases: lstatOrUndefined(searchDb(ctx)) ? [searchDb(ctx)] : [],
		});
	},

	async inUse(ctx, id) {
		assertValidId(grokAdapter, id);
		if (layoutOf(id) === 'cli') {
			const {session} = cliSessionOf(ctx, id);
			return uniqueHolders([...(await argvUsers(ctx, [id])), ...(await cliDbUsers(ctx, session))]);
		}
		const family = buildFamily(ctx, buildLinks(ctx), id);
		const ids = [id, ...family.map(s => s.id)];
		const files = family.flatMap(s =>
			listDir(s.dir, ctx)
				.filter(e => e.isFile())
				.map(e => path.join(s.dir, e.name)),
		);
		// A TUI that holds no session's files and names none in argv could be on any session of its
		// folder (its welcome screen resumes one with a key): each of them is in use (fail safe).
		const uses = await liveUses(ctx);
		const cwd = buildSessionOf(ctx, id)?.cwd;
		const vague = needsFolders(uses) && cwd ? usersOf(ctx, uses, {ids: [], cwds: [cwd]}) : [];
		return uniqueHolders([
			...usersOf(ctx, uses, {ids, cwds: []}),
			...vague,
			...(await argvUsers(ctx, ids)),
			...(await fileUsers(ctx, files, h => isService(h.argv))),
		]);
	},

	liveUses,
};
