// The tmux backend: one object because the control client, the health line, the listing and its
// polling share one lifetime and one connection state (about 460 lines, most of them those four).
// The row format and escaping are in tmuxArgs.ts, the commands in tmuxCommands.ts, what %output
// says about each pane in tmuxScreens.ts and the control-mode client itself in tmuxControl.ts.
import {randomBytes} from 'node:crypto';
import type {Pane} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {Exec, ExecResult} from '../system/exec.js';
import type {Logger} from '../system/logger.js';
import type {ProcessTable} from '../system/processes.js';
import {lineage} from './detect.js';
import {
	controlCapable,
	escapeTmuxArg,
	firstLine,
	FORMAT,
	isNoServer,
	parsePaneRows,
	SEP,
	splitScreens,
	TMUX_TIMEOUT_MS,
	toPane,
	type PaneRow,
} from './tmuxArgs.js';
import {TmuxControl, tmuxVersion} from './tmuxControl.js';
import {checkTmuxPaneId, TmuxCommands} from './tmuxCommands.js';
import {TmuxScreens} from './tmuxScreens.js';
import {createPaneKeeper} from './keepPanes.js';
import {MuxError, type Multiplexer, type MuxCapabilities, type MuxEvent, type MuxHealth, type OpenPaneRequest, type PaneScreen} from './types.js';

/** Which tmux server: `-L name`, `-S path`, or neither (the user's own, the one `$TMUX` names). */
export interface TmuxServer {
	readonly socketName?: string;
	readonly socketPath?: string;
}

export interface TmuxMuxOptions {
	readonly server: TmuxServer;
	readonly exec: Exec;
	readonly processes: ProcessTable;
	/** mam-tui's environment: `TMUX` and `TMUX_PANE` name its own pane. */
	readonly env: Readonly<Record<string, string | undefined>>;
	/** How often change detection polls `list-panes` while someone listens (config.refresh.pollMs). */
	readonly pollMs: number;
	readonly selfPid?: number;
	readonly logger?: Logger;
	readonly now?: () => number;
	readonly timeoutMs?: number;
	/** The tmux binary (tests may point elsewhere). */
	readonly bin?: string;
	/**
	 * Talk through one control-mode client (`tmux -C`, tmux ≥ 3.2) instead of a process per
	 * command, and learn from its `%output` which panes printed. Falls back to a process per
	 * command while the client cannot connect (no server yet, an older tmux).
	 */
	readonly control?: boolean;
}

/** How soon after a failed attach the control client is tried again. */
const RECONNECT_MS = 2000;
/**
 * With no server running nothing can change but a server starting, so only every this many
 * polls looks (5 s at the default pollMs): a process a second was most of an idle `serve`'s CPU
 * on a host without tmux running. mam-tui's own new pane is seen at once (its refresh lists).
 */
const NO_SERVER_POLL_EVERY = 5;
/**
 * With the control client attached, tmux itself says when panes come and go (`%layout-change`,
 * `%window-add`: a poll at once) and when a watched pane prints; a poll still finds what no
 * notification carries (an agent that started or ended in a pane, a new title). After this many
 * polls that found nothing and no pane printed, only every QUIET_POLL_EVERY-th poll looks: listing
 * 100 panes every second was a third of an idle dashboard's CPU. Any change or output polls every
 * second again.
 */
const QUIET_AFTER_POLLS = 10;
const QUIET_POLL_EVERY = 4;
/**
 * The tmux backend (SPEC 2) over the tmux CLI, argv arrays only. Change detection polls
 * `list-panes` every `pollMs` while someone listens; a listing adds one /proc scan for the
 * process trees and the agent each pane runs (by the adapters' `matchesProcess`).
 */
/** tmux knows no agent status; its screens are read. Without control mode changes are found by polling. */
export function tmuxCan(control: boolean): MuxCapabilities {
	return {reportsAgentStatus: false, readsScreens: true, pushesEvents: control, focuses: true};
}

