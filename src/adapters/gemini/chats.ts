// Gemini CLI's project folders (FORMATS 4): chat files, the sessions they hold, and lookups by
// id (by name in each listing, or from an index once many ids were asked).

import path from 'node:path';
import {readSmallText} from '../common/jsonRecords.js';
import {isoMs} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {listDir, listNames} from '../common/paths.js';
import {pushTo} from '../common/groups.js';
import {indexAfter, type InRefresh, memo, memoKind, parseCached, persistedParseKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';

const NAMES = memoKind<string[]>('gemini:names');
export const MAIN_CHATS = memoKind<ReturnType<typeof mainChatIndex>>('gemini:main-chats');
/** The project folders of a gemini root; the adapter's watch paths share it. */
export const PROJECTS = memoKind<Project[]>('gemini:projects');
export const SUB_AGENTS = memoKind<ReturnType<typeof subAgentIndex>>('gemini:sub-agents');

/**
 * gemini's `--session-id` charset, minus a leading `-` (it would read as a flag) and minus the
 * names of the shared folders inside a project folder, which `<project>/<id>/` would resolve to.
 */
export const ID_PATTERN = /^(?!(?:chats|logs|tool-outputs|plans|tracker|tasks|memory|checkpoints|history)$)[A-Za-z0-9_][A-Za-z0-9_-]*$/;

export const MAIN_CHAT = /^session-.+\.jsonl?$/;

const SESSION_CONTEXT = '<session_context>';

export const PROGRAMS = ['gemini'];

/** `GEMINI_CLI_HOME` replaces the home directory (own home only); the tree is `<home>/.gemini`. */
export function geminiRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['GEMINI_CLI_HOME'] : undefined;
	return path.join(override ? path.resolve(override) : ctx.home, '.gemini');
}

export interface Project {
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

export function projectsOf(ctx: InRefresh, root: string): Project[] {
	const tmp = path.join(root, 'tmp');
	const nameOf = projectNames(root);
	return listDir(tmp, ctx)
		.filter(e => e.isDirectory())
		.map(e => {
			const dir = path.join(tmp, e.name);
			const cwd = readSmallText(path.join(dir, '.project_root'))?.trim() || nameOf(e.name);
			return cwd ? {dir, cwd} : {dir};
		});
}

/** What one chat file says about its session. */
/** A chat file's summary, kept across starts (bump the version when `ChatFile` or its parse changes). */
export const CHAT_PARSE = persistedParseKind<ChatFile | undefined>('gemini-chat', 1);

export interface ChatFile {
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
export function parseChat(ctx: InRefresh, file: string): ChatFile | undefined {
	return parseCached(ctx, CHAT_PARSE, file, '', () => parseChatNow(file));
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
export function legacyRecords(body: string): (Record<string, unknown> | undefined)[] {
	const whole = parseJsonLine(body.replace(/\n/g, ' '));
	if (!whole) return [];
	const messages = Array.isArray(whole['messages']) ? (whole['messages'] as unknown[]) : [];
	return [whole, ...messages.map(m => (typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined))];
}

/** One session: every file carrying its full id, in one project. */
export interface Session {
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
export function sessionsOf(ctx: InRefresh, project: Project, only?: string): Session[] {
	const chats = path.join(project.dir, 'chats');
	const byId = new Map<string, ChatFile[]>();
	const out: Session[] = [];
	const mainName = only === undefined ? undefined : new RegExp(`-${escapeRegExp(only.slice(0, 8))}\\.jsonl?$`);
	const subName = only === undefined ? undefined : new Set([`${only}.json`, `${only}.jsonl`]);
	for (const entry of listDir(chats, ctx)) {
		if (entry.isFile() && MAIN_CHAT.test(entry.name) && (mainName === undefined || mainName.test(entry.name))) {
			const chat = parseChat(ctx, path.join(chats, entry.name));
			if (chat && ID_PATTERN.test(chat.id)) pushTo(byId, chat.id, chat);
		} else if (entry.isDirectory() && ID_PATTERN.test(entry.name)) {
			for (const sub of listDir(path.join(chats, entry.name), ctx)) {
				if (!sub.isFile() || !/\.jsonl?$/.test(sub.name) || (subName !== undefined && !subName.has(sub.name))) continue;
				const chat = parseChat(ctx, path.join(chats, entry.name, sub.name));
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
	return memo(ctx, NAMES.of(chats), () => listNames(chats, ctx));
}

/**
 * The main chat files that can hold an id starting with `first8`, in `mainChatIndex` order. A few
 * ids (a status run) are looked for by name ending in each project's listing; more share the index.
 */
function mainChatsFor(ctx: AdapterContext, root: string, projects: readonly Project[], first8: string): readonly ChatRef[] {
	const index = indexAfter(ctx, MAIN_CHATS.of(root), () => mainChatIndex(ctx, projects));
	if (index) return index.get(first8) ?? [];
	const out: ChatRef[] = [];
	for (const project of projects) {
		const chats = path.join(project.dir, 'chats');
		// `includes` first: the pattern is tested only on the few names that can match.
		for (const name of chatNames(ctx, chats))
			if (name.includes(first8) && mainChatKey(name) === first8) out.push({project, file: `${chats}${path.sep}${name}`});
	}
	return out;
}

/** Every project's sub-agent transcripts (`chats/<parent>/<id>.json(l)`) by the id in their name. */
function subAgentIndex(ctx: InRefresh, projects: readonly Project[]): Map<string, ChatRef[]> {
	const index = new Map<string, ChatRef[]>();
	for (const project of projects) {
		const chats = path.join(project.dir, 'chats');
		for (const entry of listDir(chats, ctx)) {
			if (!entry.isDirectory() || !ID_PATTERN.test(entry.name)) continue;
			for (const sub of listDir(path.join(chats, entry.name), ctx)) {
				const name = sub.isFile() ? SUB_FILE.exec(sub.name)?.[1] : undefined;
				if (name !== undefined) pushTo(index, name, {project, file: path.join(chats, entry.name, sub.name), parentId: entry.name});
			}
		}
	}
	return index;
}

/** The sessions the files in `refs` hold, grouped as `sessionsOf` groups them (per project, main chats by id). */
function sessionsFrom(ctx: InRefresh, refs: readonly ChatRef[], id: string): Session[] {
	const out: Session[] = [];
	const mains = new Map<Project, ChatFile[]>();
	for (const ref of refs) {
		const chat = parseChat(ctx, ref.file);
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
export function sessionsWithId(ctx: AdapterContext, id: string): Session[] {
	const root = geminiRoot(ctx);
	const projects = memo(ctx, PROJECTS.of(root), () => projectsOf(ctx, root));
	if (!ctx.refresh || id.length < 8) return projects.flatMap(p => sessionsOf(ctx, p, id)).filter(s => s.id === id);
	const main = sessionsFrom(ctx, mainChatsFor(ctx, root, projects, id.slice(0, 8)), id);
	if (main.length > 0) return main;
	return sessionsFrom(ctx, memo(ctx, SUB_AGENTS.of(root), () => subAgentIndex(ctx, projects)).get(id) ?? [], id);
}

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
