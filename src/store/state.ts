import type {AgentId, AuditRecord, Conversation, Finding, LiveStatus, Pane, ProcessRef, ResumeState, SessionRecord} from '../domain/types.js';
import type {MuxHealth} from '../mux/types.js';

export type ListMode = 'sessions' | 'findings' | 'conversations';
export type Mode = ListMode | 'help' | 'filter' | 'purge' | 'new';

export interface UiState {
	readonly mode: Mode;
	/** The list to return to when help, filter or a dialog closes. */
	readonly previousMode: ListMode;
	readonly cursor: number;
	readonly findingsCursor: number;
	readonly conversationsCursor: number;
	readonly filter: string;
	readonly marked: ReadonlySet<string>;
}

/** The last action's outcome, for the status bar. */
export interface Notice {
	readonly level: 'info' | 'ok' | 'error';
	readonly text: string;
	readonly at: number;
}

/** What the live snapshot knows about one registry row, keyed by session name. */
export interface SessionLive {
	readonly liveStatus: LiveStatus;
	readonly resumeState: ResumeState;
	readonly pane?: Pane;
}

/** One step of a running or finished operation (stop has three; others one). */
export interface StepView {
	readonly id: string;
	readonly label: string;
	readonly state: 'pending' | 'running' | 'done' | 'skipped' | 'failed';
	readonly startedAt?: number;
	readonly endedAt?: number;
	readonly detail?: string;
}

/** A stop/resume/purge in flight or just finished, rendered live. Keyed by session name. */
export interface OperationView {
	readonly kind: 'stop' | 'resume' | 'purge' | 'new' | 'adopt' | 'fix';
	readonly session: string;
	readonly startedAt: number;
	readonly endedAt?: number;
	readonly steps: readonly StepView[];
	/** Set when it ended: one line, e.g. `ended at step 2 (pane closed)`. */
	readonly outcome?: {readonly ok: boolean; readonly text: string};
}

/** One line of a purge plan, as the dialog shows it. */
export interface PlanLine {
	readonly description: string;
	readonly path: string;
	readonly table?: string;
	readonly count?: number;
	readonly bytes: number;
	readonly sessionId: string;
}

export interface PlanView {
	/** The registry name, or `agent:id` for a conversation that is not registered. */
	readonly target: string;
	readonly agent: AgentId;
	readonly id: string;
	readonly descendants: readonly string[];
	readonly lines: readonly PlanLine[];
	readonly totalBytes: number;
}

/** The type-to-confirm purge dialog (SPEC 6.3). */
export interface PurgeDialog {
	readonly targets: readonly string[];
	/** What must be typed: the session's name, or `purge N` for N sessions. */
	readonly expected: string;
	readonly loading: boolean;
	readonly plans: readonly PlanView[];
	/** Why the purge is refused (running → stop first; in use → the holder). */
	readonly refusal?: string;
	readonly typed: string;
	readonly scroll: number;
}

export interface NewDialog {
	readonly agentIndex: number;
	readonly cwd: string;
	readonly field: 'agent' | 'cwd';
}

/** What the detail panel shows for the selected session, loaded by a src/ service. */
export interface SessionDetail {
	readonly name: string;
	readonly processes: readonly ProcessRef[];
	readonly plan?: PlanView;
	readonly resumeCommand?: readonly string[];
	readonly output?: string;
	readonly audit: readonly AuditRecord[];
	readonly error?: string;
	readonly loadedAt: number;
}

/** Everything the dashboard renders: plain data, built by src/ services, folded by the reducer. */
export interface AppState {
	readonly sessions: readonly SessionRecord[];
	readonly live: Readonly<Record<string, SessionLive>>;
	readonly panes: readonly Pane[];
	readonly conversations: readonly Conversation[];
	readonly findings: readonly Finding[];
	readonly mux: MuxHealth | null;
	/** When the registry was last read (ms), null before the first load. */
	readonly lastRefresh: number | null;
	readonly notice: Notice | null;
	readonly operations: Readonly<Record<string, OperationView>>;
	readonly purge: PurgeDialog | null;
	readonly newDialog: NewDialog | null;
	readonly detail: SessionDetail | null;
	readonly ui: UiState;
}

export const initialUi: UiState = {
	mode: 'sessions',
	previousMode: 'sessions',
	cursor: 0,
	findingsCursor: 0,
	conversationsCursor: 0,
	filter: '',
	marked: new Set(),
};

export function initialState(overrides: Partial<AppState> = {}): AppState {
	return {
		sessions: [],
		live: {},
		panes: [],
		conversations: [],
		findings: [],
		mux: null,
		lastRefresh: null,
		notice: null,
		operations: {},
		purge: null,
		newDialog: null,
		detail: null,
		ui: initialUi,
		...overrides,
	};
}
