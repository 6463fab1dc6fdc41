import type {HostConfig} from '../config/hosts.js';
import {
	SESSION_STATUSES,
	type AgentId,
	type Finding,
	type FindingKind,
	type LiveStatus,
	type ResumeState,
	type SessionRecord,
	type SessionStatus,
} from '../domain/types.js';
import {hostParkedExtra} from '../registry/extra.js';
import type {AuditEntry} from '../registry/registry.js';
import type {Action} from '../store/reducer.js';
import type {HostRow, RemoteRows, SessionLive} from '../store/state.js';
import type {Logger} from '../system/logger.js';
import {HostConnection, type HostStatus} from './client.js';
import type {Channel} from './channel.js';
import type {HostView} from './protocol.js';
import {remoteActions, type HostActions} from './remoteActions.js';

export interface HostsHub {
	/** The actions of a configured host, over its channel; undefined for an unknown name. */
	actionsFor(host: string): HostActions | undefined;
	dispose(): void;
}

export interface HubDeps {
	readonly hosts: readonly HostConfig[];
	readonly store: {dispatch(action: Action): void};
	readonly audit: (entry: AuditEntry) => void;
	readonly logger?: Logger;
	/** Opens a channel (default: ssh); tests and the bench may pass their own. */
	readonly open?: (host: HostConfig) => Channel;
}

const LIVE: readonly LiveStatus[] = ['working', 'blocked', 'idle', 'done', 'unknown', 'exited', 'stopped'];

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const time = (value: unknown): number => {
	const ms = typeof value === 'string' ? Date.parse(value) : NaN;
	return Number.isFinite(ms) ? ms : 0;
};

/** `yes` / `no: reason` / `unknown: reason`, as status --json prints it, back to a ResumeState. */
export function parseResumeState(value: unknown): ResumeState {
	if (value === 'yes') return {kind: 'yes'};
	const raw = typeof value === 'string' ? value : '';
	const [kind, ...rest] = raw.split(': ');
	const reason = rest.join(': ') || 'not known on this side';
	return kind === 'no' ? {kind: 'no', reason} : {kind: 'unknown', reason};
}

/** A parked row's freed memory, as its host's status says it (the codec checks it); nothing else of the host's park is kept here. */
function parkedOf(value: unknown): SessionRecord['extra'] {
	const parked = hostParkedExtra.read({[hostParkedExtra.key]: value});
	return parked ? hostParkedExtra.write({}, parked) : {};
}

/** What rowsOf kept from a host's last rows: each item's record and live entry, by the item object it came from. */
export type RowMemo = WeakMap<Record<string, unknown>, {readonly record: SessionRecord; readonly live: SessionLive | undefined}>;

/**
 * A host's sessions as dashboard rows: names `host:name` (unique beside this machine's), each
 * with its host; ids negative and stable per row, so they never meet a registry id. An item the
 * last change left as it was (the same object: applyChange keeps those) keeps its record and
 * live entry, so a change to one session re-renders one row, not every row of the host.
 */
