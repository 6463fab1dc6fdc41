import path from 'node:path';
import type {Conversation, ProcessRef, ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {measuredExitInput, readGeminiScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, flagValue, idsUse, needsFolders, projectUse, sameResolved, usersOf, type LiveUse} from './common/liveEvidence.js';
import {readSmallText, rewriteJsonFile} from './common/jsonRecords.js';
import {isoMs, oneLine, readFirstJsonLine} from './common/jsonl.js';
import {parseJsonLine} from './common/lines.js';
import {runsProgram} from './common/programs.js';
import {canonicalCwd, listDir, listNames, lstatOrUndefined, realpathOrUndefined, removeInsideRoots} from './common/paths.js';
import {pushTo} from './common/groups.js';
import {indexAfter, memo, parseCached} from './common/memo.js';
import {dirItem, fileItem, makePlan, removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type PlanItem} from './types.js';

// Gemini CLI (FORMATS 4 and 10): project folders under ~/.gemini/tmp, one chat file per session
// named by time and the FIRST 8 characters of the id. Files are attributed by the full id inside
// them, never by the name: two sessions may share a prefix, and one session may own several files.

/**
 * gemini's `--session-id` charset, minus a leading `-` (it would read as a flag) and minus the
 * names of the shared folders inside a project folder, which `<project>/<id>/` would resolve to.
 */
const ID_PATTERN = /^(?!(?:chats|logs|tool-outputs|plans|tracker|tasks|memory|checkpoints|history)$)[A-Za-z0-9_][A-Za-z0-9_-]*$/;
const MAIN_CHAT = /^session-.+\.jsonl?$/;
const SESSION_CONTEXT = '<session_context>';
const PROGRAMS = ['gemini'];

/** `GEMINI_CLI_HOME` replaces the home directory (own home only); the tree is `<home>/.gemini`. */
function geminiRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['GEMINI_CLI_HOME'] : undefined;
	return path.join(override ? path.resolve(override) : ctx.home, '.gemini');
}

interface Project {
	readonly dir: string;
	/** The project's cwd, when the folder says (`.project_root`) or projects.json maps it. */
	readonly cwd?: string;
}

/** A legacy project folder's name: sha256 of the project's path, in hex. */
const LEGACY_FOLDER = /^[0-9a-f]{64}$/;

/**
 * projects.json maps `<abs path>` → slug; legacy folders are named sha256(path). The paths are
 * hashed only when a folder has such a name: loading node:crypto alone cost 8 ms of a status run.
 */
function projectNames(root: string): (folder: string) => string | undefined {
	const parsed = parseJsonLine((readSmallText(path.join(root, 'projects.json')) ?? '').replace(/\n/g, ' '));
	const projects = parsed?.['projects'];
	const bySlug = new Map<string, string>();
	const cwds: string[] = [];
	if (typeof projects === 'object' && projects !== null) {
		for (const [cwd, slug] of Object.entries(projects)) {
			if (typeof slug === 'string') bySlug.set(slug, cwd);
			cwds.push(cwd);
		}
	}
	let byHash: Map<string, string> | undefined;
	const hashed = () => {
		const {createHash} = process.getBuiltinModule('node:crypto');
		return new Map(cwds.map(cwd => [createHash('sha256').update(cwd).digest('hex'), cwd]));
	};
	return folder => bySlug.get(folder) ?? (LEGACY_FOLDER.test(folder) ? (byHash ??= hashed()).get(folder) : undefined);
}

function projectsOf(root: string): Project[] {
	const tmp = path.join(root, 'tmp');
	const nameOf = projectNames(root);
	return listDir(tmp)
		.filter(e => e.isDirectory())
		.map(e => {
			const dir = path.join(tmp, e.name);
			const cwd = readSmallText(path.join(dir, '.project_root'))?.trim() || nameOf(e.name);
			return cwd ? {dir, cwd} : {dir};
		});
}

/** What one chat file says about its session. */
interface ChatFile {
	readonly file: string;
	readonly id: string;
	readonly startedAt?: number;
	readonly updatedAt?: number;
	readonly realMessages: number;
	readonly firstPrompt?: string;
}

