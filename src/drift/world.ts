import {isAgentId, type AgentId, type Pane, type ProcessRef, type SessionRecord} from '../domain/types.js';
import type {AgentKnowledge, DriftInput} from './input.js';

/** The input plus the indexes every rule needs; built once per detection. */
export interface DriftWorld {
	readonly input: DriftInput;
	readonly agents: AgentKnowledge;
	/** Live panes by id, self included (a row in mam-tui's own pane is not "gone"); null when unknown. */
	readonly panes: ReadonlyMap<string, Pane> | null;
	/** `pid:startTime` of every process inside a live pane: those are live, never "stale". */
	readonly paneProcessKeys: ReadonlySet<string>;
}

export function buildWorld(input: DriftInput, agents: AgentKnowledge): DriftWorld {
	const panes = input.panes === null ? null : new Map(input.panes.map(p => [p.id, p]));
	const paneProcessKeys = new Set((input.panes ?? []).flatMap(p => p.processes.map(processKey)));
	return {input, agents, panes, paneProcessKeys};
}

export function processKey(proc: Pick<ProcessRef, 'pid' | 'startTime'>): string {
	return `${proc.pid}:${proc.startTime}`;
}

/** A row in the registry that still counts (purged rows are history). */
export function isActive(row: SessionRecord): boolean {
	return row.status !== 'purged';
}

/** The agent of a row, when this build knows it (a newer mam-tui may have written others). */
export function rowAgent(world: DriftWorld, row: SessionRecord): AgentId | undefined {
	return isAgentId(row.agent) && Object.hasOwn(world.agents, row.agent) ? row.agent : undefined;
}

/** True when the row's pane belongs to the backend we looked at (rows of another mux are not judged). */
export function sameMux(world: DriftWorld, row: SessionRecord): boolean {
	return row.mux === null || row.mux === world.input.mux;
}

export function validId(world: DriftWorld, agent: AgentId, id: string): boolean {
	return id.length > 0 && id.length <= 256 && world.agents[agent].idPattern.test(id);
}

/** The pane's processes that are `agent`. */
export function agentProcesses(world: DriftWorld, pane: Pane, agent: AgentId): ProcessRef[] {
	return pane.processes.filter(proc => world.agents[agent].matchesProcess(proc));
}

/** Does the pane run `agent`: the mux says so, or a process of its tree is that agent. */
export function runsAgent(world: DriftWorld, pane: Pane, agent: AgentId): boolean {
	return pane.agent === agent || agentProcesses(world, pane, agent).length > 0;
}

/** The known agent a pane runs: the mux's word first, else the first matching process (root first). */
export function paneAgent(world: DriftWorld, pane: Pane): AgentId | undefined {
	if (pane.agent !== undefined && isAgentId(pane.agent) && Object.hasOwn(world.agents, pane.agent)) return pane.agent;
	for (const proc of pane.processes) {
		const found = (Object.keys(world.agents) as AgentId[]).find(agent => world.agents[agent].matchesProcess(proc));
		if (found) return found;
	}
	return undefined;
}

/** The native session id the mux reports for `agent` in this pane (only when the pane's agent is that agent). */
export function nativeId(pane: Pane, agent: AgentId): string | undefined {
	if (pane.agentSessionId === undefined || pane.agentSessionId === '') return undefined;
	if (pane.agent !== undefined && pane.agent !== agent) return undefined;
	return pane.agentSessionId;
}

/** The pane runs conversation `pin`: the mux reports it, or an agent process's argv names it. */
export function carriesPin(world: DriftWorld, pane: Pane, agent: AgentId, pin: string): boolean {
	// A session id on a pane whose agent is gone is a leftover, not a live conversation.
	if (!runsAgent(world, pane, agent)) return false;
	if (nativeId(pane, agent) === pin) return true;
	return agentProcesses(world, pane, agent).some(proc => proc.argv.includes(pin));
}

/** The best cwd for a pane's agent: the agent process's own, else the foreground's, else the pane's. */
export function paneAgentCwd(world: DriftWorld, pane: Pane, agent: AgentId): string | undefined {
	return agentProcesses(world, pane, agent).find(p => p.cwd)?.cwd ?? pane.foregroundCwd ?? pane.cwd;
}

/** Paths compare without a trailing slash. */
export function samePath(a: string, b: string): boolean {
	const trim = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
	return trim(a) === trim(b);
}

const MAX_LISTED = 6;

/** At most a few items, then `… and N more`, so one finding stays readable. */
export function listSome(items: readonly string[]): string {
	const shown = items.slice(0, MAX_LISTED).join(', ');
	return items.length > MAX_LISTED ? `${shown} … and ${items.length - MAX_LISTED} more` : shown;
}

export function describeRow(row: SessionRecord): string {
	const pane = row.paneId === null ? 'no pane' : `pane ${row.paneId}${row.mux ? ` (${row.mux})` : ''}`;
	return `registry: ${row.name} is ${row.status}, ${pane}, pinned ${row.agentSessionId ?? '—'}, cwd ${row.cwd}`;
}

export function describeProcess(proc: ProcessRef): string {
	const argv = proc.argv.length > 0 ? proc.argv.join(' ') : proc.name;
	return `pid ${proc.pid} (start ${proc.startTime}) ${argv.length > 120 ? `${argv.slice(0, 120)}…` : argv}`;
}

export function describePane(world: DriftWorld, pane: Pane): string {
	const mux = world.input.mux ?? pane.mux;
	const agent = pane.agent === undefined ? 'no agent detected' : `agent ${pane.agent} (${pane.agentStatus})`;
	const session = pane.agentSessionId === undefined ? '' : `, session ${pane.agentSessionId}`;
	const procs = pane.processes.length === 0 ? 'no process tree' : `processes ${listSome(pane.processes.map(p => `${p.name}(${p.pid})`))}`;
	return `${mux}: pane ${pane.id} has ${agent}${session}, ${procs}`;
}
