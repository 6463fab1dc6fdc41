import path from 'node:path';
import type {Pane, ProcessRef} from '../../domain/types.js';
import {messageOf} from '../../domain/result.js';
import type {Logger} from '../../system/logger.js';
import type {ProcessTable} from '../../system/processes.js';
import {lineage, lineageOf} from '../detect.js';
import {shellJoin} from '../shellQuote.js';
import {MuxError, type Multiplexer, type MuxCapabilities, type MuxEvent, type MuxHealth, type OpenPaneRequest} from '../types.js';
import {checkKeys, checkLines, checkOpenRequest, lastLines, ownPaneError} from '../validate.js';
import type {ShellCache} from './shellCache.js';
import type {HerdrResult} from './client.js';
import {HerdrConnection} from './connection.js';
import {HerdrEvents} from './events.js';
import {HerdrShells, toPane} from './paneMap.js';
import {createPaneKeeper} from '../keepPanes.js';
import {parseNewPane, parseProcessInfo, parseRead, type WireSnapshot} from './wire.js';

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

/**
 * The herdr backend (SPEC 2): herdr's JSON socket API.
 *
 * A listing is one batched round: `session.snapshot`, then `pane.process_info` only for
 * terminals not seen before, then one /proc scan. A terminal's shell pid never changes for the
 * terminal's life, so it is cached by `terminal_id` (checked against the pid's start time, so a
 * reused pid is noticed) and the process tree under it is re-read from /proc each time: herdr's
 * `foreground_processes` would only show the foreground job and carries no start times.
 *
 * The connection and its health are in connection.ts, the pane mapping and the shell cache in
 * paneMap.ts, the event streams in events.ts.
 *
 * Events (events.ts): `events.subscribe` for lifecycle events and each pane's status, each
 * followed by a snapshot; a lost stream reconnects with exponential backoff and resyncs the same
 * way. Which herdr protocols it talks to is decided in protocol.ts.
 */
/** herdr reports each agent's status itself (it reads titles and screens), over socket events. */
export const HERDR_CAN: MuxCapabilities = {reportsAgentStatus: true, readsScreens: false, pushesEvents: true, focuses: true};

export class HerdrMux implements Multiplexer {
	readonly kind = 'herdr' as const;
	readonly can = HERDR_CAN;
	private readonly connection: HerdrConnection;
	private readonly shells: HerdrShells;
	private readonly options: HerdrMuxOptions;
	private readonly selfPid: number;
	private readonly selfPaneId: string | undefined;
	private readonly listeners = new Set<(event: MuxEvent) => void>();
	private selfIds = new Set<string>();
	/** Unchanged panes keep their objects across listings (see keepPanes.ts). */
	private readonly kept = createPaneKeeper();
	private disposed = false;
	private events: HerdrEvents | undefined;

	constructor(options: HerdrMuxOptions) {
		this.options = options;
		this.connection = new HerdrConnection({
			socketPath: options.socketPath,
			...(options.timeoutMs !== undefined ? {timeoutMs: options.timeoutMs} : {}),
			now: options.now ?? Date.now,
			emit: event => this.emit(event),
		});
		this.shells = new HerdrShells(this.connection, options.shellCache, options.readShellCache === true);
		this.selfPid = options.selfPid ?? process.pid;
		const ownSocket = options.env['HERDR_SOCKET_PATH'];
		// HERDR_PANE_ID is only ours to trust when it was issued by the server we talk to.
		this.selfPaneId =
			ownSocket === undefined || path.resolve(ownSocket) === path.resolve(options.socketPath) ? options.env['HERDR_PANE_ID'] || undefined : undefined;
	}

	get socketPath(): string {
		return this.connection.socketPath;
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

	private call(method: string, params: Readonly<Record<string, unknown>> = {}): Promise<HerdrResult> {
		return this.connection.call(method, params);
	}

	private ask<T>(method: string, params: Readonly<Record<string, unknown>>, read: (result: HerdrResult) => T): Promise<T> {
		return this.connection.ask(method, params, read);
	}

	private ensureProtocol(): Promise<void> {
		return this.connection.ensureProtocol();
	}

	private snapshot(): Promise<WireSnapshot> {
		return this.connection.snapshot();
	}

	/** Every pane with its process tree, in one batched round. */
	async listPanes(): Promise<readonly Pane[]> {
		const snapshot = await this.snapshot();
		let table: readonly ProcessRef[] | undefined;
		if (this.shells.pendingRemembered()) {
			table = await this.options.processes.list();
			this.shells.adoptRemembered(snapshot.panes, table);
		}
		// The table is read (again) after asking herdr: a shell learned just now may be younger than it.
		if ((await this.shells.fillShells(snapshot.panes)) > 0 || !table) table = await this.options.processes.list();
		this.shells.pruneShells(snapshot.panes, table);
		this.shells.saveShells(table);
		const map = {shells: this.shells, socketPath: this.socketPath, selfPaneId: this.selfPaneId, self: lineage(table, this.selfPid)};
		const panes = this.kept.keep(snapshot.panes.map(p => toPane(p, table, map)));
		this.selfIds = new Set(panes.filter(p => p.isSelf).map(p => p.id));
		this.connection.markOk();
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

	/** The pane a new one splits from: one in the asked-for tab (a wake), else mam-tui's own, else the focused one, else any. */
	private splitTarget(snapshot: WireSnapshot, tab?: string): string | undefined {
		const inTab = tab === undefined ? undefined : snapshot.panes.find(p => p.tabId === tab);
		if (inTab) return inTab.paneId;
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
		const target = this.splitTarget(await this.snapshot(), request.placement?.tab);
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

	/** herdr's focused pane (the session snapshot's `focused_pane_id`). */
	async focusedPanes(): Promise<ReadonlySet<string>> {
		await this.ensureProtocol();
		const focused = (await this.snapshot()).focusedPaneId;
		return new Set(focused ? [focused] : []);
	}

	/** Current health, no I/O. */
	health(): MuxHealth {
		return this.connection.health();
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
			client: this.connection.client,
			backoff: {initialMs: this.options.backoff?.initialMs ?? 250, maxMs: this.options.backoff?.maxMs ?? 10_000},
			resyncMs: this.options.resyncMs ?? 500,
			snapshot: () => this.snapshot(),
			emit: event => this.emit(event),
			onState: (which, error) => this.connection.streamState(which, error),
			...(this.options.logger ? {logger: this.options.logger} : {}),
		});
		this.events.start();
	}

	private async stopStreams(): Promise<void> {
		const events = this.events;
		this.events = undefined;
		await events?.stop();
		this.connection.streamsStopped();
	}
}

/** A herdr backend for `socketPath`. */
export function createHerdrMux(options: HerdrMuxOptions): HerdrMux {
	return new HerdrMux(options);
}