function textOf(content: unknown): string | undefined {
	if (typeof content === 'string') return content;
	if (!Array.isArray(content)) return undefined;
	const parts = content.map(p => (typeof p === 'object' && p !== null && typeof (p as {text?: unknown}).text === 'string' ? (p as {text: string}).text : ''));
	return parts.join('');
}

function isRealMessage(record: Record<string, unknown>): boolean {
	if (record['type'] !== 'user' && record['type'] !== 'gemini') return false;
	return !(textOf(record['content']) ?? '').trimStart().startsWith(SESSION_CONTEXT);
}

/** A chat file, parsed again only when it changed (a refresh re-reads the one that grew, not all). */
function parseChat(file: string): ChatFile | undefined {
	return parseCached('gemini-chat', file, '', () => parseChatNow(file));
}

/** Parse a whole `.jsonl` (header, messages, `$set` patches, `$rewindTo`) or a legacy `.json` record. */
function parseChatNow(file: string): ChatFile | undefined {
	const body = readSmallText(file);
	if (body === undefined) return undefined;
	const records = file.endsWith('.json') ? legacyRecords(body) : body.split('\n').map(parseJsonLine);
	let id: string | undefined;
	let startedAt: number | undefined;
	let updatedAt: number | undefined;
	const messages: Record<string, unknown>[] = [];
	const bump = (value: unknown) => {
		const ms = isoMs(value);
		if (ms !== undefined) updatedAt = Math.max(updatedAt ?? ms, ms);
	};
	for (const record of records) {
		if (!record) continue;
		if (typeof record['sessionId'] === 'string' && id === undefined) {
			id = record['sessionId'];
			startedAt = isoMs(record['startTime']);
		}
		bump(record['lastUpdated']);
		const patch = record['$set'];
		if (typeof patch === 'object' && patch !== null) bump((patch as Record<string, unknown>)['lastUpdated']);
		if (typeof record['$rewindTo'] === 'string') {
			const at = messages.findIndex(m => m['id'] === record['$rewindTo']);
			messages.splice(at < 0 ? 0 : at);
		} else if (typeof record['id'] === 'string' && !messages.some(m => m['id'] === record['id'])) {
			messages.push(record);
			bump(record['timestamp']);
		}
	}
	if (id === undefined) return undefined;
	const real = messages.filter(isRealMessage);
	const prompt = real.find(m => m['type'] === 'user');
	const firstPrompt = prompt ? textOf(prompt['content']) : undefined;
	return {
		file,
		id,
		realMessages: real.length,
		...(startedAt !== undefined ? {startedAt} : {}),
		...(updatedAt !== undefined ? {updatedAt} : {}),
		...(firstPrompt ? {firstPrompt} : {}),
	};
}

/** A legacy whole-file `.json` conversation as records: the header fields, then its messages. */
function legacyRecords(body: string): (Record<string, unknown> | undefined)[] {
	const whole = parseJsonLine(body.replace(/\n/g, ' '));
	if (!whole) return [];
	const messages = Array.isArray(whole['messages']) ? (whole['messages'] as unknown[]) : [];
	return [whole, ...messages.map(m => (typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined))];
}

/** One session: every file carrying its full id, in one project. */
interface Session {
	readonly id: string;
	readonly project: Project;
	readonly files: readonly ChatFile[];
	/** Set for a sub-agent: the session whose `chats/<parent>/` folder holds it. */
	readonly parentId?: string;
}

/**
 * Every session of a project: main chats grouped by the id inside them, and sub-agent transcripts.
 * With `only`, just the files that can hold that id: main chats named `…-<first 8>.json(l)` and
 * sub-agent transcripts named `<id>.json(l)` (FORMATS 4), the id inside each still confirmed by the
 * caller. Verifying one session then reads a few files instead of every chat of every project.
 */
