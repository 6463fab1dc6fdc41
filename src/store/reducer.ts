import type {Conversation, Finding, Pane, SessionRecord} from '../domain/types.js';
import {assertNever} from '../domain/result.js';
import type {MuxHealth} from '../mux/types.js';
import {visibleSessions} from './selectors.js';
import type {AppState, Mode, Notice} from './state.js';

export type Action =
	| {readonly type: 'registry/loaded'; readonly sessions: readonly SessionRecord[]; readonly at: number}
	| {
			readonly type: 'live/updated';
			readonly panes?: readonly Pane[];
			readonly conversations?: readonly Conversation[];
			readonly findings?: readonly Finding[];
			readonly mux?: MuxHealth | null;
	  }
	| {readonly type: 'cursor/move'; readonly delta: number}
	| {readonly type: 'cursor/top'}
	| {readonly type: 'cursor/bottom'}
	| {readonly type: 'mode/set'; readonly mode: Mode}
	| {readonly type: 'mode/back'}
	| {readonly type: 'filter/set'; readonly text: string}
	| {readonly type: 'mark/toggle'; readonly name: string}
	| {readonly type: 'notice/set'; readonly notice: Notice | null};

function clamp(value: number, length: number): number {
	if (length <= 0) return 0;
	return Math.max(0, Math.min(value, length - 1));
}

function withCursor(state: AppState, cursor: number): AppState {
	if (state.ui.mode === 'findings') {
		const next = clamp(cursor, state.findings.length);
		return next === state.ui.findingsCursor ? state : {...state, ui: {...state.ui, findingsCursor: next}};
	}
	const next = clamp(cursor, visibleSessions(state).length);
	return next === state.ui.cursor ? state : {...state, ui: {...state.ui, cursor: next}};
}

function currentCursor(state: AppState): number {
	return state.ui.mode === 'findings' ? state.ui.findingsCursor : state.ui.cursor;
}

/** The pure reducer: every state change of the dashboard goes through here. */
export function reducer(state: AppState, action: Action): AppState {
	switch (action.type) {
		case 'registry/loaded': {
			const next = {...state, sessions: action.sessions, lastRefresh: action.at};
			return {...next, ui: {...next.ui, cursor: clamp(next.ui.cursor, visibleSessions(next).length)}};
		}
		case 'live/updated':
			return {
				...state,
				panes: action.panes ?? state.panes,
				conversations: action.conversations ?? state.conversations,
				findings: action.findings ?? state.findings,
				mux: action.mux === undefined ? state.mux : action.mux,
			};
		case 'cursor/move':
			return withCursor(state, currentCursor(state) + action.delta);
		case 'cursor/top':
			return withCursor(state, 0);
		case 'cursor/bottom':
			return withCursor(state, Number.MAX_SAFE_INTEGER);
		case 'mode/set': {
			if (action.mode === state.ui.mode) return state;
			const previousMode =
				state.ui.mode === 'sessions' || state.ui.mode === 'findings' ? state.ui.mode : state.ui.previousMode;
			return {...state, ui: {...state.ui, mode: action.mode, previousMode}};
		}
		case 'mode/back':
			return state.ui.mode === state.ui.previousMode ? state : {...state, ui: {...state.ui, mode: state.ui.previousMode}};
		case 'filter/set': {
			const next = {...state, ui: {...state.ui, filter: action.text, cursor: 0}};
			return next;
		}
		case 'mark/toggle': {
			const marked = new Set(state.ui.marked);
			if (marked.has(action.name)) marked.delete(action.name);
			else marked.add(action.name);
			return {...state, ui: {...state.ui, marked}};
		}
		case 'notice/set':
			return {...state, notice: action.notice};
		default:
			return assertNever(action);
	}
}
