import path from 'node:path';
import type {Pane, ProcessRef} from '../../domain/types.js';
import {messageOf} from '../../domain/result.js';
import type {Logger} from '../../system/logger.js';
import {pidIndex, processTree, type ProcessTable} from '../../system/processes.js';
import {detectAgent, lineage, lineageOf} from '../detect.js';
import {shellJoin} from '../shellQuote.js';
import {MuxError, type Multiplexer, type MuxEvent, type MuxHealth, type OpenPaneRequest} from '../types.js';
import {checkKeys, checkLines, checkOpenRequest, lastLines, ownPaneError} from '../validate.js';
import {sameShells, trusted, type RememberedShell, type ShellCache} from './shellCache.js';
import {HERDR_PROTOCOL, HerdrClient, type HerdrResult, type HerdrStream, type HerdrSubscription} from './client.js';
import {
	agentStatusOf,
	isObject,
	parseNewPane,
	parsePong,
	parseProcessInfo,
	parseRead,
	parseSnapshot,
	type WireEvent,
	type WirePane,
	type WireSnapshot,
} from './wire.js';

export interface HerdrMuxOptions {
	readonly socketPath: string;
	/** mam-tui's environment: `HERDR_PANE_ID` names its own pane (when it belongs to this socket). */
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly processes: ProcessTable;
	readonly logger?: Logger;
	readonly now?: () => number;
	/** Per-call timeout (ms). */
	readonly timeoutMs?: number;
	/** mam-tui's pid; a pane whose shell is one of its ancestors is its own pane. */
	readonly selfPid?: number;
	/** Event-stream reconnect backoff: first wait and cap (ms). */
	readonly backoff?: {readonly initialMs: number; readonly maxMs: number};
	/** How long after a lifecycle event to re-check the pane set if nobody listed panes (ms). */
	readonly resyncMs?: number;
	/** Shell pids kept between mam-tui processes: always saved; read back only with `readShellCache`. */
	readonly shellCache?: ShellCache;
	/** Trust remembered shells (once checked against /proc) instead of asking herdr for each pane again. */
	readonly readShellCache?: boolean;
}

/** Codes that mean the connection, not the request, failed: the protocol is re-checked next time. */
const TRANSPORT_CODES = new Set(['server_not_running', 'connection_failed', 'connection_closed', 'timeout', 'bad_response', 'permission_denied']);

/**
 * The lifecycle events we follow. Not `pane.updated` or `layout.updated`: they fire on every
 * title change and would fill the replay a reconnect has to sit through.
 */
const LIFECYCLE: readonly string[] = ['pane.created', 'pane.closed', 'pane.exited', 'pane.moved', 'pane.agent_detected', 'tab.closed', 'workspace.closed'];

/** How many `pane.process_info` calls run at once when many new terminals appear together. */
const PROCESS_INFO_CONCURRENCY = 8;

interface ShellEntry {
	readonly pid: number;
	startTime?: number;
}

async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
	const queue = [...items];
	const workers = Array.from({length: Math.min(limit, queue.length)}, async () => {
		for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
	});
	await Promise.all(workers);
}

/**
 * The herdr backend (SPEC 2): herdr's JSON socket API.
 *
 * A listing is one batched round: `session.snapshot`, then `pane.process_info` only for
 * terminals not seen before, then one /proc scan. A terminal's shell pid never changes for the
 * terminal's life, so it is cached by `terminal_id` (checked against the pid's start time, so a
 * reused pid is noticed) and the process tree under it is re-read from /proc each time: herdr's
 * `foreground_processes` would only show the foreground job and carries no start times.
 *
 * Events: bootstrap from a snapshot, then `events.subscribe` for lifecycle events and each
 * pane's status. A lost stream reconnects with exponential backoff and resyncs from a snapshot;
 * because herdr replays recent events to a new subscriber, lifecycle events are de-duplicated
 * against the panes already known.
 */
