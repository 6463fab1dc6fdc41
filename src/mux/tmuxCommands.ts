import type {ExecResult} from '../system/exec.js';
import type {ProcessTable} from '../system/processes.js';
import {lineageOf} from './detect.js';
import {toTmuxKey} from './keys.js';
import {escapeTmuxFormat, execWrapper, firstLine, isNoServer, selfPaneIdIn, SEP} from './tmuxArgs.js';
import {MuxError, type OpenPaneRequest} from './types.js';
import {checkKeys, checkLines, checkOpenRequest, lastLines, ownPaneError} from './validate.js';

// The tmux backend's commands: type, send keys, read, open, close, focus. Each refuses
// mam-tui's own pane first; every argument goes through escapeTmuxArg (in the runner).

/** A pane id as tmux prints it (`%N`), or a MuxError. */
export function checkTmuxPaneId(paneId: string): void {
	if (typeof paneId !== 'string' || !/^%\d+$/.test(paneId)) {
		throw new MuxError(`invalid tmux pane id ${JSON.stringify(String(paneId).slice(0, 60))} (expected %N)`, 'invalid_pane_id');
	}
}

/** How the commands reach tmux, and what they know of mam-tui's own pane. */
export interface TmuxRunner {
	/** Run and require success; the message is tmux's own first stderr line. */
	runOk(args: readonly string[], what: string): Promise<string>;
	/** Run as a process of its own (never through the control client), with a client environment. */
	spawnRun(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<ExecResult>;
	/** mam-tui's own panes in the last listing. */
	selfIds(): ReadonlySet<string>;
	/** Panes closed from here: their disappearance is `pane-closed`, not `pane-exited`. */
	readonly closedByUs: Set<string>;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly processes: ProcessTable;
	readonly selfPid: number;
}

export class TmuxCommands {
	private readonly tmux: TmuxRunner;

	constructor(tmux: TmuxRunner) {
		this.tmux = tmux;
	}

	/** Refuse mam-tui's own pane: by TMUX_PANE on the same server, the last listing, or its pid being our ancestor. */
	async refuseSelf(paneId: string, verb: string): Promise<void> {
		checkTmuxPaneId(paneId);
		if (this.tmux.selfIds().has(paneId)) throw ownPaneError(paneId, verb);
		const out = await this.tmux.runOk(['display-message', '-p', '-t', paneId, `#{pane_pid}${SEP}#{socket_path}`], `cannot find pane ${paneId}`);
		const [pid = '', socketPath] = out.trim().split(SEP);
		if (paneId === selfPaneIdIn(this.tmux.env, socketPath)) throw ownPaneError(paneId, verb);
		if (Number(pid) > 0 && (await lineageOf(this.tmux.processes, this.tmux.selfPid)).has(Number(pid))) throw ownPaneError(paneId, verb);
	}

	/** `send-keys -l`: the text literally, no key-name lookup, no Enter. */
	async sendText(paneId: string, text: string): Promise<void> {
		await this.refuseSelf(paneId, 'type into');
		if (text.length === 0) return;
		await this.tmux.runOk(['send-keys', '-t', paneId, '-l', '--', text], `send-keys to ${paneId}`);
	}

	/** herdr key names mapped to tmux's (`ctrl+c` to `C-c`), all validated before any is sent. */
	async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
		checkKeys(keys);
		await this.refuseSelf(paneId, 'send keys to');
		if (keys.length === 0) return;
		await this.tmux.runOk(['send-keys', '-t', paneId, ...keys.map(toTmuxKey)], `send-keys to ${paneId}`);
	}

	/** `capture-pane -p -J` of the last `lines` lines (wrapped lines joined, no escapes). */
	async readOutput(paneId: string, lines: number): Promise<string> {
		checkTmuxPaneId(paneId);
		const count = checkLines(lines);
		const text = await this.tmux.runOk(['capture-pane', '-p', '-J', '-t', paneId, '-S', `-${count}`], `capture-pane of ${paneId}`);
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
		// A wake goes back to its session (`=` matches the name exactly); a session gone since, as usual.
		// A name holding `:` or `.` cannot be written as a target; such a wake opens where it would anyway.
		const session = request.placement?.session;
		const target = session && !/[:.]/.test(session) ? `=${session}:` : undefined;
		let result = target ? await this.tmux.spawnRun(['new-window', '-d', '-t', target, ...spec], clientEnv) : undefined;
		if (!result || result.exitCode !== 0) result = await this.tmux.spawnRun(['new-window', '-d', ...spec], clientEnv);
		if (result.exitCode !== 0 && isNoServer(result)) result = await this.tmux.spawnRun(['new-session', '-d', ...spec], clientEnv);
		const id = result.stdout.trim();
		if (result.exitCode !== 0 || !/^%\d+$/.test(id)) {
			throw new MuxError(`tmux could not open a window: ${firstLine(result.stderr) || 'no pane id returned'}`, 'tmux_error');
		}
		return id;
	}

	/** `kill-pane`: tmux closes the pty, so the pane's processes get SIGHUP. */
	async closePane(paneId: string): Promise<void> {
		await this.refuseSelf(paneId, 'close');
		this.tmux.closedByUs.add(paneId);
		try {
			await this.tmux.runOk(['kill-pane', '-t', paneId], `kill-pane ${paneId}`);
		} catch (error) {
			this.tmux.closedByUs.delete(paneId);
			throw error;
		}
	}

	/**
	 * The active pane of each attached client's current window. Control-mode clients (mam-tui's
	 * own, an editor's) show nothing to a person and are left out. No server: nobody looks.
	 */
	async focusedPanes(): Promise<ReadonlySet<string>> {
		const result = await this.tmux.spawnRun(['list-clients', '-F', `#{client_control_mode}${SEP}#{pane_id}`]);
		if (result.exitCode !== 0) {
			if (isNoServer(result)) return new Set();
			throw new MuxError(`tmux could not list its clients: ${firstLine(result.stderr)}`, 'tmux_error');
		}
		const out = new Set<string>();
		for (const line of result.stdout.split('\n')) {
			const [control, pane = ''] = line.split(SEP);
			if (control === '0' && /^%\d+$/.test(pane)) out.add(pane);
		}
		return out;
	}

	/** Select the pane's window, then the pane. */
	async focusPane(paneId: string): Promise<void> {
		checkTmuxPaneId(paneId);
		await this.tmux.runOk(['select-window', '-t', paneId], `select-window ${paneId}`);
		await this.tmux.runOk(['select-pane', '-t', paneId], `select-pane ${paneId}`);
	}
}
