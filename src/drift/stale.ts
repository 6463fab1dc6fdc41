import type {AgentId, ProcessRef, SessionRecord} from '../domain/types.js';
import {recordedProcesses} from '../registry/extra.js';
import {processKey, type DriftWorld, type OutsidePanes} from './world.js';

/** How a process was tied to the stopped session. */
export interface StaleProcess {
	readonly proc: ProcessRef;
	readonly why: string;
}

/**
 * The process table minus every live pane's processes, indexed by key and by argv element; once
 * per world (drift's memo keeps its world while the table and panes are the same). Every stopped
 * row looks its recorded refs and its pin up here instead of walking the table (fifty stopped
 * rows × a thousand processes per detection).
 */
function outsidePanes(world: DriftWorld, table: readonly ProcessRef[]): OutsidePanes {
	const known = world.outside.value;
	if (known?.table === table) return known;
	const byKey = new Map<string, ProcessRef[]>();
	const byArg = new Map<string, ProcessRef[]>();
	const add = (map: Map<string, ProcessRef[]>, key: string, proc: ProcessRef) => {
		const list = map.get(key);
		if (list) list.push(proc);
		else map.set(key, [proc]);
	};
	for (const proc of table) {
		const key = processKey(proc);
		if (world.paneProcessKeys.has(key)) continue;
		add(byKey, key, proc);
		for (const arg of new Set(proc.argv)) add(byArg, arg, proc);
	}
	const index = {table, byKey, byArg};
	world.outside.value = index;
	return index;
}

/**
 * Live processes of a stopped session, outside every live pane: a recorded ref with the same pid
 * *and* start time (a reused pid is someone else), or an agent process whose argv names the pin.
 */
export function staleProcesses(world: DriftWorld, row: SessionRecord, agent: AgentId): StaleProcess[] {
	const table = world.input.processes;
	if (table === null) return [];
	const index = outsidePanes(world, table);
	const found = new Map<ProcessRef, string>();
	for (const key of new Set(recordedProcesses(row).map(processKey))) {
		for (const proc of index.byKey.get(key) ?? []) found.set(proc, 'recorded when the session was stopped');
	}
	const pin = row.agentSessionId;
	for (const proc of pin === null ? [] : (index.byArg.get(pin) ?? [])) {
		if (!found.has(proc) && world.agents[agent].matchesProcess(proc)) found.set(proc, `a ${agent} process whose argv names ${pin}`);
	}
	return [...found].map(([proc, why]) => ({proc, why})).sort((a, b) => a.proc.pid - b.proc.pid || a.proc.startTime - b.proc.startTime);
}
