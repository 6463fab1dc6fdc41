import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {eventually} from '../../helpers/poll.js';
import {privateTmux, type TmuxRun} from '../../helpers/tmux.js';

// The built CLI as users run it: the end-to-end tests drive the real product.
export {CLI} from '../../helpers/cli.js';
/** The built stand-in agent, the one `mam-tui demo` installs. */
export const BUILT_STANDIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/src/demo/standin.js');

/** Every dashboard in these tests runs at this size. */
export const COLUMNS = 120;
export const ROWS = 40;

/**
 * A private tmux server for one test file (`tmux -L mam-e2e-<random>`), with its own socket folder
 * (TMUX_TMPDIR) and an environment given in full: nothing of the user's tmux, herdr or home leaks in.
 */
export class E2eTmux {
	readonly name: string;
	readonly env: Readonly<Record<string, string>>;

	/** `name` defaults to a fresh `mam-e2e-<random>`; pass another to look at a server someone else started. */
	constructor(env: Readonly<Record<string, string>>, name = `mam-e2e-${crypto.randomBytes(4).toString('hex')}`) {
		this.env = env;
		this.name = name;
	}

	/** `tmux -L <name> ...args` with exactly `env` (`path` overrides PATH: tmux gives a new pane the client's PATH). */
	run(args: readonly string[], pathOverride?: string): Promise<TmuxRun> {
		return privateTmux('mam-e2e', this.name, this.env).run(args, pathOverride);
	}

	async runOk(args: readonly string[], pathOverride?: string): Promise<string> {
		const result = await this.run(args, pathOverride);
		if (result.exitCode !== 0) throw new Error(`tmux ${args.join(' ')}: ${result.stderr}`);
		return result.stdout;
	}

	/** Start the server with an idle base window of COLUMNS×ROWS; dead panes stay so their last screen can be read. */
	async start(): Promise<void> {
		await this.runOk(['new-session', '-d', '-s', 'e2e', '-n', 'base', '-x', String(COLUMNS), '-y', String(ROWS), 'sleep', '100000']);
		await this.runOk(['set-option', '-g', 'remain-on-exit', 'on']);
	}

	/** A new window running `argv` directly (no shell), in `cwd`, with extra `env`; returns its pane id. */
	async openWindow(title: string, argv: readonly string[], options: {cwd: string; env?: Readonly<Record<string, string>>; path?: string}): Promise<string> {
		const env = Object.entries(options.env ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
		const out = await this.runOk(['new-window', '-d', '-P', '-F', '#{pane_id}', '-n', title, '-c', options.cwd, ...env, '--', ...argv], options.path);
		return out.trim();
	}

	/** The pid of the pane's root process (its command, since windows run argv directly). */
	async panePid(paneId: string): Promise<number> {
		return Number((await this.runOk(['display-message', '-p', '-t', paneId, '#{pane_pid}'])).trim());
	}

	/** `{dead, status, signal}` of a pane (remain-on-exit keeps a finished one). */
	async paneState(paneId: string): Promise<{dead: boolean; status: number | undefined; signal: number | undefined}> {
		const [dead, status, signal] = (await this.runOk(['display-message', '-p', '-t', paneId, '#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}']))
			.trim()
			.split('|');
		return {dead: dead === '1', status: status ? Number(status) : undefined, signal: signal ? Number(signal) : undefined};
	}

	/**
	 * Wait until the pane's command has ended and tmux has its exit status (tmux sees the pty
	 * close before it reaps the process); returns the status, or 128 + the signal.
	 *
	 * A pane that is dead without a status gets the server a SIGCHLD of its own: tmux below 3.5
	 * built with libutempter (Debian's 3.3a here) runs utempter's helper when the pty closes, and a
	 * SIGCHLD that lands while utempter's handler is in place never reaches tmux (tmux/tmux#311,
	 * #4559), so the pane's process stays an unreaped zombie and the status never comes. Seen here
	 * in 8 of 30 hand trials of the demo under SIGTERM; the nudge is what tmux's author suggests.
	 */
	async waitExit(paneId: string, timeoutMs = 30_000): Promise<number> {
		return eventually(
			`pane ${paneId} to exit`,
			async () => {
				const state = await this.paneState(paneId);
				if (!state.dead) return undefined;
				const code = state.status ?? (state.signal === undefined ? undefined : 128 + state.signal);
				if (code === undefined) await this.nudgeReaper();
				return code;
			},
			{timeoutMs: timeoutMs},
		);
	}

	/** Make the server run its waitpid loop again (see waitExit). */
	private async nudgeReaper(): Promise<void> {
		const pid = Number((await this.runOk(['display-message', '-p', '#{pid}'])).trim());
		if (Number.isInteger(pid) && pid > 1) process.kill(pid, 'SIGCHLD');
	}

	screen(paneId: string): Screen {
		return new Screen(this, paneId);
	}

	async kill(): Promise<void> {
		await this.run(['kill-server']);
	}
}

/** What a pane shows, and keys typed into it with send-keys. */
export class Screen {
	private readonly tmux: E2eTmux;
	readonly paneId: string;

