import type {TokenUsage} from '../domain/usage.js';
import type {PlanItemKind, AgentId, AuditRecord, Conversation, Finding, LiveStatus, MuxHealth, Pane, ResumeState, SessionRecord} from '../domain/types.js';

export type ListMode = 'sessions' | 'findings' | 'conversations' | 'trash';
export type Mode = ListMode | 'help' | 'filter' | 'purge' | 'new' | 'stop' | 'park' | 'trashEmpty';

/** Which conversations the conversations view lists: those in the registry's folders, or every folder. */
export type ConversationScope = 'registry' | 'all';

export interface UiState {
	readonly mode: Mode;
	/** The list to return to when help, filter or a dialog closes. */
	readonly previousMode: ListMode;
	readonly cursor: number;
	readonly findingsCursor: number;
	readonly conversationsCursor: number;
	readonly trashCursor: number;
	readonly filter: string;
	readonly marked: ReadonlySet<string>;
	/** First line of the detail panel shown; back to 0 when the selection changes. */
	readonly detailScroll: number;
	/** The conversations view's search text (`/` there). */
	readonly conversationFilter: string;
	readonly conversationScope: ConversationScope;
	/** The conversations view also lists sub-agent and headless conversations the search index found (`mam-tui search --all`). */
	readonly conversationsAll: boolean;
}

/** An action's outcome, for the status bar. Info and ok expire (NOTICE_TTL_MS); errors stay until dismissed. */
export interface Notice {
	readonly level: 'info' | 'ok' | 'error';
	readonly text: string;
	readonly at: number;
}

/** How long an info or ok notice, or a finished operation that went well, stays on screen. */
export const NOTICE_TTL_MS = 8000;
/** At most this many errors wait to be dismissed; older ones give way. */
export const MAX_ERRORS = 3;

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
	readonly kind: PlanItemKind;
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
	/** The plan's last line has been on screen: until then enter does not confirm a plan taller than the dialog. */
	readonly readToEnd: boolean;
}

/** One session the stop confirmation names. */
export interface StopTarget {
	readonly name: string;
	readonly agent: string;
	readonly pane: string | null;
	/** What step 1 types into the pane, e.g. `/exit`. */
	readonly exitText: string;
}

/** The y/n confirmation `s` opens: what the stop will do, before it does it (SPEC 3). */
export interface StopDialog {
	readonly targets: readonly StopTarget[];
	/** Step 1's wait for the agent to exit, then step 2's wait after the pane closed. */
	readonly graceSeconds: number;
	readonly killWaitSeconds: number;
}

/** The y/n confirmation `z` opens: which running sessions a park would try (each is checked again before it acts). */
export interface ParkDialog {
	readonly names: readonly string[];
}

export interface NewDialog {
	readonly agentIndex: number;
	readonly cwd: string;
	readonly field: 'agent' | 'cwd';
}

/** One process of the selected pane's tree, as the detail panel lists it. */
export interface DetailProcess {
	readonly pid: number;
	/** 0 for the pane's own process, 1 for its children, … */
	readonly depth: number;
	/** Wall-clock start (ms), when the process table could tell. */
	readonly startedAt?: number;
	readonly command: string;
}

/** What the detail panel shows for the selected session, loaded by a src/ service. */
export interface SessionDetail {
	readonly name: string;
	readonly processes: readonly DetailProcess[];
	readonly plan?: PlanView;
	readonly resumeCommand?: readonly string[];
	readonly output?: string;
	readonly audit: readonly AuditRecord[];
	readonly error?: string;
	readonly loadedAt: number;
}

/** One purge in mam-tui's trash, as the trash view lists it. */
export interface TrashRow {
	readonly purgeId: string;
	readonly agent: AgentId;
	readonly conversation: string;
	/** The session's name, or `agent:id`. */
	readonly label: string;
	/** `done` for a finished purge; other states are a purge, restore or empty in flight or abandoned. */
	readonly state: string;
	readonly ageMs: number;
	readonly bytes: number;
	readonly items: number;
}

/** The typed confirmation `E` opens in the trash view: emptying is the hard delete. */
export interface TrashEmptyDialog {
	readonly purgeId: string;
	readonly expected: string;
	readonly typed: string;
}

/** One configured host as the dashboard shows it (src/remote/client.ts HostStatus). */
export interface HostRow {
	readonly name: string;
	readonly state: 'up' | 'connecting' | 'down';
	readonly rttMs: number | null;
	readonly message: string;
	/** When the state last changed (ms): a host that is down says since when. */
	readonly since: number;
}

