import type {AgentStatus, MuxHealth, MuxKind, Pane} from '../domain/types.js';

export type {MuxHealth};

/** A change the backend noticed; listeners usually just re-list panes. */
export type MuxEvent =
	| {readonly type: 'pane-created'; readonly paneId: string}
	| {readonly type: 'pane-closed'; readonly paneId: string}
	| {readonly type: 'pane-exited'; readonly paneId: string}
	| {readonly type: 'agent-status'; readonly paneId: string; readonly status: AgentStatus; readonly agent?: string}
	| {readonly type: 'agent-detected'; readonly paneId: string; readonly agent?: string}
	| {readonly type: 'changed'}
	/** These panes printed something since the last such event (their status may have changed; the pane list has not). */
	| {readonly type: 'output'; readonly paneIds: readonly string[]}
	| {readonly type: 'health'; readonly health: MuxHealth};

export interface OpenPaneRequest {
	readonly argv: readonly string[];
	readonly cwd: string;
	readonly env?: Readonly<Record<string, string>>;
	/** A title/label for the new pane or window. */
	readonly title?: string;
}

/** A pane's screen for the status detectors. */
export interface PaneScreen {
	/** The visible screen, plain text (no escapes), one row per line. */
	readonly text: string;
	/** The last `ESC ] 7501 ; …` state report the pane's program wrote (codex), while it was watched. */
	readonly osc?: string;
}

/** Thrown by backend calls; `message` is readable as-is (error codes already mapped). */
export class MuxError extends Error {
	readonly code: string;
	constructor(message: string, code = 'mux_error') {
		super(message);
		this.code = code;
		this.name = 'MuxError';
	}
}

/**
 * What a backend can do. Code that behaves differently per backend reads these flags, never the
 * backend's kind: a new multiplexer says what it can and everything else follows.
 */
export interface MuxCapabilities {
	/**
	 * It reports each agent pane's status itself (herdr's `agent_status`, and it reads titles and
	 * screens for that): the detectors add only the agent's own record, and what they find
	 * overrides the backend's word rather than replacing it.
	 */
	readonly reportsAgentStatus: boolean;
	/** It reads panes' visible screens (`readScreens`): the detectors judge title and screen, and their answer is the pane's status. */
	readonly readsScreens: boolean;
	/** It pushes changes as they happen (a socket's events, tmux control mode) rather than finding them on a poll. */
	readonly pushesEvents: boolean;
	/** It can bring a pane to the front in the user's client (`focusPane`). */
	readonly focuses: boolean;
}

/**
 * A multiplexer backend (SPEC 2): herdr over its socket, or tmux over its CLI. Methods reject
 * with MuxError. Methods that write into or close a pane refuse mam-tui's own pane.
 */
export interface Multiplexer {
	readonly kind: MuxKind;
	readonly can: MuxCapabilities;
	/** Every pane with its process tree, in one batched round (never one call per pane). */
	listPanes(): Promise<readonly Pane[]>;
	/** Call `listener` on every change the backend notices; returns the unsubscribe function. */
	subscribe(listener: (event: MuxEvent) => void): () => void;
	/** Type `text` as-is (no Enter). */
	sendText(paneId: string, text: string): Promise<void>;
	/** Send named keys (`Enter`, `ctrl+c`, `Escape`). */
	sendKeys(paneId: string, keys: readonly string[]): Promise<void>;
	/** The last `lines` lines of the pane's output, ANSI stripped. */
	readOutput(paneId: string, lines: number): Promise<string>;
	/**
	 * Present when `can.readsScreens`: the visible screens of these panes, for status detection. A backend that
	 * learns which panes printed reads only those again and hands the others from its last read.
	 * A pane it cannot read is left out of the map.
	 */
	readScreens?(paneIds: readonly string[]): Promise<ReadonlyMap<string, PaneScreen>>;
	/** Open a new pane running `argv` in `cwd`; resolves with the new pane's id. */
	openPane(request: OpenPaneRequest): Promise<string>;
	/** Close the pane (its processes get SIGHUP). */
	closePane(paneId: string): Promise<void>;
	/** Bring the pane to the front in the user's client. */
	focusPane(paneId: string): Promise<void>;
	/** Current health, cheap (no I/O). */
	health(): MuxHealth;
	/** Stop timers and sockets. */
	dispose(): Promise<void>;
}