function sessionsOf(project: Project, only?: string): Session[] {
	const chats = path.join(project.dir, 'chats');
	const byId = new Map<string, ChatFile[]>();
	const out: Session[] = [];
	const mainName = only === undefined ? undefined : new RegExp(`-${escapeRegExp(only.slice(0, 8))}\\.jsonl?$`);
	const subName = only === undefined ? undefined : new Set([`${only}.json`, `${only}.jsonl`]);
	for (const entry of listDir(chats)) {
		if (entry.isFile() && MAIN_CHAT.test(entry.name) && (mainName === undefined || mainName.test(entry.name))) {
			const chat = parseChat(path.join(chats, entry.name));
			if (chat && ID_PATTERN.test(chat.id)) pushTo(byId, chat.id, chat);
		} else if (entry.isDirectory() && ID_PATTERN.test(entry.name)) {
			for (const sub of listDir(path.join(chats, entry.name))) {
				if (!sub.isFile() || !/\.jsonl?$/.test(sub.name) || (subName !== undefined && !subName.has(sub.name))) continue;
				const chat = parseChat(path.join(chats, entry.name, sub.name));
				if (chat && ID_PATTERN.test(chat.id)) out.push({id: chat.id, project, files: [chat], parentId: entry.name});
			}
		}
	}
	for (const [id, files] of byId) out.push({id, project, files});
	return out;
}

/** A chat file found by its name, not read yet. */
interface ChatRef {
	readonly project: Project;
	readonly file: string;
	/** For a sub-agent transcript: the folder (its parent's id) it lies in. */
	readonly parentId?: string;
}

const MAIN_KEY = /-([^/]{8})\.jsonl?$/;
const SUB_FILE = /^(.+)\.jsonl?$/;

/**
 * Every project's main chat files by the 8 characters their name ends in (the id's first 8,
 * FORMATS 4), in listing order. Names only: a link or folder so named is no chat, since
 * `parseChat` reads regular files only (readSmallText lstat()s them).
 */
function mainChatIndex(ctx: AdapterContext, projects: readonly Project[]): Map<string, ChatRef[]> {
	const index = new Map<string, ChatRef[]>();
	for (const project of projects) {
		const chats = path.join(project.dir, 'chats');
		for (const name of chatNames(ctx, chats)) {
			const key = mainChatKey(name);
			// Thousands of names: a plain join (chats is already normal, the name has no separator).
			if (key !== undefined) pushTo(index, key, {project, file: `${chats}${path.sep}${name}`});
		}
	}
	return index;
}

/** The id prefix a main chat file's name ends in (`session-…-<first 8>.json(l)`), if it is one. */
function mainChatKey(name: string): string | undefined {
	return MAIN_CHAT.test(name) ? MAIN_KEY.exec(name)?.[1] : undefined;
}

/** A chats folder's names, listed once per refresh. */
function chatNames(ctx: AdapterContext, chats: string): readonly string[] {
	return memo(ctx, `gemini:names:${chats}`, () => listNames(chats));
}

/**
 * The main chat files that can hold an id starting with `first8`, in `mainChatIndex` order. A few
 * ids (a status run) are looked for by name ending in each project's listing; more share the index.
 */
function mainChatsFor(ctx: AdapterContext, root: string, projects: readonly Project[], first8: string): readonly ChatRef[] {
	const index = indexAfter(ctx, `gemini:main-chats:${root}`, () => mainChatIndex(ctx, projects));
	if (index) return index.get(first8) ?? [];
	const out: ChatRef[] = [];
	for (const project of projects) {
		const chats = path.join(project.dir, 'chats');
		// `includes` first: the pattern is tested only on the few names that can match.
		for (const name of chatNames(ctx, chats)) if (name.includes(first8) && mainChatKey(name) === first8) out.push({project, file: `${chats}${path.sep}${name}`});
	}
	return out;
}

