// Claude Code's project folders (FORMATS 1): transcripts and sub-agents by id, what a transcript
// says, and whether it can be resumed. The adapter itself is in claude.ts.

import fs from 'node:fs';
import path from 'node:path';
import type {ResumeState} from '../../domain/types.js';
import {isoMs, obj, oneLine, readJsonl, str} from '../common/jsonl.js';
import {canonicalCwd, listDir, lstatOrUndefined} from '../common/paths.js';
import {pushTo} from '../common/groups.js';
import {type InRefresh, memo, memoKind, parseCached, persistedParseKind} from '../common/refresh.js';
import type {AdapterContext} from '../types.js';

const NAME_SETS = memoKind<readonly NameSet[]>('claude:name-sets');
const PROJECTS = memoKind<ReturnType<typeof projectDirs>>('claude:projects');
const PROJECT_NAMES = memoKind<readonly ProjectNames[]>('claude:names');
const FOLDERS_BY_NAME = memoKind<ReadonlyMap<string, readonly NameSet[]>>('claude:folders-by-name');
const SUBAGENT_LISTINGS = memoKind<ReadonlyMap<string, readonly ProjectNames[]>>('claude:subagent-listings');
const TRANSCRIPT_PATHS = memoKind<ReadonlyMap<string, string>>('claude:transcript-paths');

/** Sub-agent transcripts: `agent-<hex>.jsonl` (FORMATS 1); the id is the file stem. */
const SUBAGENT_FILE = /^(agent-[0-9a-f]+)\.jsonl$/;

/** Longer project-folder names are cut to this length and get a hash suffix we cannot recompute. */
const SLUG_LIMIT = 200;

export const PASTE_HASH = /^[0-9A-Za-z_-]+$/;

/** `CLAUDE_CONFIG_DIR` (only for the caller's own home), else `<home>/.claude`. */
export function claudeRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['CLAUDE_CONFIG_DIR'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.claude');
}

/** `~/.claude.json` sits beside the folder (inside it when CLAUDE_CONFIG_DIR is set). */
export function globalConfigFile(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['CLAUDE_CONFIG_DIR'] : undefined;
	return override ? path.join(path.resolve(override), '.claude.json') : path.join(ctx.home, '.claude.json');
}

/** claude's per-session scratch under the temp dir (FORMATS 10); only knowable for our own uid. */
export function tempRoot(ctx: AdapterContext): string | undefined {
	const uid = process.getuid?.();
	return ctx.ownHome && uid !== undefined ? path.join(ctx.tmpDir, `claude-${uid}`) : undefined;
}

export function roots(ctx: AdapterContext): string[] {
	const tmp = tempRoot(ctx);
	return tmp ? [claudeRoot(ctx), tmp] : [claudeRoot(ctx)];
}

/** The project folder name claude derives from a cwd: every non-alphanumeric UTF-16 unit becomes `-`. */
export function projectSlug(cwd: string): string {
	return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

/** Project folders (real folders, links not followed) that may hold `cwd`'s transcripts; all when no cwd. */
export function projectDirs(ctx: InRefresh, root: string, cwd?: string): string[] {
	const projects = path.join(root, 'projects');
	const dirs = listDir(projects, ctx).filter(e => e.isDirectory());
	if (cwd === undefined) return dirs.map(e => path.join(projects, e.name));
	const slug = projectSlug(canonicalCwd(ctx, cwd));
	if (slug.length <= SLUG_LIMIT) return dirs.filter(e => e.name === slug).map(e => path.join(projects, e.name));
	// Long paths are cut and suffixed with a hash; the cwd inside the transcript confirms the match.
	const prefix = slug.slice(0, SLUG_LIMIT);
	return dirs.filter(e => e.name.startsWith(prefix)).map(e => path.join(projects, e.name));
}

/**
 * `<dir>/<name>` of each `.jsonl` file the folder lists, made once per refresh: the watch signature
 * and the parses then keep one string per transcript (thousands, kept across refreshes), not two
 * equal ones.
 */
export function transcriptPaths(ctx: InRefresh, dir: string): ReadonlyMap<string, string> {
	return memo(ctx, TRANSCRIPT_PATHS.of(dir), () => {
		const files = new Map<string, string>();
		for (const e of listDir(dir, ctx)) if (e.isFile() && e.name.endsWith('.jsonl')) files.set(e.name, path.join(dir, e.name));
		return files;
	});
}

/** What a transcript says about its conversation. */
export interface Transcript {
	readonly cwd: string | undefined;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly title: string | undefined;
	readonly realMessages: number;
}

function messageText(record: Record<string, unknown>): string | undefined {
	const content = obj(record, 'message')?.['content'];
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		for (const block of content) {
			if (typeof block === 'object' && block !== null && (block as {type?: unknown}).type === 'text') {
				const text = (block as {text?: unknown}).text;
				if (typeof text === 'string') return text;
			}
		}
	}
	return undefined;
}

