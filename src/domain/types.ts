/** The agents mam-tui knows. Adding one here makes every `Record<AgentId, …>` a compile error until it is handled. */
export const AGENT_IDS = ['claude', 'codex', 'opencode', 'agy', 'hermes', 'grok', 'gemini'] as const;
export type AgentId = (typeof AGENT_IDS)[number];

export function isAgentId(value: string): value is AgentId {
	return (AGENT_IDS as readonly string[]).includes(value);
}

/**
 * The multiplexers mam-tui drives. The type, `--mux`, and the registry's check and decoder follow
 * this list; what each can do is `Multiplexer.can` (src/mux/types.ts), never read from its name.
 */
export const MUX_KINDS = ['herdr', 'tmux'] as const;
export type MuxKind = (typeof MUX_KINDS)[number];

export function isMuxKind(value: unknown): value is MuxKind {
	return typeof value === 'string' && (MUX_KINDS as readonly string[]).includes(value);
}

/** What `--mux` takes: a kind, or `auto` (herdr when its socket answers, else tmux). */
export const MUX_CHOICES = [...MUX_KINDS, 'auto'] as const;
export type MuxChoice = (typeof MUX_CHOICES)[number];

export function isMuxChoice(value: unknown): value is MuxChoice {
	return typeof value === 'string' && (MUX_CHOICES as readonly string[]).includes(value);
}

