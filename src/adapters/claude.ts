import path from 'node:path';
import {messageOf} from '../domain/result.js';
import type {Conversation} from '../domain/types.js';
import {measuredExitInput, readClaudeScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {liveUsesOnce, needsFolders, usersOf} from './common/liveEvidence.js';
import {removeJsonMembers} from './common/jsonKey.js';
import {jsonFieldIn, removeLines} from './common/lines.js';
import {canonicalCwd, existsOnce, listDir} from './common/paths.js';
import {removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {assertPlanOf, assertValidId, type AgentAdapter, type InUseHolder} from './types.js';
import {CLAUDE_PROGRAMS, claudeLiveUses, isClaudeProcess, transcriptCwds} from './claude/live.js';
import {claudeMessages} from './claude/messages.js';
import {configFiles, configRoots, planFor} from './claude/plan.js';
import {
	claudeRoot,
	legacyChildCounts,
	nestedSubAgentCount,
	projectDirs,
	readTranscript,
	resumeStateOf,
	roots,
	subAgentsIn,
	type Transcript,
	transcriptPaths,
	transcriptsIn,
} from './claude/transcripts.js';

export {projectSlug} from './claude/transcripts.js';
export {type LiveRecord, liveRecordOf} from './claude/live.js';

/** Who uses what, by this agent's own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('claude', claudeRoot, claudeLiveUses);

export const claudeAdapter: AgentAdapter = {
	id: 'claude',
	label: 'Claude Code',
	capabilities: {resume: true, purge: true},
	idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
	processNames: CLAUDE_PROGRAMS,
	residentChildren: [],
	exitInput: measuredExitInput('/exit', readClaudeScreen),

	spawn: () => ({argv: ['claude']}),
	resume(_ctx, id) {
		assertValidId(claudeAdapter, id);
		return {argv: ['claude', '--resume', id]};
	},
	matchesProcess: isClaudeProcess,

	async discover(ctx, query = {}) {
		const root = claudeRoot(ctx);
		const wantCwd = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const found = new Map<string, Conversation>();
		const problems: string[] = [];
		// One existsSync per cwd, not per transcript (a busy project folder: a thousand, one cwd).
		const exists = existsOnce();
		for (const dir of projectDirs(ctx, root, query.cwd)) {
			const legacy = legacyChildCounts(ctx, dir);
			// Only a conversation with a real folder can have nested sub-agents: the listing says
			// which do (no link), so the others cost no lstat (a thousand per busy project folder).
			const folders = new Set(listDir(dir, ctx).flatMap(e => (e.isDirectory() ? [e.name] : [])));
			for (const [name, file] of transcriptPaths(ctx, dir)) {
				const id = name.slice(0, -'.jsonl'.length);
				if (!claudeAdapter.idPattern.test(id) || found.has(id)) continue;
				let t: Transcript;
				try {
					t = readTranscript(ctx, file, id);
				} catch (error) {
					problems.push(`${file}: ${messageOf(error)}`);
					continue;
				}
				if (!t.cwd || (wantCwd !== undefined && t.cwd !== wantCwd)) continue;
				if (query.since !== undefined && t.createdAt < query.since) continue;
				found.set(id, {
					agent: 'claude',
					id,
					cwd: t.cwd,
					createdAt: t.createdAt,
					updatedAt: t.updatedAt,
					...(t.title ? {title: t.title} : {}),
					childCount: (folders.has(id) ? nestedSubAgentCount(ctx, dir, id) : 0) + (legacy.get(id) ?? 0),
					resumeState: resumeStateOf(t, exists),
				});
			}
		}
		const conversations = [...found.values()].sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
		return {conversations, problems};
	},

	watchPaths(ctx, cwd) {
		const root = claudeRoot(ctx);
		const dirs = projectDirs(ctx, root, cwd);
		// A new transcript changes its folder's mtime; a new turn grows the transcript.
		const transcripts = dirs.flatMap(dir => [...transcriptPaths(ctx, dir).values()]);
		return [path.join(root, 'projects'), ...dirs, ...transcripts];
	},

	async verify(ctx, id, cwd) {
		assertValidId(claudeAdapter, id);
		const files = transcriptsIn(ctx, claudeRoot(ctx), id);
		if (files.length === 0) return {kind: 'no', reason: 'no transcript on disk'};
		let transcripts: Transcript[];
		try {
			transcripts = files.map(f => readTranscript(ctx, f, id));
		} catch (error) {
			return {kind: 'unknown', reason: messageOf(error)};
		}
		if (cwd === undefined) return resumeStateOf(transcripts[0] as Transcript);
		const want = canonicalCwd(ctx, cwd);
		const match = transcripts.find(t => t.cwd === want);
		if (!match) return {kind: 'no', reason: `belongs to ${transcripts[0]?.cwd ?? 'an unknown cwd'}, not ${want}`};
		return resumeStateOf(match);
	},

	async messages(ctx, id, since) {
		assertValidId(claudeAdapter, id);
		return claudeMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(claudeAdapter, id);
		return planFor(ctx, id);
	},

	async purge(ctx, plan) {
		assertPlanOf(claudeAdapter, plan);
		const id = plan.id;
		const allowed = roots(ctx);
		const {removed, warnings} = removePaths(plan.items, allowed);
		for (const item of plan.items.filter(i => i.kind === 'lines')) {
			try {
				removeLines(item.path, jsonFieldIn('sessionId', [id]), allowed);
				removed.push(item);
			} catch (error) {
				warnings.push(messageOf(error));
			}
		}
		for (const item of plan.items.filter(i => i.kind === 'key')) {
			try {
				removeJsonMembers(item.path, 'lastSessionId', id, configRoots(ctx));
				removed.push(item);
			} catch (error) {
				warnings.push(messageOf(error));
			}
		}
		return {removed, warnings};
	},

	async residual(ctx, id) {
		assertValidId(claudeAdapter, id);
		const root = claudeRoot(ctx);
		return scanResidual({
			id,
			descendants: subAgentsIn(ctx, root, id).map(a => a.id),
			roots: roots(ctx),
			indexFiles: [path.join(root, 'history.jsonl'), ...configFiles(ctx), ...projectDirs(ctx, root).map(dir => path.join(dir, 'sessions-index.json'))],
			databases: [],
		});
	},

	async inUse(ctx, id) {
		assertValidId(claudeAdapter, id);
		const root = claudeRoot(ctx);
		const agents = subAgentsIn(ctx, root, id);
		const transcripts = transcriptsIn(ctx, root, id);
		const uses = await liveUses(ctx);
		const cwds = needsFolders(uses) ? transcriptCwds(ctx, transcripts, id) : [];
		const holders: InUseHolder[] = usersOf(ctx, uses, {ids: [id, ...agents.map(a => a.id)], cwds});
		holders.push(...(await argvUsers(ctx, [id, ...agents.map(a => a.id)])));
		holders.push(...(await fileUsers(ctx, [...transcripts, ...agents.map(a => a.file)])));
		return uniqueHolders(holders);
	},

	liveUses,
};