/** Every project's sub-agent transcripts (`chats/<parent>/<id>.json(l)`) by the id in their name. */
function subAgentIndex(projects: readonly Project[]): Map<string, ChatRef[]> {
	const index = new Map<string, ChatRef[]>();
	for (const project of projects) {
		const chats = path.join(project.dir, 'chats');
		for (const entry of listDir(chats)) {
			if (!entry.isDirectory() || !ID_PATTERN.test(entry.name)) continue;
			for (const sub of listDir(path.join(chats, entry.name))) {
				const name = sub.isFile() ? SUB_FILE.exec(sub.name)?.[1] : undefined;
				if (name !== undefined) pushTo(index, name, {project, file: path.join(chats, entry.name, sub.name), parentId: entry.name});
			}
		}
	}
	return index;
}

/** The sessions the files in `refs` hold, grouped as `sessionsOf` groups them (per project, main chats by id). */
function sessionsFrom(refs: readonly ChatRef[], id: string): Session[] {
	const out: Session[] = [];
	const mains = new Map<Project, ChatFile[]>();
	for (const ref of refs) {
		const chat = parseChat(ref.file);
		if (!chat || chat.id !== id) continue;
		if (ref.parentId !== undefined) out.push({id, project: ref.project, files: [chat], parentId: ref.parentId});
		else pushTo(mains, ref.project, chat);
	}
	for (const [project, files] of mains) out.push({id, project, files});
	return out;
}

/**
 * The sessions with `id` (verify and inUse). Inside a refresh: the main chats named for it (by
 * name in each project's listing, or from an index once many ids were asked), and, only when no
 * main chat holds the id, sub-agent transcripts from an index made once (listing every sub-agent
 * folder of every project is most of the cost, and registry rows are main sessions). A status run
 * asks for a handful of ids; each used to test every name in every project again. Outside a
 * refresh (one question), the projects are looked through directly.
 */
function sessionsWithId(ctx: AdapterContext, id: string): Session[] {
	const root = geminiRoot(ctx);
	const projects = memo(ctx, `gemini:projects:${root}`, () => projectsOf(root));
	if (!ctx.memo || id.length < 8) return projects.flatMap(p => sessionsOf(p, id)).filter(s => s.id === id);
	const main = sessionsFrom(mainChatsFor(ctx, root, projects, id.slice(0, 8)), id);
	if (main.length > 0) return main;
	return sessionsFrom(memo(ctx, `gemini:sub-agents:${root}`, () => subAgentIndex(projects)).get(id) ?? [], id);
}

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

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function allSessions(root: string): Session[] {
	return projectsOf(root).flatMap(p => sessionsOf(p));
}

/** Every session, read once per refresh (memo) for the many verify/inUse calls a refresh makes. */
function sessionsIn(ctx: AdapterContext): Session[] {
	const root = geminiRoot(ctx);
	return memo(ctx, `gemini:sessions:${root}`, () => allSessions(root));
}

function createdAt(session: Session): number {
	const starts = session.files.map(f => f.startedAt).filter((t): t is number => t !== undefined);
	if (starts.length > 0) return Math.min(...starts);
	return Math.min(...session.files.map(f => Math.round(lstatOrUndefined(f.file)?.mtimeMs ?? 0)));
}

function updatedAt(session: Session): number {
	return Math.max(createdAt(session), ...session.files.map(f => f.updatedAt ?? 0));
}

function resumeStateOf(session: Session): ResumeState {
	if (session.parentId) return {kind: 'no', reason: 'a sub-agent transcript is not resumable'};
	const messages = session.files.reduce((n, f) => n + f.realMessages, 0);
	return messages > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'};
}

/** The sub-agent sessions in `chats/<id>/`, their own sub-agents' folders, and so on down. */
function subAgentsBelow(project: Project, id: string): Session[] {
	const chats = path.join(project.dir, 'chats');
	const out: Session[] = [];
	const visited = new Set<string>();
	const queue = [id];
	for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
		if (visited.has(parent) || !ID_PATTERN.test(parent)) continue;
		visited.add(parent);
		const folder = path.join(chats, parent);
		if (lstatOrUndefined(folder)?.isDirectory() !== true) continue;
		for (const sub of listDir(folder)) {
			if (!sub.isFile() || !/\.jsonl?$/.test(sub.name)) continue;
			const chat = parseChat(path.join(folder, sub.name));
			if (!chat || !ID_PATTERN.test(chat.id)) continue;
			out.push({id: chat.id, project, files: [chat], parentId: parent});
			queue.push(chat.id);
		}
	}
	return out;
}