export class HerdrMux implements Multiplexer {
	readonly kind = 'herdr' as const;
	private readonly client: HerdrClient;
	private readonly options: HerdrMuxOptions;
	private readonly now: () => number;
	private readonly selfPid: number;
	private readonly selfPaneId: string | undefined;
	private readonly shells = new Map<string, ShellEntry>();
	private readonly listeners = new Set<(event: MuxEvent) => void>();
	private selfIds = new Set<string>();
	private version: string | undefined;
	private protocolOk = false;
	private callError: string | undefined = 'not connected yet';
	private lastOkAt: number | undefined;
	private lastHealth: MuxHealth;
	private disposed = false;
	private streams: {readonly lifecycle: StreamLoop; readonly status: StreamLoop} | undefined;
	private streamErrors: {readonly lifecycle?: string | undefined; readonly status?: string | undefined} = {};
	/** The sorted pane ids the open status stream watches. */
	private statusKey = '';
	private resyncTimer: NodeJS.Timeout | undefined;
	private resyncPending = false;
	private readonly known = new Set<string>();
	private readonly gone = new Set<string>();
	private readonly agents = new Map<string, string | undefined>();
	/** Remembered shells not yet checked (loaded at the first listing), and what was last saved. */
	private remembered: readonly RememberedShell[] | undefined;
	private savedShells: readonly RememberedShell[] | undefined;

	constructor(options: HerdrMuxOptions) {
		this.options = options;
		this.client = new HerdrClient(options.socketPath, options.timeoutMs);
		this.now = options.now ?? Date.now;
		this.selfPid = options.selfPid ?? process.pid;
		const ownSocket = options.env['HERDR_SOCKET_PATH'];
		// HERDR_PANE_ID is only ours to trust when it was issued by the server we talk to.
		this.selfPaneId =
			ownSocket === undefined || path.resolve(ownSocket) === path.resolve(options.socketPath) ? options.env['HERDR_PANE_ID'] || undefined : undefined;
		this.lastHealth = this.computeHealth();
	}

	get socketPath(): string {
		return this.client.socketPath;
	}

	private computeHealth(): MuxHealth {
		// A stream's message says when the next reconnect comes, so it goes first when both failed.
		const problem = this.streamErrors.lifecycle ?? this.streamErrors.status ?? this.callError;
		const message = problem ?? `herdr ${this.version ?? '?'} (protocol ${HERDR_PROTOCOL}) at ${this.socketPath}`;
		return {kind: 'herdr', ok: problem === undefined, message, ...(this.lastOkAt !== undefined ? {lastOkAt: this.lastOkAt} : {})};
	}

	private updateHealth(): void {
		const next = this.computeHealth();
		if (next.ok === this.lastHealth.ok && next.message === this.lastHealth.message) {
			this.lastHealth = next;
			return;
		}
		this.lastHealth = next;
		this.emit({type: 'health', health: next});
	}

	private emit(event: MuxEvent): void {
		for (const listener of [...this.listeners]) {
			try {
				listener(event);
			} catch (error) {
				this.options.logger?.warn('mux listener failed', error);
			}
		}
	}

	/** One request; a transport failure marks the backend unhealthy and forces a new protocol check. */
	private async call(method: string, params: Readonly<Record<string, unknown>> = {}): Promise<HerdrResult> {
		try {
			const result = await this.client.request(method, params);
			if (this.callError !== undefined && this.protocolOk) {
				this.callError = undefined;
				this.updateHealth();
			}
			return result;
		} catch (error) {
			if (error instanceof MuxError && TRANSPORT_CODES.has(error.code)) {
				this.protocolOk = false;
				this.callError = error.message;
				this.updateHealth();
			}
			throw error;
		}
	}

	/** `ping` once per connection attempt; a different protocol is refused with a clear message. */
	private async ensureProtocol(): Promise<void> {
		if (this.protocolOk) return;
		const pong = parsePong(await this.call('ping'));
		this.version = pong.version;
		if (pong.protocol !== HERDR_PROTOCOL) {
			this.callError = `herdr ${pong.version} at ${this.socketPath} speaks protocol ${pong.protocol}; this mam-tui speaks protocol ${HERDR_PROTOCOL} — use matching versions of herdr and mam-tui`;
			this.updateHealth();
			throw new MuxError(this.callError, 'protocol_mismatch');
		}
		this.protocolOk = true;
		this.callError = undefined;
		this.updateHealth();
	}