export function rowsOf(host: string, view: HostView, ids: Map<string, number>, nextId: () => number, memo: RowMemo = new WeakMap()): RemoteRows {
	const sessions: SessionRecord[] = [];
	const live: Record<string, SessionLive> = {};
	for (const s of view.sessions) {
		const kept = memo.get(s);
		if (kept) {
			sessions.push(kept.record);
			if (kept.live) live[kept.record.name] = kept.live;
			continue;
		}
		const bare = text(s['name']);
		const status = text(s['status']) as SessionStatus | null;
		if (bare === null || status === null || !(SESSION_STATUSES as readonly string[]).includes(status)) continue;
		const name = `${host}:${bare}`;
		let id = ids.get(name);
		if (id === undefined) ids.set(name, (id = nextId()));
		const record: SessionRecord = {
			id,
			name,
			host,
			// An agent this build does not know still shows; its actions are the host's to judge.
			agent: (text(s['agent']) ?? '?') as AgentId,
			cwd: text(s['cwd']) ?? '',
			mux: text(s['mux']) as SessionRecord['mux'],
			paneId: text(s['livePaneId']) ?? text(s['paneId']),
			agentSessionId: text(s['agentSessionId']),
			status,
			epoch: time(s['epoch']),
			createdAt: time(s['createdAt']),
			updatedAt: time(s['updatedAt']),
			version: 0,
			extra: parkedOf(s['parked']),
		};
		sessions.push(record);
		const liveStatus = text(s['liveStatus']) as LiveStatus | null;
		const entry = liveStatus !== null && LIVE.includes(liveStatus) ? {liveStatus, resumeState: parseResumeState(s['resumeState'])} : undefined;
		if (entry) live[name] = entry;
		memo.set(s, {record, live: entry});
	}
	return {sessions, live, findings: findingsOf(host, view.findings)};
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * A host's findings as the findings view shows them: its rows named `host:name` like its rows
 * here, each with the key the host knows it by. No `fix`: the host fixes its own findings
 * (`drift.fix`), from what it sees then, never from a fix this side would send.
 */
export function findingsOf(host: string, items: HostView['findings']): Finding[] {
	const out: Finding[] = [];
	for (const item of items) {
		const key = text(item['key']);
		const kind = text(item['kind']);
		const message = text(item['message']);
		if (key === null || kind === null || message === null) continue;
		const session = text(item['session']);
		const paneId = text(item['paneId']);
		const fix = text(item['fix']) ?? (item['fixable'] === true ? 'fix it' : null);
		const offer = text(item['offer']);
		const candidates = strings(item['candidates']);
		out.push({
			// A kind this build does not know still shows; the host judges its fix.
			kind: kind as FindingKind,
			...(session !== null ? {sessionName: `${host}:${session}`} : {}),
			...(paneId !== null ? {paneId} : {}),
			message,
			evidence: strings(item['evidence']),
			...(item['level'] === 'info' ? {level: 'info' as const} : {}),
			...(offer !== null ? {offer} : {}),
			...(candidates.length > 0 ? {candidates} : {}),
			host: {name: host, key, ...(fix !== null ? {fix} : {})},
		});
	}
	return out;
}

/**
 * The host as the status bar shows it, or the row shown now when the difference is only a
 * round trip within the jitter of a ping (under 5 ms and under a quarter): every ping would
 * otherwise redraw the screen for a number that means the same.
 */
export function hostRowOf(status: HostStatus, shown: HostRow | undefined): HostRow {
	const next: HostRow = {name: status.name, state: status.state, rttMs: status.rttMs, message: status.message, since: status.since};
	if (!shown || shown.state !== next.state || shown.message !== next.message || shown.since !== next.since) return next;
	if (shown.rttMs === next.rttMs) return shown;
	if (shown.rttMs !== null && next.rttMs !== null) {
		const delta = Math.abs(next.rttMs - shown.rttMs);
		if (delta < 5 && delta < shown.rttMs / 4 + 1) return shown;
	}
	return next;
}

/**
 * The dashboard's hosts: one long-lived channel each, their rows and states into the store as
 * they change. Nothing here waits on a host: a slow one only delays its own rows.
 */
export function startHosts(deps: HubDeps): HostsHub {
	let counter = 0;
	const nextId = () => --counter;
	const connections = new Map<string, HostConnection>();
	let shown: readonly HostRow[] = deps.hosts.map(h => ({name: h.name, state: 'connecting', rttMs: null, message: 'connecting', since: Date.now()}));
	const hostRows = (): readonly HostRow[] => {
		const next = deps.hosts.map((h, i) => {
			const status = connections.get(h.name)?.state();
			const before = shown[i];
			return status ? hostRowOf(status, before) : (before as HostRow);
		});
		if (next.some((row, i) => row !== shown[i])) shown = next;
		return shown;
	};
	for (const host of deps.hosts) {
		const connection = new HostConnection({host, wholeFirst: false, ...(deps.logger ? {logger: deps.logger} : {}), ...(deps.open ? {open: deps.open} : {})});
		connections.set(host.name, connection);
		const ids = new Map<string, number>();
		const memo: RowMemo = new WeakMap();
		let sessions: HostView['sessions'] | undefined;
		let findings: HostView['findings'] | undefined;
		connection.onChange(() => {
			// Rows are rebuilt only when the host's sessions or findings changed: a ping, a change
			// to its panes, or the host going down leaves them as they were. A host that went down
			// keeps its last rows, shown greyed with the host's state until it is back.
			const view = connection.state().state === 'up' ? connection.snapshot() : undefined;
			const fresh = view !== undefined && (view.sessions !== sessions || view.findings !== findings);
			if (fresh) {
				sessions = view.sessions;
				findings = view.findings;
			}
			const before = shown;
			const hosts = hostRows();
			if (!fresh && hosts === before) return;
			deps.store.dispatch({type: 'remote/updated', host: host.name, rows: fresh ? rowsOf(host.name, view, ids, nextId, memo) : undefined, hosts});
		});
	}
	if (deps.hosts.length > 0) deps.store.dispatch({type: 'remote/updated', host: '', rows: undefined, hosts: shown});
	for (const connection of connections.values()) connection.start();
	const actions = new Map<string, HostActions>();
	return {
		actionsFor(name) {
			const connection = connections.get(name);
			if (!connection) return undefined;
			let a = actions.get(name);
			if (!a) actions.set(name, (a = remoteActions(connection, deps.audit)));
			return a;
		},
		dispose() {
			for (const connection of connections.values()) connection.close();
		},
	};
}