function descendantsOf(sessions: readonly Session[], id: string): Session[] {
	const out: Session[] = [];
	const queue = [id];
	while (queue.length > 0) {
		const parent = queue.shift();
		for (const child of sessions.filter(s => s.parentId === parent && s.id !== id && !out.includes(s))) {
			out.push(child);
			queue.push(child.id);
		}
	}
	return out;
}

function toConversation(session: Session, children: ReadonlyMap<string, number>): Conversation {
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

function planFor(root: string, id: string): {descendants: string[]; items: PlanItem[]} {
	const sessions = allSessions(root);
	const descendants = new Set<string>();
	const items: (PlanItem | undefined)[] = [];
	for (const project of projectsOf(root)) {
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
			items.push(dirItem(path.join(project.dir, 'chats', x), x, `${label} folder of sub-agent transcripts`, childBytes(items, path.join(project.dir, 'chats', x))));
		}
		const ids = [id, ...children.map(c => c.id)];
		const logged = logEntries(project).filter(e => typeof e['sessionId'] === 'string' && ids.includes(e['sessionId']));
		if (logged.length > 0) items.push({kind: 'lines', path: path.join(project.dir, 'logs.json'), count: logged.length, bytes: 0, sessionId: id, description: 'logs.json prompt entries'});
	}
	return {descendants: [...descendants], items: items.filter((i): i is PlanItem => i !== undefined)};
}

/** Bytes of items already planned inside `dir`, so the folder item does not count them twice. */
function childBytes(items: readonly (PlanItem | undefined)[], dir: string): number {
	return items.filter((i): i is PlanItem => i !== undefined && i.path.startsWith(`${dir}${path.sep}`)).reduce((n, i) => n + i.bytes, 0);
}

/** Rewrite logs.json without the entries of `ids`, in the style it was written. */
function dropLogEntries(roots: readonly string[], file: string, ids: readonly string[]): void {
	const text = readSmallText(file);
	const entries = JSON.parse(text ?? '[]') as unknown;
	if (!Array.isArray(entries)) return;
	const kept = entries.filter(e => !(typeof e === 'object' && e !== null && ids.includes(String((e as {sessionId?: unknown}).sessionId))));
	rewriteJsonFile(file, roots, text, kept);
}

/** Right before a chat file goes, its header must still carry one of the ids (FORMATS 4, 10). */
function stillNames(item: PlanItem, ids: readonly string[]): boolean {
	if (!MAIN_CHAT.test(path.basename(item.path)) || !item.description.includes('transcript')) return true;
	const header = item.path.endsWith('.json') ? legacyRecords(readSmallText(item.path) ?? '')[0] : readFirstJsonLine(item.path);
	return typeof header?.['sessionId'] === 'string' && ids.includes(header['sessionId']);
}