	private markOk(): void {
		this.callError = undefined;
		this.lastOkAt = this.now();
		this.updateHealth();
	}

	private async snapshot(): Promise<WireSnapshot> {
		await this.ensureProtocol();
		const snapshot = parseSnapshot(await this.call('session.snapshot'));
		this.learnPanes(snapshot.panes);
		return snapshot;
	}

	/** Fetch shell pids for terminals not seen before (concurrently: one round, not one per pane). How many were asked. */
	private async fillShells(panes: readonly WirePane[]): Promise<number> {
		const fresh = panes.filter(p => !this.shells.has(p.terminalId));
		await mapLimit(fresh, PROCESS_INFO_CONCURRENCY, async pane => {
			try {
				const info = parseProcessInfo(await this.call('pane.process_info', {pane_id: pane.paneId}));
				if (info.shellPid) this.shells.set(pane.terminalId, {pid: info.shellPid});
			} catch (error) {
				// A pane that closed between the snapshot and this call is simply gone.
				if (error instanceof MuxError && error.code === 'pane_not_found') return;
				throw error;
			}
		});
		return fresh.length;
	}

	/** Shells remembered by an earlier process, for terminals we have not asked about, once /proc confirms them. */
	private adoptRemembered(panes: readonly WirePane[], table: readonly ProcessRef[]): void {
		const checked = trusted(this.remembered ?? [], table);
		for (const pane of panes) {
			const shell = checked.get(pane.terminalId);
			if (shell && !this.shells.has(pane.terminalId)) this.shells.set(pane.terminalId, {pid: shell.pid, startTime: shell.startTime});
		}
		this.remembered = [];
	}

	/** Save the confirmed shells (with their parent's identity) when they changed since the last save. */
	private saveShells(table: readonly ProcessRef[]): void {
		const cache = this.options.shellCache;
		if (!cache) return;
		const byPid = pidIndex(table);
		const shells: RememberedShell[] = [];
		for (const [terminalId, entry] of this.shells) {
			const proc = byPid.get(entry.pid);
			const parent = proc ? byPid.get(proc.ppid) : undefined;
			if (!proc || !parent || entry.startTime === undefined) continue;
			shells.push({terminalId, pid: entry.pid, startTime: entry.startTime, ppid: proc.ppid, parentStartTime: parent.startTime});
		}
		if (this.savedShells !== undefined && sameShells(shells, this.savedShells)) return;
		this.savedShells = shells;
		cache.save(this.socketPath, shells);
	}

	/** Forget terminals that left, and shells whose pid died or was reused. */
	private pruneShells(panes: readonly WirePane[], table: readonly ProcessRef[]): void {
		const live = new Set(panes.map(p => p.terminalId));
		const byPid = pidIndex(table);
		for (const [terminal, entry] of this.shells) {
			const proc = byPid.get(entry.pid);
			if (!live.has(terminal) || !proc || (entry.startTime !== undefined && entry.startTime !== proc.startTime)) {
				this.shells.delete(terminal);
				continue;
			}
			entry.startTime ??= proc.startTime;
		}
	}

	private toPane(wire: WirePane, table: readonly ProcessRef[], self: ReadonlySet<number>): Pane {
		const shell = this.shells.get(wire.terminalId);
		const tree = shell ? processTree(table, shell.pid) : [];
		const isSelf = wire.paneId === this.selfPaneId || (shell !== undefined && self.has(shell.pid));
		// herdr's own detection first; a process match covers what it cannot see (background jobs).
		const agent = isSelf ? undefined : (wire.agent ?? detectAgent(tree));
		const title = wire.label ?? wire.title ?? wire.terminalTitle;
		const cwd = wire.cwd ?? wire.foregroundCwd;
		return {
			id: wire.paneId,
			mux: 'herdr',
			...(cwd ? {cwd} : {}),
			...(wire.foregroundCwd ? {foregroundCwd: wire.foregroundCwd} : {}),
			...(title ? {title} : {}),
			...(agent ? {agent} : {}),
			agentStatus: isSelf ? 'unknown' : wire.agentStatus,
			// Only id references are session ids; a path reference (pi, omp) is not.
			...(!isSelf && wire.agentSession?.kind === 'id' ? {agentSessionId: wire.agentSession.value} : {}),
			...(shell ? {shellPid: shell.pid} : {}),
			processes: tree,
			isSelf,
			...this.serverOf(tree, table),
		};
	}

