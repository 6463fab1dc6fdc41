import {ADAPTERS} from '../adapters/index.js';
import type {AgentAdapter} from '../adapters/types.js';
import {AGENT_IDS, type AgentId, type ProcessRef} from '../domain/types.js';
import {pidIndex, type ProcessTable} from '../system/processes.js';

/**
 * The agent running in a pane, judged from its process tree (root first) by each adapter's
 * `matchesProcess`. The process nearest the root wins, so a helper an agent spawned never
 * hides the agent itself. Undefined for a plain shell.
 */
export function detectAgent(
	tree: readonly ProcessRef[],
	adapters: Readonly<Record<AgentId, Pick<AgentAdapter, 'matchesProcess'>>> = ADAPTERS,
): AgentId | undefined {
	for (const proc of tree) {
		const agent = AGENT_IDS.find(id => adapters[id].matchesProcess(proc));
		if (agent) return agent;
	}
	return undefined;
}

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
