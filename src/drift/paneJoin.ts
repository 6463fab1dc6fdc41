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

/** What the join needs to know about agents: does the pane run this agent, and which conversation does the mux say it is on. */
export interface PaneFacts {
	runs(pane: Pane, agent: string): boolean;
	/** Does the pane run a known agent other than `agent`? */
	runsOther(pane: Pane, agent: string): boolean;
	/** The conversation the mux reports for `agent` in the pane, if any. */
	reported(pane: Pane, agent: string): string | undefined;
}

/**
 * The row's own pane, by the join: its recorded pane — except that a stopped row does not own
 * its old pane once another agent, or another conversation of its agent, runs there (the pane
 * is someone else's now: untracked, not the stopped row's).
 */
export function ownPane(row: SessionRecord, byId: ReadonlyMap<string, Pane>, muxKind: MuxKind | null, facts: PaneFacts): Pane | undefined {
	if (row.status === 'purged' || row.paneId === null) return undefined;
	const pane = byId.get(row.paneId);
	if (!pane || !isRecordedPane(row, pane, muxKind)) return undefined;
	if (row.status !== 'stopped' && row.status !== 'parked') return pane;
	if (!facts.runs(pane, row.agent)) return facts.runsOther(pane, row.agent) ? undefined : pane;
	const reported = facts.reported(pane, row.agent);
	return row.agentSessionId !== null && reported !== undefined && reported !== row.agentSessionId ? undefined : pane;
}
