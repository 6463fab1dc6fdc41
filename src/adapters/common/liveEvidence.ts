// Kept whole (about 380 lines): every rule by which a live process's evidence (argv, environment,
// open files, folder) names a conversation is here, so the in-use safety rule that purge relies on
// is read, and mutation-tested, in one file.
import fs from 'node:fs';
import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';
import type {AdapterContext, InUseHolder} from '../types.js';
import {realpathOrUndefined} from './paths.js';
import {type InRefresh, memo, memoKind, memoPerListing, parseCached} from './refresh.js';

/** An agent's live uses over the whole process table, per store. */
const LIVE_USES = memoKind<Promise<LiveUse[]>>('live-uses');
/** This refresh's folder resolver (see `folderResolverIn`). */
const FOLDER_RESOLVER = memoKind<(p: string) => string>('in-use:folder-resolver');
/** Each list of live uses' index (see `usersOf`), for this refresh. */
const USE_INDEX = memoKind<WeakMap<readonly LiveUse[], UseIndex>>('in-use:use-index');

// "Which conversation is this live process on": one answer per agent process, used by inUse
// (purge, resume, the sessions and conversations views) and by adopt (which conversation to pin).

/** What one live agent process says about the conversation it is on. */
export type LiveClaim =
	/** It is on one of these conversations: argv names it, the agent's live record says so, it holds that conversation's own file open. */
	| {readonly kind: 'ids'; readonly ids: readonly string[]}
	/** It runs in this project folder and keeps no evidence of which of the project's conversations it is on. */
	| {
			readonly kind: 'project';
			readonly cwd: string;
			/** `cwd` resolved once (`resolveFolder`): the rule compares it with every conversation's. */ readonly folder: string;
	  }
	/** It may act on any conversation of the agent (a server the user started); nothing narrows it. */
	| {readonly kind: 'any'};

/** One live agent process and the conversation(s) it may be on. */
export interface LiveUse {
	readonly pid: number;
	readonly startTime: number;
	readonly command: string;
	readonly claim: LiveClaim;
	/** Where the claim comes from, in words: `live session record …`, `argv --resume X`, `a gemini TUI in /p keeps no record …`. */
	readonly reason: string;
}

/**
 * An adapter's `liveUses` from its reader: over the processes a caller hands in (one pane's), or
 * over the whole process table once per listing (see `Refresh.perListing`), which `inUse` and the
 * conversations list then share. `key` names the agent's store (two homes, two keys).
 */
export function liveUsesOnce(
	agent: string,
	store: (ctx: AdapterContext) => string,
	read: (ctx: AdapterContext, procs?: readonly ProcessRef[]) => Promise<LiveUse[]>,
): (ctx: AdapterContext, procs?: readonly ProcessRef[]) => Promise<LiveUse[]> {
	return (ctx, procs) => (procs ? read(ctx, procs) : memoPerListing(ctx, LIVE_USES.of(agent, store(ctx)), () => read(ctx)));
}

/** A conversation as the rule sees it: its id with its descendants' ids, and its project folder(s). */
export interface UseTarget {
	readonly ids: readonly string[];
	readonly cwds: readonly string[];
}

function realOrSelf(p: string): string {
	return realpathOrUndefined(p) ?? p;
}

/** A path without its trailing slashes (the root, however many slashes it is written with, stays `/`). */
export function trimSlash(p: string): string {
	const trimmed = p.replace(/\/+$/, '');
	return trimmed === '' && p !== '' ? '/' : trimmed;
}

/** A folder as the in-use rule compares it: links resolved (when it exists), no trailing slash. */
export function resolveFolder(p: string): string {
	return trimSlash(realOrSelf(p));
}

/**
 * `resolveFolder`, asked once per distinct path for as long as the caller keeps the function
 * (one question): comparing every live process with every conversation would otherwise cost a
 * realpath(3) per pair, millions at 500 panes and 20,000 conversations.
 */
export function folderResolver(): (p: string) => string {
	const known = new Map<string, string>();
	return p => {
		let real = known.get(p);
		if (real === undefined) known.set(p, (real = resolveFolder(p)));
		return real;
	};
}

