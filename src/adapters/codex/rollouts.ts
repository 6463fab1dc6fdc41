// Codex rollouts (FORMATS 2): where they lie, what their first line and records say, and which
// ones belong to a thread. Split from codex.ts; the adapter itself stays there.

import fs from 'node:fs';
import path from 'node:path';
import type {ResumeState} from '../../domain/types.js';
import {isoMs, obj, readFirstJsonLine, readJsonl, str} from '../common/jsonl.js';
import {listDir, lstatOrUndefined} from '../common/paths.js';
import {pushTo} from '../common/groups.js';
import {type InRefresh, memo, memoHas, memoKind, parseCached, persistedParseKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';

/** A refresh's memo (common/refresh.ts): is this date folder a real one (not a link)? */
const REAL_FOLDER = memoKind<boolean>('codex:real-folder');
/** Every rollout of a codex home; `verifyRolloutsOf` asks whether the refresh holds it. */
export const ROLLOUTS = memoKind<RolloutFile[]>('codex:rollouts');
const ROLLOUTS_BY_ID = memoKind<Map<string, RolloutFile[]>>('codex:rollouts-by-id');

export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** `rollout-<local time>-<thread id>.jsonl` (FORMATS 2). */
export const ROLLOUT_FILE = new RegExp(`^rollout-\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-(${UUID})\\.jsonl$`);

/** Generation-numbered databases: state_5.sqlite, thread_history_1.sqlite, logs_2.sqlite, … */
const GENERATION_DB = /^[a-z][a-z_]*_\d+\.sqlite$/;

/** Wrapper texts codex injects as user messages; they are not something the user said. */
const INJECTED = /^\s*<(environment_context|user_instructions|skills_instructions|turn_aborted|permissions|user_shell_command)\b/;

/** `CODEX_HOME` (only for the caller's own home), else `<home>/.codex`. */
export function codexRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['CODEX_HOME'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.codex');
}

/** `CODEX_SQLITE_HOME` (own home only), else the codex home. */
export function sqliteHome(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['CODEX_SQLITE_HOME'] : undefined;
	return override ? path.resolve(override) : codexRoot(ctx);
}

export function roots(ctx: AdapterContext): string[] {
	return [...new Set([codexRoot(ctx), sqliteHome(ctx)])];
}

export function databases(ctx: AdapterContext): string[] {
	const dir = sqliteHome(ctx);
	return listDir(dir, ctx)
		.filter(e => e.isFile() && GENERATION_DB.test(e.name))
		.map(e => path.join(dir, e.name))
		.sort();
}

/** A rollout file found by name (its id is confirmed from the first line before use). */
export interface RolloutFile {
	readonly id: string;
	readonly file: string;
	readonly archived: boolean;
}

/**
 * Every rollout under `sessions/YYYY/MM/DD/` and `archived_sessions/`. Date folders are local
 * time, so they are globbed, never computed. Symlinked folders are not followed.
 */
function rolloutFiles(ctx: InRefresh, root: string): RolloutFile[] {
	const out: RolloutFile[] = [];
	const collect = (dir: string, archived: boolean) => {
		for (const entry of listDir(dir, ctx)) {
			const m = ROLLOUT_FILE.exec(entry.name);
			// Thousands of rollouts: a plain join (dir is already normal; the name has no separator).
			if (m?.[1] && entry.isFile()) out.push({id: m[1], file: `${dir}${path.sep}${entry.name}`, archived});
		}
	};
	const sessions = path.join(root, 'sessions');
	const subdirs = (dir: string, pattern: RegExp) =>
		listDir(dir, ctx)
			.filter(e => e.isDirectory() && pattern.test(e.name))
			.map(e => path.join(dir, e.name));
	for (const year of subdirs(sessions, /^\d{4}$/)) {
		for (const month of subdirs(year, /^\d{2}$/)) {
			for (const day of subdirs(month, /^\d{2}$/)) collect(day, false);
		}
	}
	collect(path.join(root, 'archived_sessions'), true);
	return out;
}

const DAY_MS = 86_400_000;

export const THREAD_ID = new RegExp(`^${UUID}$`);

/** The unix time in milliseconds a UUIDv7 carries in its first 48 bits; undefined for other versions. */
export function uuidV7Time(id: string): number | undefined {
	if (!THREAD_ID.test(id) || id[14] !== '7') return undefined;
	return Number.parseInt(`${id.slice(0, 8)}${id.slice(9, 13)}`, 16);
}

/**
 * The rollouts of `id` in the date folders its start can be in, without globbing every folder:
 * codex names the thread with a UUIDv7 and files the rollout under the local date of that moment
 * (FORMATS 2), which on any clock of the world is the UTC date or a day either side. Oldest
 * folder first, as `rolloutFiles` lists them; links on the way are not followed. Undefined when
 * the id carries no time.
 */
function rolloutsByDate(ctx: AdapterContext, root: string, id: string): RolloutFile[] | undefined {
	const at = uuidV7Time(id);
	if (at === undefined) return undefined;
	const days = new Set([at - DAY_MS, at, at + DAY_MS].map(t => new Date(t).toISOString().slice(0, 10)));
	// Year and month folders are shared by the rows of a refresh: each is lstat()ed once.
	const isReal = (dir: string) => memo(ctx, REAL_FOLDER.of(dir), () => lstatOrUndefined(dir)?.isDirectory() === true);
	const out: RolloutFile[] = [];
	for (const day of days) {
		const dir = realFolder(path.join(root, 'sessions'), day.split('-'), isReal);
		for (const entry of dir === undefined ? [] : listDir(dir, ctx)) {
			if (entry.isFile() && ROLLOUT_FILE.exec(entry.name)?.[1] === id) out.push({id, file: `${dir}${path.sep}${entry.name}`, archived: false});
		}
	}
	return out;
}

/** `base/names…` when each step below `base` is a real folder (links are not followed, as in `rolloutFiles`). */
function realFolder(base: string, names: readonly string[], isReal: (dir: string) => boolean): string | undefined {
	let dir = base;
	for (const name of names) {
		dir = `${dir}${path.sep}${name}`;
		if (!isReal(dir)) return undefined;
	}
	return dir;
}

/** Every rollout of the codex home, globbed once per refresh (memo). */
export function rollouts(ctx: AdapterContext): RolloutFile[] {
	const root = codexRoot(ctx);
	return memo(ctx, ROLLOUTS.of(root), () => rolloutFiles(ctx, root));
}

/** What a rollout's first line says of the thread: its id, and the parent a sub-agent names. */
export interface MetaLink {
	readonly id: string;
	readonly parentId?: string;
}

/**
 * A rollout's id and parent from its session_meta, kept across starts: the first line alone holds
 * the thread's whole instructions (kilobytes each), too much to keep for thousands of rollouts.
 */
export const META_LINK_PARSE = persistedParseKind<MetaLink | undefined>('codex-meta-link', 1);

function metaLinkNow(file: string): MetaLink | undefined {
	const first = readFirstJsonLine(file);
	const payload = obj(first, 'payload');
	const id = first?.['type'] === 'session_meta' ? str(payload, 'id') : undefined;
	if (id === undefined) return undefined;
	const parentId = parentFromMeta(payload);
	return parentId === undefined ? {id} : {id, parentId};
}

/** Does the rollout's first line name `id` (a session_meta of that thread)? */
export function confirmsId(ctx: InRefresh, file: string, id: string): boolean {
	return parseCached(ctx, META_LINK_PARSE, file, '', () => metaLinkNow(file))?.id === id;
}

/** The parent the rollout of `id` names in its session_meta (a sub-agent's), else undefined. */
export function metaParentOf(ctx: InRefresh, file: string, id: string): string | undefined {
	const link = parseCached(ctx, META_LINK_PARSE, file, '', () => metaLinkNow(file));
	return link?.id === id ? link.parentId : undefined;
}

/** The parent a sub-agent rollout names (`source.subagent.thread_spawn.parent_thread_id`). */
export function parentFromMeta(meta: Record<string, unknown> | undefined): string | undefined {
	const spawn = obj(obj(obj(meta, 'source'), 'subagent'), 'thread_spawn');
	return str(spawn, 'parent_thread_id') ?? str(meta, 'parent_thread_id');
}

/** What a rollout says about its conversation. */
export interface Rollout {
	readonly id: string;
	readonly file: string;
	readonly cwd: string | undefined;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly parentId: string | undefined;
	readonly realMessages: number;
	readonly firstPrompt: string | undefined;
}

function messageText(payload: Record<string, unknown> | undefined): string {
	const content = payload?.['content'];
	if (!Array.isArray(content)) return '';
	const first = content.find(c => typeof c === 'object' && c !== null && typeof (c as {text?: unknown}).text === 'string') as {text: string} | undefined;
	return first?.text ?? '';
}

/** A rollout's summary, kept across starts (bump the version when `Rollout` or its parse changes). */
export const ROLLOUT_PARSE = persistedParseKind<Rollout | undefined>('codex-rollout', 1);

/** A rollout, parsed again only when the file changed (a refresh re-reads the one that grew, not all). */
export function readRollout(ctx: InRefresh, ref: RolloutFile): Rollout | undefined {
	return parseCached(ctx, ROLLOUT_PARSE, ref.file, ref.id, () => parseRollout(ref));
}

function parseRollout(ref: RolloutFile): Rollout | undefined {
	const records = readJsonl(ref.file);
	const first = records[0];
	const meta = obj(first, 'payload');
	if (first?.['type'] !== 'session_meta' || str(meta, 'id') !== ref.id) return undefined;
	let last = isoMs(first['timestamp']);
	let realMessages = 0;
	let firstPrompt: string | undefined;
	for (const record of records) {
		const at = isoMs(record['timestamp']);
		if (at !== undefined) last = Math.max(last ?? at, at);
		const payload = obj(record, 'payload');
		if (record['type'] !== 'response_item' || payload?.['type'] !== 'message') continue;
		const role = payload['role'];
		const text = messageText(payload);
		if (role === 'assistant') realMessages++;
		if (role === 'user' && !INJECTED.test(text)) {
			realMessages++;
			firstPrompt ??= text;
		}
	}
	const createdAt = isoMs(meta?.['timestamp']) ?? isoMs(first['timestamp']) ?? 0;
	return {
		id: ref.id,
		file: ref.file,
		cwd: str(meta, 'cwd'),
		createdAt,
		updatedAt: Math.max(last ?? createdAt, createdAt),
		parentId: parentFromMeta(meta),
		realMessages,
		firstPrompt,
	};
}

/**
 * The rollouts verify reads. While the refresh holds no index of every rollout, the few date
 * folders of the id (`rolloutsByDate`) are looked in first: globbing every folder was most of a
 * `status` run's codex time (4,000 rollouts in 200 folders). verify answers from the first live
 * (not archived) rollout, the one in the thread's start folder; when none is there, every
 * rollout of the id, as before.
 */
export function verifyRolloutsOf(ctx: AdapterContext, id: string): RolloutFile[] {
	const root = codexRoot(ctx);
	if (!memoHas(ctx, ROLLOUTS.of(root))) {
		const dated = rolloutsByDate(ctx, root, id)?.filter(r => confirmsId(ctx, r.file, id));
		if (dated && dated.length > 0) return dated;
	}
	return rolloutsOf(ctx, id);
}

/** Rollout files of `id` whose first line confirms the id. */
export function rolloutsOf(ctx: AdapterContext, id: string): RolloutFile[] {
	const byId = memo(ctx, ROLLOUTS_BY_ID.of(codexRoot(ctx)), () => {
		const map = new Map<string, RolloutFile[]>();
		for (const r of rollouts(ctx)) pushTo(map, r.id, r);
		return map;
	});
	return (byId.get(id) ?? []).filter(r => confirmsId(ctx, r.file, id));
}

export function resumeStateOf(r: Rollout, exists: (cwd: string) => boolean = fs.existsSync): ResumeState {
	if (r.realMessages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!r.cwd) return {kind: 'unknown', reason: 'the rollout records no cwd'};
	if (!exists(r.cwd)) return {kind: 'no', reason: `cwd ${r.cwd} no longer exists`};
	return {kind: 'yes'};
}
