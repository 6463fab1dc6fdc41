import {paneStatus} from '../domain/paneStatus.js';
import type {LiveStatus, SessionRecord} from '../domain/types.js';
import {hostParkedExtra, parkedExtra} from '../registry/extra.js';
import {visibleConversations} from './conversations.js';
import type {AppState, UiState} from './state.js';

/** Attention first: what waits for the user, then what works, then what is idle; stopped rows last. */
const LIVE_ORDER: Record<LiveStatus, number> = {blocked: 0, working: 1, idle: 2, done: 2, unknown: 3, exited: 3, stopped: 3};
const STATUS_ORDER: Record<SessionRecord['status'], number> = {running: 0, parked: 4, stopped: 4, purged: 5};

/** A row's place: a running row by its agent's live status (unknown until the first refresh), others by registry status. */
function rank(row: SessionRecord, live: AppState['live'] | undefined): number {
	if (row.status !== 'running') return STATUS_ORDER[row.status];
	const status = live && Object.hasOwn(live, row.name) ? live[row.name]?.liveStatus : undefined;
	return status === undefined ? 3 : LIVE_ORDER[status];
}

/** What the sorted list depends on, and the memo that keeps it (`AppState.memo`). */
interface ListInputs {
	readonly sessions: AppState['sessions'];
	readonly live?: AppState['live'];
	readonly ui: Pick<UiState, 'filter'>;
	readonly memo?: AppState['memo'];
}

/**
 * Sessions after the filter: blocked first (they wait for the user), then working, idle, the
 * rest of the running ones, stopped, purged; by name within each. Pure; do not mutate the result.
 * The last answer per rows array is remembered (the state's memo): every keypress asks (the
 * reducer for the list length, the key handlers and the detail loader for the selected row), and
 * sorting 500 rows with localeCompare each time cost milliseconds per key. Rows arrays are never
 * mutated (the store replaces them).
 */
export function visibleSessions(state: ListInputs): SessionRecord[] {
	const hit = state.memo?.sorted.get(state.sessions);
	if (hit && hit.filter === state.ui.filter) {
		if (hit.live === state.live) return hit.rows;
		// New live data that leaves every row's place as it was (most refreshes): the same list, no sort.
		const ranks = ranksOf(state.sessions, state.live);
		if (ranks.every((r, i) => r === hit.ranks[i])) {
			hit.live = state.live;
			return hit.rows;
		}
	}
	const rows = sortVisible(state);
	state.memo?.sorted.set(state.sessions, {filter: state.ui.filter, live: state.live, ranks: ranksOf(state.sessions, state.live), rows});
	return rows;
}

function ranksOf(sessions: AppState['sessions'], live: AppState['live'] | undefined): number[] {
	return sessions.map(row => rank(row, live));
}

function hostOrder(a: SessionRecord, b: SessionRecord): number {
	if (a.host === b.host) return 0;
	if (a.host === undefined) return -1;
	if (b.host === undefined) return 1;
	return a.host.localeCompare(b.host);
}

function sortVisible(state: ListInputs): SessionRecord[] {
	const needle = state.ui.filter.trim().toLowerCase();
	const rows = needle
		? state.sessions.filter(s =>
				[s.name, s.agent, s.cwd, s.status, s.agentSessionId ?? '', s.paneId ?? '', s.host ?? 'local'].some(v => v.toLowerCase().includes(needle)),
			)
		: [...state.sessions];
	// This machine's rows first, then each host's (config order is lost here: by name).
	return rows.sort((a, b) => hostOrder(a, b) || rank(a, state.live) - rank(b, state.live) || a.name.localeCompare(b.name));
}

/** The session under the cursor, read at call time by key handlers. */
export function selectedSession(state: AppState): SessionRecord | undefined {
	const rows = visibleSessions(state);
	return rows[Math.min(state.ui.cursor, rows.length - 1)];
}

export function countsByStatus(sessions: readonly SessionRecord[]): Record<SessionRecord['status'], number> {
	const counts = {running: 0, stopped: 0, purged: 0, parked: 0};
	for (const s of sessions) counts[s.status]++;
	return counts;
}

/** What a parked row's park freed (bytes), for the list; undefined for any other row. A host's row carries what its host said. */
export function parkedFreed(row: SessionRecord): number | undefined {
	if (row.status !== 'parked') return undefined;
	return (row.host === undefined ? parkedExtra : hostParkedExtra).read(row.extra)?.freedBytes;
}