/** A user or assistant turn of the main thread (not meta, not a sidechain). */
function isRealMessage(record: Record<string, unknown>): boolean {
	const type = record['type'];
	if (type !== 'user' && type !== 'assistant') return false;
	if (record['isSidechain'] === true || record['isMeta'] === true) return false;
	return obj(record, 'message') !== undefined;
}

/**
 * A transcript's summary, kept across starts (bump the version when `Transcript` or its parse
 * changes). It names neither the file nor the id: the caller has both, and a copy of the path in
 * each of thousands of kept summaries was one more string per transcript (version 2).
 */
export const TRANSCRIPT_PARSE = persistedParseKind<Transcript>('claude-transcript', 2);
/** A legacy sub-agent transcript's parent id, kept across starts. */
export const LEGACY_PARENT_PARSE = persistedParseKind<string | undefined>('claude-legacy-parent', 1);

/** A transcript, parsed again only when it changed (a refresh re-reads the one that grew, not all). */
export function readTranscript(ctx: InRefresh, file: string, id: string): Transcript {
	return parseCached(ctx, TRANSCRIPT_PARSE, file, id, () => parseTranscript(file, id));
}

function parseTranscript(file: string, id: string): Transcript {
	const records = readJsonl(file);
	let cwd: string | undefined;
	let first: number | undefined;
	let last: number | undefined;
	let summary: string | undefined;
	let prompt: string | undefined;
	let realMessages = 0;
	for (const record of records) {
		const at = isoMs(record['timestamp']);
		if (at !== undefined) {
			first = first === undefined ? at : Math.min(first, at);
			last = last === undefined ? at : Math.max(last, at);
		}
		if (cwd === undefined && str(record, 'cwd') && (str(record, 'sessionId') ?? id) === id) cwd = str(record, 'cwd');
		if (record['type'] === 'summary' && str(record, 'summary')) summary = str(record, 'summary');
		if (isRealMessage(record)) {
			realMessages++;
			if (prompt === undefined && record['type'] === 'user') prompt = messageText(record);
		}
	}
	// The file's time only stands in for times no record gives (an lstat per transcript otherwise).
	const mtime = first === undefined || last === undefined ? (lstatOrUndefined(file)?.mtimeMs ?? 0) : 0;
	const createdAt = first ?? mtime;
	const title = summary ?? (prompt ? oneLine(prompt) : undefined);
	return {cwd, createdAt, updatedAt: Math.max(last ?? mtime, createdAt), title, realMessages};
}

/** `<id>.jsonl` in every project folder (a conversation may have been moved or copied between them). */
export function transcriptFiles(ctx: InRefresh, root: string, id: string): string[] {
	// A plain join: the folders are normal paths and a valid id holds no separator (path.join
	// normalising 40 paths per row was most of a lookup).
	return projectDirs(ctx, root)
		.map(dir => `${dir}${path.sep}${id}.jsonl`)
		.filter(file => lstatOrUndefined(file)?.isFile() === true);
}