/** How the backend is doing, for the status bar and `status`. */
export interface MuxHealth {
	readonly kind: MuxKind;
	readonly ok: boolean;
	/** One line: `herdr 0.8.0 (protocol 20) at /run/…/herdr.sock`, or what is wrong. */
	readonly message: string;
	/** When the last successful listing happened (ms), if ever. */
	readonly lastOkAt?: number;
}
/** `parked`: stopped at step 1 to free its memory while idle, to be woken where it was (issue 28). */
export const SESSION_STATUSES = ['running', 'stopped', 'purged', 'parked'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** One registry row: a named agent conversation that mam-tui manages (SPEC 1). */
export interface SessionRecord {
	readonly id: number;
	readonly name: string;
	readonly agent: AgentId;
	readonly cwd: string;
	readonly mux: MuxKind | null;
	readonly paneId: string | null;
	/** The agent's own conversation id, once pinned. */
	readonly agentSessionId: string | null;
	readonly status: SessionStatus;
	/** When mam-tui started the session (ms since the Unix epoch); older artifacts are not candidates. */
	readonly epoch: number;
	readonly createdAt: number;
	readonly updatedAt: number;
	/** Bumped on every write; lets two mam-tui processes detect a concurrent change. */
	readonly version: number;
	readonly extra: Readonly<Record<string, unknown>>;
	/**
	 * Set only on a row another machine reported (src/remote): the configured host's name. Its
	 * `name` is then `host:name` (unique in the dashboard) and its actions go to that host.
	 */
	readonly host?: string;
}

/** herdr's agent statuses plus what mam-tui derives for panes without a live agent. */
export type AgentStatus = 'working' | 'blocked' | 'idle' | 'done' | 'unknown';
export type LiveStatus = AgentStatus | 'exited' | 'stopped';

/** What a status detector can say about an agent in a pane (`exited`: its own screen or record says it quit). */
export type DetectedStatus = 'working' | 'blocked' | 'idle' | 'exited' | 'unknown';

/** Where a detection came from, most trusted first: the agent's own record, its state reports, the title, the screen, the mux. */
export type StatusSource = 'record' | 'osc' | 'title' | 'screen' | 'mux' | 'none';

/** One status detection with the evidence it rests on (shown in the detail panel and `status --json`). */
export interface StatusDetection {
	readonly status: DetectedStatus;
	readonly source: StatusSource;
	/** One line: `sessions/2802.json says "waiting" (permission prompt)`. */
	readonly evidence: string;
	/** From a documented UI that was never seen for real (agy, hermes, grok). */
	readonly unverified?: boolean;
	/** On herdr: what herdr said, when the agent's own record overrode it. */
	readonly overrides?: {readonly status: AgentStatus; readonly evidence: string};
}

/** A process seen in a pane's tree. `startTime` is field 22 of /proc/<pid>/stat, so a reused pid is told apart. */
export interface ProcessRef {
	readonly pid: number;
	readonly ppid: number;
	readonly startTime: number;
	readonly name: string;
	readonly argv: readonly string[];
	readonly cwd?: string;
}

/** A live terminal in the multiplexer (SPEC 1). */
export interface Pane {
	readonly id: string;
	readonly mux: MuxKind;
	readonly cwd?: string;
	readonly foregroundCwd?: string;
	readonly title?: string;
	/** The agent running in the pane, as the mux (or process detection) reports it. */
	readonly agent?: string;
	readonly agentStatus: AgentStatus;
	/** The agent's native session id, when the mux knows it (herdr `agent_session`). */
	readonly agentSessionId?: string;
	/** The pid of the pane's direct child (the shell or the command). */
	readonly shellPid?: number;
	/** The pane's process tree (root first), with start times. */
	readonly processes: readonly ProcessRef[];
	/** True for the pane mam-tui itself runs in: never a target of stop, close or typed input. */
	readonly isSelf: boolean;
	/**
	 * Which mux server the pane lives in (tmux: socket, server pid and start time; herdr: socket and
	 * the server process): pane ids repeat across servers, so a row is joined only to a pane of the
	 * server it recorded. Absent when the backend cannot tell.
	 */
	readonly server?: string;
	/** The agent's status as the status detectors read it (src/adapters/status), once looked at. */
	readonly detection?: StatusDetection;
	/** Where the pane sits (tmux: session and window; herdr: workspace and tab), so a parked agent wakes there. */
	readonly placement?: PanePlacement;
}

/** A pane's place in its mux: tmux session and window index, or herdr workspace and tab. */
export interface PanePlacement {
	readonly session?: string;
	readonly window?: string;
	readonly workspace?: string;
	readonly tab?: string;
}

export type ResumeState = {readonly kind: 'yes'} | {readonly kind: 'no'; readonly reason: string} | {readonly kind: 'unknown'; readonly reason: string};

export function formatResumeState(state: ResumeState): string {
	return state.kind === 'yes' ? 'yes' : `${state.kind}: ${state.reason}`;
}

/** A conversation an adapter found on disk. */
export interface Conversation {
	readonly agent: AgentId;
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly updatedAt: number;
	readonly parentId?: string;
	readonly title?: string;
	readonly childCount: number;
	readonly resumeState: ResumeState;
}

export const FINDING_KINDS = [
	'pane-gone',
	'agent-exited',
	'unpinned',
	'artifact-missing',
	'untracked-pane',
	'duplicate-pin',
	'pin-changed',
	'stopped-but-live',
	'stale-process',
	'status-disagrees',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** A safe registry change that fixes a finding. Never stops, kills or deletes. */
export type Fix =
	| {
			readonly type: 'mark-stopped';
			readonly sessionId: number;
			/** Also forget the pane id (the pane is gone; tmux may hand the same id to a new pane). */
			readonly clearPane?: boolean;
	  }
	| {
			readonly type: 'mark-running';
			readonly sessionId: number;
			readonly paneId: string;
			/** The backend the pane lives in, when the row should record it. */
			readonly mux?: MuxKind;
			/** The mux server the pane lives in (`Pane.server`), recorded on the row. */
			readonly server?: string;
	  }
	| {
			readonly type: 'pin';
			readonly sessionId: number;
			readonly agentSessionId: string;
			/**
			 * Where the id comes from when the row's own pane names it: the mux's report, or the agent
			 * process's own evidence (the "In use" evidence). Absent: it is the only conversation of the
			 * row's folder since the row started. The dashboard applies a named pin itself (src/ui/autoPin.ts).
			 */
			readonly named?: 'mux' | 'process';
	  }
	| {readonly type: 'repin'; readonly sessionId: number; readonly from: string; readonly to: string}
	| {
			readonly type: 'adopt-pane';
			readonly paneId: string;
			readonly agent: AgentId;
			readonly cwd: string;
			readonly agentSessionId?: string;
			/** The backend the pane lives in, recorded on the new row. */
			readonly mux?: MuxKind;
			/** When the pane's agent process started (ms): the new row's epoch (else the adoption time). */
			readonly epoch?: number;
			/** The mux server the pane lives in (`Pane.server`), recorded on the new row. */
			readonly server?: string;
	  };

/** One drift between registry, mux and disk (SPEC 5). */
export interface Finding {
	readonly kind: FindingKind;
	readonly sessionId?: number;
	readonly sessionName?: string;
	readonly paneId?: string;
	/** One line a user understands. */
	readonly message: string;
	/** What was seen where. */
	readonly evidence: readonly string[];
	/** Present only when a safe, non-destructive fix exists. */
	readonly fix?: Fix;
	/** A suggested manual step that is never applied automatically (e.g. stop escalation). */
	readonly offer?: string;
	/** For ambiguous `unpinned`: the candidate ids the user must pick from. */
	readonly candidates?: readonly string[];
	/** The row's version when the finding was made: a fix applies only if nobody changed it since. */
	readonly sessionVersion?: number;
	/** `info`: nothing is wrong yet (e.g. "no conversation yet"); it does not make `drift` fail. */
	readonly level?: 'info';
	/** Set on another machine's finding: its fix is that machine's to make (it has no `fix` here). */
	readonly host?: FindingHost;
}

/** Where a finding of another machine came from, and what its fix there would do. */
export interface FindingHost {
	/** The `hosts:` name. */
	readonly name: string;
	/** The finding's key on that machine (kind, row, pane, message): the host looks it up again to fix it. */
	readonly key: string;
	/** What the host's fix would do, in words; absent: it has none. */
	readonly fix?: string;
}

export type AuditOutcome = 'started' | 'ok' | 'failed' | 'refused' | 'info';

/** One entry of the audit log: every action, each step and its outcome. */
export interface AuditRecord {
	readonly id: number;
	readonly at: number;
	readonly session: string | null;
	readonly action: string;
	readonly step: string | null;
	readonly outcome: AuditOutcome;
	readonly detail: Readonly<Record<string, unknown>>;
}

/** What one purge plan item deletes. `key`: members of a JSON file that name the id (`.claude.json` `lastSessionId`); only they go. */
export type PlanItemKind = 'file' | 'dir' | 'rows' | 'lines' | 'key';