/** Only a full session id in argv names one session: `-r latest` and `-r 3` depend on the project's list. */
const SESSION_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A session whose project folder is unknown: every project claim reaches it (fail safe). */
const ANY_FOLDER = '\0any';

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
		const want = query.cwd === undefined ? undefined : canonicalCwd(query.cwd);
		// Children per (project, parent) counted in one pass, not once per session (sessions²).
		const children = new Map<string, number>();
		for (const s of sessions) if (s.parentId) children.set(`${s.project.dir}\0${s.parentId}`, (children.get(`${s.project.dir}\0${s.parentId}`) ?? 0) + 1);
		const conversations = sessions
			.filter(s => s.project.cwd !== undefined)
			.filter(s => query.includeChildren || !s.parentId)
			.filter(s => want === undefined || canonicalCwd(s.project.cwd ?? '') === want)
			.map(s => toConversation(s, children))
			.filter(c => query.since === undefined || c.createdAt >= query.since)
			.sort((a, b) => b.createdAt - a.createdAt);
		return {conversations, problems: []};
	},

	watchPaths(ctx, cwd) {
		const root = geminiRoot(ctx);
		const want = canonicalCwd(cwd);
		// The project folders are the same for every cwd: read once per refresh.
		const chats = memo(ctx, `gemini:projects:${root}`, () => projectsOf(root))
			.filter(p => p.cwd !== undefined && canonicalCwd(p.cwd) === want)
			.map(p => path.join(p.dir, 'chats'));
		// New chat files and sub-agent folders move a chats folder; a new turn grows its file.
		const inside = chats.flatMap(dir => listDir(dir).map(e => path.join(dir, e.name)));
		return [path.join(root, 'tmp'), path.join(root, 'projects.json'), ...chats, ...inside];
	},

	async verify(ctx, id, cwd) {
		assertValidId(geminiAdapter, id);
		const found = sessionsWithId(ctx, id);
		if (found.length === 0) return {kind: 'no', reason: `no gemini session ${id}`};
		const state = found.map(resumeStateOf).find(s => s.kind === 'yes') ?? resumeStateOf(found[0] as Session);
		if (state.kind !== 'yes' || cwd === undefined) return state;
		const want = canonicalCwd(cwd);
		if (found.some(s => s.project.cwd !== undefined && canonicalCwd(s.project.cwd) === want)) return state;
		// gemini resumes only from the project's own folder (rc 42 elsewhere, FORMATS 10).
		return {kind: 'no', reason: `belongs to ${found.map(s => s.project.cwd ?? s.project.dir).join(', ')}`};
	},

	async artifacts(ctx, id) {
		assertValidId(geminiAdapter, id);
		const {descendants, items} = planFor(geminiRoot(ctx), id);
		return makePlan('gemini', id, descendants, items);
	},

	async purge(ctx, id) {
		assertValidId(geminiAdapter, id);
		const root = geminiRoot(ctx);
		const plan = await geminiAdapter.artifacts(ctx, id);
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
		const sessions = allSessions(root);
		const descendants = [...new Set(projectsOf(root).flatMap(p => descendantsOf(sessions.filter(s => s.project.dir === p.dir), id).map(s => s.id)))];
		// Main chat files are named by an 8-character prefix: only the id inside them counts.
		const chats = sessions
			.filter(s => !s.parentId && (s.id === id || descendants.includes(s.id)))
			.flatMap(s => s.files.map(f => `${f.file}: chat file of ${s.id}${s.id === id ? '' : ` [child session ${s.id}]`}`));
		const names = scanResidual({
			id,
			descendants,
			roots: [path.join(root, 'tmp')],
			indexFiles: projectsOf(root).map(p => path.join(p.dir, 'logs.json')).filter(f => lstatOrUndefined(f)),
			databases: [],
		});
		return [...chats, ...names];
	},

	async inUse(ctx, id) {
		assertValidId(geminiAdapter, id);
		// Only the files that can hold the session and the sub-agent folders below it are read
		// (as in verify), not every chat of every project.
		const own = sessionsWithId(ctx, id);
		const family = [...own, ...own.flatMap(s => descendantsOf(subAgentsBelow(s.project, id), id))];
		const ids = [...new Set([id, ...family.map(s => s.id)])];
		const files = family.flatMap(s => s.files.map(f => realpathOrUndefined(f.file))).filter((f): f is string => f !== undefined);
		const uses = await memo(ctx, `gemini:uses:${geminiRoot(ctx)}`, () => geminiLiveUses(ctx));
		const cwds = needsFolders(uses) ? [...new Set(own.map(s => s.project.cwd ?? ANY_FOLDER))] : [];
		const byProject = usersOf(uses, {ids, cwds}, (claim, cwd) => cwd === ANY_FOLDER || sameResolved(claim, cwd));
		return uniqueHolders([...byProject, ...(await argvUsers(ctx, ids)), ...(await fileUsers(ctx, files))]);
	},

	liveUses: (ctx, procs) => geminiLiveUses(ctx, procs),
};
