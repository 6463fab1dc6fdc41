import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';
import type {AdapterContext, InUseHolder} from '../types.js';
import {realOrUndefined} from './rootedFs.js';

const RUNTIMES = /^(?:node|nodejs|bun|deno|python[0-9.]*)$/;

/** Index of the program word in argv: argv[0], or the script a runtime such as `node` runs. */
function programIndex(argv: readonly string[]): number {
	if (!RUNTIMES.test(path.basename(argv[0] ?? ''))) return 0;
	const script = argv.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
	return script < 0 ? 0 : script;
}

/**
 * True when the process is one of `names`: its comm, its argv[0], or — for a runtime such as
 * `node` or `python3` — the script it runs (`node --flag /usr/bin/gemini …`). Later words never
 * count, so `mam-tui stop gemini` is not a gemini process.
 */
export function runsProgram(proc: Pick<ProcessRef, 'name' | 'argv'>, names: readonly string[]): boolean {
	if (names.includes(proc.name)) return true;
	return names.includes(path.basename(proc.argv[programIndex(proc.argv)] ?? ''));
}

/** The first word after the program (`gateway` in `hermes gateway`), if any. */
export function subcommand(argv: readonly string[]): string | undefined {
	return argv.slice(programIndex(argv) + 1).find(arg => !arg.startsWith('-'));
}

/** True when an argv word is the id, or a `--flag=<id>` form of it. */
export function argvNamesId(argv: readonly string[], id: string): boolean {
	return argv.some(arg => arg === id || arg.endsWith(`=${id}`));
}

/** How an adapter recognises its agent's background service. */
export interface UseRules {
	/** True for the agent's long-lived service that holds shared files for everyone (SPEC 4.1). */
	readonly isService: (argv: readonly string[]) => boolean;
}

/** This process and its ancestors: mam-tui asking about an id is not a user of it. */
function selfAndAncestors(all: readonly ProcessRef[]): Set<number> {
	const byPid = new Map(all.map(p => [p.pid, p]));
	const out = new Set<number>();
	let pid: number | undefined = process.pid;
	while (pid !== undefined && pid > 0 && !out.has(pid)) {
		out.add(pid);
		pid = byPid.get(pid)?.ppid;
	}
	return out;
}

/**
 * Processes using a conversation (SPEC 4.1): a process whose argv names one of `ids`, or one
 * holding one of `files` open — except the agent's background service and mam-tui itself.
 */
export async function findUsers(ctx: AdapterContext, rules: UseRules, ids: readonly string[], files: readonly string[]): Promise<InUseHolder[]> {
	const all = await ctx.processes.list();
	const self = selfAndAncestors(all);
	const found = new Map<number, InUseHolder>();
	for (const proc of all) {
		if (self.has(proc.pid) || rules.isService(proc.argv)) continue;
		const named = ids.find(id => argvNamesId(proc.argv, id));
		if (named) {
			found.set(proc.pid, {pid: proc.pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, reason: `argv names ${named}`});
		}
	}
	const real = [...new Set(files.map(realOrUndefined).filter((f): f is string => f !== undefined))];
	for (const holder of await ctx.processes.holders(real)) {
		if (found.has(holder.pid) || self.has(holder.pid) || rules.isService(holder.argv)) continue;
		found.set(holder.pid, {pid: holder.pid, startTime: holder.startTime, command: holder.command, reason: `holds ${holder.path} open`});
	}
	return [...found.values()];
}
