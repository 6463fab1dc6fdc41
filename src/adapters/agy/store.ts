// Antigravity's summaries database, per-conversation databases and workspace claims: the index
// every question reads, and whether a conversation belongs to a cwd.

import path from 'node:path';
import {fileURLToPath} from 'node:url';
import type {ResumeState} from '../../domain/types.js';
import {hasTable, tableColumns, withReadOnlyDb, type ReadPool} from '../../system/sqliteRead.js';
import {pushTo} from '../common/groups.js';
import {isRecord, parseJsonOrUndefined, readSmallText, toEpochMs} from '../common/jsonRecords.js';
import {oneLine, readFirstJsonLine} from '../common/jsonl.js';
import {canonicalCwd, listDir, lstatOrUndefined} from '../common/paths.js';
import {type InRefresh, memo, memoKind, parseCached, persistedParseKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';
import {childrenFrom, descendants} from '../../system/descendants.js';
import {unlessUnreadable} from '../common/storeRead.js';

const INDEX = memoKind<AgyIndex>('agy:index');
const IDS = memoKind<string[]>('agy:ids');

export const ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const SUMMARY_TABLE = 'conversation_summaries';

export interface AgyPaths {
	readonly root: string;
	readonly conversations: string;
	readonly summariesDb: string;
	readonly brain: string;
	readonly lastConversations: string;
}

/** No `*_HOME` override is known for agy (FORMATS 5): the layout is always under the home. */
export function agyPaths(ctx: AdapterContext): AgyPaths {
	const root = path.join(ctx.home, '.gemini', 'antigravity-cli');
	return {
		root,
		conversations: path.join(root, 'conversations'),
		summariesDb: path.join(root, 'conversation_summaries.db'),
		brain: path.join(root, 'brain'),
		lastConversations: path.join(root, 'cache', 'last_conversations.json'),
	};
}

export function conversationDb(paths: AgyPaths, id: string): string {
	return path.join(paths.conversations, `${id}.db`);
}

/** One `conversation_summaries` row, reduced to what mam-tui uses. */
interface AgySummary {
	readonly id: string;
	readonly title?: string;
	readonly updatedAt?: number;
	readonly workspaces: readonly string[];
	readonly parentId?: string;
	readonly busy: boolean;
}

/** What the shared files say about every conversation: summaries and workspace claims. */
export interface AgyIndex {
	readonly summaries: ReadonlyMap<string, AgySummary>;
	/** conversation id → the workspaces whose newest conversation it is (last_conversations.json). */
	readonly claims: ReadonlyMap<string, readonly string[]>;
	readonly problems: readonly string[];
}

function workspacePath(uri: unknown): string | undefined {
	if (typeof uri !== 'string' || uri === '') return undefined;
	if (uri.startsWith('file://')) {
		try {
			return fileURLToPath(uri);
		} catch {
			return undefined;
		}
	}
	return path.isAbsolute(uri) ? uri : undefined;
}

function parseWorkspaces(value: unknown): string[] {
	const parsed = typeof value === 'string' ? parseJsonOrUndefined(value) : value;
	if (!Array.isArray(parsed)) return [];
	return parsed.map(workspacePath).filter((w): w is string => w !== undefined);
}

function readSummaries(paths: AgyPaths, reads?: ReadPool): {summaries: Map<string, AgySummary>; problem?: string} {
	const summaries = new Map<string, AgySummary>();
	if (!lstatOrUndefined(paths.summariesDb)) return {summaries};
	return unlessUnreadable(
		() => {
			withReadOnlyDb(paths.summariesDb, reads, db => {
				const columns = tableColumns(db).get(SUMMARY_TABLE);
				if (!columns?.has('conversation_id')) return;
				const pick = (name: string) => (columns.has(name) ? name : `NULL AS ${name}`);
				const sql = `SELECT conversation_id, ${['title', 'preview', 'last_modified_time', 'workspace_uris', 'parent_conversation_id', 'not_fully_idle', 'killed'].map(pick).join(', ')} FROM ${SUMMARY_TABLE}`;
				for (const row of db.prepare<[], Record<string, unknown>>(sql).all()) {
					const id = row['conversation_id'];
					if (typeof id !== 'string' || !ID_PATTERN.test(id)) continue;
					const parent = row['parent_conversation_id'];
					const text = String(row['title'] ?? '') || String(row['preview'] ?? '');
					const title = text.trim() ? oneLine(text) : undefined;
					const updatedAt = toEpochMs(row['last_modified_time']);
					summaries.set(id, {
						id,
						...(title ? {title} : {}),
						...(updatedAt ? {updatedAt} : {}),
						workspaces: parseWorkspaces(row['workspace_uris']),
						...(typeof parent === 'string' && ID_PATTERN.test(parent) ? {parentId: parent} : {}),
						busy: Number(row['not_fully_idle'] ?? 0) === 1 && Number(row['killed'] ?? 0) === 0,
					});
				}
			});
			return {summaries};
		},
		problem => ({summaries, problem}),
	);
}

/** last_conversations.json: `{"<workspace>": "<conversation id>"}`, inverted. */
function readClaims(paths: AgyPaths): Map<string, string[]> {
	const claims = new Map<string, string[]>();
	const parsed = parseJsonOrUndefined(readSmallText(paths.lastConversations));
	if (!isRecord(parsed)) return claims;
	for (const [workspace, id] of Object.entries(parsed)) {
		if (typeof id !== 'string' || workspace === '') continue;
		pushTo(claims, id, workspace);
	}
	return claims;
}

export function readIndex(paths: AgyPaths, reads?: ReadPool): AgyIndex {
	const {summaries, problem} = readSummaries(paths, reads);
	return {summaries, claims: readClaims(paths), problems: problem ? [problem] : []};
}

/**
 * The conversation's workspace: the one last_conversations.json names for it, else the last of
 * its workspace URIs (the active project's resource folders are listed ahead of the cwd).
 */
export function recordedCwd(index: AgyIndex, id: string): string | undefined {
	return index.claims.get(id)?.[0] ?? index.summaries.get(id)?.workspaces.at(-1);
}

type Belonging = {readonly kind: 'yes'} | {readonly kind: 'no'; readonly reason: string} | {readonly kind: 'unknown'};

/**
 * Does conversation `id` belong to `cwd`? A conversation that last_conversations.json gives to
 * another workspace does not, even when `cwd` appears among its workspace URIs.
 */
export function belongsTo(ctx: InRefresh, index: AgyIndex, id: string, cwd: string): Belonging {
	const want = canonicalCwd(ctx, cwd);
	const claimed = index.claims.get(id);
	if (claimed) {
		if (claimed.some(w => canonicalCwd(ctx, w) === want)) return {kind: 'yes'};
		return {kind: 'no', reason: `belongs to workspace ${claimed[0] ?? ''}`};
	}
	const workspaces = index.summaries.get(id)?.workspaces ?? [];
	if (workspaces.length === 0) return {kind: 'unknown'};
	if (workspaces.some(w => canonicalCwd(ctx, w) === want)) return {kind: 'yes'};
	return {kind: 'no', reason: `belongs to workspace ${workspaces.at(-1) ?? ''}`};
}

/** A conversation database's resume state, kept across starts (bump the version when its parse changes). */
export const STEPS_PARSE = persistedParseKind<ResumeState>('agy-steps', 1);

/** Steps in the conversation's own database, asked again only when the database or its WAL changed. */
export function stepsState(ctx: InRefresh, paths: AgyPaths, id: string): ResumeState {
	const file = conversationDb(paths, id);
	const wal = lstatOrUndefined(`${file}-wal`);
	return parseCached(
		ctx,
		STEPS_PARSE,
		file,
		`${wal?.mtimeMs}:${wal?.size}`,
		() => stepsStateNow(paths, id, ctx.reads),
		state => state.kind !== 'unknown',
	);
}

/** Steps in the conversation's own database: resume is safe only when it exists and has some. */
function stepsStateNow(paths: AgyPaths, id: string, reads: ReadPool | undefined): ResumeState {
	const file = conversationDb(paths, id);
	if (!lstatOrUndefined(file)) return {kind: 'no', reason: 'no conversation database (agy would silently start a new conversation)'};
	return unlessUnreadable(
		() => {
			return withReadOnlyDb(file, reads, db => {
				if (!hasTable(db, 'steps')) return {kind: 'unknown', reason: `${file}: no steps table (unexpected schema)`};
				// Whether there is a step, not how many: counting reads the whole table.
				const row = db.prepare<[], {n: number}>('SELECT EXISTS (SELECT 1 FROM steps) AS n').get();
				return (row?.n ?? 0) > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'conversation has no steps yet'};
			});
		},
		(reason): ResumeState => ({kind: 'unknown', reason}),
	);
}

