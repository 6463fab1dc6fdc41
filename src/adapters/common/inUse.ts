import type {ProcessRef} from '../../domain/types.js';
import {pidIndex, type Holder} from '../../system/processes.js';
import type {AdapterContext, InUseHolder} from '../types.js';
import {memoKind, type MemoKey} from './refresh.js';

/** Kept with the process table it was computed from (perTable). */
type PerTable<T> = {readonly all: readonly ProcessRef[]; readonly value: T};
const SELF_PIDS = memoKind<PerTable<ReadonlySet<number>>>('in-use:self-pids');
const JOINED_ARGV = memoKind<PerTable<ReturnType<typeof joinedArgv>>>('in-use:joined-argv');

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
	const kept = ctx.refresh.memo(key.text, (): PerTable<T> => ({all, value: compute()}));
	return kept.all === all ? kept.value : compute();
}

function selfPidsNow(all: readonly ProcessRef[]): Set<number> {
	const self = new Set<number>([process.pid]);
	const ourArgs = process.argv.slice(2).join(' ');
	if (ourArgs.length === 0) return self;
	const byPid = pidIndex(all);
	let current = byPid.get(process.pid);
	while (current && current.ppid > 1) {
		const parent = byPid.get(current.ppid);
		if (!parent || !parent.argv.join(' ').includes(ourArgs)) break;
		self.add(parent.pid);
		current = parent;
	}
	return self;
}

/**
 * Each process's arguments in one string, NUL between them (once per table inside a refresh: it
 * asks for hundreds of rows over the same table). A valid id holds no NUL, so it is found in this
 * string exactly when one argument holds it.
 */
function joinedArgv(all: readonly ProcessRef[]): {readonly each: readonly string[]; readonly every: string} {
	const each = all.map(p => p.argv.join('\0'));
	// Every argument of every process in one string: an id that is not in it is in no argument,
	// and one search of it is much cheaper than one per process (most ids are named by nobody).
	return {each, every: each.join('\0')};
}

/** Processes (other than us) whose argv names one of `ids` in any argument. */
export async function argvUsers(ctx: AdapterContext, ids: readonly string[]): Promise<InUseHolder[]> {
	const all = await ctx.processes.list();
	const joined = perTable(ctx, JOINED_ARGV.of(), all, () => joinedArgv(all));
	const wanted = ids.filter(id => id !== '' && !id.includes('\0') && joined.every.includes(id));
	if (wanted.length === 0) return [];
	const self = selfPids(ctx, all);
	const out: InUseHolder[] = [];
	for (let i = 0; i < all.length; i++) {
		const proc = all[i] as ProcessRef;
		const text = joined.each[i] as string;
		let named: string | undefined;
		for (const id of wanted) {
			if (text.includes(id)) {
				named = id;
				break;
			}
		}
		if (named === undefined || self.has(proc.pid)) continue;
		out.push({pid: proc.pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, reason: `argv names ${named}`});
	}
	return out;
}

/** Processes (other than us) holding any of `paths` open, except those `ignore` accepts (a shared service). */
export async function fileUsers(ctx: AdapterContext, paths: readonly string[], ignore: (holder: Holder) => boolean = () => false): Promise<InUseHolder[]> {
	if (paths.length === 0) return [];
	const holders = await ctx.processes.holders(paths);
	return holders
		.filter(h => h.pid !== process.pid && !ignore(h))
		.map(h => ({pid: h.pid, startTime: h.startTime, command: h.command, reason: `holds ${h.path} open`}));
}

/** One entry per process (the first reason found wins). */
export function uniqueHolders(holders: readonly InUseHolder[]): InUseHolder[] {
	const seen = new Map<number, InUseHolder>();
	for (const h of holders) if (!seen.has(h.pid)) seen.set(h.pid, h);
	return [...seen.values()];
}
