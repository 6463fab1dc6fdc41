import {geminiMessages} from './gemini/messages.js';
import path from 'node:path';
import type {ProcessRef} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {measuredExitInput, readGeminiScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, flagValue, idsUse, liveUsesOnce, needsFolders, projectUse, usersOf, ANY_FOLDER, type LiveUse} from './common/liveEvidence.js';
import {runsProgram} from './common/programs.js';
import {canonicalCwd, listDir, lstatOrUndefined, removeInsideRoots} from './common/paths.js';
import {memo} from './common/refresh.js';
import {makePlan, removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter} from './types.js';
import {geminiRoot, ID_PATTERN, PROGRAMS, PROJECTS, projectsOf, type Session, sessionsWithId} from './gemini/chats.js';
import {allSessions, descendantsOf, dropLogEntries, planFor, resumeStateOf, sessionsIn, stillNames, subAgentsBelow, toConversation} from './gemini/plan.js';

// Gemini CLI (FORMATS 4 and 10): project folders under ~/.gemini/tmp, one chat file per session
// named by time and the FIRST 8 characters of the id. Files are attributed by the full id inside
// them, never by the name: two sessions may share a prefix, and one session may own several files.

/**
 * gemini 0.61's resume stubs (REAL.md surprise 12): `gemini -r ID` in a later minute than the
 * conversation began writes `session-<now>-<id8>.jsonl` holding only a header (and the session
 * context), and the next gemini start in that project takes such a file for a broken session and
 * unlinks every `-<id8>.jsonl`, the real conversation with it. A stub here is a main chat file of
 * `id` with no real message while another main chat file of `id` in the same project has some:
 * the only file of a conversation is never one.
 */
export function geminiStubs(ctx: AdapterContext, id: string): string[] {
	assertValidId(geminiAdapter, id);
	const out: string[] = [];
	for (const session of sessionsWithId(ctx, id)) {
		if (session.parentId !== undefined || !session.files.some(f => f.realMessages > 0)) continue;
		for (const f of session.files) if (f.realMessages === 0 && path.basename(f.file).startsWith('session-')) out.push(f.file);
	}
	return out;
}

/**
 * Before mam-tui starts gemini on `id` and after it stopped it: remove the conversation's stubs.
 * gemini writes one when the TUI quits (seen with 0.61: `/quit` of a `--resume` in a later
 * minute) or when `gemini -r ID -p …` runs in a later minute, so there is no moment right after
 * the start to wait for; the stop that ends the run and the next mam-tui start are when mam-tui
 * can act.
 */
async function guardConversation(ctx: AdapterContext, id: string): Promise<string[]> {
	assertValidId(geminiAdapter, id);
	return removeGeminiStubs(ctx, id);
}

/** Remove `id`'s resume stubs (inside gemini's folder only); returns the files removed. */
export function removeGeminiStubs(ctx: AdapterContext, id: string): string[] {
	const removed: string[] = [];
	for (const file of geminiStubs(ctx, id)) if (removeInsideRoots(file, [geminiRoot(ctx)]) === undefined) removed.push(file);
	return removed;
}

/** Only a full session id in argv names one session: `-r latest` and `-r 3` depend on the project's list. */
const SESSION_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A session whose project folder is unknown: every project claim reaches it (fail safe). */

/**
 * Which session each live gemini process (the wrapper and its node child) is on: argv
 * (`--resume ID`, `-r ID`, `--session-id ID`), else its project: a plain `gemini` TUI keeps no
 * record of which session it is on, and does not hold its chat file open between writes.
 */
async function geminiLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const mine = await agentProcessesOf(ctx, geminiAdapter.matchesProcess, procs, {root: geminiRoot(ctx), rootOf: geminiRoot});
	return mine.map(proc => {
		const named = flagValue(proc.argv, ['--resume', '-r', '--session-id'], SESSION_UUID);
		return named ? idsUse(proc, [named], `argv names ${named}`) : projectUse(proc, 'gemini');
	});
}

