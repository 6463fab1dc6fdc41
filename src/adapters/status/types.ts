import type {DetectedStatus, StatusDetection, StatusSource} from '../../domain/types.js';

/** An agent's own live record of its state (claude `sessions/<pid>.json`), already matched to the process. */
export interface AgentRecord {
	/** Where it was read, for the evidence line. */
	readonly file: string;
	/** The record's own word (`idle`, `busy`, `waiting`, `shell`). */
	readonly status: string;
	/** What it waits for (`permission prompt`). */
	readonly waitingFor?: string;
}

/**
 * Everything a detector may look at, all plain data. Each piece is optional: herdr hands no
 * screen, a pane that never printed a state report has no `osc`.
 */
export interface StatusEvidence {
	readonly record?: AgentRecord;
	/** The last `ESC ] 7501 ; …` payload the agent wrote (`state=blocked:app=codex:kind=permission`). */
	readonly osc?: string;
	/** The pane's terminal title as the agent set it. */
	readonly title?: string;
	/** The visible screen, plain text (no escapes), rows separated by `\n`. */
	readonly screen?: string;
}

/** What one piece of evidence says; undefined when it says nothing. */
export interface Reading {
	readonly status: DetectedStatus;
	readonly evidence: string;
}

/**
 * One agent's status reading, one pure function per kind of evidence. A reader returns
 * undefined when its evidence does not tell (the next kind is asked); `unknown` is never
 * returned by a reader, only by the combiner when nothing told.
 */
export interface StatusDetector {
	/** From a documented UI that was never seen for real: every detection is marked so. */
	readonly unverified?: boolean;
	readonly fromRecord?: (record: AgentRecord) => Reading | undefined;
	readonly fromOsc?: (payload: string) => Reading | undefined;
	readonly fromTitle?: (title: string) => Reading | undefined;
	readonly fromScreen?: (screen: string) => Reading | undefined;
}

export function detection(reading: Reading, source: StatusSource, unverified: boolean | undefined): StatusDetection {
	return {
		status: reading.status,
		source,
		evidence: unverified ? `${reading.evidence} (unverified)` : reading.evidence,
		...(unverified ? {unverified: true} : {}),
	};
}
