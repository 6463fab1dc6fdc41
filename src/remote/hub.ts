import type {Actions} from '../actions/index.js';
import type {HostConfig} from '../config/hosts.js';
import type {AgentId, LiveStatus, ResumeState, SessionRecord, SessionStatus} from '../domain/types.js';
import type {AuditEntry} from '../registry/registry.js';
import type {Action} from '../store/reducer.js';
import type {HostRow, RemoteRows, SessionLive} from '../store/state.js';
import type {Logger} from '../system/logger.js';
import {HostConnection} from './client.js';
import type {Channel} from './channel.js';
import type {HostView} from './protocol.js';
import {remoteActions} from './remoteActions.js';

export interface HostsHub {
	/** The actions of a configured host, over its channel; undefined for an unknown name. */
	actionsFor(host: string): Actions | undefined;
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

const STATUSES: readonly SessionStatus[] = ['running', 'stopped', 'purged'];
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

/**
 * A host's sessions as dashboard rows: names `host:name` (unique beside this machine's), each
 * with its host; ids negative and stable per row, so they never meet a registry id.
 */
export function rowsOf(host: string, view: HostView, ids: Map<string, number>, nextId: () => number): RemoteRows {
	const sessions: SessionRecord[] = [];
	const live: Record<string, SessionLive> = {};
	for (const s of view.sessions) {
		const bare = text(s['name']);
		const status = text(s['status']) as SessionStatus | null;
		if (bare === null || status === null || !STATUSES.includes(status)) continue;
		const name = `${host}:${bare}`;
		let id = ids.get(name);
		if (id === undefined) ids.set(name, (id = nextId()));
		sessions.push({
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
			extra: {},
		});
		const liveStatus = text(s['liveStatus']) as LiveStatus | null;
		if (liveStatus !== null && LIVE.includes(liveStatus)) live[name] = {liveStatus, resumeState: parseResumeState(s['resumeState'])};
	}
	return {sessions, live};
}

/**
 * The dashboard's hosts: one long-lived channel each, their rows and states into the store as
 * they change. Nothing here waits on a host: a slow one only delays its own rows.
 */
export function startHosts(deps: HubDeps): HostsHub {
	let counter = 0;
	const nextId = () => --counter;
	const connections = new Map<string, HostConnection>();
	const ids = new Map<string, Map<string, number>>();
	const hostRows = (): HostRow[] =>
		deps.hosts.map(h => {
			const s = connections.get(h.name)?.state();
			return {name: h.name, state: s?.state ?? 'connecting', rttMs: s?.rttMs ?? null, message: s?.message ?? 'connecting'};
		});
	let lastView = new Map<string, HostView | undefined>();
	for (const host of deps.hosts) {
		const connection = new HostConnection({host, wholeFirst: false, ...(deps.logger ? {logger: deps.logger} : {}), ...(deps.open ? {open: deps.open} : {})});
		connections.set(host.name, connection);
		ids.set(host.name, new Map());
		connection.onChange(() => {
			const up = connection.state().state === 'up';
			const view = up ? connection.snapshot() : undefined;
			// A ping changes only the round trip: the rows stay the same objects.
			const same = lastView.get(host.name) === view;
			lastView = new Map(lastView).set(host.name, view);
			deps.store.dispatch({
				type: 'remote/updated',
				host: host.name,
				rows: same ? undefined : view ? rowsOf(host.name, view, ids.get(host.name) ?? new Map(), nextId) : null,
				hosts: hostRows(),
			});
		});
	}
	if (deps.hosts.length > 0) deps.store.dispatch({type: 'remote/updated', host: '', rows: undefined, hosts: hostRows()});
	for (const connection of connections.values()) connection.start();
	const actions = new Map<string, Actions>();
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
