/**
 * `mam-tui status --json`'s shapes and the pure functions that fill them, below both the CLI
 * (which prints them) and the remote serve (which sends them): one view of a session, a pane and
 * what needs the user, wherever it is read.
 */
import {formatResumeState, type LiveStatus, type Pane, type SessionRecord, type StatusDetection} from '../domain/types.js';
import {parkedExtra} from '../registry/extra.js';
import type {SessionLive} from '../store/state.js';
import type {LiveSnapshot} from './snapshot.js';

/**
 * The stable shape of `mam-tui status --json` (documented in the README). `version` changes only
 * when a field is removed or changes meaning; new fields may appear at any time.
 */
export interface StatusJson {
	readonly version: 1;
	readonly registry: string;
	readonly sessions: readonly StatusSession[];
	/** The backend in use and how it is doing. */
	readonly mux: StatusMux;
	/** Every pane the backend lists (empty when it could not be reached). */
	readonly panes: readonly StatusPane[];
	/** Ids of panes that run a known agent but belong to no session. */
	readonly untrackedPanes: readonly string[];
	/** What waits for the user: every session (or untracked agent pane) whose agent is blocked, most urgent first. */
	readonly attention: readonly StatusAttention[];
	/**
	 * The other machines of config.yaml's `hosts:` and how each is reached. Their sessions, panes
	 * and attention are in the lists above, each item with its `host`; this machine's say `local`.
	 */
	readonly hosts: readonly StatusHost[];
}

/** One configured host: `up` (with the round trip), `connecting`, or `down` and why. */
export interface StatusHost {
	readonly name: string;
	readonly state: 'up' | 'connecting' | 'down';
	readonly rttMs: number | null;
	readonly message: string;
	readonly since: string;
}

/** How a live status was read: the evidence a detector went by (`src/adapters/status`). */
export interface StatusEvidenceJson {
	/** `record` (the agent's own file), `osc` (its state report), `title`, `screen`, `mux` (herdr), `none`. */
	readonly source: StatusDetection['source'];
	/** One line: `sessions/2802.json says "waiting" (permission prompt)`. */
	readonly evidence: string;
	/** From a documented UI never seen for real (agy, hermes, grok). */
	readonly unverified?: boolean;
	/** On herdr, when the agent's record overrode it: what herdr said. */
	readonly herdr?: {readonly status: string; readonly evidence: string};
}

export interface StatusAttention {
	/** The session, or null for an agent pane outside every session. */
	readonly session: string | null;
	readonly paneId: string;
	readonly agent: string | null;
	readonly status: 'blocked';
	readonly evidence: string;
}

export interface StatusMux {
	readonly kind: string | null;
	readonly ok: boolean;
	readonly message: string;
}

export interface StatusSession {
	readonly name: string;
	readonly agent: string;
	readonly status: SessionRecord['status'];
	readonly cwd: string;
	readonly mux: string | null;
	readonly paneId: string | null;
	readonly agentSessionId: string | null;
	readonly epoch: string;
	readonly createdAt: string;
	readonly updatedAt: string;
	/** `yes`, or `no: <reason>` / `unknown: <reason>`; null when not computed. */
	readonly resumeState: string | null;
	/** A parked row only: when it was parked, the memory freed, and how long it had been idle. */
	readonly parked?: {readonly at: string; readonly freedBytes: number; readonly idleSeconds: number};
	/** herdr's working/blocked/idle/done, `unknown` (tmux, or mux unreachable), or exited/stopped. */
	readonly liveStatus?: LiveStatus;
	/** The pane the session was found in right now (may differ from `paneId` after a herdr move). */
	readonly livePaneId?: string | null;
	/** Pids of that pane's process tree, root first. */
	readonly pids?: readonly number[];
	/** How `liveStatus` was read, while the agent runs in its pane; null otherwise. */
	readonly liveEvidence?: StatusEvidenceJson | null;
}

export interface StatusProcess {
	readonly pid: number;
	readonly ppid: number;
	readonly startTime: number;
	readonly name: string;
	readonly argv: readonly string[];
}