	/** The herdr server is the parent of every pane's shell: its pid and start time, with the socket, say which server. */
	private serverOf(tree: readonly ProcessRef[], table: readonly ProcessRef[]): {server?: string} {
		const shell = tree[0];
		const server = shell ? pidIndex(table).get(shell.ppid) : undefined;
		return server ? {server: `herdr:${this.socketPath}:${server.pid}:${server.startTime}`} : {};
	}

	/** Every pane with its process tree, in one batched round. */
	async listPanes(): Promise<readonly Pane[]> {
		const snapshot = await this.snapshot();
		if (this.remembered === undefined) {
			this.remembered = this.options.readShellCache ? (this.options.shellCache?.load(this.socketPath) ?? []) : [];
			// The file as read: an unchanged set of shells is not written back (each status run rewrote it).
			if (this.remembered.length > 0) this.savedShells = this.remembered;
		}
		let table: readonly ProcessRef[] | undefined;
		if (this.remembered.length > 0) {
			table = await this.options.processes.list();
			this.adoptRemembered(snapshot.panes, table);
		}
		// The table is read (again) after asking herdr: a shell learned just now may be younger than it.
		if ((await this.fillShells(snapshot.panes)) > 0 || !table) table = await this.options.processes.list();
		this.pruneShells(snapshot.panes, table);
		this.saveShells(table);
		const self = lineage(table, this.selfPid);
		const panes = snapshot.panes.map(p => this.toPane(p, table, self));
		this.selfIds = new Set(panes.filter(p => p.isSelf).map(p => p.id));
		this.markOk();
		return panes;
	}

	private checkPaneId(paneId: string): void {
		if (typeof paneId !== 'string' || paneId.length === 0 || paneId.length > 256 || /[\0-\x1f]/.test(paneId)) {
			throw new MuxError(`invalid herdr pane id ${JSON.stringify(String(paneId).slice(0, 60))}`, 'invalid_pane_id');
		}
	}

	/** Refuse mam-tui's own pane: known from HERDR_PANE_ID, the last listing, or its shell being our ancestor. */
	private async refuseSelf(paneId: string, verb: string): Promise<void> {
		this.checkPaneId(paneId);
		if (paneId === this.selfPaneId || this.selfIds.has(paneId)) throw ownPaneError(paneId, verb);
		await this.ensureProtocol();
		const info = parseProcessInfo(await this.call('pane.process_info', {pane_id: paneId}));
		if (info.shellPid !== undefined && (await lineageOf(this.options.processes, this.selfPid)).has(info.shellPid)) {
			throw ownPaneError(paneId, verb);
		}
	}

	/** Type `text` as-is (no Enter): `pane.send_text`. */
	async sendText(paneId: string, text: string): Promise<void> {
		await this.refuseSelf(paneId, 'type into');
		await this.call('pane.send_text', {pane_id: paneId, text});
	}