/**
 * This refresh's `folderResolver` (every row's inUse compares the same few dozen folders: each is
 * resolved once, not once per row); outside a refresh, a fresh one for the one call.
 */
function folderResolverIn(ctx: InRefresh): (p: string) => string {
	return memo(ctx, FOLDER_RESOLVER.of(), folderResolver);
}

/** Resolved folders (see `resolveFolder`): the same one. */
export function sameResolved(a: string, b: string): boolean {
	return a === b;
}

/** Resolved folders: one inside the other, or the same (opencode's project is the repository, any folder of it). */
export function sameResolvedTree(a: string, b: string): boolean {
	return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`) || a === '/' || b === '/';
}

/** Same folder, literally or after resolving links (a TUI started in a linked folder is on that project). */
export function sameFolder(a: string, b: string): boolean {
	return trimSlash(a) === trimSlash(b) || sameResolved(resolveFolder(a), resolveFolder(b));
}

/** A conversation whose folder is not recorded (`UseTarget.cwds`): every project claim is on its project. */
export const ANY_FOLDER = '\0any';

/**
 * What "its project" means for an agent: the same folder (resolved), or the same tree (one
 * inside the other, or the same; the root is every tree: opencode's project is the repository).
 */
export type ProjectRule = 'folder' | 'tree';

/** `p` and the folders above it (`/x/y`: `/x/y`, `/x`, `/`). */
function selfAndAbove(p: string): string[] {
	const out = [p];
	for (let at = p.lastIndexOf('/'); at > 0; at = p.lastIndexOf('/', at - 1)) out.push(p.slice(0, at));
	// The root is above every folder (written relative or not: "the root is every tree").
	if (p !== '/') out.push('/');
	return out;
}

/** Positions in `uses`, by what their claims name: each claim looked at once per list of uses, not once per conversation. */
interface UseIndex {
	readonly any: readonly number[];
	readonly project: readonly number[];
	readonly byId: ReadonlyMap<string, readonly number[]>;
	/** Project claims by their resolved folder. */
	readonly byFolder: ReadonlyMap<string, readonly number[]>;
	/** Project claims by each folder strictly above theirs. */
	readonly below: ReadonlyMap<string, readonly number[]>;
	/** Each use as a holder, made once per list: a refresh answers thousands of conversations from a few dozen uses. */
	readonly holders: readonly InUseHolder[];
}

function indexOfUses(uses: readonly LiveUse[]): UseIndex {
	const any: number[] = [];
	const project: number[] = [];
	const byId = new Map<string, number[]>();
	const byFolder = new Map<string, number[]>();
	const below = new Map<string, number[]>();
	const add = (map: Map<string, number[]>, key: string, at: number) => {
		const list = map.get(key);
		if (!list) map.set(key, [at]);
		else if (list[list.length - 1] !== at) list.push(at);
	};
	uses.forEach(({claim}, at) => {
		if (claim.kind === 'any') any.push(at);
		else if (claim.kind === 'ids') for (const id of claim.ids) add(byId, id, at);
		else {
			project.push(at);
			const [own, ...above] = selfAndAbove(claim.folder);
			add(byFolder, own ?? claim.folder, at);
			for (const folder of above) add(below, folder, at);
		}
	});
	const holders = uses.map(use => ({pid: use.pid, startTime: use.startTime, command: use.command, reason: use.reason}));
	return {any, project, byId, byFolder, below, holders};
}

/** The index of this list of uses: once per list inside a refresh (the live uses are one list per agent and listing). */
function indexOfUsesIn(ctx: InRefresh, uses: readonly LiveUse[]): UseIndex {
	if (!ctx.refresh) return indexOfUses(uses);
	const known = memo(ctx, USE_INDEX.of(), () => new WeakMap<readonly LiveUse[], UseIndex>());
	let index = known.get(uses);
	if (!index) known.set(uses, (index = indexOfUses(uses)));
	return index;
}

/**
 * THE in-use rule (README "In use"): a conversation is in use when a live process's claim names
 * it (or a descendant), when a process that keeps no per-conversation evidence runs in its
 * project folder (`project` says what that means for the agent; a conversation whose folder is
 * not recorded, `ANY_FOLDER`, is on every project), or when a process may act on any
 * conversation. Holders come in the order of `uses`.
 */
export function usersOf(ctx: InRefresh, uses: readonly LiveUse[], target: UseTarget, project: ProjectRule = 'folder'): InUseHolder[] {
	const index = indexOfUsesIn(ctx, uses);
	// The lists of positions that name the target; most targets meet one list (their folder's).
	const lists: (readonly number[] | undefined)[] = [index.any];
	for (const id of target.ids) lists.push(index.byId.get(id));
	const resolve = folderResolverIn(ctx);
	for (const written of target.cwds) {
		const cwd = resolve(written);
		if (cwd === ANY_FOLDER) lists.push(index.project);
		else if (project === 'folder') lists.push(index.byFolder.get(cwd));
		else {
			// Its folder and those above it (the root is above every folder), and every claim below it.
			for (const folder of selfAndAbove(cwd)) lists.push(index.byFolder.get(folder));
			lists.push(index.below.get(cwd));
		}
	}
	const hits = new Set<number>();
	for (const list of lists) for (const at of list ?? []) hits.add(at);
	return [...hits].sort((a, b) => a - b).map(at => index.holders[at] as InUseHolder);
}

/** Do any of `uses` claim by project or claim everything? Only then is a conversation's folder worth looking up. */
export function needsFolders(uses: readonly LiveUse[]): boolean {
	return uses.some(u => u.claim.kind !== 'ids');
}

/** A process's environment (`/proc/<pid>/environ`), or undefined when it cannot be read (another user's). */
export function environOf(pid: number): Record<string, string> | undefined {
	let text: string;
	try {
		text = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
	} catch {
		return undefined;
	}
	const env: Record<string, string> = {};
	for (const pair of text.split('\0')) {
		const at = pair.indexOf('=');
		if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
	}
	return env;
}

/**
 * `environOf` of a process as this listing shows it, kept in the context's parse cache: a process's
 * `/proc/<pid>/environ` is the block it was started with, the same for its whole life, and every
 * listing (once a minute) asks about every agent process again. Read again when the process is
 * another one (start time), ran exec (argv) or the file's stat moved; an empty or unreadable
 * environment is never kept.
 */
function environKept(ctx: InRefresh, proc: ProcessRef): Record<string, string> | undefined {
	const also = `${proc.startTime}\0${proc.argv.join('\0')}`;
	return parseCached(
		ctx,
		'environ',
		`/proc/${proc.pid}/environ`,
		also,
		() => environOf(proc.pid),
		env => env !== undefined && Object.keys(env).length > 0,
	);
}

/**
 * The agent's data root a process with this environment uses: the adapter's own root rule run
 * on the process's HOME and override variables (as if it were the caller's own home).
 */
export function rootForEnv(env: Record<string, string>, rootOf: (ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>) => string): string | undefined {
	const home = env['HOME'];
	return home ? rootOf({home, ownHome: true, env}) : undefined;
}

/**
 * The processes of this table that `matches` (the agent's), our own process excluded — and only
 * those that use the store at `root`: a TUI with another HOME (or `CLAUDE_CONFIG_DIR`,
 * `XDG_DATA_HOME`, …) keeps its conversations elsewhere and cannot be on one of these. A process
 * whose environment cannot be read counts (fail safe).
 */
export async function agentProcessesOf(
	ctx: AdapterContext,
	matches: (proc: ProcessRef) => boolean,
	procs: readonly ProcessRef[] | undefined,
	store: {readonly root: string; readonly rootOf: (ctx: Pick<AdapterContext, 'home' | 'ownHome' | 'env'>) => string},
	/** Processes the store itself names (claude's live record): theirs whatever their environment says. */
	named: (proc: ProcessRef) => boolean = () => false,
): Promise<ProcessRef[]> {
	const all = procs ?? (await ctx.processes.list());
	return all.filter(p => {
		if (p.pid === process.pid) return false;
		if (named(p)) return true;
		if (!matches(p)) return false;
		const env = environKept(ctx, p);
		const theirs = env ? rootForEnv(env, store.rootOf) : undefined;
		return theirs === undefined || sameFolder(theirs, store.root);
	});
}

export function commandOf(proc: Pick<ProcessRef, 'argv' | 'name'>): string {
	return proc.argv.join(' ') || proc.name;
}

/**
 * The value of the first of `flags` in argv (`--resume ID`, `--resume=ID`, `-r ID`), looked for
 * only after the program word, and only when it matches `pattern` (a value that is not an id,
 * such as gemini's `-r latest`, says nothing exact).
 */
export function flagValue(argv: readonly string[], flags: readonly string[], pattern: RegExp): string | undefined {
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] ?? '';
		for (const flag of flags) {
			let value: string | undefined;
			if (arg === flag) value = argv[i + 1];
			else if (flag.startsWith('--') && arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
			if (value !== undefined && pattern.test(value)) return value;
		}
	}
	return undefined;
}

/** True when one of `flags` is given at all (whatever its value). */
export function hasFlag(argv: readonly string[], flags: readonly string[]): boolean {
	return argv.some(arg => flags.some(flag => arg === flag || (flag.startsWith('--') && arg.startsWith(`${flag}=`))));
}

/** The word after `word` when it matches `pattern` (`codex resume ID`, `codex exec resume ID`). */
export function wordAfter(argv: readonly string[], words: readonly string[], pattern: RegExp): string | undefined {
	for (let i = 0; i < argv.length - 1; i++) {
		if (words.includes(argv[i] ?? '') && pattern.test(argv[i + 1] ?? '')) return argv[i + 1];
	}
	return undefined;
}

/**
 * The files (realpath) each of `pids` holds open: read for those processes alone when the table
 * can (an agent's few processes, not every process's fd folder each listing), else from its one
 * pass over open files, else from /proc.
 */
export async function openFilesOf(ctx: AdapterContext, pids: readonly number[]): Promise<Map<number, string[]>> {
	const wanted = new Set(pids);
	const out = new Map<number, string[]>();
	if (wanted.size === 0) return out;
	const table = ctx.processes;
	const some = table.openFilesOfPids?.bind(table);
	const read = some ? () => some([...wanted]) : table.openFiles?.bind(table);
	if (read) {
		for (const f of await read()) {
			if (!wanted.has(f.pid)) continue;
			const list = out.get(f.pid);
			if (list) list.push(f.path);
			else out.set(f.pid, [f.path]);
		}
		return out;
	}
	for (const pid of wanted) {
		try {
			const fds = fs.readdirSync(`/proc/${pid}/fd`);
			out.set(
				pid,
				fds.flatMap(fd => {
					try {
						return [fs.readlinkSync(`/proc/${pid}/fd/${fd}`)];
					} catch {
						return [];
					}
				}),
			);
		} catch {
			// gone, or not ours to read
		}
	}
	return out;
}

/** A process's cwd, or undefined (another user's process hides it). */
export function cwdOf(proc: ProcessRef): string | undefined {
	const cwd = proc.cwd;
	return cwd && path.isAbsolute(cwd) ? cwd : undefined;
}

/**
 * The claim of a process with no exact evidence: its project folder, or — when even that is
 * hidden — every conversation (fail safe: an unknown TUI could be on any of them).
 */
export function projectUse(proc: ProcessRef, label: string): LiveUse {
	const cwd = cwdOf(proc);
	const base = {pid: proc.pid, startTime: proc.startTime, command: commandOf(proc)};
	if (cwd === undefined) return {...base, claim: {kind: 'any'}, reason: `a ${label} process whose folder cannot be read could be on any conversation`};
	return {
		...base,
		claim: {kind: 'project', cwd, folder: resolveFolder(cwd)},
		reason: `a ${label} process in ${cwd} keeps no record of which conversation it is on`,
	};
}

export function idsUse(proc: ProcessRef, ids: readonly string[], reason: string): LiveUse {
	return {pid: proc.pid, startTime: proc.startTime, command: commandOf(proc), claim: {kind: 'ids', ids}, reason};
}
