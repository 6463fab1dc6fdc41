import type {Conversation, Finding, Pane, SessionRecord} from '../domain/types.js';
import {assertNever} from '../domain/result.js';
import type {MuxHealth} from '../mux/types.js';
import {visibleSessions} from './selectors.js';
import type {AppState, ListMode, Mode, NewDialog, Notice, OperationView, PlanView, SessionDetail, SessionLive, StepView} from './state.js';

export type Action =
	| {readonly type: 'registry/loaded'; readonly sessions: readonly SessionRecord[]; readonly at: number}
	| {
			readonly type: 'live/updated';
			readonly panes?: readonly Pane[];
			readonly live?: Readonly<Record<string, SessionLive>>;
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
	| {readonly type: 'mark/clear'}
	| {readonly type: 'notice/set'; readonly notice: Notice | null}
	| {readonly type: 'operation/started'; readonly operation: OperationView}
	| {readonly type: 'operation/step'; readonly session: string; readonly step: StepView}
	| {readonly type: 'operation/ended'; readonly session: string; readonly at: number; readonly ok: boolean; readonly text: string}
	| {readonly type: 'purge/open'; readonly targets: readonly string[]; readonly expected: string}
	| {readonly type: 'purge/plans'; readonly plans: readonly PlanView[]; readonly refusal?: string}
	| {readonly type: 'purge/type'; readonly typed: string}
	| {readonly type: 'purge/scroll'; readonly delta: number}
	| {readonly type: 'purge/close'}
	| {readonly type: 'new/open'; readonly cwd: string}
	| {readonly type: 'new/update'; readonly dialog: NewDialog}
	| {readonly type: 'new/close'}
	| {readonly type: 'detail/loaded'; readonly detail: SessionDetail | null};

function clamp(value: number, length: number): number {
	if (length <= 0) return 0;
	return Math.max(0, Math.min(value, length - 1));
}

/** The list whose cursor keys move: the current list, or the one under help/filter/dialogs. */
export function activeList(state: AppState): ListMode {
	const {mode} = state.ui;
	return mode === 'sessions' || mode === 'findings' || mode === 'conversations' ? mode : state.ui.previousMode;
}

function listLength(state: AppState, list: ListMode): number {
	switch (list) {
		case 'sessions':
			return visibleSessions(state).length;
		case 'findings':
			return state.findings.length;
		case 'conversations':
			return state.conversations.length;
		default:
			return assertNever(list);
	}
}

const CURSOR_KEY = {sessions: 'cursor', findings: 'findingsCursor', conversations: 'conversationsCursor'} as const;

function withCursor(state: AppState, cursor: number): AppState {
	const list = activeList(state);
	const key = CURSOR_KEY[list];
	const next = clamp(cursor, listLength(state, list));
	return next === state.ui[key] ? state : {...state, ui: {...state.ui, [key]: next}};
}

function currentCursor(state: AppState): number {
	return state.ui[CURSOR_KEY[activeList(state)]];
}

/**
 * Keep the cursor on the same session when rows re-sort (a stopped session moves below the
 * running ones): a key pressed next must act on the row the user is looking at, not its neighbour.
 */
function followSelection(before: AppState, after: AppState): number {
	const previous = visibleSessions(before)[before.ui.cursor]?.name;
	const rows = visibleSessions(after);
	const index = previous === undefined ? -1 : rows.findIndex(s => s.name === previous);
	return index >= 0 ? index : clamp(after.ui.cursor, rows.length);
}

function clampAll(state: AppState, before: AppState = state): AppState {
	const ui = {
		...state.ui,
		cursor: followSelection(before, state),
		findingsCursor: clamp(state.ui.findingsCursor, state.findings.length),
		conversationsCursor: clamp(state.ui.conversationsCursor, state.conversations.length),
	};
	return {...state, ui};
}

function setMode(state: AppState, mode: Mode): AppState {
	if (mode === state.ui.mode) return state;
	return {...state, ui: {...state.ui, mode, previousMode: activeList(state)}};
}

function upsertStep(steps: readonly StepView[], step: StepView): StepView[] {
	const index = steps.findIndex(s => s.id === step.id);
	if (index < 0) return [...steps, step];
	return steps.map((s, i) => (i === index ? step : s));
}

/** The pure reducer: every state change of the dashboard goes through here. */
export function reducer(state: AppState, action: Action): AppState {
	switch (action.type) {
		case 'registry/loaded':
			return clampAll({...state, sessions: action.sessions, lastRefresh: action.at}, state);
		case 'live/updated':
			return clampAll({
				...state,
				panes: action.panes ?? state.panes,
				live: action.live ?? state.live,
				conversations: action.conversations ?? state.conversations,
				findings: action.findings ?? state.findings,
				mux: action.mux === undefined ? state.mux : action.mux,
			}, state);
		case 'cursor/move':
			return withCursor(state, currentCursor(state) + action.delta);
		case 'cursor/top':
			return withCursor(state, 0);
		case 'cursor/bottom':
			return withCursor(state, Number.MAX_SAFE_INTEGER);
		case 'mode/set':
			return setMode(state, action.mode);
		case 'mode/back':
			return state.ui.mode === state.ui.previousMode ? state : {...state, ui: {...state.ui, mode: state.ui.previousMode}};
		case 'filter/set':
			return {...state, ui: {...state.ui, filter: action.text, cursor: 0}};
		case 'mark/toggle': {
			const marked = new Set(state.ui.marked);
			if (marked.has(action.name)) marked.delete(action.name);
			else marked.add(action.name);
			return {...state, ui: {...state.ui, marked}};
		}
		case 'mark/clear':
			return state.ui.marked.size === 0 ? state : {...state, ui: {...state.ui, marked: new Set()}};
		case 'notice/set':
			return {...state, notice: action.notice};
		case 'operation/started':
			return {...state, operations: {...state.operations, [action.operation.session]: action.operation}};
		case 'operation/step': {
			const op = state.operations[action.session];
			if (!op) return state;
			return {...state, operations: {...state.operations, [action.session]: {...op, steps: upsertStep(op.steps, action.step)}}};
		}
		case 'operation/ended': {
			const op = state.operations[action.session];
			if (!op) return state;
			const ended = {...op, endedAt: action.at, outcome: {ok: action.ok, text: action.text}};
			return {...state, operations: {...state.operations, [action.session]: ended}};
		}
		case 'purge/open':
			return setMode(
				{...state, purge: {targets: action.targets, expected: action.expected, loading: true, plans: [], typed: '', scroll: 0}},
				'purge',
			);
		case 'purge/plans':
			if (!state.purge) return state;
			return {
				...state,
				purge: {...state.purge, loading: false, plans: action.plans, ...(action.refusal ? {refusal: action.refusal} : {})},
			};
		case 'purge/type':
			return state.purge ? {...state, purge: {...state.purge, typed: action.typed}} : state;
		case 'purge/scroll':
			return state.purge ? {...state, purge: {...state.purge, scroll: Math.max(0, state.purge.scroll + action.delta)}} : state;
		case 'purge/close':
			return {...state, purge: null, ui: {...state.ui, mode: state.ui.previousMode}};
		case 'new/open':
			return setMode({...state, newDialog: {agentIndex: 0, cwd: action.cwd, field: 'agent'}}, 'new');
		case 'new/update':
			return state.newDialog ? {...state, newDialog: action.dialog} : state;
		case 'new/close':
			return {...state, newDialog: null, ui: {...state.ui, mode: state.ui.previousMode}};
		case 'detail/loaded':
			return {...state, detail: action.detail};
		default:
			return assertNever(action);
	}
}
