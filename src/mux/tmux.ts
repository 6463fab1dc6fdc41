import {hostname} from 'node:os';
import type {Pane, ProcessRef} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {Exec, ExecResult} from '../system/exec.js';
import type {Logger} from '../system/logger.js';
import {processTree, type ProcessTable} from '../system/processes.js';
import {detectAgent, lineage, lineageOf} from './detect.js';
import {toTmuxKey} from './keys.js';
import {TmuxControl, tmuxVersion} from './tmuxControl.js';
import {MuxError, type Multiplexer, type MuxEvent, type MuxHealth, type OpenPaneRequest, type PaneScreen} from './types.js';
import {checkKeys, checkLines, checkOpenRequest, lastLines, ownPaneError} from './validate.js';

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

/** tmux answers locally and at once; a command hanging this long means the server is stuck. */
const TMUX_TIMEOUT_MS = 5000;

/** The unit separator cannot appear in ids, pids or paths we care about, and tmux passes it through. */
const SEP = '\x1f';

/**
 * One `list-panes -a` call carries everything a listing needs. `pane_title` comes last: it is
 * free text, so any stray separator in it only affects itself.
 */
const FIELDS = [
	'pane_id',
	'pane_pid',
	'pane_dead',
	'pane_current_command',
	'pane_current_path',
	'session_name',
	'session_id',
	'window_index',
	'window_name',
	'socket_path',
	// The server's pid and start time: with the socket, which server (pane ids restart at %0 in each).
	'pid',
	'start_time',
	'pane_title',
] as const;
const FORMAT = FIELDS.map(f => `#{${f}}`).join(SEP);

interface PaneRow {
	readonly id: string;
	readonly pid: number;
	readonly dead: boolean;
	readonly command: string;
	readonly cwd: string;
	readonly session: string;
	readonly sessionId: string;
	readonly windowIndex: string;
	readonly windowName: string;
	readonly socketPath: string;
	readonly serverPid: string;
	readonly serverStart: string;
	readonly title: string;
}

export function parsePaneRows(stdout: string): PaneRow[] {
	const rows: PaneRow[] = [];
	for (const line of stdout.split('\n')) {
		if (line.length === 0) continue;
		const cells = line.split(SEP);
		const [id = '', pid = '', dead = '', command = '', cwd = '', session = '', sessionId = '', windowIndex = '', windowName = '', socketPath = '', serverPid = '', serverStart = ''] = cells;
		if (!/^%\d+$/.test(id)) continue;
		rows.push({
			id,
			pid: Number(pid) || 0,
			dead: dead === '1',
			command,
			cwd,
			session,
			sessionId,
			windowIndex,
			windowName,
			socketPath,
			serverPid,
			serverStart,
			title: cells.slice(FIELDS.length - 1).join(SEP),
		});
	}
	return rows;
}

/**
 * tmux re-parses its argv: an argument ending in `;` ends the command (the rest would run as a
 * second tmux command), and `\;` at the end stands for a literal `;`. Every argument we pass
 * goes through this, so user text can never become a tmux command.
 */
export function escapeTmuxArg(arg: string): string {
	return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

/** `-c` and `-n` values are format-expanded (`#S` is the session name): `##` is a literal `#`. */
export function escapeTmuxFormat(text: string): string {
	return text.replaceAll('#', '##');
}

/**
 * tmux runs a one-argument command through `default-shell -c`, and older versions join several
 * arguments with spaces before doing the same — either way the user's argv would be re-parsed by
 * whatever shell the user configured. This wrapper is executed directly (tmux ≥ 3.0 execs a
 * multi-argument command without a shell): `/bin/sh` receives the argv as positional
 * parameters, never as text, and `exec "$@"` replaces itself with exactly that argv, so the
 * pane's pid is the agent's pid.
 */
export function execWrapper(argv: readonly string[]): string[] {
	return ['/bin/sh', '-c', 'exec "$@"', 'sh', ...argv];
}

function isNoServer(result: ExecResult): boolean {
	return /no server running|error connecting to|no current (session|client)|no sessions/i.test(result.stderr);
}

/** How often at most the panes that printed are reported (`output` events): a spinner prints all the time. */
const OUTPUT_EVENT_MS = 250;
/** How soon after a failed attach the control client is tried again. */
const RECONNECT_MS = 2000;
/** The OSC 7501 state report (codex); terminated by BEL or ST. */
const OSC_7501 = /\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)/g;