	/** Send named keys: `pane.send_keys` (validated first, so nothing is half-sent). */
	async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
		checkKeys(keys);
		await this.refuseSelf(paneId, 'send keys to');
		await this.call('pane.send_keys', {pane_id: paneId, keys: [...keys]});
	}

	/** The last `lines` lines of recent output, ANSI stripped: `pane.read` source `recent`. */
	async readOutput(paneId: string, lines: number): Promise<string> {
		this.checkPaneId(paneId);
		const count = checkLines(lines);
		await this.ensureProtocol();
		const text = parseRead(await this.call('pane.read', {pane_id: paneId, source: 'recent', lines: count, strip_ansi: true}));
		return lastLines(text, count);
	}

	/** The pane a new one splits from: mam-tui's own, else the focused one, else any. */
	private splitTarget(snapshot: WireSnapshot): string | undefined {
		const ids = snapshot.panes.map(p => p.paneId);
		const mine = ids.find(id => id === this.selfPaneId || this.selfIds.has(id));
		return mine ?? (snapshot.focusedPaneId && ids.includes(snapshot.focusedPaneId) ? snapshot.focusedPaneId : ids[0]);
	}

	/**
	 * `pane.split` takes no command (PROTOCOL 4), so: split with cwd and env, then type the
	 * shell-quoted argv plus Enter with `pane.send_input`: what herdr does when it restores an
	 * agent (PROTOCOL 9). With no pane to split from, a new workspace is created instead.
	 */
	async openPane(request: OpenPaneRequest): Promise<string> {
		checkOpenRequest(request);
		let line: string;
		try {
			line = shellJoin(request.argv);
		} catch (error) {
			throw new MuxError(`cannot open a pane: ${messageOf(error)}`, 'invalid_argv');
		}
		const env = request.env && Object.keys(request.env).length > 0 ? {env: {...request.env}} : {};
		const target = this.splitTarget(await this.snapshot());
		const created = target
			? parseNewPane(await this.call('pane.split', {direction: 'right', target_pane_id: target, cwd: request.cwd, focus: false, ...env}))
			: parseNewPane(
					await this.call('workspace.create', {cwd: request.cwd, focus: false, ...env, ...(request.title ? {label: request.title} : {})}),
				);
		try {
			await this.call('pane.send_input', {pane_id: created.paneId, text: line, keys: ['Enter']});
		} catch (error) {
			// An empty shell the user never asked for would only confuse; take it away again.
			await this.call('pane.close', {pane_id: created.paneId}).catch(() => undefined);
			throw error;
		}
		if (request.title && target) {
			await this.call('pane.rename', {pane_id: created.paneId, label: request.title}).catch(() => undefined);
		}
		return created.paneId;
	}

	/** `pane.close`: herdr tears down the pane's whole session (HUP, TERM, KILL) before answering. */
	async closePane(paneId: string): Promise<void> {
		await this.refuseSelf(paneId, 'close');
		await this.call('pane.close', {pane_id: paneId});
	}

	/** `pane.focus`. */
	async focusPane(paneId: string): Promise<void> {
		this.checkPaneId(paneId);
		await this.ensureProtocol();
		await this.call('pane.focus', {pane_id: paneId});
	}

	/** Current health, no I/O. */
	health(): MuxHealth {
		return this.lastHealth;
	}

	/** Start the event streams with the first listener; stop them with the last. */
	subscribe(listener: (event: MuxEvent) => void): () => void {
		this.listeners.add(listener);
		if (!this.streams && !this.disposed) this.startStreams();
		return () => {
			this.listeners.delete(listener);
			if (this.listeners.size === 0) void this.stopStreams();
		};
	}

	async dispose(): Promise<void> {
		this.disposed = true;
		this.listeners.clear();
		await this.stopStreams();
	}

	/** True while the event streams are open (changes from now on arrive as events). */
	eventsLive(): boolean {
		return this.streams !== undefined && this.streams.lifecycle.live && (this.known.size === 0 || this.streams.status.live);
	}

	/**
	 * Two streams, because herdr replays its ring of recent lifecycle events to every new
	 * subscriber at one event per 100 ms (PROTOCOL 5.4): the lifecycle stream is opened once and
	 * kept; the per-pane status stream (no replay) is the one re-opened when the pane set changes,
	 * since a subscription list is fixed for the life of its connection.
	 */
	private startStreams(): void {
		const backoff = {initialMs: this.options.backoff?.initialMs ?? 250, maxMs: this.options.backoff?.maxMs ?? 10_000};
		const lifecycle = new StreamLoop({
			client: this.client,
			backoff,
			open: async () => {
				await this.snapshot();
				return LIFECYCLE.map(type => ({type}));
			},
			onEvent: event => this.onWireEvent(event),
			onState: error => this.streamState('lifecycle', error),
			// Whatever happened during the gap is in the snapshot just taken, not in events.
			onReconnected: () => this.emit({type: 'changed'}),
		});
		const status = new StreamLoop({
			client: this.client,
			backoff,
			open: async retry => {
				// A pane that vanished fails the whole subscription: re-read the set before retrying.
				if (retry) await this.snapshot();
				const ids = [...this.known].sort();
				this.statusKey = ids.join('\n');
				return ids.length === 0 ? undefined : ids.map(id => ({type: 'pane.agent_status_changed', pane_id: id}));
			},
			onEvent: event => this.onWireEvent(event),
			onState: error => this.streamState('status', error),
			onReconnected: () => this.emit({type: 'changed'}),
			benign: error => error instanceof MuxError && error.code === 'pane_not_found',
		});
		this.streams = {lifecycle, status};
		lifecycle.start();
		status.start();
	}

	private async stopStreams(): Promise<void> {
		const streams = this.streams;
		this.streams = undefined;
		clearTimeout(this.resyncTimer);
		await Promise.all([streams?.lifecycle.stop(), streams?.status.stop()]);
		this.streamErrors = {};
		this.updateHealth();
	}

	private streamState(which: 'lifecycle' | 'status', error: string | undefined): void {
		this.streamErrors = {...this.streamErrors, [which]: error};
		if (error === undefined) {
			this.lastOkAt = this.now();
		} else {
			this.protocolOk = false;
		}
		this.updateHealth();
	}

	/** Remember the panes a snapshot shows; any we knew that it lacks is gone for good (ids are never reused). */
	private learnPanes(panes: readonly WirePane[]): void {
		const ids = new Set(panes.map(p => p.paneId));
		for (const id of this.known) {
			if (!ids.has(id)) {
				this.known.delete(id);
				this.gone.add(id);
				this.agents.delete(id);
			}
		}
		for (const pane of panes) {
			this.known.add(pane.paneId);
			this.agents.set(pane.paneId, pane.agent);
		}
		this.paneSetChanged();
	}

	/** The status stream watches a fixed list of panes: re-open it when the set moved. */
	private paneSetChanged(): void {
		this.resyncPending = false;
		if (!this.streams) return;
		if ([...this.known].sort().join('\n') === this.statusKey) return;
		this.streams.status.restart();
	}

	/** After events that can drop panes silently (moves, tab/workspace closes), re-read the set. */
	private scheduleResync(): void {
		this.resyncPending = true;
		clearTimeout(this.resyncTimer);
		this.resyncTimer = setTimeout(() => {
			// Listeners usually list panes right after an event, which re-reads the set for free.
			if (!this.resyncPending || this.disposed) return;
			this.snapshot().catch(error => this.options.logger?.debug('herdr resync failed', messageOf(error)));
		}, this.options.resyncMs ?? 500);
		this.resyncTimer.unref();
	}

	private onWireEvent(event: WireEvent): void {
		const data = event.data;
		const paneId = typeof data['pane_id'] === 'string' ? data['pane_id'] : undefined;
		switch (event.event) {
			case 'pane_created': {
				const pane = data['pane'];
				const id = isObject(pane) && typeof pane['pane_id'] === 'string' ? pane['pane_id'] : undefined;
				// A new subscriber first gets a replay of recent events: drop what the snapshot already showed.
				if (!id || this.known.has(id) || this.gone.has(id)) return;
				this.known.add(id);
				this.emit({type: 'pane-created', paneId: id});
				this.paneSetChanged();
				return;
			}
			case 'pane_closed':
			case 'pane_exited': {
				if (!paneId || !this.known.has(paneId)) return;
				this.known.delete(paneId);
				this.gone.add(paneId);
				this.emit({type: event.event === 'pane_closed' ? 'pane-closed' : 'pane-exited', paneId});
				this.paneSetChanged();
				return;
			}
			case 'pane_agent_detected': {
				if (!paneId || this.gone.has(paneId)) return;
				const agent = typeof data['agent'] === 'string' ? data['agent'] : undefined;
				if (this.agents.has(paneId) && this.agents.get(paneId) === agent) return;
				this.agents.set(paneId, agent);
				this.emit({type: 'agent-detected', paneId, ...(agent ? {agent} : {})});
				return;
			}
			case 'pane.agent_status_changed': {
				if (!paneId) return;
				const agent = typeof data['agent'] === 'string' ? data['agent'] : undefined;
				this.emit({type: 'agent-status', paneId, status: agentStatusOf(data['agent_status']), ...(agent ? {agent} : {})});
				return;
			}
			case 'pane_moved':
			case 'tab_closed':
			case 'workspace_closed':
				// Panes can leave without a pane_closed here (PROTOCOL 5.3): re-read the set.
				this.emit({type: 'changed'});
				this.scheduleResync();
				return;
			case 'pane_updated':
				this.emit({type: 'changed'});
				return;
			default:
				// Unknown and uninteresting events (layout_updated, new kinds) are ignored.
				return;
		}
	}
}

