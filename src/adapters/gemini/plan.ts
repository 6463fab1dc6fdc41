// Gemini sessions as conversations, their sub-agents, and the purge plan.

import path from 'node:path';
import type {Conversation, ResumeState} from '../../domain/types.js';
import {readSmallText, rewriteJsonFile} from '../common/jsonRecords.js';
import {oneLine, readFirstJsonLine} from '../common/jsonl.js';
import {listDir, lstatOrUndefined} from '../common/paths.js';
import {type InRefresh, memo, memoKind} from '../common/refresh.js';
import {dirItem, fileItem} from '../common/plan.js';
import type {AdapterContext, PlanItem} from '../types.js';
import {sessionDescendants} from '../common/groups.js';
import {geminiRoot, ID_PATTERN, legacyRecords, MAIN_CHAT, parseChat, type Project, projectsOf, type Session, sessionsOf} from './chats.js';

const SESSIONS = memoKind<Session[]>('gemini:sessions');
const CHAT_FOLDERS = memoKind<ReadonlySet<string>>('gemini:chat-folders');

export function allSessions(ctx: InRefresh, root: string): Session[] {
	return projectsOf(ctx, root).flatMap(p => sessionsOf(ctx, p));
}

/** Every session, read once per refresh (memo) for the many verify/inUse calls a refresh makes. */
export function sessionsIn(ctx: AdapterContext): Session[] {
	const root = geminiRoot(ctx);
	return memo(ctx, SESSIONS.of(root), () => allSessions(ctx, root));
}

function createdAt(session: Session): number {
	const starts = session.files.map(f => f.startedAt).filter((t): t is number => t !== undefined);
	if (starts.length > 0) return Math.min(...starts);
	return Math.min(...session.files.map(f => Math.round(lstatOrUndefined(f.file)?.mtimeMs ?? 0)));
}

export function updatedAt(session: Session): number {
	return Math.max(createdAt(session), ...session.files.map(f => f.updatedAt ?? 0));
}

export function resumeStateOf(session: Session): ResumeState {
	if (session.parentId) return {kind: 'no', reason: 'a sub-agent transcript is not resumable'};
	const messages = session.files.reduce((n, f) => n + f.realMessages, 0);
	return messages > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'};
}

/**
 * The real folders of a project's `chats` (as listed: a link is not a folder), listed once per
 * refresh: a refresh asks about thousands of sessions, each a lookup here instead of an lstat.
 */
function chatFolders(ctx: InRefresh, chats: string): ReadonlySet<string> {
	return memo(ctx, CHAT_FOLDERS.of(chats), () => new Set(listDir(chats, ctx).flatMap(e => (e.isDirectory() ? [e.name] : []))));
}

/** The sub-agent sessions in `chats/<id>/`, their own sub-agents' folders, and so on down. */
export function subAgentsBelow(ctx: InRefresh, project: Project, id: string): Session[] {
	const chats = path.join(project.dir, 'chats');
	const out: Session[] = [];
	const visited = new Set<string>();
	const queue = [id];
	for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
		if (visited.has(parent) || !ID_PATTERN.test(parent)) continue;
		visited.add(parent);
		if (!chatFolders(ctx, chats).has(parent)) continue;
		const folder = path.join(chats, parent);
		for (const sub of listDir(folder, ctx)) {
			if (!sub.isFile() || !/\.jsonl?$/.test(sub.name)) continue;
			const chat = parseChat(ctx, path.join(folder, sub.name));
			if (!chat || !ID_PATTERN.test(chat.id)) continue;
			out.push({id: chat.id, project, files: [chat], parentId: parent});
			queue.push(chat.id);
		}
	}
	return out;
}

export function descendantsOf(sessions: readonly Session[], id: string): Session[] {
	return sessionDescendants(sessions, id);
}

export function toConversation(session: Session, children: ReadonlyMap<string, number>): Conversation {
	const prompt = session.files.map(f => f.firstPrompt).find(p => p !== undefined);
	return {
		agent: 'gemini',
		id: session.id,
		cwd: session.project.cwd ?? '',
		createdAt: createdAt(session),
		updatedAt: updatedAt(session),
		...(session.parentId ? {parentId: session.parentId} : {}),
		...(prompt ? {title: oneLine(prompt)} : {}),
		childCount: children.get(`${session.project.dir}\0${session.id}`) ?? 0,
		resumeState: resumeStateOf(session),
	};
}

