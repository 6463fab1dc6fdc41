import {AGENT_IDS, isAgentId, type AgentId, type Pane, type ProcessRef} from './types.js';

// "Which agent runs this pane": ONE rule, asked by the muxes (to fill `Pane.agent`), the refresh's
// join, drift, pane evidence, adopt and the dashboard's fast status path. Pure: each caller hands
// in the agents it knows (the adapters' `matchesProcess`); the pane join that uses it is
// src/drift/paneJoin.ts.

/** What the rule needs of each agent it knows: does this process run it. */
export type AgentMatchers = Readonly<Partial<Record<AgentId, {matchesProcess(proc: ProcessRef): boolean}>>>;

function known(agents: AgentMatchers, agent: string | undefined): AgentId | undefined {
	return agent !== undefined && isAgentId(agent) && Object.hasOwn(agents, agent) && agents[agent] !== undefined ? agent : undefined;
}

/**
 * The agent a process tree (root first) runs: the process nearest the root that some agent
 * matches, agents asked in `AGENT_IDS` order. A helper an agent spawned (a `codex exec` inside
 * claude) never hides the agent itself. Undefined for a plain shell.
 */
export function treeAgent(tree: readonly ProcessRef[], agents: AgentMatchers): AgentId | undefined {
	for (const proc of tree) {
		const agent = AGENT_IDS.find(id => agents[id]?.matchesProcess(proc) === true);
		if (agent) return agent;
	}
	return undefined;
}

/**
 * The known agent a pane runs: the mux's word when it names an agent we know (herdr sees what no
 * process shows, and each mux fills `agent` by `treeAgent`), else `treeAgent` of its processes.
 * mam-tui's own pane runs none.
 */
export function paneAgent(pane: Pick<Pane, 'agent' | 'processes' | 'isSelf'>, agents: AgentMatchers): AgentId | undefined {
	if (pane.isSelf) return undefined;
	return known(agents, pane.agent) ?? treeAgent(pane.processes, agents);
}

/** Does the pane run `agent` (by `paneAgent`: one agent per pane). */
export function runsAgent(pane: Pick<Pane, 'agent' | 'processes' | 'isSelf'>, agent: string, agents: AgentMatchers): boolean {
	return known(agents, agent) !== undefined && paneAgent(pane, agents) === agent;
}

/** The pane's processes that are `agent` (root first): its agent processes when `runsAgent`. */
export function agentProcesses(pane: Pick<Pane, 'processes'>, agent: AgentId, agents: AgentMatchers): ProcessRef[] {
	const matcher = agents[agent];
	return matcher ? pane.processes.filter(proc => matcher.matchesProcess(proc)) : [];
}

/** The conversation the mux reports for `agent` in the pane: only while the pane's agent is that agent. */
export function reportedId(pane: Pick<Pane, 'agent' | 'agentSessionId'>, agent: string): string | undefined {
	if (pane.agentSessionId === undefined || pane.agentSessionId === '') return undefined;
	return pane.agent === undefined || pane.agent === agent ? pane.agentSessionId : undefined;
}