export interface StatusPane {
	readonly id: string;
	readonly mux: string;
	readonly agent: string | null;
	readonly agentStatus: string;
	readonly agentSessionId: string | null;
	readonly cwd: string | null;
	readonly title: string | null;
	readonly shellPid: number | null;
	readonly pids: readonly number[];
	readonly processes: readonly StatusProcess[];
	readonly isSelf: boolean;
	/** The session living in this pane, if any. */
	readonly session: string | null;
	/** The agent's status as the detectors read it, with its evidence; null for panes without a known agent. */
	readonly liveStatus: ({readonly status: StatusDetection['status']} & StatusEvidenceJson) | null;
}

function evidenceJson(d: StatusDetection): StatusEvidenceJson {
	return {source: d.source, evidence: d.evidence, ...(d.unverified ? {unverified: true} : {}), ...(d.overrides ? {herdr: d.overrides} : {})};
}

/** The detection behind a row's live status: only while its agent runs in the pane (else the status is exited/stopped). */
function rowDetection(live: SessionLive | undefined): StatusDetection | undefined {
	const pane = live?.pane;
	const detection = pane?.detection;
	if (!live || !pane || !detection) return undefined;
	// The snapshot shows the detection's status, or herdr's own word where herdr was the source.
	return live.liveStatus === (detection.source === 'mux' ? pane.agentStatus : detection.status) ? detection : undefined;
}

export function toStatusSession(s: SessionRecord, live?: SessionLive): StatusSession {
	const detection = rowDetection(live);
	const parked = s.status === 'parked' ? parkedExtra.read(s.extra) : undefined;
	return {
		name: s.name,
		agent: s.agent,
		status: s.status,
		cwd: s.cwd,
		mux: s.mux,
		paneId: s.paneId,
		agentSessionId: s.agentSessionId,
		epoch: new Date(s.epoch).toISOString(),
		createdAt: new Date(s.createdAt).toISOString(),
		updatedAt: new Date(s.updatedAt).toISOString(),
		resumeState: live ? formatResumeState(live.resumeState) : null,
		...(live
			? {
					liveStatus: live.liveStatus,
					livePaneId: live.pane?.id ?? null,
					pids: live.pane?.processes.map(p => p.pid) ?? [],
					liveEvidence: detection ? evidenceJson(detection) : null,
				}
			: {}),
		...(parked ? {parked: {at: new Date(parked.at).toISOString(), freedBytes: parked.freedBytes, idleSeconds: parked.idleSeconds}} : {}),
	};
}

export function toStatusPane(pane: Pane, session: string | undefined): StatusPane {
	return {
		id: pane.id,
		mux: pane.mux,
		agent: pane.agent ?? null,
		agentStatus: pane.agentStatus,
		agentSessionId: pane.agentSessionId ?? null,
		cwd: pane.cwd ?? null,
		title: pane.title ?? null,
		shellPid: pane.shellPid ?? null,
		pids: pane.processes.map(p => p.pid),
		processes: pane.processes.map(p => ({pid: p.pid, ppid: p.ppid, startTime: p.startTime, name: p.name, argv: p.argv})),
		isSelf: pane.isSelf,
		session: session ?? null,
		liveStatus: pane.detection ? {status: pane.detection.status, ...evidenceJson(pane.detection)} : null,
	};
}

/** Blocked sessions first by name, then blocked agent panes outside every session. */
export function attentionOf(sessions: readonly SessionRecord[], snapshot: Pick<LiveSnapshot, 'live' | 'untracked'>): StatusAttention[] {
	const out: StatusAttention[] = [];
	for (const s of [...sessions].sort((a, b) => a.name.localeCompare(b.name))) {
		const live = snapshot.live[s.name];
		if (live?.liveStatus !== 'blocked' || !live.pane) continue;
		out.push({session: s.name, paneId: live.pane.id, agent: s.agent, status: 'blocked', evidence: rowDetection(live)?.evidence ?? live.pane.agentStatus});
	}
	for (const pane of snapshot.untracked) {
		if (pane.detection?.status !== 'blocked') continue;
		out.push({session: null, paneId: pane.id, agent: pane.agent ?? null, status: 'blocked', evidence: pane.detection.evidence});
	}
	return out;
}