/** Per-session artifacts beside the chats (FORMATS 4; gemini's deleteSessionArtifactsAsync). */
function sideArtifacts(project: Project, id: string, label: string): (PlanItem | undefined)[] {
	return [
		fileItem(path.join(project.dir, 'logs', `session-${id}.jsonl`), id, `${label} activity log`),
		dirItem(path.join(project.dir, 'tool-outputs', `session-${id}`), id, `${label} tool outputs`),
		dirItem(path.join(project.dir, id), id, `${label} plans, tracker and tasks`),
	];
}

/** The ids logs.json names, for its `lines` item. */
function logEntries(project: Project): Record<string, unknown>[] {
	const parsed: unknown = (() => {
		try {
			return JSON.parse(readSmallText(path.join(project.dir, 'logs.json')) ?? 'null') as unknown;
		} catch {
			return null;
		}
	})();
	return Array.isArray(parsed) ? parsed.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && !Array.isArray(e)) : [];
}

export function planFor(ctx: InRefresh, root: string, id: string): {descendants: string[]; items: PlanItem[]} {
	const sessions = allSessions(ctx, root);
	const descendants = new Set<string>();
	const items: (PlanItem | undefined)[] = [];
	for (const project of projectsOf(ctx, root)) {
		const here = sessions.filter(s => s.project.dir === project.dir);
		const own = here.filter(s => s.id === id);
		const children = descendantsOf(here, id);
		for (const child of children) descendants.add(child.id);
		for (const session of [...own, ...children]) {
			const label = session.id === id ? 'session' : 'sub-agent';
			for (const chat of session.files) items.push(fileItem(chat.file, session.id, `${label} transcript ${path.basename(chat.file)}`));
		}
		for (const x of [id, ...children.map(c => c.id)]) {
			const label = x === id ? 'session' : 'sub-agent';
			items.push(...sideArtifacts(project, x, label));
			items.push(
				dirItem(path.join(project.dir, 'chats', x), x, `${label} folder of sub-agent transcripts`, childBytes(items, path.join(project.dir, 'chats', x))),
			);
		}
		const ids = [id, ...children.map(c => c.id)];
		const logged = logEntries(project).filter(e => typeof e['sessionId'] === 'string' && ids.includes(e['sessionId']));
		if (logged.length > 0)
			items.push({
				kind: 'lines',
				path: path.join(project.dir, 'logs.json'),
				count: logged.length,
				bytes: 0,
				sessionId: id,
				description: 'logs.json prompt entries',
			});
	}
	return {descendants: [...descendants], items: items.filter((i): i is PlanItem => i !== undefined)};
}

/** Bytes of items already planned inside `dir`, so the folder item does not count them twice. */
function childBytes(items: readonly (PlanItem | undefined)[], dir: string): number {
	return items.filter((i): i is PlanItem => i !== undefined && i.path.startsWith(`${dir}${path.sep}`)).reduce((n, i) => n + i.bytes, 0);
}

/** Rewrite logs.json without the entries of `ids`, in the style it was written. */
export function dropLogEntries(roots: readonly string[], file: string, ids: readonly string[]): void {
	const text = readSmallText(file);
	const entries = JSON.parse(text ?? '[]') as unknown;
	if (!Array.isArray(entries)) return;
	const kept = entries.filter(e => !(typeof e === 'object' && e !== null && ids.includes(String((e as {sessionId?: unknown}).sessionId))));
	rewriteJsonFile(file, roots, text, kept);
}

/** Right before a chat file goes, its header must still carry one of the ids (FORMATS 4, 10). */
export function stillNames(item: PlanItem, ids: readonly string[]): boolean {
	if (!MAIN_CHAT.test(path.basename(item.path)) || !item.description.includes('transcript')) return true;
	const header = item.path.endsWith('.json') ? legacyRecords(readSmallText(item.path) ?? '')[0] : readFirstJsonLine(item.path);
	return typeof header?.['sessionId'] === 'string' && ids.includes(header['sessionId']);
}
