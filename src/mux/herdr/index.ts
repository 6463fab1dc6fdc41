import path from 'node:path';
import type {Pane, ProcessRef} from '../../domain/types.js';
import {messageOf} from '../../domain/result.js';
import type {Logger} from '../../system/logger.js';
import {processTree, type ProcessTable} from '../../system/processes.js';
import {detectAgent, lineage, lineageOf} from '../detect.js';
import {shellJoin} from '../shellQuote.js';
import {MuxError, type Multiplexer, type MuxEvent, type MuxHealth, type OpenPaneRequest} from '../types.js';
import {checkKeys, checkLines, checkOpenRequest, lastLines, ownPaneError} from '../validate.js';
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
}

/** Codes that mean the connection, not the request, failed: the protocol is re-checked next time. */
const TRANSPORT_CODES = new Set(['server_not_running', 'connection_failed', 'connection_closed', 'timeout', 'bad_response', 'permission_denied']);

/** Lifecycle events we follow; per-pane status subscriptions are added for every known pane. */
const LIFECYCLE: readonly string[] = [
	'pane.created',
	'pane.closed',
	'pane.exited',
	'pane.updated',
	'pane.moved',
	'pane.agent_detected',
	'tab.closed',
	'workspace.closed',
];

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
	private streamError: string | undefined;
	private lastOkAt: number | undefined;
	private lastHealth: MuxHealth;
	private disposed = false;
	private loop: Promise<void> | undefined;
	/** Identifies the current event loop; an older loop that sees another token stops. */
	private loopToken: object | undefined;
	private stream: HerdrStream | undefined;
	private resubscribing = false;
	private subscribedKey = '';
	private wake: (() => void) | undefined;
	private resyncTimer: NodeJS.Timeout | undefined;
	private resyncPending = false;
	private readonly known = new Set<string>();
	private readonly gone = new Set<string>();
	private readonly agents = new Map<string, string | undefined>();

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
		const problem = this.callError ?? this.streamError;
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
			return await this.client.request(method, params);
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

	/** Fetch shell pids for terminals not seen before (concurrently: one round, not one per pane). */
	private async fillShells(panes: readonly WirePane[]): Promise<void> {
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
	}

	/** Forget terminals that left, and shells whose pid died or was reused. */
	private pruneShells(panes: readonly WirePane[], table: readonly ProcessRef[]): void {
		const live = new Set(panes.map(p => p.terminalId));
		const byPid = new Map(table.map(p => [p.pid, p]));
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
		};
	}

	/** Every pane with its process tree, in one batched round. */
	async listPanes(): Promise<readonly Pane[]> {
		const snapshot = await this.snapshot();
		await this.fillShells(snapshot.panes);
		const table = await this.options.processes.list();
		this.pruneShells(snapshot.panes, table);
		const self = lineage(table, this.selfPid);
		const panes = snapshot.panes.map(p => this.toPane(p, table, self));
		this.selfIds = new Set(panes.filter(p => p.isSelf).map(p => p.id));
		this.markOk();
		this.checkSubscription(snapshot.panes);
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
	 * shell-quoted argv plus Enter with `pane.send_input` — what herdr does when it restores an
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

	/** Start the event stream with the first listener; stop it with the last. */
	subscribe(listener: (event: MuxEvent) => void): () => void {
		this.listeners.add(listener);
		if (!this.loop && !this.disposed) {
			const token = {};
			this.loopToken = token;
			this.loop = this.runEvents(token);
		}
		return () => {
			this.listeners.delete(listener);
			if (this.listeners.size === 0) void this.stopEvents();
		};
	}

	async dispose(): Promise<void> {
		this.disposed = true;
		await this.stopEvents();
	}

	private async stopEvents(): Promise<void> {
		const loop = this.loop;
		this.loop = undefined;
		this.loopToken = undefined;
		clearTimeout(this.resyncTimer);
		this.stream?.close();
		this.wake?.();
		await loop;
		this.streamError = undefined;
		this.updateHealth();
	}

	private stopped(token: object): boolean {
		return this.disposed || this.loopToken !== token || this.listeners.size === 0;
	}

	private sleep(ms: number): Promise<void> {
		return new Promise(resolve => {
			const timer = setTimeout(done, ms);
			timer.unref();
			function done() {
				clearTimeout(timer);
				resolve();
			}
			this.wake = done;
		});
	}

	private subscriptionsFor(panes: readonly WirePane[]): HerdrSubscription[] {
		return [...LIFECYCLE.map(type => ({type})), ...panes.map(p => ({type: 'pane.agent_status_changed', pane_id: p.paneId}))];
	}

	private static keyOf(panes: readonly WirePane[]): string {
		return panes
			.map(p => p.paneId)
			.sort()
			.join('\n');
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
	}

	/** The subscription list is fixed per stream (PROTOCOL 12): a changed pane set needs a new stream. */
	private checkSubscription(panes: readonly WirePane[]): void {
		this.resyncPending = false;
		if (!this.stream || this.resubscribing) return;
		if (HerdrMux.keyOf(panes) === this.subscribedKey) return;
		this.resubscribing = true;
		this.stream.close();
	}

	private scheduleResync(): void {
		this.resyncPending = true;
		clearTimeout(this.resyncTimer);
		this.resyncTimer = setTimeout(() => {
			// Listeners usually list panes right after an event, which re-checks the set for free.
			if (!this.resyncPending || this.disposed) return;
			this.snapshot()
				.then(snapshot => this.checkSubscription(snapshot.panes))
				.catch(error => this.options.logger?.debug('herdr resync failed', messageOf(error)));
		}, this.options.resyncMs ?? 500);
		this.resyncTimer.unref();
	}

	private async runEvents(loop: object): Promise<void> {
		const initial = this.options.backoff?.initialMs ?? 250;
		const max = this.options.backoff?.maxMs ?? 10_000;
		let delay = initial;
		let reconnecting = false;
		let stream: HerdrStream | undefined;
		// Let the caller of subscribe() finish wiring before the first I/O.
		await Promise.resolve();
		while (!this.stopped(loop)) {
			try {
				const snapshot = await this.snapshot();
				if (this.stopped(loop)) break;
				this.subscribedKey = HerdrMux.keyOf(snapshot.panes);
				stream = this.client.subscribe(this.subscriptionsFor(snapshot.panes), event => this.onWireEvent(event));
				this.stream = stream;
				await stream.started;
				delay = initial;
				this.streamError = undefined;
				this.markOk();
				// A resync after a gap: whatever happened meanwhile is in the snapshot, not in events.
				if (reconnecting) this.emit({type: 'changed'});
				reconnecting = false;
				const reason = await stream.closed;
				if (this.stopped(loop)) break;
				if (this.resubscribing) {
					this.resubscribing = false;
					this.emit({type: 'changed'});
					continue;
				}
				throw new MuxError(`herdr event stream lost (${reason})`, 'connection_closed');
			} catch (error) {
				stream?.close();
				this.resubscribing = false;
				if (this.stopped(loop)) break;
				reconnecting = true;
				this.protocolOk = false;
				this.streamError = `${messageOf(error)}; reconnecting in ${delay < 1000 ? `${delay} ms` : `${Math.round(delay / 1000)} s`}`;
				this.updateHealth();
				await this.sleep(delay);
				delay = Math.min(delay * 2, max);
			}
		}
		stream?.close();
		if (this.stream === stream) this.stream = undefined;
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
				this.scheduleResync();
				return;
			}
			case 'pane_closed':
			case 'pane_exited': {
				if (!paneId || !this.known.has(paneId)) return;
				this.known.delete(paneId);
				this.gone.add(paneId);
				this.emit({type: event.event === 'pane_closed' ? 'pane-closed' : 'pane-exited', paneId});
				this.scheduleResync();
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
