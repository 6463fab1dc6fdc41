import type {Conversation, Finding, Pane, SessionRecord} from '../domain/types.js';
import type {MuxHealth} from '../mux/types.js';

export type Mode = 'sessions' | 'findings' | 'help' | 'filter';

export interface UiState {
	readonly mode: Mode;
	/** The mode to return to when help or filter closes. */
	readonly previousMode: 'sessions' | 'findings';
	readonly cursor: number;
	readonly findingsCursor: number;
	readonly filter: string;
	readonly marked: ReadonlySet<string>;
}

/** The last action's outcome, for the status bar. */
export interface Notice {
	readonly level: 'info' | 'ok' | 'error';
	readonly text: string;
	readonly at: number;
}

/** Everything the dashboard renders: plain data, built by src/ services, folded by the reducer. */
export interface AppState {
	readonly sessions: readonly SessionRecord[];
	readonly panes: readonly Pane[];
	readonly conversations: readonly Conversation[];
	readonly findings: readonly Finding[];
	readonly mux: MuxHealth | null;
	/** When the registry was last read (ms), null before the first load. */
	readonly lastRefresh: number | null;
	readonly notice: Notice | null;
	readonly ui: UiState;
}

export const initialUi: UiState = {
	mode: 'sessions',
	previousMode: 'sessions',
	cursor: 0,
	findingsCursor: 0,
	filter: '',
	marked: new Set(),
};

export function initialState(overrides: Partial<AppState> = {}): AppState {
	return {
		sessions: [],
		panes: [],
		conversations: [],
		findings: [],
		mux: null,
		lastRefresh: null,
		notice: null,
		ui: initialUi,
		...overrides,
	};
}