/** Ids with a conversation database on disk. */
export function conversationIds(ctx: InRefresh, paths: AgyPaths): string[] {
	return listDir(paths.conversations, ctx)
		.filter(entry => entry.isFile() && entry.name.endsWith('.db'))
		.map(entry => entry.name.slice(0, -'.db'.length))
		.filter(id => ID_PATTERN.test(id));
}

export function transcriptFile(paths: AgyPaths, id: string): string {
	return path.join(paths.brain, id, '.system_generated', 'logs', 'transcript.jsonl');
}

/**
 * When the conversation started: the first transcript record's `created_at`, else the earliest
 * time its database file shows (birth or modification, whichever is older).
 */
export function conversationTimes(paths: AgyPaths, id: string): {createdAt: number; updatedAt: number} {
	const db = conversationDb(paths, id);
	const main = lstatOrUndefined(db);
	const wal = lstatOrUndefined(`${db}-wal`);
	const fileTimes = [main?.birthtimeMs, main?.mtimeMs].filter((t): t is number => t !== undefined && t > 0);
	const recorded = toEpochMs(readFirstJsonLine(transcriptFile(paths, id))?.['created_at']);
	const createdAt = recorded ?? Math.round(Math.min(...fileTimes, Number.MAX_SAFE_INTEGER));
	return {createdAt, updatedAt: Math.round(Math.max(createdAt, main?.mtimeMs ?? 0, wal?.mtimeMs ?? 0))};
}

/** Every descendant of `id` (sub-agent conversations at any depth), via parent_conversation_id. */
export function descendantsOf(index: AgyIndex, id: string): string[] {
	const links = [...index.summaries.values()].flatMap(s => (s.parentId ? [[s.id, s.parentId] as const] : []));
	return descendants(id, childrenFrom(links));
}

/** The index and the ids on disk, read once per refresh (memo) for the refresh's many calls. */
export function indexIn(ctx: AdapterContext, paths: AgyPaths): AgyIndex {
	return memo(ctx, INDEX.of(paths.summariesDb), () => readIndex(paths, ctx.reads));
}

export function idsIn(ctx: AdapterContext, paths: AgyPaths): string[] {
	return memo(ctx, IDS.of(paths.conversations), () => conversationIds(ctx, paths));
}

/** Children per parent, counted in one pass (per conversation it would cost conversations²). */
export function childCounts(index: AgyIndex): Map<string, number> {
	const counts = new Map<string, number>();
	for (const s of index.summaries.values()) if (s.parentId) counts.set(s.parentId, (counts.get(s.parentId) ?? 0) + 1);
	return counts;
}