/** Who uses what, by this agent's own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('gemini', geminiRoot, geminiLiveUses);

export const geminiAdapter: AgentAdapter = {
	id: 'gemini',
	label: 'Gemini CLI',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	// `/exit` is what was measured (gemini takes `/quit` too).
	exitInput: measuredExitInput('/exit', readGeminiScreen),

	spawn: () => ({argv: ['gemini']}),

	guardConversation,

	resume(_ctx, id) {
		assertValidId(geminiAdapter, id);
		return {argv: ['gemini', '--resume', id]};
	},

	matchesProcess: proc => runsProgram(proc, PROGRAMS),

	async discover(ctx, query = {}) {
		const sessions = sessionsIn(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		// Children per (project, parent) counted in one pass, not once per session (sessions²).
		const children = new Map<string, number>();
		for (const s of sessions) if (s.parentId) children.set(`${s.project.dir}\0${s.parentId}`, (children.get(`${s.project.dir}\0${s.parentId}`) ?? 0) + 1);
		const conversations = sessions
			.filter(s => s.project.cwd !== undefined)
			.filter(s => query.includeChildren || !s.parentId)
			.filter(s => want === undefined || canonicalCwd(ctx, s.project.cwd ?? '') === want)
			.map(s => toConversation(s, children))
			.filter(c => query.since === undefined || c.createdAt >= query.since)
			.sort((a, b) => b.createdAt - a.createdAt);
		return {conversations, problems: []};
	},

	watchPaths(ctx, cwd) {
		const root = geminiRoot(ctx);
		const want = canonicalCwd(ctx, cwd);
		// The project folders are the same for every cwd: read once per refresh.
		const chats = memo(ctx, PROJECTS.of(root), () => projectsOf(ctx, root))
			.filter(p => p.cwd !== undefined && canonicalCwd(ctx, p.cwd) === want)
			.map(p => path.join(p.dir, 'chats'));
		// New chat files and sub-agent folders move a chats folder; a new turn grows its file.
		const inside = chats.flatMap(dir => listDir(dir, ctx).map(e => path.join(dir, e.name)));
		return [path.join(root, 'tmp'), path.join(root, 'projects.json'), ...chats, ...inside];
	},

	async verify(ctx, id, cwd) {
		assertValidId(geminiAdapter, id);
		const found = sessionsWithId(ctx, id);
		if (found.length === 0) return {kind: 'no', reason: `no gemini session ${id}`};
		const state = found.map(resumeStateOf).find(s => s.kind === 'yes') ?? resumeStateOf(found[0] as Session);
		if (state.kind !== 'yes' || cwd === undefined) return state;
		const want = canonicalCwd(ctx, cwd);
		if (found.some(s => s.project.cwd !== undefined && canonicalCwd(ctx, s.project.cwd) === want)) return state;
		// gemini resumes only from the project's own folder (rc 42 elsewhere, FORMATS 10).
		return {kind: 'no', reason: `belongs to ${found.map(s => s.project.cwd ?? s.project.dir).join(', ')}`};
	},

	async messages(ctx, id, since) {
		assertValidId(geminiAdapter, id);
		return geminiMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(geminiAdapter, id);
		const {descendants, items} = planFor(ctx, geminiRoot(ctx), id);
		return makePlan('gemini', id, descendants, items);
	},

	async purge(ctx, plan) {
		assertPlanOf(geminiAdapter, plan);
		const id = plan.id;
		const root = geminiRoot(ctx);
		const ids = [id, ...plan.descendants];
		const warnings: string[] = [];
		const checked = plan.items.filter(item => {
			if (stillNames(item, ids)) return true;
			warnings.push(`${item.path}: no longer names ${id}; left alone`);
			return false;
		});
		const removed = removePaths(checked, [root]);
		warnings.push(...removed.warnings);
		for (const item of checked.filter(i => i.kind === 'lines')) {
			try {
				dropLogEntries([root], item.path, ids);
				removed.removed.push(item);
			} catch (error) {
				warnings.push(`${item.path}: ${messageOf(error)}`);
			}
		}
		return {removed: removed.removed, warnings};
	},

	async residual(ctx, id) {
		assertValidId(geminiAdapter, id);
		const root = geminiRoot(ctx);
		const sessions = allSessions(ctx, root);
		const descendants = [
			...new Set(
				projectsOf(ctx, root).flatMap(p =>
					descendantsOf(
						sessions.filter(s => s.project.dir === p.dir),
						id,
					).map(s => s.id),
				),
			),
		];
		// Main chat files are named by an 8-character prefix: only the id inside them counts.
		const chats = sessions
			.filter(s => !s.parentId && (s.id === id || descendants.includes(s.id)))
			.flatMap(s => s.files.map(f => `${f.file}: chat file of ${s.id}${s.id === id ? '' : ` [child session ${s.id}]`}`));
		const names = scanResidual({
			id,
			descendants,
			roots: [path.join(root, 'tmp')],
			indexFiles: projectsOf(ctx, root)
				.map(p => path.join(p.dir, 'logs.json'))
				.filter(f => lstatOrUndefined(f)),
			databases: [],
		});
		return [...chats, ...names];
	},

	async inUse(ctx, id) {
		assertValidId(geminiAdapter, id);
		// Only the files that can hold the session and the sub-agent folders below it are read
		// (as in verify), not every chat of every project.
		const own = sessionsWithId(ctx, id);
		const family = [...own, ...own.flatMap(s => descendantsOf(subAgentsBelow(ctx, s.project, id), id))];
		const ids = [...new Set([id, ...family.map(s => s.id)])];
		const files = family.flatMap(s => s.files.map(f => f.file));
		const uses = await liveUses(ctx);
		const cwds = needsFolders(uses) ? [...new Set(own.map(s => s.project.cwd ?? ANY_FOLDER))] : [];
		const byProject = usersOf(ctx, uses, {ids, cwds});
		return uniqueHolders([...byProject, ...(await argvUsers(ctx, ids)), ...(await fileUsers(ctx, files))]);
	},

	liveUses,
};
