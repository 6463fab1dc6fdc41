import {reportedId, runsAgent, paneAgent, type AgentMatchers} from '../domain/paneAgent.js';
import type {MuxKind, Pane, SessionRecord} from '../domain/types.js';
import {paneServerOf} from '../registry/extra.js';

// Which live pane is a registry row's: ONE join, used by status, drift and the dashboard alike.

/**
 * Is `pane` the very pane `row` recorded: the same id, in the same backend, in the same server?
 * tmux numbers panes from %0 in every server, so a pane of another (or a restarted) server with
 * the row's id is another pane. A row or a listing that does not know its server is joined by id.
 */
export function isRecordedPane(row: Pick<SessionRecord, 'paneId' | 'mux' | 'extra'>, pane: Pick<Pane, 'id' | 'server'>, muxKind: MuxKind | null): boolean {
	if (row.paneId === null || row.paneId !== pane.id) return false;
	if (row.mux !== null && muxKind !== null && row.mux !== muxKind) return false;
	const recorded = paneServerOf(row);
	return recorded === undefined || pane.server === undefined || recorded === pane.server;
}

/**
 * The row's own pane, by the join: its recorded pane — except that a stopped row does not own
 * its old pane once another agent, or another conversation of its agent, runs there (the pane
 * is someone else's now: untracked, not the stopped row's).
 */
export function ownPane(row: SessionRecord, byId: ReadonlyMap<string, Pane>, muxKind: MuxKind | null, agents: AgentMatchers): Pane | undefined {
	if (row.status === 'purged' || row.paneId === null) return undefined;
	const pane = byId.get(row.paneId);
	if (!pane || !isRecordedPane(row, pane, muxKind)) return undefined;
	if (row.status !== 'stopped') return pane;
	// Which agent runs there is the one rule of domain/paneAgent.ts.
	if (!runsAgent(pane, row.agent, agents)) return paneAgent(pane, agents) === undefined ? pane : undefined;
	const reported = reportedId(pane, row.agent);
	return row.agentSessionId !== null && reported !== undefined && reported !== row.agentSessionId ? undefined : pane;
}
