import type {AgentAdapter} from '../adapters/types.js';
import type {AgentId, Conversation, MuxKind, Pane, ProcessRef, ResumeState, SessionRecord} from '../domain/types.js';
import type {Result} from '../domain/result.js';

/** What discovery found for a row: conversations in its cwd since its epoch, parents only. */
export interface CandidateFacts {
	readonly conversations: readonly Conversation[];
	/** Stores that could not be read: a candidate may be hiding there, so nothing is pinned. */
	readonly problems: readonly string[];
}

/** What the adapters said about one registry row. Absent members were not looked up. */
export interface SessionFacts {
	/** The row's cwd after realpath (discover matches conversations on realpath). */
	readonly realCwd?: string;
	/** For running unpinned rows: discover(cwd, since epoch, parents only), or why it failed. */
	readonly candidates?: Result<CandidateFacts, string>;
	/** For pinned rows: verify(pin, cwd). */
	readonly verify?: ResumeState;
}

/**
 * What the agent's own evidence says about the agent process of a pane (README "In use"):
 * gathered by collection, so detection stays a pure function of its input.
 */
export interface PaneEvidence {
	readonly agent: AgentId;
	/** When the pane's agent process started (ms): the epoch of a row adopted from the pane. */
	readonly startedAt?: number;
	/** Conversations the evidence names (the agent's live record, argv, its own file held open), parents only. */
	readonly ids: readonly string[];
	/**
	 * Only when nothing names one: the agent's conversations in the pane's folder written since
	 * the process started (one is the pane's; several, the user picks).
	 */
	readonly recent?: readonly string[];
	/** What was seen, one line each. */
	readonly seen: readonly string[];
}

/** Everything the drift engine looks at. Plain data, so detection is a pure function of it. */
export interface DriftInput {
	readonly sessions: readonly SessionRecord[];
	/** The backend the panes came from (null when there is none). */
	readonly mux: MuxKind | null;
	/** Live panes, or null when the mux could not be reached: pane-based kinds are then not raised. */
	readonly panes: readonly Pane[] | null;
	/** Why `panes` is null. */
	readonly muxProblem?: string;
	/** Keyed by SessionRecord.id. */
	readonly facts: ReadonlyMap<number, SessionFacts>;
	/** The live process table, or null when it could not be read (stale-process is then not raised). */
	readonly processes: readonly ProcessRef[] | null;
	/** By pane id: what the agent's evidence says its process is on (absent: not gathered). */
	readonly paneEvidence?: ReadonlyMap<string, PaneEvidence>;
}

/** The pure parts of an adapter the engine needs: how to recognise its processes and ids. */
export type AgentKnowledge = Readonly<Record<AgentId, Pick<AgentAdapter, 'label' | 'idPattern' | 'matchesProcess'>>>;
