import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';
import {pidIndex, type Holder, type ProcessTable} from '../../system/processes.js';
import type {AdapterContext, InUseHolder} from '../types.js';
import {realpathOrUndefined} from './paths.js';
import {memoKind, type MemoKey} from './refresh.js';

/** Kept with the process table it was computed from (perTable). */
type PerTable<T> = {readonly all: readonly ProcessRef[]; readonly value: T};
const SELF_PIDS = memoKind<PerTable<ReadonlySet<number>>>('in-use:self-pids');
const OPEN_FILES = memoKind<{value?: {table: ProcessTable; ids: Promise<Set<string>>}}>('in-use:open-files');
const ARGV_NAMES = memoKind<{value?: PerTable<ArgvNames>}>('in-use:argv-names');

/**
 * Our own process, and the wrappers that started us with the same arguments (`npx mam-tui purge
 * --id X`, `sh -c 'mam-tui purge --id X'`): their argv names the id too, but they are not users
 * of the conversation. Any other ancestor (an agent whose Bash tool runs mam-tui) still counts.
 * Inside a refresh, once per process table: a refresh asks inUse for hundreds of rows with one table.
 */
function selfPids(ctx: AdapterContext, all: readonly ProcessRef[]): ReadonlySet<number> {
	return perTable(ctx, SELF_PIDS.of(), all, () => selfPidsNow(all));
}

/** `compute()` once per refresh and process table (the refresh's table is one listing); outside a refresh, every time. */
function perTable<T>(ctx: AdapterContext, key: MemoKey<PerTable<T>>, all: readonly ProcessRef[], compute: () => T): T {
	if (!ctx.refresh) return compute();
	const kept = ctx.refresh.perListing(key.text, (): PerTable<T> => ({all, value: compute()}));
	return kept.all === all ? kept.value : compute();
}

function selfPidsNow(all: readonly ProcessRef[]): Set<number> {
	const self = new Set<number>([process.pid]);
	const ourArgs = process.argv.slice(2).join(' ');
	if (ourArgs.length === 0) return self;
	const byPid = pidIndex(all);
	let current = byPid.get(process.pid);
	// Up to and including pid 1 (whose parent is 0): a container's start command may be the
	// wrapper itself (`npx mam-tui purge --id X` as pid 1). A table with a loop stops where it closes.
	while (current) {
		const parent = byPid.get(current.ppid);
		if (!parent || self.has(parent.pid) || !parent.argv.join(' ').includes(ourArgs)) break;
		self.add(parent.pid);
		current = parent;
	}
	return self;
}

/** The shortest id length argv parts are made for (every agent's ids are shorter); a longer id asked makes them again. */
const ARGV_PART_FLOOR = 64;

/**
 * Every part of `word` (letters, digits, `-`, `_`) an id of at most `longest` characters could be:
 * the word, or a part of it between `-`, `_` or its ends (`rollout-…-<id>.jsonl`).
 */
function partsOfWord(word: string, longest: number, add: (part: string) => void): void {
	for (let start = 0; start < word.length; start = nextPart(word, start)) {
		const last = Math.min(word.length, start + longest);
		for (let end = start + 1; end <= last; end++) {
			if (end === word.length || word[end] === '-' || word[end] === '_') add(word.slice(start, end));
		}
	}
}

/** Where the part after the one starting at `start` starts (past the next `-` or `_`), or the word's end. */
function nextPart(word: string, start: number): number {
	for (let i = start; i < word.length; i++) if (word[i] === '-' || word[i] === '_') return i + 1;
	return word.length;
}

/**
 * What "argv names an id" means (README "In use"): the id is one argument's word (split at
 * anything but letters, digits, `-` and `_`) or a part of one between `-`, `_` or its ends. Every
 * agent's ids are made of those characters. Each part maps to the table's processes naming it, in
 * table order: one pass over the argv words per table, then a lookup per id.
 */
export interface ArgvNames {
	/** The longest id the parts were made for. */
	readonly longest: number;
	readonly byPart: ReadonlyMap<string, readonly number[]>;
}

export function argvNames(all: readonly ProcessRef[], longest: number): ArgvNames {
	const byPart = new Map<string, number[]>();
	all.forEach((proc, at) => {
		const add = (part: string) => {
			const list = byPart.get(part);
			if (!list) byPart.set(part, [at]);
			else if (list[list.length - 1] !== at) list.push(at);
		};
		for (const arg of proc.argv) for (const word of arg.split(/[^A-Za-z0-9_-]+/)) partsOfWord(word, longest, add);
	});
	return {longest, byPart};
}

/**
 * This table's argv names for ids up to `longest` long: kept per table while the refresh's listing
 * stands (a refresh for a file change reuses it), made again for a longer id.
 */