/** `3.3a` → 3.3; tmux ≥ 3.2 has `attach -f ignore-size`, which a control client needs. */
export function controlCapable(version: string | undefined): boolean {
	const match = /^(\d+)\.(\d+)/.exec(version ?? '');
	if (!match) return false;
	const major = Number(match[1]);
	return major > 3 || (major === 3 && Number(match[2]) >= 2);
}

function firstLine(text: string): string {
	return text.trim().split('\n')[0] ?? '';
}

/**
 * The tmux backend (SPEC 2) over the tmux CLI, argv arrays only. Change detection polls
 * `list-panes` every `pollMs` while someone listens; a listing adds one /proc scan for the
 * process trees and the agent each pane runs (by the adapters' `matchesProcess`).
 */
export class TmuxMux implements Multiplexer {
	readonly kind = 'tmux' as const;
	private readonly options: TmuxMuxOptions;
	private readonly now: () => number;
	private readonly selfPid: number;
	private readonly listeners = new Set<(event: MuxEvent) => void>();
	private readonly closedByUs = new Set<string>();
	private selfIds = new Set<string>();
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
	/** Panes whose output reaches the control client (the windows of the session it is attached to). */
	private watched = new Set<string>();
	/** Watched panes that printed since their screen was last read. */
	private readonly printed = new Set<string>();
	private readonly screens = new Map<string, string>();
	private readonly oscStates = new Map<string, string>();
	/** An unterminated OSC 7501 at the end of a pane's last output, joined with its next. */
	private readonly oscTails = new Map<string, string>();
	private outputTimer: NodeJS.Timeout | undefined;
	private readonly outputPanes = new Set<string>();
	private disposed = false;
	/** What talking to tmux cost so far (the bench and the tests read it). */
	readonly cost = {commands: 0, processes: 0, screenReads: 0};

	constructor(options: TmuxMuxOptions) {
		this.options = options;
		this.now = options.now ?? Date.now;
		this.selfPid = options.selfPid ?? process.pid;
		this.lastHealth = {kind: 'tmux', ok: true, message: `tmux ${this.serverLabel()} (not queried yet)`};
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
		if (this.control?.connected || this.disposed) return;
		if (this.connecting) return this.connecting;
		if (this.now() - this.lastAttachAt < RECONNECT_MS) return;
		this.lastAttachAt = this.now();
		this.connecting = (async () => {
			await this.ensureVersion();
			if (!controlCapable(this.version)) return;
			const control = new TmuxControl({
				bin: this.options.bin ?? 'tmux',
				serverFlags: this.serverFlags(),
				env: this.options.env,
				timeoutMs: this.options.timeoutMs ?? TMUX_TIMEOUT_MS,
				...(this.options.logger ? {logger: this.options.logger} : {}),
				onOutput: (paneId, data) => this.onOutput(paneId, data),
				onLayout: () => {
					if (this.pollTimer) void this.poll();
				},
				onClose: reason => this.onControlClosed(control, reason),
			});
			if (!(await control.connect()) || this.disposed) {
				control.close();
				return;
			}
			this.control = control;
			// What was read before this client watched may be stale: read every screen once again.
			this.screens.clear();
			this.options.logger?.debug('tmux control client attached', control.session);
		})().finally(() => {
			this.connecting = undefined;
		});
		return this.connecting;
	}