	constructor(tmux: E2eTmux, paneId: string) {
		this.tmux = tmux;
		this.paneId = paneId;
	}

	/** The visible screen plus `history` lines of scrollback; `joined` undoes the terminal's wrapping of long lines. */
	async text(history = 0, joined = false): Promise<string> {
		return this.tmux.runOk(['capture-pane', '-p', ...(joined ? ['-J'] : []), '-t', this.paneId, ...(history > 0 ? ['-S', `-${history}`] : [])]);
	}

	/**
	 * The primary screen while the dashboard holds the alternate one (`capture-pane -a`): what the
	 * shell showed before, which the dashboard must leave alone. Fails when no alternate screen is on.
	 */
	async primary(joined = false): Promise<string> {
		return this.tmux.runOk(['capture-pane', '-p', '-a', ...(joined ? ['-J'] : []), '-t', this.paneId]);
	}

	/** tmux's flags for the pane: the alternate screen on, the cursor shown. */
	async modes(): Promise<{alternate: boolean; cursorShown: boolean}> {
		const [alternate, cursor] = (await this.tmux.runOk(['display-message', '-p', '-t', this.paneId, '#{alternate_on} #{cursor_flag}'])).trim().split(' ');
		return {alternate: alternate === '1', cursorShown: cursor === '1'};
	}

	/**
	 * Wait until the visible screen (plus `history` lines of scrollback) matches; returns it. The
	 * error shows the last screen seen.
	 */
	async waitFor(pattern: RegExp | string | ((screen: string) => boolean), what: string, options: {timeoutMs?: number; history?: number} = {}): Promise<string> {
		const matches = (screen: string) =>
			typeof pattern === 'string' ? screen.includes(pattern) : pattern instanceof RegExp ? pattern.test(screen) : pattern(screen);
		let last = '';
		try {
			return await eventually(
				what,
				async () => {
					last = await this.text(options.history ?? 0);
					return matches(last) ? last : undefined;
				},
				{timeoutMs: options.timeoutMs ?? 30_000},
			);
		} catch (error) {
			throw new Error(`${(error as Error).message}\n--- last screen ---\n${last}`);
		}
	}

	/** Named keys (`Enter`, `Escape`, `Tab`, `C-c`) or single characters. */
	async press(...keys: string[]): Promise<void> {
		for (const key of keys) await this.tmux.runOk(['send-keys', '-t', this.paneId, key]);
	}

	/** Literal text. */
	async type(text: string): Promise<void> {
		await this.tmux.runOk(['send-keys', '-t', this.paneId, '-l', text]);
	}

	/**
	 * Select one session row by filtering on its name: `/`, esc (clears an old filter), `/`, the
	 * name, enter; waits for each step on screen so no key lands in the wrong mode.
	 */
	async selectSession(name: string): Promise<void> {
		await this.press('/');
		await this.waitFor(/filter: .*▏/, 'the filter prompt');
		await this.press('Escape');
		await this.waitFor(s => !s.includes('filter:'), 'the filter to clear');
		await this.press('/');
		await this.waitFor(/filter: .*▏/, 'the filter prompt');
		await this.type(name);
		await this.press('Enter');
		await this.waitFor(selectedRow(name), `${name} selected`);
	}
}

/**
 * The session table's cursor row for `name`: `>`, the mark column (`*`), the finding column (`!`),
 * `local` in the HOST column when hosts are configured (the demo has one), the name.
 */
export function selectedRow(name: string): RegExp {
	return new RegExp(`^>[ *][ !](?:local +)?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s`, 'm');
}

/** Is the process `pid` with this start time still running (a zombie counts as gone)? */
export function alive(pid: number, startTime: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return fields[0] !== 'Z' && Number(fields[19]) === startTime;
	} catch {
		return false;
	}
}

/** Start time (field 22 of /proc/<pid>/stat) of a live process. */
export function startTimeOf(pid: number): number {
	const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** Live (non-zombie) processes whose command line mentions `dir`, or whose cwd is inside it (a plain shell in a pane). */
export function processesWithin(dir: string): Array<{pid: number; startTime: number; cmdline: string}> {
	const found: Array<{pid: number; startTime: number; cmdline: string}> = [];
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) continue;
		const pid = Number(name);
		if (pid === process.pid) continue;
		try {
			const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
			let cwd = '';
			try {
				cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
			} catch {
				// not ours to read
			}
			if (!cmdline.includes(dir) && !cwd.startsWith(`${dir}/`) && cwd !== dir) continue;
			const startTime = startTimeOf(pid);
			if (alive(pid, startTime)) found.push({pid, startTime, cmdline});
		} catch {
			// gone meanwhile
		}
	}
	return found;
}