/** A herdr backend for `socketPath`. */
export function createHerdrMux(options: HerdrMuxOptions): HerdrMux {
	return new HerdrMux(options);
}

interface StreamLoopOptions {
	readonly client: HerdrClient;
	readonly backoff: {readonly initialMs: number; readonly maxMs: number};
	/** The subscriptions for the next connection; undefined = nothing to watch yet (wait for restart). `retry` after a failure. */
	readonly open: (retry: boolean) => Promise<readonly HerdrSubscription[] | undefined>;
	readonly onEvent: (event: WireEvent) => void;
	/** undefined = streaming; a message = down, with when the next attempt comes. */
	readonly onState: (error: string | undefined) => void;
	/** The stream is back after a failure. */
	readonly onReconnected: () => void;
	/** Failures that are part of normal life (a pane vanished meanwhile): retried at once, not reported. */
	readonly benign?: (error: unknown) => boolean;
}

/** One `events.subscribe` stream that reconnects with exponential backoff until stopped. */
class StreamLoop {
	/** True between `subscription_started` and the stream's end. */
	live = false;
	private readonly options: StreamLoopOptions;
	private stopped = false;
	private restarting = false;
	private stream: HerdrStream | undefined;
	private wakeUp: (() => void) | undefined;
	private done: Promise<void> | undefined;