	private onControlClosed(control: TmuxControl, reason: string): void {
		if (this.control !== control) return;
		this.control = undefined;
		this.watched = new Set();
		this.options.logger?.debug('tmux control client closed', reason);
		// The server may have restarted: the next poll lists (and re-attaches) at once.
		this.lastAttachAt = Number.NEGATIVE_INFINITY;
		if (this.pollTimer && !this.disposed) this.emit({type: 'changed'});
	}

	/** A watched pane printed: remember it (its screen is read again), and any state report in it. */
	private onOutput(paneId: string, data: Buffer): void {
		// mam-tui's own pane prints whenever the dashboard draws: reporting it would feed a loop.
		if (this.selfIds.has(paneId)) return;
		this.printed.add(paneId);
		const text = (this.oscTails.get(paneId) ?? '') + data.toString('latin1');
		let last: string | undefined;
		for (const match of text.matchAll(OSC_7501)) last = match[1];
		if (last !== undefined) this.oscStates.set(paneId, Buffer.from(last, 'latin1').toString('utf8'));
		const open = text.lastIndexOf('\x1b]7501;');
		const tail = open >= 0 && !/[\x07]|\x1b\\/.test(text.slice(open + 7)) ? text.slice(open, open + 512) : undefined;
		if (tail) this.oscTails.set(paneId, tail);
		else this.oscTails.delete(paneId);
		this.outputPanes.add(paneId);
		if (this.outputTimer || this.listeners.size === 0) return;
		this.outputTimer = setTimeout(() => {
			this.outputTimer = undefined;
			const paneIds = [...this.outputPanes];
			this.outputPanes.clear();
			if (paneIds.length > 0) this.emit({type: 'output', paneIds});
		}, OUTPUT_EVENT_MS);
		this.outputTimer.unref();
	}