/** The status bar's "3 parked · 2.1 GB freed": parked rows and the memory their parks freed. */
export function parkedSummary(sessions: readonly SessionRecord[]): {readonly count: number; readonly freedBytes: number} {
	let count = 0;
	let freedBytes = 0;
	for (const s of sessions) {
		if (s.status !== 'parked') continue;
		count++;
		freedBytes += parkedFreed(s) ?? 0;
	}
	return {count, freedBytes};
}

/** What the need-you counts read; `memo` (the store's) remembers them per input arrays. */
type NeedYouInputs = Pick<AppState, 'sessions' | 'live'> & {readonly memo?: AppState['memo']};

/**
 * How many running sessions wait for the user (their agent is blocked): the status bar's "N need
 * you". Remembered per (sessions, live): the status bar asks on every store change, keystrokes
 * included, and the answer changes only with those two.
 */
export function needYouCount(state: NeedYouInputs): number {
	const hit = state.memo?.needYou.get(state.sessions);
	if (hit && hit.live === state.live) return hit.count;
	let count = 0;
	for (const s of state.sessions) if (s.status === 'running' && Object.hasOwn(state.live, s.name) && state.live[s.name]?.liveStatus === 'blocked') count++;
	state.memo?.needYou.set(state.sessions, {live: state.live, count});
	return count;
}

/** Agent panes no registry row accounts for (drift's untracked-pane findings), and how many of them wait for the user. */
export interface UntrackedSummary {
	readonly count: number;
	readonly needYou: number;
}

/**
 * Remembered per (findings, panes) in the store's memo: the sessions screen and the status bar ask
 * on every store change (every keystroke), and it walks every finding and every pane.
 */
export function untrackedSummary(state: Pick<AppState, 'panes' | 'findings'> & {readonly memo?: AppState['memo']}): UntrackedSummary {
	const hit = state.memo?.untracked.get(state.findings);
	if (hit && hit.panes === state.panes) return hit.summary;
	const ids = new Set<string>();
	let elsewhere = 0;
	for (const f of state.findings) {
		if (f.kind !== 'untracked-pane' || f.paneId === undefined) continue;
		// Another machine's pane ids are its own: counted, never matched against this machine's panes.
		if (f.host) elsewhere++;
		else ids.add(f.paneId);
	}
	let needYou = 0;
	for (const pane of state.panes) if (ids.has(pane.id) && paneStatus(pane) === 'blocked') needYou++;
	const summary = {count: ids.size + elsewhere, needYou};
	state.memo?.untracked.set(state.findings, {panes: state.panes, summary});
	return summary;
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
	/** Tokens by `agent:id` (the detail panel's line). */
	readonly usage?: AppState['conversationUsage'];
	readonly ui: Pick<UiState, 'mode' | 'filter' | 'cursor' | 'marked'>;
	/** For the empty list: agent panes running outside the registry. */
	readonly untracked: UntrackedSummary;
	/** Hosts are configured: the list shows a HOST column. */
	readonly showHosts?: boolean;
	/** The store's memo, so the screen's `visibleSessions` is the remembered list. */
	readonly memo?: AppState['memo'];
	/** The hosts and their state: a row of a host that is not up is shown greyed, as last reported. */
	readonly hosts?: AppState['hosts'];
}

/** The sessions screen's slice (a new object each call: compare with `sameSessionsView`). */
export function selectSessionsView(state: AppState): SessionsView {
	const {mode, filter, cursor, marked} = state.ui;
	return {
		sessions: state.sessions,
		live: state.live,
		findings: state.findings,
		detail: state.detail,
		usage: state.conversationUsage,
		ui: {mode, filter, cursor, marked},
		untracked: untrackedSummary(state),
		showHosts: state.hosts.length > 0,
		hosts: state.hosts,
		memo: state.memo,
	};
}

/** True when the sessions screen would render the same: every field it reads is the same by identity. */
export function sameSessionsView(a: SessionsView, b: SessionsView): boolean {
	return (
		a.sessions === b.sessions &&
		a.live === b.live &&
		a.findings === b.findings &&
		a.detail === b.detail &&
		a.usage === b.usage &&
		a.ui.mode === b.ui.mode &&
		a.ui.filter === b.ui.filter &&
		a.ui.cursor === b.ui.cursor &&
		a.ui.marked === b.ui.marked &&
		a.untracked.count === b.untracked.count &&
		a.untracked.needYou === b.untracked.needYou &&
		a.showHosts === b.showHosts &&
		a.hosts === b.hosts
	);
}
