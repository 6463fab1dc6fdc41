import {hostname} from 'node:os';
import type {Pane, ProcessRef} from '../domain/types.js';
import type {ExecResult} from '../system/exec.js';
import {processTree} from '../system/processes.js';
import {ADAPTERS} from '../adapters/index.js';
import {treeAgent} from '../domain/paneAgent.js';

// What the tmux backend says to tmux and how it reads the answers: the `list-panes` format and
// its rows, argument escaping, and a row as mam-tui's Pane. Pure: tmux.ts does the talking.

/** tmux answers locally and at once; a command hanging this long means the server is stuck. */
export const TMUX_TIMEOUT_MS = 5000;

/** The unit separator cannot appear in ids, pids or paths we care about, and tmux passes it through. */
export const SEP = '\x1f';

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
export const FORMAT = FIELDS.map(f => `#{${f}}`).join(SEP);

export interface PaneRow {
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
		const [
			id = '',
			pid = '',
			dead = '',
			command = '',
			cwd = '',
			session = '',
			sessionId = '',
			windowIndex = '',
			windowName = '',
			socketPath = '',
			serverPid = '',
			serverStart = '',
		] = cells;
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

/**
 * The output of a `;` list of `display-message -p MARKER+key` and `capture-pane -p` pairs: each
 * key's screen as its own capture printed it, in the order read.
 */
export function splitScreens(stdout: string, marker: string): ReadonlyMap<string, string> {
	const screens = new Map<string, string>();
	let key: string | undefined;
	let lines: string[] = [];
	const flush = () => {
		if (key !== undefined) screens.set(key, lines.map(line => `${line}\n`).join(''));
	};
	const all = stdout.split('\n');
	// The text ends with a newline: the last piece is empty, not a line.
	if (all.at(-1) === '') all.pop();
	for (const line of all) {
		if (line.startsWith(marker)) {
			flush();
			key = line.slice(marker.length);
			lines = [];
		} else if (key !== undefined) lines.push(line);
	}
	flush();
	return screens;
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

export function isNoServer(result: ExecResult): boolean {
	return /no server running|error connecting to|no current (session|client)|no sessions/i.test(result.stderr);
}

/** `3.3a` → 3.3; tmux ≥ 3.2 has `attach -f ignore-size`, which a control client needs. */
export function controlCapable(version: string | undefined): boolean {
	const match = /^(\d+)\.(\d+)/.exec(version ?? '');
	if (!match) return false;
	const major = Number(match[1]);
	return major > 3 || (major === 3 && Number(match[2]) >= 2);
}

export function firstLine(text: string): string {
	return text.trim().split('\n')[0] ?? '';
}

/**
 * TMUX_PANE names mam-tui's own pane only when `$TMUX` names the server we query (ids like %3
 * repeat across servers).
 */
export function selfPaneIdIn(env: Readonly<Record<string, string | undefined>>, socketPath: string | undefined): string | undefined {
	const pane = env['TMUX_PANE'];
	const ownSocket = env['TMUX']?.split(',')[0];
	return pane && ownSocket && socketPath && ownSocket === socketPath ? pane : undefined;
}

/** One `list-panes` row with its process tree: `self` is mam-tui's pid and its ancestors. */
export function toPane(row: PaneRow, table: readonly ProcessRef[], self: ReadonlySet<number>, env: Readonly<Record<string, string | undefined>>): Pane {
	const tree = row.dead || row.pid === 0 ? [] : processTree(table, row.pid);
	const isSelf = row.id === selfPaneIdIn(env, row.socketPath) || (row.pid > 0 && self.has(row.pid));
	const agent = isSelf ? undefined : treeAgent(tree, ADAPTERS);
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
		...(row.session ? {placement: {session: row.session, ...(row.windowIndex ? {window: row.windowIndex} : {})}} : {}),
		...(row.socketPath && row.serverPid ? {server: `tmux:${row.socketPath}:${row.serverPid}:${row.serverStart}`} : {}),
	};
}