	/** Run one tmux command as its own process. */
	private async spawnRun(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<ExecResult> {
		this.cost.processes += 1;
		const result = await this.options.exec(this.options.bin ?? 'tmux', [...this.serverFlags(), ...args].map(escapeTmuxArg), {
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
				this.setHealth(true, `tmux ${this.version}: no ${this.serverLabel()} running yet (a new pane starts it)`);
				return [];
			}
			const message = `tmux list-panes failed: ${firstLine(result.stderr) || `exit code ${result.exitCode}`}`;
			this.setHealth(false, message);
			throw new MuxError(message, 'tmux_error');
		}
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
		for (const map of [this.screens, this.oscStates, this.oscTails]) for (const id of map.keys()) if (!present.has(id)) map.delete(id);
		for (const id of this.printed) if (!present.has(id)) this.printed.delete(id);
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
		const watched = new Set(rows.filter(r => r.session === control.session).map(r => r.id));
		// A pane that just came into view may have changed unseen: read it afresh.
		for (const id of watched) if (!this.watched.has(id)) this.screens.delete(id);
		this.watched = watched;
	}

	/**
	 * The visible screens (`capture-pane -p`), read again only for panes that printed since the
	 * last read, or that the control client does not watch; all reads go out at once.
	 */
	async readScreens(paneIds: readonly string[]): Promise<ReadonlyMap<string, PaneScreen>> {
		for (const id of paneIds) this.checkPaneId(id);
		const watching = this.control?.connected === true;
		const stale = paneIds.filter(id => !watching || !this.watched.has(id) || this.printed.has(id) || !this.screens.has(id));
		// Cleared before reading: output that arrives meanwhile marks the pane again.
		for (const id of stale) this.printed.delete(id);
		this.cost.screenReads += stale.length;
		const reads = await Promise.all(stale.map(id => this.run(['capture-pane', '-p', '-t', id]).catch(() => undefined)));
		stale.forEach((id, i) => {
			const result = reads[i];
			if (result?.exitCode === 0) this.screens.set(id, result.stdout);
			else this.screens.delete(id);
		});
		const out = new Map<string, PaneScreen>();
		for (const id of paneIds) {
			const text = this.screens.get(id);
			const osc = this.oscStates.get(id);
			if (text !== undefined) out.set(id, {text, ...(osc !== undefined ? {osc} : {})});
		}
		return out;
	}

	/** TMUX_PANE is only ours when `$TMUX` names the server we query (ids like %3 repeat across servers). */
	private selfPaneId(socketPath: string | undefined): string | undefined {
		const pane = this.options.env['TMUX_PANE'];
		const ownSocket = this.options.env['TMUX']?.split(',')[0];
		return pane && ownSocket && socketPath && ownSocket === socketPath ? pane : undefined;
	}

	private toPane(row: PaneRow, table: readonly ProcessRef[], self: ReadonlySet<number>): Pane {
		const tree = row.dead || row.pid === 0 ? [] : processTree(table, row.pid);
		const isSelf = row.id === this.selfPaneId(row.socketPath) || (row.pid > 0 && self.has(row.pid));
		const agent = isSelf ? undefined : detectAgent(tree);
		// tmux's default pane title is the host name: only a title an app set says more than the window name.
		const title = row.title && row.title !== hostname() ? row.title : row.windowName;
		return {
			id: row.id,
			mux: 'tmux',
			...(row.cwd ? {cwd: row.cwd} : {}),
			...(title ? {title} : {}),
			...(agent ? {agent} : {}),
			// tmux itself cannot tell working from idle: the status detectors read title and screen (src/sync/liveStatus).
			agentStatus: 'unknown',
			...(row.pid > 0 && !row.dead ? {shellPid: row.pid} : {}),
			processes: tree,
			isSelf,
			...(row.socketPath && row.serverPid ? {server: `tmux:${row.socketPath}:${row.serverPid}:${row.serverStart}`} : {}),
		};
	}

	/** Every pane, from one `list-panes -a` plus one /proc scan. */
	async listPanes(): Promise<readonly Pane[]> {
		const rows = await this.rows();
		const table = await this.options.processes.list();
		const self = lineage(table, this.selfPid);
		const panes = rows.map(row => this.toPane(row, table, self));
		this.selfIds = new Set(panes.filter(p => p.isSelf).map(p => p.id));
		return panes;
	}

	private checkPaneId(paneId: string): void {
		if (typeof paneId !== 'string' || !/^%\d+$/.test(paneId)) {
			throw new MuxError(`invalid tmux pane id ${JSON.stringify(String(paneId).slice(0, 60))} (expected %N)`, 'invalid_pane_id');
		}
	}

	/** Refuse mam-tui's own pane: by TMUX_PANE on the same server, the last listing, or its pid being our ancestor. */
	private async refuseSelf(paneId: string, verb: string): Promise<void> {
		this.checkPaneId(paneId);
		if (this.selfIds.has(paneId)) throw ownPaneError(paneId, verb);
		const out = await this.runOk(['display-message', '-p', '-t', paneId, `#{pane_pid}${SEP}#{socket_path}`], `cannot find pane ${paneId}`);
		const [pid = '', socketPath] = out.trim().split(SEP);
		if (paneId === this.selfPaneId(socketPath)) throw ownPaneError(paneId, verb);
		if (Number(pid) > 0 && (await lineageOf(this.options.processes, this.selfPid)).has(Number(pid))) throw ownPaneError(paneId, verb);
	}

	/** `send-keys -l`: the text literally, no key-name lookup, no Enter. */
	async sendText(paneId: string, text: string): Promise<void> {
		await this.refuseSelf(paneId, 'type into');
		if (text.length === 0) return;
		await this.runOk(['send-keys', '-t', paneId, '-l', '--', text], `send-keys to ${paneId}`);
	}

	/** herdr key names mapped to tmux's (`ctrl+c` to `C-c`), all validated before any is sent. */
	async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
		checkKeys(keys);
		await this.refuseSelf(paneId, 'send keys to');
		if (keys.length === 0) return;
		await this.runOk(['send-keys', '-t', paneId, ...keys.map(toTmuxKey)], `send-keys to ${paneId}`);
	}

