import path from 'node:path';
import {messageOf} from '../domain/result.js';
import {unverifiedExitInput} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {runsProgram} from './common/programs.js';
import {canonicalCwd, listDir, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {memo} from './common/refresh.js';
import {makePlan, removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {assertPlanOf, assertValidId, type AgentAdapter} from './types.js';
import {buildConversation, buildDescendants, buildLinks, buildRoot, buildSessionOf, buildSessions, cliDb, ID_PATTERN, layoutOf, PROGRAMS} from './grok/build.js';
import {buildPlan, cliConversation, cliDbUsers, cliDelete, cliPlan, cliSessionOf, cliSessions, isService, verifyAgainst} from './grok/cli.js';

// Two unrelated products share ~/.grok (FORMATS 7): xAI's Grok Build keeps a folder per session
// (UUID ids, `grok --resume <id>`), the community grok-cli keeps grok.db (12-hex ids,
// `grok --session <id>`). Both can be installed; each id's shape says which one it belongs to.

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

	async purge(ctx, plan) {
		assertPlanOf(grokAdapter, plan);
		const id = plan.id;
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