/** What one other machine reported: its rows (names `host:name`, each with `host`) and their live data. */
export interface RemoteRows {
	readonly sessions: readonly SessionRecord[];
	readonly live: Readonly<Record<string, SessionLive>>;
	/** The host's findings, each with its `host` (fixed there, see `Finding.host`). */
	readonly findings: readonly Finding[];
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
	/** Newest last: the errors not yet dismissed, then at most one info/ok notice. */
	readonly notices: readonly Notice[];
	readonly operations: Readonly<Record<string, OperationView>>;
	readonly purge: PurgeDialog | null;
	readonly newDialog: NewDialog | null;
	readonly stopDialog: StopDialog | null;
	readonly parkDialog: ParkDialog | null;
	readonly detail: SessionDetail | null;
	/** Every folder's conversations, loaded when the view is switched to all folders; null before. */
	readonly allConversations: readonly Conversation[] | null;
	/** The trash view's purges, loaded when it opens; null before. */
	readonly trash: readonly TrashRow[] | null;
	/** Conversations whose message text matches the conversations view's search, for that text (the search index's answer). */
	readonly textHits: TextHits | null;
	/** Tokens each conversation used, by `agent:id`, from the search index; null until it was read. */
	readonly conversationUsage: ReadonlyMap<string, TokenUsage> | null;
	readonly trashEmpty: TrashEmptyDialog | null;
	/** config.yaml's hosts and how each is reached; empty: this machine only. */
	readonly hosts: readonly HostRow[];
	/** Each host's rows; `sessions` and `live` above hold them after this machine's. */
	readonly remote: Readonly<Record<string, RemoteRows>>;
	readonly ui: UiState;
	/** The selectors' remembered answers (`ViewMemo`); absent (a test's hand-made state): answered afresh. */
	readonly memo?: ViewMemo;
}

/**
 * What the selectors remember (selectors.ts, conversations.ts), per input array: every keypress
 * asks for the visible rows, and sorting or searching them each time cost milliseconds per key.
 * Made with the store's first state (`initialState`) and carried by every state after it (the
 * reducer's spreads keep it), so it lives as long as the store. Not state: never rendered, and
 * the answers are pure functions of the state they are asked of.
 */
export interface ViewMemo {
	readonly sorted: WeakMap<
		readonly SessionRecord[],
		{readonly filter: string; live: AppState['live'] | undefined; readonly ranks: readonly number[]; readonly rows: SessionRecord[]}
	>;
	readonly conversations: WeakMap<
		readonly Conversation[],
		{
			readonly all: readonly Conversation[] | null;
			readonly hits: AppState['textHits'] | undefined;
			readonly scope: string;
			readonly filter: string;
			readonly hidden: boolean;
			readonly rows: readonly Conversation[];
		}
	>;
	/** `needYouCount`'s answer per sessions array, for the live data it was counted with. */
	readonly needYou: WeakMap<readonly SessionRecord[], {readonly live: AppState['live']; readonly count: number}>;
	/** `untrackedSummary`'s answer per findings array, for the panes it was counted with. */
	readonly untracked: WeakMap<readonly Finding[], {readonly panes: readonly Pane[]; readonly summary: {readonly count: number; readonly needYou: number}}>;
}

export function createViewMemo(): ViewMemo {
	return {sorted: new WeakMap(), conversations: new WeakMap(), needYou: new WeakMap(), untracked: new WeakMap()};
}

/** What the search index found for `query`: by `agent:id`, the snippet of the best message. */
export interface TextHits {
	readonly query: string;
	readonly snippets: ReadonlyMap<string, string>;
	/** Whether sub-agent and headless conversations were asked for. */
	readonly all?: boolean;
	/** With `all`: found conversations the view's list does not hold (sub-agents, headless runs). */
	readonly hidden?: readonly Conversation[];
}

export const initialUi: UiState = {
	mode: 'sessions',
	previousMode: 'sessions',
	cursor: 0,
	findingsCursor: 0,
	conversationsCursor: 0,
	trashCursor: 0,
	filter: '',
	marked: new Set(),
	detailScroll: 0,
	conversationFilter: '',
	conversationScope: 'registry',
	conversationsAll: false,
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
		notices: [],
		operations: {},
		purge: null,
		newDialog: null,
		stopDialog: null,
		parkDialog: null,
		detail: null,
		allConversations: null,
		trash: null,
		textHits: null,
		conversationUsage: null,
		trashEmpty: null,
		hosts: [],
		remote: {},
		ui: initialUi,
		memo: createViewMemo(),
		...overrides,
	};
}