export class TmuxMux implements Multiplexer {
	readonly kind = 'tmux' as const;
	readonly can: MuxCapabilities;
	private readonly options: TmuxMuxOptions;
	private readonly now: () => number;
	private readonly selfPid: number;
	private readonly listeners = new Set<(event: MuxEvent) => void>();
	private readonly closedByUs = new Set<string>();
	private selfIds = new Set<string>();
	/** Unchanged panes keep their objects across listings (see keepPanes.ts). */
	private readonly kept = createPaneKeeper();
	private version: string | undefined;
	private socketPath: string | undefined;
	private lastHealth: MuxHealth;
	private lastOkAt: number | undefined;
	private pollTimer: NodeJS.Timeout | undefined;
	private polling = false;
	private seen: Map<string, string> | undefined;
	private control: TmuxControl | undefined;
	private connecting: Promise<void> | undefined;
	private lastAttachAt = Number.NEGATIVE_INFINITY;
	/**
	 * The last listing found no server. `attach-session` starts a server (it may create sessions
	 * from the config), which finds none and exits: tried every 2 s, that cost a server start
	 * each time and made a listing in between fail ("server exited unexpectedly"). Until a
	 * listing finds a server again, commands run as processes and nothing attaches.
	 */
	private noServer = false;
	private skippedPolls = 0;
	/** Polls in a row that found nothing, with no pane printing meanwhile (see QUIET_AFTER_POLLS). */
	private quietPolls = 0;
	private readonly commands: TmuxCommands;
	private readonly screens = new TmuxScreens({emit: event => this.emit(event), listening: () => this.listeners.size > 0});
	private disposed = false;
	/** What talking to tmux cost so far (the bench and the tests read it). */
	readonly cost = {commands: 0, processes: 0, screenReads: 0, attaches: 0};

	constructor(options: TmuxMuxOptions) {
		this.options = options;
		this.now = options.now ?? Date.now;
		this.selfPid = options.selfPid ?? process.pid;
		this.can = tmuxCan(options.control === true);
		this.lastHealth = {kind: 'tmux', ok: true, message: `tmux ${this.serverLabel()} (not queried yet)`};
		this.commands = new TmuxCommands({
			runOk: (args, what) => this.runOk(args, what),
			spawnRun: (args, env) => this.spawnRun(args, env),
			selfIds: () => this.selfIds,
			closedByUs: this.closedByUs,
			env: options.env,
			processes: options.processes,
			selfPid: this.selfPid,
		});
	}

	/**
	 * `-u` first: without a UTF-8 locale in the environment tmux writes every non-printable or
	 * non-ASCII byte of its output as `_`, which would garble paths and eat our field separator.
	 */
	private serverFlags(): string[] {
		const {socketName, socketPath} = this.options.server;
		if (socketPath) return ['-u', '-S', socketPath];
		if (socketName) return ['-u', '-L', socketName];
		return ['-u'];
	}

	private serverLabel(): string {
		const {socketName, socketPath} = this.options.server;
		return socketPath ? `server ${socketPath}` : socketName ? `server -L ${socketName}` : 'default server';
	}

