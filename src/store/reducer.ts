import type {TokenUsage} from '../domain/usage.js';
import type {Conversation, Finding, MuxHealth, Pane, SessionRecord} from '../domain/types.js';
import {assertNever} from '../domain/result.js';
import {visibleConversations} from './conversations.js';
import {selectedSession, visibleSessions} from './selectors.js';
import {
	MAX_ERRORS,
	NOTICE_TTL_MS,
	type AppState,
	type ListMode,
	type Mode,
	type NewDialog,
	type Notice,
	type OperationView,
	type PlanView,
	type RemoteRows,
	type HostRow,
	type SessionDetail,
	type SessionLive,
	type StepView,
	type StopDialog,
	type ParkDialog,
	type TrashRow,
} from './state.js';

export type Action =
	| {readonly type: 'registry/loaded'; readonly sessions: readonly SessionRecord[]; readonly at: number}
	/** A host's rows changed (null: it is not up, no rows; undefined: unchanged), with every host's state. */
	| {readonly type: 'remote/updated'; readonly host: string; readonly rows: RemoteRows | null | undefined; readonly hosts: readonly HostRow[]}
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
	/** Show a notice (null: dismiss them all). A new one replaces the last info/ok notice; errors pile up. */
	| {readonly type: 'notice/set'; readonly notice: Notice | null}
	/** Dismiss every notice and every finished operation, errors included. */
	| {readonly type: 'notice/dismiss'}
	/** Drop what has expired by `now`: info/ok notices and operations that ended well. */
	| {readonly type: 'clock/expire'; readonly now: number}
	| {readonly type: 'detail/scroll'; readonly delta: number}
	| {readonly type: 'conversations/scope'}
	| {readonly type: 'conversations/all'; readonly conversations: readonly Conversation[]}
	| {
			readonly type: 'conversations/textHits';
			readonly query: string;
			readonly snippets: ReadonlyMap<string, string>;
			readonly all?: boolean;
			readonly hidden?: readonly Conversation[];
	  }
	| {readonly type: 'conversations/toggleAll'}
	| {readonly type: 'conversations/usage'; readonly usage: ReadonlyMap<string, TokenUsage>}
	| {readonly type: 'stop/open'; readonly dialog: StopDialog}
	| {readonly type: 'stop/close'}
	| {readonly type: 'park/open'; readonly dialog: ParkDialog}
	| {readonly type: 'park/close'}
	| {readonly type: 'operation/started'; readonly operation: OperationView}
	| {readonly type: 'operation/step'; readonly session: string; readonly step: StepView}
	| {readonly type: 'operation/ended'; readonly session: string; readonly at: number; readonly ok: boolean; readonly text: string}
	| {readonly type: 'purge/open'; readonly targets: readonly string[]; readonly expected: string}
	| {readonly type: 'purge/plans'; readonly plans: readonly PlanView[]; readonly refusal?: string}
	| {readonly type: 'purge/type'; readonly typed: string}
	| {readonly type: 'purge/scroll'; readonly delta: number; readonly readToEnd?: boolean}
	| {readonly type: 'purge/close'}
	| {readonly type: 'new/open'; readonly cwd: string}
	| {readonly type: 'new/update'; readonly dialog: NewDialog}
	| {readonly type: 'new/close'}
	| {readonly type: 'detail/loaded'; readonly detail: SessionDetail | null}
	| {readonly type: 'trash/loaded'; readonly entries: readonly TrashRow[]}
	| {readonly type: 'trashEmpty/open'; readonly purgeId: string; readonly expected: string}
	| {readonly type: 'trashEmpty/type'; readonly typed: string}
	| {readonly type: 'trashEmpty/close'};

function clamp(value: number, length: number): number {
	if (length <= 0) return 0;
	return Math.max(0, Math.min(value, length - 1));
}

/** The list whose cursor keys move: the current list, or the one under help/filter/dialogs. */
export function activeList(state: AppState): ListMode {
	const {mode} = state.ui;
	return mode === 'sessions' || mode === 'findings' || mode === 'conversations' || mode === 'trash' ? mode : state.ui.previousMode;
}

