import type {SessionRecord} from '../domain/types.js';
import {visibleConversations} from './conversations.js';
import type {AppState, UiState} from './state.js';

const STATUS_ORDER: Record<SessionRecord['status'], number> = {running: 0, stopped: 1, purged: 2};

/**
 * The last answer per rows array: every keypress asks (the reducer for the list length, the key
 * handlers and the detail loader for the selected row), and sorting 500 rows with localeCompare
 * each time cost milliseconds per key. Rows arrays are never mutated (the store replaces them).
 */
const sortedCache = new WeakMap<readonly SessionRecord[], {readonly filter: string; readonly rows: SessionRecord[]}>();

/** Sessions after the filter, running first, then by name. Pure (remembered per rows array and filter); do not mutate the result. */
export function visibleSessions(state: {readonly sessions: AppState['sessions']; readonly ui: Pick<UiState, 'filter'>}): SessionRecord[] {
	const hit = sortedCache.get(state.sessions);
	if (hit && hit.filter === state.ui.filter) return hit.rows;
	const rows = sortVisible(state);
	sortedCache.set(state.sessions, {filter: state.ui.filter, rows});
	return rows;
}

function sortVisible(state: {readonly sessions: AppState['sessions']; readonly ui: Pick<UiState, 'filter'>}): SessionRecord[] {
	const needle = state.ui.filter.trim().toLowerCase();
	const rows = needle
		? state.sessions.filter(s =>
				[s.name, s.agent, s.cwd, s.status, s.agentSessionId ?? '', s.paneId ?? ''].some(v => v.toLowerCase().includes(needle)),
			)
		: [...state.sessions];
	return rows.sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || a.name.localeCompare(b.name));
}

/** The session under the cursor, read at call time by key handlers. */
export function selectedSession(state: AppState): SessionRecord | undefined {
	const rows = visibleSessions(state);
	return rows[Math.min(state.ui.cursor, rows.length - 1)];
}

export function countsByStatus(sessions: readonly SessionRecord[]): Record<SessionRecord['status'], number> {
	const counts = {running: 0, stopped: 0, purged: 0};
	for (const s of sessions) counts[s.status]++;
	return counts;
}

/** The conversation under the conversations cursor. */
export function selectedConversation(state: AppState): AppState['conversations'][number] | undefined {
	const rows = visibleConversations(state);
	return rows[Math.min(state.ui.conversationsCursor, rows.length - 1)];
}

/** The finding under the findings cursor. */
export function selectedFinding(state: AppState): AppState['findings'][number] | undefined {
	return state.findings[Math.min(state.ui.findingsCursor, state.findings.length - 1)];
}

/** Findings that concern a session, by registry id or name. */
export function findingsFor(state: Pick<AppState, 'findings'>, session: SessionRecord): AppState['findings'] {
	return state.findings.filter(f => f.sessionId === session.id || f.sessionName === session.name);
}

/** The part of the state the sessions screen shows; nothing else it reads. */
export interface SessionsView {
	readonly sessions: AppState['sessions'];
	readonly live: AppState['live'];
	readonly findings: AppState['findings'];
	readonly detail: AppState['detail'];
	readonly ui: Pick<UiState, 'mode' | 'filter' | 'cursor' | 'marked'>;
}

/** The sessions screen's slice (a new object each call: compare with `sameSessionsView`). */
export function selectSessionsView(state: AppState): SessionsView {
	const {mode, filter, cursor, marked} = state.ui;
	return {sessions: state.sessions, live: state.live, findings: state.findings, detail: state.detail, ui: {mode, filter, cursor, marked}};
}

/** True when the sessions screen would render the same: every field it reads is the same by identity. */
export function sameSessionsView(a: SessionsView, b: SessionsView): boolean {
	return (
		a.sessions === b.sessions &&
		a.live === b.live &&
		a.findings === b.findings &&
		a.detail === b.detail &&
		a.ui.mode === b.ui.mode &&
		a.ui.filter === b.ui.filter &&
		a.ui.cursor === b.ui.cursor &&
		a.ui.marked === b.ui.marked
	);
}
