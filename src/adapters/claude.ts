import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../domain/result.js';
import type {Conversation, ProcessRef, ResumeState} from '../domain/types.js';
import {measuredExitInput, readClaudeScreen} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {agentProcessesOf, flagValue, idsUse, needsFolders, openFilesOf, projectUse, usersOf, type LiveUse} from './common/liveEvidence.js';
import {isoMs, obj, oneLine, readJsonl, str} from './common/jsonl.js';
import {countJsonMembers, removeJsonMembers} from './common/jsonKey.js';
import {jsonFieldIn, parseJsonLine, removeLines} from './common/lines.js';
import {canonicalCwd, joinNames, listDir, listNames, lstatOrUndefined, realpathOrUndefined} from './common/paths.js';
import {pushTo} from './common/groups.js';
import {memo, parseCached, type InRefresh} from './common/refresh.js';
import {dirItem, fileItem, makePlan, removePaths} from './common/plan.js';
import {scanResidual} from './common/residual.js';
import {runsProgram} from './common/programs.js';
import {assertValidId, type AdapterContext, type AgentAdapter, type InUseHolder, type PlanItem} from './types.js';

/** Sub-agent transcripts: `agent-<hex>.jsonl` (FORMATS 1); the id is the file stem. */
const SUBAGENT_FILE = /^(agent-[0-9a-f]+)\.jsonl$/;
/** Longer project-folder names are cut to this length and get a hash suffix we cannot recompute. */
const SLUG_LIMIT = 200;
const PASTE_HASH = /^[0-9A-Za-z_-]+$/;

/** `CLAUDE_CONFIG_DIR` (only for the caller's own home), else `<home>/.claude`. */
function claudeRoot(ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>): string {
	const override = ctx.ownHome ? ctx.env['CLAUDE_CONFIG_DIR'] : undefined;
	return override ? path.resolve(override) : path.join(ctx.home, '.claude');
}

/** `~/.claude.json` sits beside the folder (inside it when CLAUDE_CONFIG_DIR is set). */
function globalConfigFile(ctx: AdapterContext): string {
	const override = ctx.ownHome ? ctx.env['CLAUDE_CONFIG_DIR'] : undefined;
	return override ? path.join(path.resolve(override), '.claude.json') : path.join(ctx.home, '.claude.json');
}

/** claude's per-session scratch under the temp dir (FORMATS 10); only knowable for our own uid. */
function tempRoot(ctx: AdapterContext): string | undefined {
	const uid = process.getuid?.();
	return ctx.ownHome && uid !== undefined ? path.join(ctx.tmpDir, `claude-${uid}`) : undefined;
}

function roots(ctx: AdapterContext): string[] {
	const tmp = tempRoot(ctx);
	return tmp ? [claudeRoot(ctx), tmp] : [claudeRoot(ctx)];
}

