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
import {HerdrClient, type HerdrResult} from './client.js';
import {HerdrEvents} from './events.js';
import {judgeProtocol, protocolLabel, type ProtocolVerdict} from './protocol.js';
import {parseNewPane, parsePong, parseProcessInfo, parseRead, parseSnapshot, type WirePane, type WireSnapshot} from './wire.js';

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
	/** How long after an event that can drop panes silently (a move, a tab or workspace closed) to re-read the pane set (ms). */
	readonly resyncMs?: number;
	/** Shell pids kept between mam-tui processes: always saved; read back only with `readShellCache`. */
	readonly shellCache?: ShellCache;
	/** Trust remembered shells (once checked against /proc) instead of asking herdr for each pane again. */
	readonly readShellCache?: boolean;
}

/** Codes that mean the connection, not the request, failed: the protocol is re-checked next time. */
const TRANSPORT_CODES = new Set(['server_not_running', 'connection_failed', 'connection_closed', 'timeout', 'bad_response', 'permission_denied']);

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
 * Events (events.ts): `events.subscribe` for lifecycle events and each pane's status, each
 * followed by a snapshot; a lost stream reconnects with exponential backoff and resyncs the same
 * way. Which herdr protocols it talks to is decided in protocol.ts.
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
	/** What the last `ping` said about the protocol (undefined until one answered). */
	private protocol: Exclude<ProtocolVerdict, {kind: 'refused'}> | undefined;
	private protocolOk = false;
	private callError: string | undefined = 'not connected yet';
	private lastOkAt: number | undefined;
	private lastHealth: MuxHealth;
	private disposed = false;
	private events: HerdrEvents | undefined;
	private streamErrors: {readonly lifecycle?: string | undefined; readonly status?: string | undefined} = {};
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
		const protocol = this.protocol ? protocolLabel(this.protocol) : 'protocol ?';
		const message = problem ?? `herdr ${this.version ?? '?'} (${protocol}) at ${this.socketPath}`;
		return {kind: 'herdr', ok: problem === undefined, message, ...(this.lastOkAt !== undefined ? {lastOkAt: this.lastOkAt} : {})};
	}

	private updateHealth(): void {
		const next = this.computeHealth();
		if (next.ok === this.lastHealth.ok && next.message === this.lastHealth.message) {
			this.lastHealth = next;
			return;
		}
		const recovered = next.ok && !this.lastHealth.ok;
		this.lastHealth = next;
		this.emit({type: 'health', health: next});
		// Back after a failure: a listing that failed meanwhile may still be what listeners show.
		if (recovered) this.emit({type: 'changed'});
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

	/**
	 * One request and the reading of its answer. An answer outside the shapes mam-tui reads counts
	 * like a transport failure (the health says so, the protocol is checked again), and names an
	 * untested protocol when herdr speaks one: that is where such a herdr would first show it.
	 */
	private async ask<T>(method: string, params: Readonly<Record<string, unknown>>, read: (result: HerdrResult) => T): Promise<T> {
		const result = await this.call(method, params);
		try {
			return read(result);
		} catch (error) {
			if (!(error instanceof MuxError)) throw error;
			const untested = this.protocol?.kind === 'untested' ? ` (this herdr speaks ${protocolLabel(this.protocol)})` : '';
			const wrapped = new MuxError(`herdr ${method}: ${error.message}${untested}`, error.code);
			this.protocolOk = false;
			this.callError = wrapped.message;
			this.updateHealth();
			throw wrapped;
		}
	}

	/** `ping` once per connection attempt; a protocol protocol.ts refuses is reported with what to do. */
	private async ensureProtocol(): Promise<void> {
		if (this.protocolOk) return;
		const pong = await this.ask('ping', {}, parsePong);
		this.version = pong.version;
		const verdict = judgeProtocol(pong.protocol, pong.version, this.socketPath);
		if (verdict.kind === 'refused') {
			this.protocol = undefined;
			this.callError = verdict.message;
			this.updateHealth();
			throw new MuxError(this.callError, 'protocol_mismatch');
		}
		this.protocol = verdict;
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
		return this.ask('session.snapshot', {}, parseSnapshot);
	}

	/** Fetch shell pids for terminals not seen before (concurrently: one round, not one per pane). How many were asked. */
	private async fillShells(panes: readonly WirePane[]): Promise<number> {
		const fresh = panes.filter(p => !this.shells.has(p.terminalId));
		await mapLimit(fresh, PROCESS_INFO_CONCURRENCY, async pane => {
			try {
				const info = await this.ask('pane.process_info', {pane_id: pane.paneId}, parseProcessInfo);
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
		const info = await this.ask('pane.process_info', {pane_id: paneId}, parseProcessInfo);
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
		const text = await this.ask('pane.read', {pane_id: paneId, source: 'recent', lines: count, strip_ansi: true}, parseRead);
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
			? await this.ask('pane.split', {direction: 'right', target_pane_id: target, cwd: request.cwd, focus: false, ...env}, parseNewPane)
			: await this.ask('workspace.create', {cwd: request.cwd, focus: false, ...env, ...(request.title ? {label: request.title} : {})}, parseNewPane);
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
		if (!this.events && !this.disposed) this.startStreams();
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

	/** True while the event streams are open and synced (changes from now on arrive as events). */
	eventsLive(): boolean {
		return this.events?.live() === true;
	}

	private startStreams(): void {
		this.events = new HerdrEvents({
			client: this.client,
			backoff: {initialMs: this.options.backoff?.initialMs ?? 250, maxMs: this.options.backoff?.maxMs ?? 10_000},
			resyncMs: this.options.resyncMs ?? 500,
			snapshot: () => this.snapshot(),
			emit: event => this.emit(event),
			onState: (which, error) => this.streamState(which, error),
			...(this.options.logger ? {logger: this.options.logger} : {}),
		});
		this.events.start();
	}

	private async stopStreams(): Promise<void> {
		const events = this.events;
		this.events = undefined;
		await events?.stop();
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
}

/** A herdr backend for `socketPath`. */
export function createHerdrMux(options: HerdrMuxOptions): HerdrMux {
	return new HerdrMux(options);
}