function listLength(state: AppState, list: ListMode): number {
	switch (list) {
		case 'sessions':
			return visibleSessions(state).length;
		case 'findings':
			return state.findings.length;
		case 'conversations':
			return visibleConversations(state).length;
		case 'trash':
			return state.trash?.length ?? 0;
		default:
			return assertNever(list);
	}
}

const CURSOR_KEY = {sessions: 'cursor', findings: 'findingsCursor', conversations: 'conversationsCursor', trash: 'trashCursor'} as const;

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
		conversationsCursor: clamp(state.ui.conversationsCursor, visibleConversations(state).length),
		trashCursor: clamp(state.ui.trashCursor, state.trash?.length ?? 0),
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

function addNotice(notices: readonly Notice[], notice: Notice): readonly Notice[] {
	const errors = notices.filter(n => n.level === 'error');
	const kept = notice.level === 'error' ? errors.slice(-(MAX_ERRORS - 1)) : errors.slice(-MAX_ERRORS);
	return [...kept, notice];
}

/** Errors and operations that failed stay until dismissed; the rest goes after NOTICE_TTL_MS. */
function expire(state: AppState, now: number): AppState {
	const notices = state.notices.filter(n => n.level === 'error' || now - n.at < NOTICE_TTL_MS);
	const ended = Object.entries(state.operations).filter(([, op]) => op.endedAt !== undefined && op.outcome?.ok !== false && now - op.endedAt >= NOTICE_TTL_MS);
	if (notices.length === state.notices.length && ended.length === 0) return state;
	const operations = Object.fromEntries(Object.entries(state.operations).filter(([name]) => !ended.some(([gone]) => gone === name)));
	return {...state, notices, operations};
}

function dismiss(state: AppState): AppState {
	const operations = Object.fromEntries(Object.entries(state.operations).filter(([, op]) => op.endedAt === undefined));
	return {...state, notices: [], operations};
}

/** The filter field edits the filter of the list it was opened from. */
function setFilter(state: AppState, text: string): AppState {
	if (activeList(state) === 'conversations') return {...state, ui: {...state.ui, conversationFilter: text, conversationsCursor: 0}};
	return {...state, ui: {...state.ui, filter: text, cursor: 0}};
}

/** This machine's rows, then every host's (local first). */
function withRemoteRows(local: readonly SessionRecord[], remote: AppState['remote']): readonly SessionRecord[] {
	const hosts = Object.values(remote);
	return hosts.length === 0 ? local : [...local, ...hosts.flatMap(r => r.sessions)];
}

function withRemoteLive(local: AppState['live'], remote: AppState['remote']): AppState['live'] {
	const hosts = Object.values(remote);
	return hosts.length === 0 ? local : (Object.assign({}, local, ...hosts.map(r => r.live)) as AppState['live']);
}

/** This machine's findings, then every host's. */
function withRemoteFindings(local: readonly Finding[], remote: AppState['remote']): readonly Finding[] {
	const hosts = Object.values(remote);
	return hosts.length === 0 ? local : [...local, ...hosts.flatMap(r => r.findings)];
}

function remoteUpdated(state: AppState, action: Extract<Action, {type: 'remote/updated'}>): AppState {
	if (action.rows === undefined) return action.hosts === state.hosts ? state : {...state, hosts: action.hosts};
	const remote: Record<string, RemoteRows> = {...state.remote};
	if (action.rows) remote[action.host] = action.rows;
	else delete remote[action.host];
	const local = state.sessions.filter(s => s.host === undefined);
	// Live entries are per row: this machine's are those of its rows.
	const localLive: Record<string, SessionLive> = {};
	for (const s of local) {
		const live = Object.hasOwn(state.live, s.name) ? state.live[s.name] : undefined;
		if (live) localLive[s.name] = live;
	}
	const localFindings = state.findings.filter(f => f.host === undefined);
	return clampAll(
		{
			...state,
			hosts: action.hosts,
			remote,
			sessions: withRemoteRows(local, remote),
			live: withRemoteLive(localLive, remote),
			findings: withRemoteFindings(localFindings, remote),
		},
		state,
	);
}