/** A sub-agent transcript belonging to a conversation. */
interface SubAgent {
	readonly id: string;
	readonly file: string;
	readonly meta?: string;
	readonly legacy: boolean;
}

/** The first `sessionId` a legacy root-level `agent-*.jsonl` records: its parent conversation. */
function legacyParent(file: string): string | undefined {
	try {
		for (const record of readJsonl(file)) {
			const id = str(record, 'sessionId');
			if (id) return id;
		}
	} catch {
		// unreadable: not attributable, residual will still name it if it carries the id
	}
	return undefined;
}

/** One project folder's entries by name, typed as the listing saw them (a link is a link, never followed). */
interface NameSet {
	readonly dir: string;
	readonly entries: ReadonlyMap<string, fs.Dirent>;
}

/**
 * Every project folder's entries, listed once per refresh (a memo) for transcript and sub-agent
 * lookups: the listing discovery reads, with its types, so a lookup costs no lstat (a refresh
 * asks about thousands of conversations).
 */
function projectNameSets(ctx: AdapterContext, root: string): readonly NameSet[] {
	return memo(ctx, NAME_SETS.of(root), () =>
		memo(ctx, PROJECTS.of(root), () => projectDirs(ctx, root)).map(dir => ({dir, entries: new Map(listDir(dir, ctx).map(e => [e.name, e]))})),
	);
}

/** Which folders list each name, in folder order: a row's lookup is one map get, not a set test per folder. */
function foldersByName(ctx: AdapterContext, root: string): ReadonlyMap<string, readonly NameSet[]> {
	return memo(ctx, FOLDERS_BY_NAME.of(root), () => {
		const byName = new Map<string, NameSet[]>();
		for (const listing of projectNameSets(ctx, root)) for (const name of listing.entries.keys()) pushTo(byName, name, listing);
		return byName;
	});
}

/** Every project folder's names with its legacy sidechains, for sub-agent lookups. */
interface ProjectNames extends NameSet {
	/** Legacy root-level sidechains of this folder by parent id, in listing order. */
	readonly legacy: ReadonlyMap<string, SubAgent[]>;
}

function projectNames(ctx: AdapterContext, root: string): readonly ProjectNames[] {
	return memo(ctx, PROJECT_NAMES.of(root), () =>
		projectNameSets(ctx, root).map(({dir, entries}) => {
			const legacy = new Map<string, SubAgent[]>();
			for (const [name, entry] of entries) {
				// Thousands of transcript names: the cheap test first.
				const sub = name.startsWith('agent-') ? SUBAGENT_FILE.exec(name) : null;
				if (!sub?.[1] || !entry.isFile()) continue;
				const file = path.join(dir, name);
				// First lines name the parent; parsed once per file version, not once per refresh.
				const parent = parseCached(ctx, LEGACY_PARENT_PARSE, file, '', () => legacyParent(file));
				if (parent) pushTo(legacy, parent, {id: sub[1], file, legacy: true});
			}
			return {dir, entries, legacy};
		}),
	);
}

/** What `transcriptFiles` answers, from the listings: each folder that lists `<id>.jsonl` as a file. */
function transcriptsNamed(byName: ReadonlyMap<string, readonly NameSet[]>, id: string): string[] {
	const name = `${id}.jsonl`;
	const out: string[] = [];
	for (const {dir, entries} of byName.get(name) ?? []) if (entries.get(name)?.isFile() === true) out.push(`${dir}${path.sep}${name}`);
	return out;
}

/**
 * The sub-agents of `id` from the project folders' names: only the folders named after `id` are
 * looked into (indexing every conversation's sub-agent folder up front cost a stat per
 * conversation folder for the few rows a refresh asks about).
 */
