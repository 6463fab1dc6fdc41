import type {AgentId, ProcessRef, SessionRecord} from '../domain/types.js';
import {processKey, type DriftWorld} from './world.js';

function listAt(value: unknown): unknown[] {
	return Array.isArray(value) ? (value as unknown[]) : [];
}

/**
 * The process refs a stop recorded on the row (`extra.stop.processes`, as src/actions/stop.ts
 * writes them, or `extra.processes`): pid and start time each. Anything malformed is skipped: a
 * row written by another version must not crash detection.
 */
export function recordedProcesses(extra: Readonly<Record<string, unknown>>): Array<Pick<ProcessRef, 'pid' | 'startTime'>> {
	const stop = extra['stop'];
	const nested = stop && typeof stop === 'object' ? (stop as Record<string, unknown>)['processes'] : undefined;
	const refs: Array<Pick<ProcessRef, 'pid' | 'startTime'>> = [];
	for (const item of [...listAt(nested), ...listAt(extra['processes'])]) {
		if (!item || typeof item !== 'object') continue;
		const {pid, startTime} = item as Record<string, unknown>;
		if (typeof pid === 'number' && Number.isInteger(pid) && pid > 0 && typeof startTime === 'number' && Number.isFinite(startTime)) {
			refs.push({pid, startTime});
		}
	}
	return refs;
}

/** How a process was tied to the stopped session. */
export interface StaleProcess {
	readonly proc: ProcessRef;
	readonly why: string;
}

/**
 * Live processes of a stopped session, outside every live pane: a recorded ref with the same pid
 * *and* start time (a reused pid is someone else), or an agent process whose argv names the pin.
 */
/**
 * The process table minus every live pane's processes, with keys; once per table and set of pane
 * processes (every stopped row walks it), kept while both are the same (drift's memo reuses them).
 */
const outside = new WeakMap<ReadonlySet<string>, {readonly table: readonly ProcessRef[]; readonly list: readonly {readonly proc: ProcessRef; readonly key: string}[]}>();

function outsidePanes(world: DriftWorld, table: readonly ProcessRef[]): readonly {readonly proc: ProcessRef; readonly key: string}[] {
	const known = outside.get(world.paneProcessKeys);
	if (known?.table === table) return known.list;
	const list = table.map(proc => ({proc, key: processKey(proc)})).filter(({key}) => !world.paneProcessKeys.has(key));
	outside.set(world.paneProcessKeys, {table, list});
	return list;
}

export function staleProcesses(world: DriftWorld, row: SessionRecord, agent: AgentId): StaleProcess[] {
	const table = world.input.processes;
	if (table === null) return [];
	const recorded = new Set(recordedProcesses(row.extra).map(processKey));
	const pin = row.agentSessionId;
	const found: StaleProcess[] = [];
	for (const {proc, key} of outsidePanes(world, table)) {
		if (recorded.has(key)) found.push({proc, why: 'recorded when the session was stopped'});
		// The cheap argv test first: every stopped row walks the whole process table.
		else if (pin !== null && proc.argv.includes(pin) && world.agents[agent].matchesProcess(proc)) {
			found.push({proc, why: `a ${agent} process whose argv names ${pin}`});
		}
	}
	return found.sort((a, b) => a.proc.pid - b.proc.pid || a.proc.startTime - b.proc.startTime);
}
