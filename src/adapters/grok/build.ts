// Grok Build's session folders (updates.jsonl and summary.json per session): what each says,
// read whole or one folder at a time, and their parent links.

import path from 'node:path';
import type {Conversation} from '../../domain/types.js';
import {parseJsonOrUndefined, readSmallText, toEpochMs} from '../common/jsonRecords.js';
import {obj, oneLine, readJsonl, str} from '../common/jsonl.js';
import {listDir, lstatOrUndefined} from '../common/paths.js';
import {indexAfter, type InRefresh, memo, memoHas, memoKind, parseCached, persistedParseKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';
import {sessionDescendants, sessionTree, type SessionTree} from '../common/groups.js';

const GROUPS = memoKind<string[]>('grok:groups');
const BUILD_SESSIONS = memoKind<BuildSession[]>('grok:build');
const LINKS = memoKind<readonly BuildLink[]>('grok:links');
/** Each list of sessions' tree (see `treeOf`), for this refresh. */
const TREES = memoKind<WeakMap<readonly BuildLink[], SessionTree<BuildLink>>>('grok:trees');

const BUILD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const CLI_ID = /^[0-9a-f]{12}$/;

export const ID_PATTERN = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12})$/;

export const PROGRAMS = ['grok'];

const SUBAGENT_KINDS: ReadonlySet<string> = new Set(['subagent', 'subagent_fork']);

type Layout = 'build' | 'cli';

export function layoutOf(id: string): Layout {
	return CLI_ID.test(id) ? 'cli' : 'build';
}

/** Grok Build: `GROK_HOME` (own home only), else `<home>/.grok`. */
export function buildRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['GROK_HOME'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.grok');
}

/** grok-cli hard-codes `homedir()/.grok` (no env override). */
export function cliRoot(ctx: AdapterContext): string {
	return path.join(ctx.home, '.grok');
}

export function cliDb(ctx: AdapterContext): string {
	return path.join(cliRoot(ctx), 'grok.db');
}

/** One Grok Build session folder and what its summary.json and updates.jsonl say. */
/** A session folder's summary, kept across starts (bump the version when `BuildSession` or its parse changes). */
export const BUILD_PARSE = persistedParseKind<BuildSession | undefined>('grok-build', 1);
/** A session folder's id and parent, kept across starts. */
export const LINK_PARSE = persistedParseKind<BuildLink | undefined>('grok-link', 1);

export interface BuildSession {
	readonly id: string;
	readonly dir: string;
	readonly group: string;
	readonly cwd?: string;
	readonly parentId?: string;
	readonly isSubagent: boolean;
	readonly title?: string;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly realMessages: number;
}

/** The cwd a group folder stands for: its `.cwd` file, else the URL-decoded folder name. */
function groupCwd(group: string): string | undefined {
	const file = readSmallText(path.join(group, '.cwd'), 64 * 1024)?.trim();
	if (file) return file;
	try {
		const decoded = decodeURIComponent(path.basename(group));
		return path.isAbsolute(decoded) ? decoded : undefined;
	} catch {
		return undefined;
	}
}

function updateStats(file: string): {messages: number; first?: number; last?: number} {
	let records: Record<string, unknown>[];
	try {
		records = readJsonl(file);
	} catch {
		return {messages: 0};
	}
	let messages = 0;
	let first: number | undefined;
	let last: number | undefined;
	for (const record of records) {
		const at = toEpochMs(record['timestamp']);
		if (at !== undefined) {
			first = Math.min(first ?? at, at);
			last = Math.max(last ?? at, at);
		}
		const update = obj(obj(record, 'params'), 'update');
		const kind = str(update, 'sessionUpdate');
		if (kind === 'user_message_chunk' || kind === 'agent_message_chunk') messages++;
	}
	return {messages, ...(first !== undefined ? {first} : {}), ...(last !== undefined ? {last} : {})};
}

function readBuildSession(group: string, name: string): BuildSession | undefined {
	const dir = path.join(group, name);
	const summary = parseJsonOrUndefined(readSmallText(path.join(dir, 'summary.json'))) as Record<string, unknown> | undefined;
	const info = obj(summary, 'info');
	const id = str(info, 'id') ?? name;
	// The folder name is the id; a summary naming another id is not trusted with either.
	if (id !== name || !BUILD_ID.test(id)) return undefined;
	const stats = updateStats(path.join(dir, 'updates.jsonl'));
	const mtime = Math.round(lstatOrUndefined(dir)?.mtimeMs ?? 0);
	const createdAt = toEpochMs(summary?.['created_at']) ?? stats.first ?? mtime;
	const updatedAt = Math.max(createdAt, toEpochMs(summary?.['updated_at']) ?? 0, stats.last ?? 0);
	const parent = str(summary, 'parent_session_id');
	const kind = str(summary, 'session_kind') ?? '';
	const title = str(summary, 'generated_title') ?? str(summary, 'session_summary');
	const cwd = str(info, 'cwd') ?? groupCwd(group);
	return {
		id,
		dir,
		group,
		createdAt,
		updatedAt,
		realMessages: stats.messages,
		isSubagent: SUBAGENT_KINDS.has(kind) || (parent !== undefined && BUILD_ID.test(parent)),
		...(cwd ? {cwd} : {}),
		...(parent && BUILD_ID.test(parent) ? {parentId: parent} : {}),
		...(title ? {title: oneLine(title)} : {}),
	};
}

/** One session folder, parsed again only when its updates.jsonl or summary.json moved. */
function buildSessionAt(ctx: InRefresh, groupDir: string, name: string): BuildSession | undefined {
	const dir = path.join(groupDir, name);
	const summary = lstatOrUndefined(path.join(dir, 'summary.json'));
	// The parse depends on summary.json too: its stat joins updates.jsonl's in the key.
	return parseCached(ctx, BUILD_PARSE, path.join(dir, 'updates.jsonl'), `${summary?.mtimeMs}:${summary?.size}`, () => readBuildSession(groupDir, name));
}