	/** `capture-pane -p -J` of the last `lines` lines (wrapped lines joined, no escapes). */
	async readOutput(paneId: string, lines: number): Promise<string> {
		this.checkPaneId(paneId);
		const count = checkLines(lines);
		const text = await this.runOk(['capture-pane', '-p', '-J', '-t', paneId, '-S', `-${count}`], `capture-pane of ${paneId}`);
		return lastLines(text, count);
	}

	/**
	 * A new window (not stealing focus) running `argv` in `cwd` with `env`; with no server or
	 * session yet, a new detached session instead. See `execWrapper` for why argv stays argv.
	 */
	async openPane(request: OpenPaneRequest): Promise<string> {
		checkOpenRequest(request);
		const spec = [
			'-P',
			'-F',
			'#{pane_id}',
			'-c',
			escapeTmuxFormat(request.cwd),
			...Object.entries(request.env ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
			...(request.title ? ['-n', escapeTmuxFormat(request.title)] : []),
			'--',
			...execWrapper(request.argv),
		];
		// tmux gives a new pane the PATH of the client that asked for it, whatever `-e PATH=` says.
		const path = request.env?.['PATH'];
		const clientEnv = path === undefined ? undefined : {PATH: path};
		// Always a process of its own, never through the control client: a new pane takes its
		// environment from the client that asks for it, and the control client's is mam-tui's own.
		let result = await this.spawnRun(['new-window', '-d', ...spec], clientEnv);
		if (result.exitCode !== 0 && isNoServer(result)) result = await this.spawnRun(['new-session', '-d', ...spec], clientEnv);
		const id = result.stdout.trim();
		if (result.exitCode !== 0 || !/^%\d+$/.test(id)) {
			throw new MuxError(`tmux could not open a window: ${firstLine(result.stderr) || 'no pane id returned'}`, 'tmux_error');
		}
		return id;
	}

	/** `kill-pane`: tmux closes the pty, so the pane's processes get SIGHUP. */
	async closePane(paneId: string): Promise<void> {
		await this.refuseSelf(paneId, 'close');
		this.closedByUs.add(paneId);
		try {
			await this.runOk(['kill-pane', '-t', paneId], `kill-pane ${paneId}`);
		} catch (error) {
			this.closedByUs.delete(paneId);
			throw error;
		}
	}

	/** Select the pane's window, then the pane. */
	async focusPane(paneId: string): Promise<void> {
		this.checkPaneId(paneId);
		await this.runOk(['select-window', '-t', paneId], `select-window ${paneId}`);
		await this.runOk(['select-pane', '-t', paneId], `select-pane ${paneId}`);
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

	/** One poll: compare each pane's signature with the last poll's and report the differences. */
	private async poll(): Promise<void> {
		if (this.polling) return;
		this.polling = true;
		try {
			const rows = await this.rows();
			const now = new Map(rows.map(r => [r.id, [r.pid, r.dead, r.command, r.cwd, r.windowName, r.title].join(SEP)]));
			const before = this.seen;
			this.seen = now;
			if (!before || this.listeners.size === 0) return;
			let changed = false;
			for (const [id, signature] of now) {
				if (!before.has(id)) this.emit({type: 'pane-created', paneId: id});
				else if (before.get(id) !== signature) changed = true;
			}
			for (const id of before.keys()) {
				if (now.has(id)) continue;
				// tmux cannot say why a pane went; if we did not close it, its process ended.
				this.emit({type: this.closedByUs.delete(id) ? 'pane-closed' : 'pane-exited', paneId: id});
			}
			if (changed) this.emit({type: 'changed'});
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
		clearTimeout(this.outputTimer);
		await this.connecting;
		this.control?.close('disposed');
		this.control = undefined;
	}
}

export function createTmuxMux(options: TmuxMuxOptions): TmuxMux {
	return new TmuxMux(options);
}