/** The project folder name claude derives from a cwd: every non-alphanumeric UTF-16 unit becomes `-`. */
export function projectSlug(cwd: string): string {
	return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

/** Project folders (real folders, links not followed) that may hold `cwd`'s transcripts; all when no cwd. */
function projectDirs(ctx: InRefresh, root: string, cwd?: string): string[] {
	const projects = path.join(root, 'projects');
	const dirs = listDir(projects, ctx).filter(e => e.isDirectory());
	if (cwd === undefined) return dirs.map(e => path.join(projects, e.name));
	const slug = projectSlug(canonicalCwd(ctx, cwd));
	if (slug.length <= SLUG_LIMIT) return dirs.filter(e => e.name === slug).map(e => path.join(projects, e.name));
	// Long paths are cut and suffixed with a hash; the cwd inside the transcript confirms the match.
	const prefix = slug.slice(0, SLUG_LIMIT);
	return dirs.filter(e => e.name.startsWith(prefix)).map(e => path.join(projects, e.name));
}

/** What a transcript says about its conversation. */
interface Transcript {
	readonly id: string;
	readonly file: string;
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

/** A transcript, parsed again only when it changed (a refresh re-reads the one that grew, not all). */
function readTranscript(ctx: InRefresh, file: string, id: string): Transcript {
	return parseCached(ctx, 'claude-transcript', file, id, () => parseTranscript(file, id));
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
	const mtime = lstatOrUndefined(file)?.mtimeMs ?? 0;
	const createdAt = first ?? mtime;
	const title = summary ?? (prompt ? oneLine(prompt) : undefined);
	return {id, file, cwd, createdAt, updatedAt: Math.max(last ?? mtime, createdAt), title, realMessages};
}

/** `<id>.jsonl` in every project folder (a conversation may have been moved or copied between them). */
function transcriptFiles(ctx: InRefresh, root: string, id: string): string[] {
	// A plain join: the folders are normal paths and a valid id holds no separator (path.join
	// normalising 40 paths per row was most of a lookup).
	return projectDirs(ctx, root).map(dir => `${dir}${path.sep}${id}.jsonl`).filter(file => lstatOrUndefined(file)?.isFile() === true);
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


/** One project folder's entry names (no types). */
interface NameSet {
	readonly dir: string;
	readonly names: ReadonlySet<string>;
}

/**
 * Every project folder's names, listed once per refresh (a memo) for transcript and sub-agent
 * lookups. Names only (half the cost of entries with their types): the few names a lookup uses
 * are lstat()ed, so links are still never followed.
 */
function projectNameSets(ctx: AdapterContext, root: string): readonly NameSet[] {
	return memo(ctx, `claude:name-sets:${root}`, () =>
		memo(ctx, `claude:projects:${root}`, () => projectDirs(ctx, root)).map(dir => ({dir, names: new Set(listNames(dir, ctx))})),
	);
}

/** Every project folder's names with its legacy sidechains, for sub-agent lookups. */
interface ProjectNames extends NameSet {
	/** Legacy root-level sidechains of this folder by parent id, in listing order. */
	readonly legacy: ReadonlyMap<string, SubAgent[]>;
}

function projectNames(ctx: AdapterContext, root: string): readonly ProjectNames[] {
	return memo(ctx, `claude:names:${root}`, () =>
		projectNameSets(ctx, root).map(({dir, names}) => {
			const legacy = new Map<string, SubAgent[]>();
			for (const name of names) {
				// Thousands of transcript names: the cheap test first.
				const sub = name.startsWith('agent-') ? SUBAGENT_FILE.exec(name) : null;
				if (!sub?.[1]) continue;
				const file = path.join(dir, name);
				if (lstatOrUndefined(file)?.isFile() !== true) continue;
				// First lines name the parent; parsed once per file version, not once per refresh.
				const parent = parseCached(ctx, 'claude-legacy-parent', file, '', () => legacyParent(file));
				if (parent) pushTo(legacy, parent, {id: sub[1], file, legacy: true});
			}
			return {dir, names, legacy};
		}),
	);
}

/** What `transcriptFiles` answers, from the names: only a folder that lists `<id>.jsonl` is lstat()ed. */
function transcriptsNamed(sets: readonly NameSet[], id: string): string[] {
	const name = `${id}.jsonl`;
	const out: string[] = [];
	for (const {dir, names} of sets) {
		if (!names.has(name)) continue;
		const file = `${dir}${path.sep}${name}`;
		if (lstatOrUndefined(file)?.isFile() === true) out.push(file);
	}
	return out;
}

/**
 * The sub-agents of `id` from the project folders' names: only the folders named after `id` are
 * looked into (indexing every conversation's sub-agent folder up front cost a stat per
 * conversation folder for the few rows a refresh asks about).
 */
function subAgentsFrom(ctx: InRefresh, listings: readonly ProjectNames[], id: string): SubAgent[] {
	const out: SubAgent[] = [];
	for (const {dir, names, legacy} of listings) {
		// The path is made only where the name exists: one join per listing and row was a quarter of the cost.
		const folder = names.has(id) ? path.join(dir, id) : undefined;
		// Only real folders: a link named like the session is unlinked by purge, never read through.
		const nested = folder !== undefined && lstatOrUndefined(folder)?.isDirectory() === true ? path.join(folder, 'subagents') : undefined;
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
 * Within one refresh (a memo on the context), every project folder is listed once for all the
 * rows' verify and inUse calls instead of once per call (500 rows × 40 folders); elsewhere the
 * folders are looked at directly, as before.
 */
function transcriptsIn(ctx: AdapterContext, root: string, id: string): readonly string[] {
	if (!ctx.refresh) return transcriptFiles(ctx, root, id);
	// The folders' names, which inUse lists anyway for sub-agents: a lookup is a set test per
	// folder and an lstat per hit, where a stat per folder and row was most of a status run's
	// verify (and many rows used to list every folder a second time, with types, for an index).
	return transcriptsNamed(projectNameSets(ctx, root), id);
}

/**
 * Sub-agents of `id`: `<id>/subagents/agent-*.jsonl`, and legacy `agent-*.jsonl` beside the
 * transcripts. Inside a refresh the project folders' names are listed once for every row.
 */
function subAgentsIn(ctx: AdapterContext, root: string, id: string): readonly SubAgent[] {
	return subAgentsFrom(ctx, projectNames(ctx, root), id);
}

/** How many legacy root-level sidechains each parent has in one project folder (read once per folder). */
function legacyChildCounts(ctx: InRefresh, dir: string): Map<string, number> {
	const counts = new Map<string, number>();
	for (const entry of listDir(dir, ctx)) {
		if (!entry.isFile() || !SUBAGENT_FILE.test(entry.name)) continue;
		const parent = legacyParent(path.join(dir, entry.name));
		if (parent) counts.set(parent, (counts.get(parent) ?? 0) + 1);
	}
	return counts;
}

/** Sub-agent transcripts under `<dir>/<id>/subagents/` (real folders only). */
function nestedSubAgentCount(ctx: InRefresh, dir: string, id: string): number {
	const nested = path.join(dir, id, 'subagents');
	if (lstatOrUndefined(path.join(dir, id))?.isDirectory() !== true) return 0;
	return listDir(nested, ctx).filter(e => e.isFile() && SUBAGENT_FILE.test(e.name)).length;
}

function resumeStateOf(t: Transcript, exists: (cwd: string) => boolean = fs.existsSync): ResumeState {
	if (t.realMessages === 0) return {kind: 'no', reason: 'no messages yet'};
	if (!t.cwd) return {kind: 'unknown', reason: 'the transcript records no cwd'};
	if (!exists(t.cwd)) return {kind: 'no', reason: `cwd ${t.cwd} no longer exists`};
	return {kind: 'yes'};
}

/** A live-session record `sessions/<pid>.json` (FORMATS 10). */
export interface LiveRecord {
	readonly file: string;
	readonly pid: number;
	readonly sessionId: string;
	readonly procStart: string | undefined;
	/** `idle`, `busy`, `waiting` (2.1.x); absent in older records. */
	readonly status?: string;
	/** With `waiting`: what it waits for (`permission prompt`). */
	readonly waitingFor?: string;
}

/** One record file; legacy `pid-<n>.json` and anything unreadable is no record. */
function parseLiveRecord(file: string, name: string): LiveRecord | undefined {
	if (!/^\d+\.json$/.test(name)) return undefined;
	let record: Record<string, unknown> | undefined;
	try {
		record = parseJsonLine(fs.readFileSync(file, 'utf8').replace(/\n/g, ' '));
	} catch {
		return undefined;
	}
	const pid = Number(record?.['pid'] ?? name.slice(0, -5));
	const sessionId = str(record, 'sessionId');
	const procStart = record?.['procStart'];
	if (!Number.isInteger(pid) || !sessionId) return undefined;
	const status = str(record, 'status');
	const waitingFor = str(record, 'waitingFor');
	return {
		file,
		pid,
		sessionId,
		procStart: procStart === undefined || procStart === null ? undefined : String(procStart),
		...(status ? {status} : {}),
		...(waitingFor ? {waitingFor} : {}),
	};
}

function liveRecords(ctx: InRefresh, root: string): LiveRecord[] {
	const dir = path.join(root, 'sessions');
	const out: LiveRecord[] = [];
	for (const entry of listDir(dir, ctx)) {
		if (!entry.isFile()) continue;
		const record = parseLiveRecord(path.join(dir, entry.name), entry.name);
		if (record) out.push(record);
	}
	return out;
}

/** Is `proc` the process the record names: same pid and, when recorded, the same start time (a reused pid is not). */
function recordMatches(record: LiveRecord, proc: ProcessRef): boolean {
	return record.pid === proc.pid && (record.procStart === undefined || String(proc.startTime) === record.procStart);
}

/** The process a live record names, when it still runs (same pid and, when recorded, same start time). */
async function liveProcess(ctx: AdapterContext, record: LiveRecord): Promise<ProcessRef | undefined> {
	const proc = await ctx.processes.get(record.pid);
	return proc && recordMatches(record, proc) ? proc : undefined;
}

/**
 * The live record of the running claude process `proc` (`sessions/<pid>.json` under the config
 * folder, `CLAUDE_CONFIG_DIR` followed), only when its pid and `procStart` match the process:
 * a record left behind by an earlier process with the same pid says nothing about this one.
 */
export function liveRecordOf(ctx: AdapterContext, proc: ProcessRef): LiveRecord | undefined {
	const name = `${proc.pid}.json`;
	const file = path.join(claudeRoot(ctx), 'sessions', name);
	const record = lstatOrUndefined(file)?.isFile() ? parseLiveRecord(file, name) : undefined;
	return record && record.procStart !== undefined && recordMatches(record, proc) ? record : undefined;
}

const UUID_ARG = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRANSCRIPT_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** claude's background daemon and its spare workers (`claude --bg`): not on any one conversation. */
function isClaudeService(argv: readonly string[]): boolean {
	return argv.includes('--bg-pty-host') || argv.includes('--bg-spare') || (argv.includes('daemon') && !argv.includes('--session-id'));
}

/**
 * Which conversation each live claude process is on: its live record `sessions/<pid>.json` (same
 * pid and start time), else argv (`--resume ID`, `-r ID`, `--session-id ID`), else a transcript it
 * holds open, else its project folder (nothing says which of its conversations: all of them).
 */
async function claudeLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const root = claudeRoot(ctx);
	const records = new Map<number, LiveRecord>();
	for (const record of memo(ctx, `claude:live:${root}`, () => liveRecords(ctx, root))) records.set(record.pid, record);
	const recorded = (proc: ProcessRef) => {
		const record = records.get(proc.pid);
		return record !== undefined && (record.procStart === undefined || record.procStart === String(proc.startTime));
	};
	// A process its live record names is claude whatever its name looks like (pid and start time match).
	const mine = (await agentProcessesOf(ctx, claudeAdapter.matchesProcess, procs, {root: claudeRoot(ctx), rootOf: claudeRoot}, recorded)).filter(p => !isClaudeService(p.argv));
	if (mine.length === 0) return [];
	const open = await openFilesOf(ctx, mine.map(p => p.pid));
	const projects = path.join(realpathOrUndefined(root) ?? root, 'projects') + path.sep;
	return mine.map(proc => {
		const record = records.get(proc.pid);
		if (record && recorded(proc)) return idsUse(proc, [record.sessionId], `live session record ${record.file}`);
		const named = flagValue(proc.argv, ['--resume', '-r', '--session-id'], UUID_ARG);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const held = (open.get(proc.pid) ?? []).filter(f => f.startsWith(projects)).flatMap(f => TRANSCRIPT_NAME.exec(path.basename(f))?.[1] ?? []);
		if (held.length > 0) return idsUse(proc, held, `holds its transcript open`);
		return projectUse(proc, 'claude');
	});
}

/** The folders a conversation's transcripts record (for the project rule). */
function transcriptCwds(ctx: InRefresh, files: readonly string[], id: string): string[] {
	return [...new Set(files.flatMap(f => readTranscript(ctx, f, id).cwd ?? []))];
}

/** Hashes of pasted contents referenced by history lines that `match` selects (or does not). */
function pasteHashes(historyFile: string, wanted: (line: string) => boolean): Set<string> {
	const out = new Set<string>();
	let text: string;
	try {
		text = fs.readFileSync(historyFile, 'utf8');
	} catch {
		return out;
	}
	for (const line of text.split('\n')) {
		if (!wanted(line)) continue;
		const pasted = obj(parseJsonLine(line), 'pastedContents');
		for (const value of Object.values(pasted ?? {})) {
			const hash = (value as {contentHash?: unknown} | null)?.contentHash;
			if (typeof hash === 'string' && PASTE_HASH.test(hash)) out.add(hash);
		}
	}
	return out;
}

async function planFor(ctx: AdapterContext, id: string) {
	const root = claudeRoot(ctx);
	const agents = subAgentsIn(ctx, root, id);
	const items: (PlanItem | undefined)[] = [];
	for (const file of transcriptFiles({}, root, id)) items.push(fileItem(file, id, 'transcript'));
	let counted = 0;
	for (const agent of agents) {
		const file = fileItem(agent.file, agent.id, agent.legacy ? 'sub-agent transcript (legacy)' : 'sub-agent transcript');
		const meta = agent.meta ? fileItem(agent.meta, agent.id, 'sub-agent metadata') : undefined;
		if (!agent.legacy) counted += (file?.bytes ?? 0) + (meta?.bytes ?? 0);
		items.push(file, meta);
	}
	for (const dir of projectDirs({}, root)) items.push(dirItem(joinNames(dir, id), id, 'session folder (sub-agents, tool results)', counted));
	for (const [folder, description] of [
		['tasks', 'task list'],
		['file-history', 'file checkpoints'],
		['session-env', 'session environment'],
		['teams', 'team state'],
	] as const) {
		items.push(dirItem(joinNames(root, folder, id), id, description));
	}
	items.push(fileItem(joinNames(root, 'debug', `${id}.txt`), id, 'debug log'));
	for (const entry of listDir(path.join(root, 'todos'))) {
		if (entry.name.startsWith(`${id}-agent-`)) items.push(fileItem(joinNames(root, 'todos', entry.name), id, 'todo list'));
	}
	for (const entry of listDir(path.join(root, 'telemetry'))) {
		if (entry.name.startsWith(`1p_failed_events.${id}.`)) items.push(fileItem(joinNames(root, 'telemetry', entry.name), id, 'unsent telemetry'));
	}
	for (const record of liveRecords({}, root)) {
		if (record.sessionId === id && !(await liveProcess(ctx, record))) items.push(fileItem(record.file, id, 'stale live-session record'));
	}
	items.push(...historyItems(root, id), ...configKeyItems(ctx, id));
	const tmp = tempRoot(ctx);
	if (tmp) {
		for (const slug of listDir(tmp).filter(e => e.isDirectory())) items.push(dirItem(joinNames(tmp, slug.name, id), id, 'temp task output'));
	}
	return makePlan('claude', id, agents.map(a => a.id), items, roots(ctx));
}

/** `.claude.json` and its backups under `backups/`: every copy of the file claude rewrites on each start. */
function configFiles(ctx: AdapterContext): string[] {
	const backups = path.join(claudeRoot(ctx), 'backups');
	const copies = listDir(backups)
		.filter(e => e.isFile() && e.name.startsWith('.claude.json.backup'))
		.map(e => path.join(backups, e.name));
	return [globalConfigFile(ctx), ...copies];
}

/** `projects[<cwd>].lastSessionId` = the id (what `--continue` picks), in the config file and its backups. */
function configKeyItems(ctx: AdapterContext, id: string): PlanItem[] {
	const items: PlanItem[] = [];
	for (const file of configFiles(ctx)) {
		const count = countJsonMembers(file, 'lastSessionId', id);
		const backup = file !== globalConfigFile(ctx);
		if (count > 0) items.push({kind: 'key', path: file, count, bytes: 0, sessionId: id, description: backup ? 'lastSessionId in a backup of .claude.json' : 'lastSessionId in .claude.json (that key only)'});
	}
	return items;
}

/** Where a `key` item may be rewritten: `.claude.json` sits beside the claude folder, its backups inside. */
function configRoots(ctx: AdapterContext): string[] {
	return [path.dirname(globalConfigFile(ctx)), claudeRoot(ctx)];
}

/** history.jsonl lines of the session, and pasted contents only it referenced. */
function historyItems(root: string, id: string): (PlanItem | undefined)[] {
	const history = path.join(root, 'history.jsonl');
	const mine = jsonFieldIn('sessionId', [id]);
	const lines = (() => {
		try {
			return fs.readFileSync(history, 'utf8').split('\n').filter(mine);
		} catch {
			return [];
		}
	})();
	if (lines.length === 0) return [];
	const items: (PlanItem | undefined)[] = [
		{kind: 'lines', path: history, count: lines.length, bytes: lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0), sessionId: id, description: 'history.jsonl lines'},
	];
	const others = pasteHashes(history, line => line.trim() !== '' && !mine(line));
	for (const hash of pasteHashes(history, mine)) {
		if (!others.has(hash)) items.push(fileItem(joinNames(root, 'paste-cache', `${hash}.txt`), id, 'pasted content'));
	}
	return items;
}

export const claudeAdapter: AgentAdapter = {
	id: 'claude',
	label: 'Claude Code',
	capabilities: {resume: true, purge: true},
	idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
	processNames: ['claude', 'claude-code'],
	residentChildren: [],
	exitInput: measuredExitInput('/exit', readClaudeScreen),

	spawn: () => ({argv: ['claude']}),
	resume(_ctx, id) {
		assertValidId(claudeAdapter, id);
		return {argv: ['claude', '--resume', id]};
	},
	matchesProcess: proc => runsProgram(proc, claudeAdapter.processNames, ['@anthropic-ai/claude-code/']),

	async discover(ctx, query = {}) {
		const root = claudeRoot(ctx);
		const wantCwd = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const found = new Map<string, Conversation>();
		const problems: string[] = [];
		// One existsSync per cwd, not per transcript (a busy project folder: a thousand, one cwd).
		const cwds = new Map<string, boolean>();
		const exists = (cwd: string): boolean => {
			let known = cwds.get(cwd);
			if (known === undefined) cwds.set(cwd, (known = fs.existsSync(cwd)));
			return known;
		};
		for (const dir of projectDirs(ctx, root, query.cwd)) {
			const legacy = legacyChildCounts(ctx, dir);
			const entries = listDir(dir, ctx);
			// Only a conversation with a folder can have nested sub-agents: the listing says which
			// do, so the others cost no lstat (a thousand per busy project folder).
			const folders = new Set(entries.filter(e => e.isDirectory()).map(e => e.name));
			for (const entry of entries) {
				const id = entry.name.endsWith('.jsonl') ? entry.name.slice(0, -6) : '';
				if (!entry.isFile() || !claudeAdapter.idPattern.test(id) || found.has(id)) continue;
				let t: Transcript;
				try {
					t = readTranscript(ctx, path.join(dir, entry.name), id);
				} catch (error) {
					problems.push(`${path.join(dir, entry.name)}: ${messageOf(error)}`);
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
		const transcripts = dirs.flatMap(dir => listDir(dir, ctx).filter(e => e.isFile() && e.name.endsWith('.jsonl')).map(e => path.join(dir, e.name)));
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

	async artifacts(ctx, id) {
		assertValidId(claudeAdapter, id);
		return planFor(ctx, id);
	},

	async purge(ctx, id) {
		assertValidId(claudeAdapter, id);
		const plan = await planFor(ctx, id);
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
			indexFiles: [
				path.join(root, 'history.jsonl'),
				...configFiles(ctx),
				...projectDirs(ctx, root).map(dir => path.join(dir, 'sessions-index.json')),
			],
			databases: [],
		});
	},

	async inUse(ctx, id) {
		assertValidId(claudeAdapter, id);
		const root = claudeRoot(ctx);
		const agents = subAgentsIn(ctx, root, id);
		const transcripts = transcriptsIn(ctx, root, id);
		const uses = await memo(ctx, `claude:uses:${root}`, () => claudeLiveUses(ctx));
		const cwds = needsFolders(uses) ? transcriptCwds(ctx, transcripts, id) : [];
		const holders: InUseHolder[] = usersOf(uses, {ids: [id, ...agents.map(a => a.id)], cwds});
		holders.push(...(await argvUsers(ctx, [id, ...agents.map(a => a.id)])));
		const files = [...transcripts, ...agents.map(a => a.file)].map(f => realpathOrUndefined(f)).filter((f): f is string => f !== undefined);
		holders.push(...(await fileUsers(ctx, files)));
		return uniqueHolders(holders);
	},

	liveUses: (ctx, procs) => claudeLiveUses(ctx, procs),
};