/** The cwd group folders, in listing order (listed once per refresh). */
export function buildGroups(ctx: AdapterContext): string[] {
	const sessions = path.join(buildRoot(ctx), 'sessions');
	return memo(ctx, GROUPS.of(sessions), () =>
		listDir(sessions, ctx)
			.filter(e => e.isDirectory())
			.map(e => path.join(sessions, e.name)),
	);
}

/** Every Grok Build session; read once per refresh (memo), each folder re-read only when its updates.jsonl or summary moved. */
export function buildSessions(ctx: AdapterContext): BuildSession[] {
	return memo(ctx, buildKey(ctx), () => buildSessionsNow(ctx));
}

const buildKey = (ctx: AdapterContext) => BUILD_SESSIONS.of(path.join(buildRoot(ctx), 'sessions'));

function buildSessionsNow(ctx: AdapterContext): BuildSession[] {
	const out: BuildSession[] = [];
	for (const groupDir of buildGroups(ctx)) {
		for (const entry of listDir(groupDir, ctx).filter(e => e.isDirectory() && BUILD_ID.test(e.name))) {
			const session = buildSessionAt(ctx, groupDir, entry.name);
			if (session) out.push(session);
		}
	}
	return out;
}

/**
 * The whole index when this refresh has it or has asked too many ids directly; else undefined:
 * look in each group for the id's own folder (a stat per group, one summary.json and updates.jsonl).
 */
function indexFor(ctx: AdapterContext): BuildSession[] | undefined {
	return indexAfter(ctx, buildKey(ctx), () => buildSessionsNow(ctx));
}

/** The first group's session folder named `id` (the index's `find`), read alone. */
export function buildSessionOf(ctx: AdapterContext, id: string): BuildSession | undefined {
	const index = indexFor(ctx);
	if (index) return treeOf(ctx, index).byId.get(id)?.[0];
	for (const groupDir of buildGroups(ctx)) {
		// A folder, not a link to one (the listing's Dirent type is the entry's own).
		if (!lstatOrUndefined(path.join(groupDir, id))?.isDirectory()) continue;
		const session = buildSessionAt(ctx, groupDir, id);
		if (session) return session;
	}
	return undefined;
}

/** What inUse needs of a session: its folder and parent (summary.json only, never updates.jsonl). */
export interface BuildLink {
	readonly id: string;
	readonly dir: string;
	readonly parentId?: string;
}

function readBuildLink(dir: string, name: string): BuildLink | undefined {
	const summary = parseJsonOrUndefined(readSmallText(path.join(dir, 'summary.json'))) as Record<string, unknown> | undefined;
	const id = str(obj(summary, 'info'), 'id') ?? name;
	// The same validity and parent rules as readBuildSession.
	if (id !== name || !BUILD_ID.test(id)) return undefined;
	const parent = str(summary, 'parent_session_id');
	return {id, dir, ...(parent && BUILD_ID.test(parent) ? {parentId: parent} : {})};
}

/**
 * Every session's folder and parent, for descendants (which no single folder names): the full
 * index when the refresh has it, else the summaries alone (one small file per folder, parsed
 * again only when it moved) instead of every updates.jsonl.
 */
export function buildLinks(ctx: AdapterContext): readonly BuildLink[] {
	if (memoHas(ctx, buildKey(ctx))) return buildSessions(ctx);
	return memo(ctx, LINKS.of(buildRoot(ctx)), () => {
		const out: BuildLink[] = [];
		for (const groupDir of buildGroups(ctx)) {
			for (const entry of listDir(groupDir, ctx).filter(e => e.isDirectory() && BUILD_ID.test(e.name))) {
				const dir = path.join(groupDir, entry.name);
				const link = parseCached(ctx, LINK_PARSE, path.join(dir, 'summary.json'), '', () => readBuildLink(dir, entry.name));
				if (link) out.push(link);
			}
		}
		return out;
	});
}

/** Descendants through `parent_session_id` in every session's summary.json, at any depth. */
export function buildDescendants<T extends BuildLink>(sessions: readonly T[], id: string): T[] {
	return sessionDescendants(sessions, id);
}

/** The sessions named `id` (one per group that has it) and their descendants. */
export function buildFamily<T extends BuildLink>(ctx: InRefresh, sessions: readonly T[], id: string): T[] {
	const tree = treeOf(ctx, sessions);
	return [...(tree.byId.get(id) ?? []), ...sessionDescendants(sessions, id, tree)];
}

/**
 * `sessionTree` of this list, made once per list inside a refresh: a refresh asks inUse about
 * thousands of sessions, and a scan of every session per id was most of it.
 */
function treeOf<T extends BuildLink>(ctx: InRefresh, sessions: readonly T[]): SessionTree<T> {
	const trees = memo(ctx, TREES.of(), () => new WeakMap<readonly BuildLink[], SessionTree<BuildLink>>());
	let tree = trees.get(sessions);
	if (!tree) trees.set(sessions, (tree = sessionTree(sessions)));
	// Made from this very list (the key): its entries are T.
	return tree as SessionTree<T>;
}

export function buildConversation(session: BuildSession, children: ReadonlyMap<string, number>): Conversation {
	return {
		agent: 'grok',
		id: session.id,
		cwd: session.cwd ?? '',
		createdAt: session.createdAt,
		updatedAt: session.updatedAt,
		...(session.parentId ? {parentId: session.parentId} : {}),
		...(session.title ? {title: session.title} : {}),
		childCount: children.get(session.id) ?? 0,
		resumeState: session.realMessages > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'},
	};
}