export function argvNamesIn(ctx: AdapterContext, all: readonly ProcessRef[], longest: number): ArgvNames {
	const want = Math.max(ARGV_PART_FLOOR, longest);
	if (!ctx.refresh) return argvNames(all, want);
	const kept = ctx.refresh.perListing(ARGV_NAMES.of().text, (): {value?: PerTable<ArgvNames>} => ({}));
	if (kept.value?.all !== all || kept.value.value.longest < want) kept.value = {all, value: argvNames(all, want)};
	return kept.value.value;
}

/** Processes (other than us) whose argv names one of `ids` (see `ArgvNames`); the first id named is the reason. */
export async function argvUsers(ctx: AdapterContext, ids: readonly string[]): Promise<InUseHolder[]> {
	const all = await ctx.processes.list();
	const names = argvNamesIn(ctx, all, Math.max(0, ...ids.map(id => id.length)));
	const named = new Map<number, string>();
	for (const id of ids) for (const at of (id === '' ? undefined : names.byPart.get(id)) ?? []) if (!named.has(at)) named.set(at, id);
	if (named.size === 0) return [];
	const self = selfPids(ctx, all);
	const out: InUseHolder[] = [];
	for (const at of [...named.keys()].sort((a, b) => a - b)) {
		const proc = all[at] as ProcessRef;
		if (self.has(proc.pid)) continue;
		out.push({pid: proc.pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, reason: `argv names ${named.get(at) ?? ''}`});
	}
	return out;
}

/** A file's identity: its device and inode, whatever path (or link) reaches it. */
function identity(st: {readonly dev: number; readonly ino: number}): string {
	return `${st.dev}:${st.ino}`;
}

/**
 * The identities of every file some other process holds open, once per table inside a refresh
 * when the table lists open files in one pass (a thousand paths stat()ed once); else undefined. A
 * refresh is a view: it takes the table's kept pass (only new or changed processes' fds read) when
 * there is one. Outside a refresh (purge, resume) nothing here is asked: `holders` reads every
 * process. Our own files (the stores a refresh keeps open, the parse memo) are left out: we are
 * never a holder (`fileUsers`), and a file only we hold made a second pass over every process.
 */
async function openIdentities(ctx: AdapterContext): Promise<ReadonlySet<string> | undefined> {
	const table = ctx.processes;
	const refresh = ctx.refresh;
	const every = (table.openFilesKept ?? table.openFiles)?.bind(table);
	if (!refresh || !every) return undefined;
	const kept = refresh.perListing(OPEN_FILES.of().text, (): {value?: {table: ProcessTable; ids: Promise<Set<string>>}} => ({}));
	if (kept.value?.table !== table) {
		const ids = every().then(files => {
			const out = new Set<string>();
			for (const file of new Set(files.flatMap(f => (f.pid === process.pid ? [] : [f.path])))) {
				const st = path.isAbsolute(file) ? refresh.stat(file) : undefined;
				if (st) out.add(identity(st));
			}
			return out;
		});
		kept.value = {table, ids};
	}
	return kept.value.ids;
}

/**
 * `paths` resolved (realpath), as open files show them, leaving out those that do not exist.
 * Inside a refresh, a file that is none of the open files (by identity, so a link to an open file
 * is kept) is held by nobody: the refresh's stat of it (the parse took it) answers, not a
 * realpath per conversation file.
 */
async function heldCandidates(ctx: AdapterContext, paths: readonly string[]): Promise<string[]> {
	const open = await openIdentities(ctx);
	const out: string[] = [];
	for (const p of paths) {
		if (open) {
			const st = ctx.refresh?.stat(p);
			if (!st || !open.has(identity(st))) continue;
		}
		const real = realpathOrUndefined(p);
		if (real !== undefined) out.push(real);
	}
	return out;
}

/** Processes (other than us) holding any of `paths` (as found: resolved here) open, except those `ignore` accepts (a shared service). */
export async function fileUsers(ctx: AdapterContext, paths: readonly string[], ignore: (holder: Holder) => boolean = () => false): Promise<InUseHolder[]> {
	if (paths.length === 0) return [];
	const real = await heldCandidates(ctx, paths);
	if (real.length === 0) return [];
	const holders = await ctx.processes.holders(real);
	return holders
		.filter(h => h.pid !== process.pid && !ignore(h))
		.map(h => ({pid: h.pid, startTime: h.startTime, command: h.command, reason: `holds ${h.path} open`}));
}

/** One entry per process (the first reason found wins). */
export function uniqueHolders(holders: readonly InUseHolder[]): InUseHolder[] {
	const seen = new Set<number>();
	const out: InUseHolder[] = [];
	for (const h of holders) {
		if (seen.has(h.pid)) continue;
		seen.add(h.pid);
		out.push(h);
	}
	return out;
}