	constructor(options: StreamLoopOptions) {
		this.options = options;
	}

	start(): void {
		this.done = this.run();
	}

	/** Re-open with fresh subscriptions now (no backoff). */
	restart(): void {
		if (this.stream) {
			this.restarting = true;
			this.stream.close();
		}
		this.wakeUp?.();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		this.stream?.close();
		this.wakeUp?.();
		await this.done;
	}

	/** Wait `ms` (or until restart/stop); without `ms`, until restart/stop. */
	private wait(ms?: number): Promise<void> {
		return new Promise(resolve => {
			let timer: NodeJS.Timeout | undefined;
			const finish = () => {
				clearTimeout(timer);
				if (this.wakeUp === finish) this.wakeUp = undefined;
				resolve();
			};
			if (ms !== undefined) {
				timer = setTimeout(finish, ms);
				timer.unref();
			}
			this.wakeUp = finish;
		});
	}

	private async run(): Promise<void> {
		const {initialMs, maxMs} = this.options.backoff;
		let delay = initialMs;
		let failed = false;
		// Let the caller finish wiring before the first I/O.
		await Promise.resolve();
		while (!this.stopped) {
			try {
				const subscriptions = await this.options.open(failed);
				if (this.stopped) break;
				if (!subscriptions) {
					this.options.onState(undefined);
					await this.wait();
					continue;
				}
				this.stream = this.options.client.subscribe(subscriptions, this.options.onEvent);
				await this.stream.started;
				this.live = true;
				delay = initialMs;
				this.options.onState(undefined);
				if (failed) this.options.onReconnected();
				failed = false;
				const reason = await this.stream.closed;
				this.live = false;
				if (this.stopped) break;
				if (this.restarting) {
					this.restarting = false;
					continue;
				}
				throw new MuxError(`herdr event stream lost (${reason})`, 'connection_closed');
			} catch (error) {
				this.live = false;
				this.stream?.close();
				this.stream = undefined;
				const restarted = this.restarting;
				this.restarting = false;
				if (this.stopped) break;
				// Closed by restart() while it was still connecting: not a failure.
				if (restarted) continue;
				failed = true;
				if (this.options.benign?.(error)) {
					await this.wait(initialMs);
					continue;
				}
				const when = delay < 1000 ? `${delay} ms` : `${Math.round(delay / 1000)} s`;
				this.options.onState(`${messageOf(error)}; reconnecting in ${when}`);
				await this.wait(delay);
				delay = Math.min(delay * 2, maxMs);
			}
		}
		this.stream?.close();
		this.stream = undefined;
	}
}
