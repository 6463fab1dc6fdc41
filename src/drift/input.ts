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
}

/** The pure parts of an adapter the engine needs: how to recognise its processes and ids. */
export type AgentKnowledge = Readonly<Record<AgentId, Pick<AgentAdapter, 'label' | 'idPattern' | 'matchesProcess'>>>;