/** The pure reducer: every state change of the dashboard goes through here. */
export function reducer(state: AppState, action: Action): AppState {
	const next = reduce(state, action);
	// The detail panel starts at its top for every session: a scroll kept from the last row would hide the new one's ids.
	if (next !== state && next.ui.detailScroll !== 0 && selectedSession(next)?.name !== selectedSession(state)?.name) {
		return {...next, ui: {...next.ui, detailScroll: 0}};
	}
	return next;
}

function reduce(state: AppState, action: Action): AppState {
	switch (action.type) {
		case 'registry/loaded':
			return clampAll({...state, sessions: withRemoteRows(action.sessions, state.remote), lastRefresh: action.at}, state);
		case 'remote/updated':
			return remoteUpdated(state, action);
		case 'live/updated':
			return clampAll(
				{
					...state,
					panes: action.panes ?? state.panes,
					live: action.live ? withRemoteLive(action.live, state.remote) : state.live,
					conversations: action.conversations ?? state.conversations,
					findings: action.findings ? withRemoteFindings(action.findings, state.remote) : state.findings,
					mux: action.mux === undefined ? state.mux : action.mux,
				},
				state,
			);
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
			return setFilter(state, action.text);
		case 'mark/toggle': {
			const marked = new Set(state.ui.marked);
			if (marked.has(action.name)) marked.delete(action.name);
			else marked.add(action.name);
			return {...state, ui: {...state.ui, marked}};
		}
		case 'mark/clear':
			return state.ui.marked.size === 0 ? state : {...state, ui: {...state.ui, marked: new Set()}};
		case 'notice/set':
			return {...state, notices: action.notice ? addNotice(state.notices, action.notice) : []};
		case 'notice/dismiss':
			return dismiss(state);
		case 'clock/expire':
			return expire(state, action.now);
		case 'detail/scroll':
			return {...state, ui: {...state.ui, detailScroll: Math.max(0, state.ui.detailScroll + action.delta)}};
		case 'conversations/scope':
			return {...state, ui: {...state.ui, conversationScope: state.ui.conversationScope === 'all' ? 'registry' : 'all', conversationsCursor: 0}};
		case 'conversations/all':
			return clampAll({...state, allConversations: action.conversations}, state);
		case 'conversations/textHits':
			return clampAll(
				{...state, textHits: {query: action.query, snippets: action.snippets, ...(action.all ? {all: true, hidden: action.hidden ?? []} : {})}},
				state,
			);
		case 'conversations/usage':
			return {...state, conversationUsage: action.usage};
		case 'conversations/toggleAll':
			return {...state, ui: {...state.ui, conversationsAll: !state.ui.conversationsAll, conversationsCursor: 0}};
		case 'stop/open':
			return setMode({...state, stopDialog: action.dialog}, 'stop');
		case 'stop/close':
			return {...state, stopDialog: null, ui: {...state.ui, mode: state.ui.previousMode}};
		case 'park/open':
			return setMode({...state, parkDialog: action.dialog}, 'park');
		case 'park/close':
			return {...state, parkDialog: null, ui: {...state.ui, mode: state.ui.previousMode}};
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
				{...state, purge: {targets: action.targets, expected: action.expected, loading: true, plans: [], typed: '', scroll: 0, readToEnd: false}},
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
			if (!state.purge) return state;
			return {
				...state,
				purge: {...state.purge, scroll: Math.max(0, state.purge.scroll + action.delta), readToEnd: state.purge.readToEnd || action.readToEnd === true},
			};
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
		case 'trash/loaded':
			return clampAll({...state, trash: action.entries});
		case 'trashEmpty/open':
			return setMode({...state, trashEmpty: {purgeId: action.purgeId, expected: action.expected, typed: ''}}, 'trashEmpty');
		case 'trashEmpty/type':
			return state.trashEmpty ? {...state, trashEmpty: {...state.trashEmpty, typed: action.typed}} : state;
		case 'trashEmpty/close':
			return {...state, trashEmpty: null, ui: {...state.ui, mode: state.ui.previousMode}};
		default:
			return assertNever(action);
	}
}