function subAgentsFrom(ctx: AdapterContext, root: string, id: string): SubAgent[] {
	const out: SubAgent[] = [];
	for (const {dir, entries, legacy} of listingsNaming(ctx, root).get(id) ?? []) {
		// Only real folders (as listed): a link named like the session is unlinked by purge, never read through.
		const nested = entries.get(id)?.isDirectory() === true ? path.join(dir, id, 'subagents') : undefined;
		if (nested !== undefined && lstatOrUndefined(nested)?.isDirectory() === true) {
			for (const entry of listDir(nested, ctx)) {
				const m = SUBAGENT_FILE.exec(entry.name);
				if (!m?.[1] || !entry.isFile()) continue;
				const meta = path.join(nested, `${m[1]}.meta.json`);
				out.push({id: m[1], file: path.join(nested, entry.name), ...(lstatOrUndefined(meta) ? {meta} : {}), legacy: false});
			}
		}
		out.push(...(legacy.get(id) ?? []));
	}
	return out;
}

/**
 * The listings (in order) that name `id` (a folder `<id>`) or list a legacy sidechain of it: the
 * only ones `subAgentsFrom` can find anything in. Once per refresh (a memo): a refresh asks about
 * thousands of conversations, and testing each against every project folder was most of inUse.
 */
function listingsNaming(ctx: AdapterContext, root: string): ReadonlyMap<string, readonly ProjectNames[]> {
	return memo(ctx, SUBAGENT_LISTINGS.of(root), () => {
		const byId = new Map<string, ProjectNames[]>();
		for (const listing of projectNames(ctx, root)) {
			for (const name of listing.entries.keys()) pushTo(byId, name, listing);
			for (const parent of listing.legacy.keys()) if (!listing.entries.has(parent)) pushTo(byId, parent, listing);
		}
		return byId;
	});
}

/**
 * Within one refresh (a memo on the context), every project folder is listed once for all the
 * rows' verify and inUse calls instead of once per call (500 rows × 40 folders); elsewhere the
 * folders are looked at directly, as before.
 */
export function transcriptsIn(ctx: AdapterContext, root: string, id: string): readonly string[] {
	if (!ctx.refresh) return transcriptFiles(ctx, root, id);
	// The folders' names, which inUse lists anyway for sub-agents: a lookup is one map get and an
	// lstat per hit, where a stat per folder and row was most of a status run's
	// verify (and many rows used to list every folder a second time, with types, for an index).
	return transcriptsNamed(foldersByName(ctx, root), id);
}

/**
 * Sub-agents of `id`: `<id>/subagents/agent-*.jsonl`, and legacy `agent-*.jsonl` beside the
 * transcripts. Inside a refresh the project folders' names are listed once for every row.
 */
export function subAgentsIn(ctx: AdapterContext, root: string, id: string): readonly SubAgent[] {
	return subAgentsFrom(ctx, root, id);
}

/** How many legacy root-level sidechains each parent has in one project folder (read once per folder). */
export function legacyChildCounts(ctx: InRefresh, dir: string): Map<string, number> {
	const counts = new Map<string, number>();
	for (const entry of listDir(dir, ctx)) {
		if (!entry.isFile() || !SUBAGENT_FILE.test(entry.name)) continue;
		const parent = legacyParent(path.join(dir, entry.name));
		if (parent) counts.set(parent, (counts.get(parent) ?? 0) + 1);
	}
	return counts;
}

/**
 * Sub-agent transcripts under `<dir>/<id>/subagents/`, for an `<id>` the listing shows as a real
 * folder; `subagents` must be one too (as `subAgentsFrom` finds them: no link is read through).
 */
export function nestedSubAgentCount(ctx: InRefresh, dir: string, id: string): number {
	const nested = path.join(dir, id, 'subagents');
	if (lstatOrUndefined(nested)?.isDirectory() !== true) return 0;
	return listDir(nested, ctx).filter(e => e.isFile() && SUBAGENT_FILE.test(e.name)).length;
}

export function resumeStateOf(t: Transcript, exists: (cwd: string) => boolean = fs.existsSync): ResumeState {
	if (t.realMessages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!t.cwd) return {kind: 'unknown', reason: 'the transcript records no cwd'};
	if (!exists(t.cwd)) return {kind: 'no', reason: `cwd ${t.cwd} no longer exists`};
	return {kind: 'yes'};
}
