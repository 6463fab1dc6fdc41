import type {ProcessRef} from '../domain/types.js';
import {pidIndex, type ProcessTable} from '../system/processes.js';

/**
 * `pid` and all its ancestors, from one process-table snapshot. A pane whose root process is
 * in this set is the pane mam-tui itself runs in, however its id was learned.
 */
export function lineage(table: readonly ProcessRef[], pid: number): Set<number> {
	const byPid = pidIndex(table);
	const out = new Set<number>();
	let current = byPid.get(pid);
	if (!current) out.add(pid);
	while (current && !out.has(current.pid)) {
		out.add(current.pid);
		current = byPid.get(current.ppid);
	}
	return out;
}

/** Like `lineage`, but walks up with single /proc reads instead of a whole table. */
export async function lineageOf(processes: Pick<ProcessTable, 'get'>, pid: number): Promise<Set<number>> {
	const out = new Set<number>([pid]);
	let current = await processes.get(pid);
	while (current && current.ppid > 0 && !out.has(current.ppid)) {
		out.add(current.ppid);
		current = await processes.get(current.ppid);
	}
	return out;
}