	/**
	 * Run one tmux command; the result comes back even on failure (callers decide). Through the
	 * control client when it is connected (no process started), else as a process of its own.
	 * A command with a client environment (`env`) always runs as a process: it is what tmux
	 * gives a new pane.
	 */
	private async run(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<ExecResult> {
		if (!env && args[0] !== '-V' && this.options.control) {
			await this.attach();
			const control = this.control;
			if (control?.connected) {
				this.cost.commands += 1;
				const reply = await control.command(args).catch(() => undefined);
				if (reply) {
					const text = reply.lines.length > 0 ? `${reply.lines.join('\n')}\n` : '';
					return reply.ok ? {exitCode: 0, stdout: text, stderr: ''} : {exitCode: 1, stdout: '', stderr: text};
				}
			}
		}
		return this.spawnRun(args, env);
	}

	/** Attach the control client unless attached, attaching, or a failed try was too recent. */
	private async attach(): Promise<void> {
		if (this.control?.connected || this.disposed || this.noServer) return;
		if (this.connecting) return this.connecting;
		if (this.now() - this.lastAttachAt < RECONNECT_MS) return;
		this.lastAttachAt = this.now();
		this.connecting = (async () => {
			await this.ensureVersion();
			if (!controlCapable(this.version)) return;
			this.cost.attaches += 1;
			const control = new TmuxControl({
				bin: this.options.bin ?? 'tmux',
				serverFlags: this.serverFlags(),
				env: this.options.env,
				timeoutMs: this.options.timeoutMs ?? TMUX_TIMEOUT_MS,
				...(this.options.logger ? {logger: this.options.logger} : {}),
				onOutput: (paneId, data) => this.onOutput(paneId, data),
				onLayout: () => {
					this.quietPolls = 0;
					if (this.pollTimer) void this.poll();
				},
				onClose: reason => this.onControlClosed(control, reason),
			});
			if (!(await control.connect()) || this.disposed) {
				control.close();
				return;
			}
			this.control = control;
			this.screens.attached();
			this.options.logger?.debug('tmux control client attached', control.session);
		})().finally(() => {
			this.connecting = undefined;
		});
		return this.connecting;
	}

	private onControlClosed(control: TmuxControl, reason: string): void {
		if (this.control !== control) return;
		this.control = undefined;
		this.screens.detached();
		this.options.logger?.debug('tmux control client closed', reason);
		// The server may have restarted: the next poll lists (and re-attaches) at once.
		this.lastAttachAt = Number.NEGATIVE_INFINITY;
		if (this.pollTimer && !this.disposed) this.emit({type: 'changed'});
	}

	/** A watched pane printed (mam-tui's own pane prints whenever the dashboard draws: reporting it would feed a loop). */
	private onOutput(paneId: string, data: Buffer): void {
		if (this.selfIds.has(paneId)) return;
		this.quietPolls = 0;
		this.screens.output(paneId, data);
	}

	/** Run one tmux command as its own process. */
	private spawnRun(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<ExecResult> {
		return this.spawnList([args], env);
	}

	/** Run tmux commands in order as one process (a `;` between them); tmux stops at the first that fails. */
	private async spawnList(commands: readonly (readonly string[])[], env?: Readonly<Record<string, string>>): Promise<ExecResult> {
		this.cost.processes += 1;
		const argv = commands.flatMap((args, i) => [...(i > 0 ? [';'] : []), ...args.map(escapeTmuxArg)]);
		const result = await this.options.exec(this.options.bin ?? 'tmux', [...this.serverFlags().map(escapeTmuxArg), ...argv], {
			timeoutMs: this.options.timeoutMs ?? TMUX_TIMEOUT_MS,
			...(env ? {env} : {}),
		});
		if (result.failure) {
			const missing = /ENOENT|not found/i.test(result.failure);
			const message = missing ? 'tmux is not installed (or not on PATH)' : `tmux failed: ${result.failure}`;
			this.setHealth(false, message);
			throw new MuxError(message, missing ? 'tmux_missing' : 'tmux_failed');
		}
		return result;
	}

	/** Run and require success; the message is tmux's own first stderr line. */
	private async runOk(args: readonly string[], what: string): Promise<string> {
		const result = await this.run(args);
		if (result.exitCode !== 0) {
			throw new MuxError(`tmux ${what}: ${firstLine(result.stderr) || `exit code ${result.exitCode}`}`, isNoServer(result) ? 'no_server' : 'tmux_error');
		}
		return result.stdout;
	}

	private setHealth(ok: boolean, message: string): void {
		if (ok) this.lastOkAt = this.now();
		const next: MuxHealth = {kind: 'tmux', ok, message, ...(this.lastOkAt !== undefined ? {lastOkAt: this.lastOkAt} : {})};
		const changed = next.ok !== this.lastHealth.ok || next.message !== this.lastHealth.message;
		this.lastHealth = next;
		if (changed) this.emit({type: 'health', health: next});
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

	private async ensureVersion(): Promise<void> {
		if (this.version) return;
		const quick = this.options.control ? await tmuxVersion(this.options.bin ?? 'tmux', this.options.timeoutMs ?? TMUX_TIMEOUT_MS) : undefined;
		if (quick) {
			this.version = quick;
			return;
		}
		const result = await this.run(['-V']);
		this.version = result.stdout.trim().replace(/^tmux\s+/, '') || '?';
	}

	/** All panes' rows; no server running is an empty list, not an error. */
	private async rows(): Promise<PaneRow[]> {
		await this.ensureVersion();
		const result = await this.run(['list-panes', '-a', '-F', FORMAT]);
		if (result.exitCode !== 0) {
			if (isNoServer(result)) {
				this.noServer = true;
				this.setHealth(true, `tmux ${this.version}: no ${this.serverLabel()} running yet (a new pane starts it)`);
				return [];
			}
			const message = `tmux list-panes failed: ${firstLine(result.stderr) || `exit code ${result.exitCode}`}`;
			this.setHealth(false, message);
			throw new MuxError(message, 'tmux_error');
		}
		this.noServer = false;
		const rows = parsePaneRows(result.stdout);
		this.socketPath = rows[0]?.socketPath || this.socketPath;
		await this.watch(rows);
		this.setHealth(true, `tmux ${this.version} on ${this.socketPath ?? this.serverLabel()}`);
		return rows;
	}

	/**
	 * After a listing: which panes the control client sees print (those of its session), and
	 * attach it to the session holding the most panes when that is another. Forget what is known
	 * about panes that are gone.
	 */
	private async watch(rows: readonly PaneRow[]): Promise<void> {
		const present = new Set(rows.map(r => r.id));
		this.screens.forgetAllBut(present);
		const control = this.control;
		if (!control?.connected) return;
		const counts = new Map<string, number>();
		for (const row of rows) counts.set(row.sessionId, (counts.get(row.sessionId) ?? 0) + 1);
		const current = rows.find(r => r.session === control.session)?.sessionId;
		const best = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
		if (best !== undefined && current !== best && (current === undefined || (counts.get(current) ?? 0) < (counts.get(best) ?? 0))) {
			const reply = await control.command(['switch-client', '-t', best]).catch(() => undefined);
			if (reply?.ok) control.session = rows.find(r => r.sessionId === best)?.session;
		}
		this.screens.watch(new Set(rows.filter(r => r.session === control.session).map(r => r.id)));
	}

	/**
	 * The visible screens (`capture-pane -p`), read again only for panes that printed since the
	 * last read, or that the control client does not watch; all reads go out at once.
	 */
	async readScreens(paneIds: readonly string[]): Promise<ReadonlyMap<string, PaneScreen>> {
		for (const id of paneIds) this.checkPaneId(id);
		if (this.options.control) await this.attach();
		const watching = this.control?.connected === true;
		const capture = watching ? (ids: readonly string[]) => this.captureEach(ids) : (ids: readonly string[]) => this.captureInOneProcess(ids);
		const {screens, reads} = await this.screens.read(paneIds, watching, capture);
		this.cost.screenReads += reads;
		return screens;
	}

	/** One `capture-pane -p` per pane, all sent at once (through the control client). */
	private async captureEach(paneIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
		const texts = await Promise.all(paneIds.map(id => this.run(['capture-pane', '-p', '-t', id]).catch(() => undefined)));
		const out = new Map<string, string>();
		paneIds.forEach((id, i) => {
			const result = texts[i];
			if (result?.exitCode === 0) out.set(id, result.stdout);
		});
		return out;
	}

	/**
	 * The same captures without a control client: one tmux process runs them all as a `;` list,
	 * each after a marker line that no pane can print (a random nonce). tmux stops a list at a
	 * failing command (a pane closed since the listing): that pane has no screen, and the panes
	 * after it go out again in another process.
	 */
	private async captureInOneProcess(paneIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
		const out = new Map<string, string>();
		let todo = paneIds;
		while (todo.length > 0) {
			// The marker names a pane by its place in the list: display-message runs its text through strftime, which would eat a `%`.
			const marker = `mam-screen-${randomBytes(12).toString('hex')} `;
			const result = await this.spawnList(
				todo.flatMap((id, i) => [
					['display-message', '-p', `${marker}${i}`],
					['capture-pane', '-p', '-t', id],
				]),
			).catch(() => undefined);
			if (!result) break;
			const read = [...splitScreens(result.stdout, marker)]
				.map(([key, text]) => [Number(key), text] as const)
				.filter(([i]) => Number.isInteger(i) && i >= 0 && i < todo.length);
			// On a failure the last pane read is the one whose capture failed.
			const kept = result.exitCode === 0 ? read : read.slice(0, -1);
			for (const [i, text] of kept) out.set(todo[i] ?? '', text);
			const failed = result.exitCode === 0 ? undefined : read.at(-1)?.[0];
			todo = failed === undefined ? [] : todo.slice(failed + 1);
		}
		return out;
	}

	/** Every pane, from one `list-panes -a` plus one /proc scan. */
	async listPanes(): Promise<readonly Pane[]> {
		const rows = await this.rows();
		const table = await this.options.processes.list();
		const self = lineage(table, this.selfPid);
		const panes = this.kept.keep(rows.map(row => toPane(row, table, self, this.options.env)));
		this.selfIds = new Set(panes.filter(p => p.isSelf).map(p => p.id));
		return panes;
	}

	private checkPaneId(paneId: string): void {
		checkTmuxPaneId(paneId);
	}

	/** `send-keys -l`: the text literally, no key-name lookup, no Enter. */
	sendText(paneId: string, text: string): Promise<void> {
		return this.commands.sendText(paneId, text);
	}

	/** herdr key names mapped to tmux's (`ctrl+c` to `C-c`), all validated before any is sent. */
	sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
		return this.commands.sendKeys(paneId, keys);
	}

	/** `capture-pane -p -J` of the last `lines` lines (wrapped lines joined, no escapes). */
	readOutput(paneId: string, lines: number): Promise<string> {
		return this.commands.readOutput(paneId, lines);
	}

	/** A new window (not stealing focus) running `argv` in `cwd` with `env` (see tmuxCommands.ts). */
	openPane(request: OpenPaneRequest): Promise<string> {
		return this.commands.openPane(request);
	}

	/** `kill-pane`: tmux closes the pty, so the pane's processes get SIGHUP. */
	closePane(paneId: string): Promise<void> {
		return this.commands.closePane(paneId);
	}

	/** Select the pane's window, then the pane. */
	focusPane(paneId: string): Promise<void> {
		return this.commands.focusPane(paneId);
	}

	/** The active pane of each attached (non-control) client's window. */
	focusedPanes(): Promise<ReadonlySet<string>> {
		return this.commands.focusedPanes();
	}

	health(): MuxHealth {
		return this.lastHealth;
	}

	/** Polling starts with the first listener and stops with the last. */
	subscribe(listener: (event: MuxEvent) => void): () => void {
		this.listeners.add(listener);
		if (!this.pollTimer) {
			this.pollTimer = setInterval(() => void this.poll(), this.options.pollMs);
			this.pollTimer.unref();
			void this.poll();
		}
		return () => {
			this.listeners.delete(listener);
			if (this.listeners.size === 0) this.stopPolling();
		};
	}

	private stopPolling(): void {
		clearInterval(this.pollTimer);
		this.pollTimer = undefined;
		this.seen = undefined;
	}

	/** Has polling gone quiet (see QUIET_AFTER_POLLS)? Only with the control client, which reports layouts and output. */
	private quiet(): boolean {
		return this.control?.connected === true && this.quietPolls >= QUIET_AFTER_POLLS;
	}

	/** One poll: compare each pane's signature with the last poll's and report the differences. */
	private async poll(): Promise<void> {
		if (this.polling) return;
		if (this.noServer && this.seen && ++this.skippedPolls % NO_SERVER_POLL_EVERY !== 0) return;
		if (this.quiet() && ++this.skippedPolls % QUIET_POLL_EVERY !== 0) return;
		this.polling = true;
		try {
			const rows = await this.rows();
			const now = new Map(rows.map(r => [r.id, [r.pid, r.dead, r.command, r.cwd, r.windowName, r.title].join(SEP)]));
			const before = this.seen;
			this.seen = now;
			if (!before || this.listeners.size === 0) return;
			let changed = false;
			let found = false;
			for (const [id, signature] of now) {
				if (!before.has(id)) {
					found = true;
					this.emit({type: 'pane-created', paneId: id});
				} else if (before.get(id) !== signature) changed = true;
			}
			for (const id of before.keys()) {
				if (now.has(id)) continue;
				found = true;
				// tmux cannot say why a pane went; if we did not close it, its process ended.
				this.emit({type: this.closedByUs.delete(id) ? 'pane-closed' : 'pane-exited', paneId: id});
			}
			if (changed) this.emit({type: 'changed'});
			this.quietPolls = found || changed ? 0 : this.quietPolls + 1;
		} catch (error) {
			this.options.logger?.debug('tmux poll failed', messageOf(error));
		} finally {
			this.polling = false;
		}
	}

	async dispose(): Promise<void> {
		this.disposed = true;
		this.listeners.clear();
		this.stopPolling();
		this.screens.dispose();
		await this.connecting;
		this.control?.close('disposed');
		this.control = undefined;
	}
}

export function createTmuxMux(options: TmuxMuxOptions): TmuxMux {
	return new TmuxMux(options);
}
