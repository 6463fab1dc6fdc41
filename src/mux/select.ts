import os from 'node:os';
import path from 'node:path';
import type {Exec} from '../system/exec.js';
import type {Logger} from '../system/logger.js';
import type {ProcessTable} from '../system/processes.js';
import {HerdrClient, resolveHerdrSocket} from './herdr/client.js';
import {createHerdrMux, HERDR_CAN} from './herdr/index.js';
import {fileShellCache, type ShellCache} from './herdr/shellCache.js';
import {parsePong} from './herdr/wire.js';
import {createTmuxMux, type TmuxServer} from './tmux.js';
import {MuxError, type Multiplexer} from './types.js';
import {messageOf} from '../domain/result.js';
import type {MuxChoice} from '../domain/types.js';

export type {MuxChoice};

/** What picking and building a backend needs (a World provides all of it). */
export interface MuxDeps {
	readonly choice: MuxChoice;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly exec: Exec;
	readonly processes: ProcessTable;
	readonly pollMs: number;
	/** tmux through one control-mode client (see `MuxUse.live`). */
	readonly control?: boolean;
	readonly tmux?: TmuxServer;
	readonly logger?: Logger;
	readonly now?: () => number;
	/** How long `auto` waits for herdr's pong before settling on tmux (ms). */
	readonly probeTimeoutMs?: number;
	/** herdr shell pids kept between processes (see ShellCache). */
	readonly shellCache?: ShellCache;
	readonly readShellCache?: boolean;
}

/** What `selectMuxFor` reads from a command's world (src/world/world.ts, which sits above the mux). */
export interface MuxWorld {
	readonly options: {readonly mux?: MuxChoice; readonly tmuxSocket?: string; readonly tmuxPath?: string};
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly exec: Exec;
	readonly processes: ProcessTable;
	readonly config: {readonly refresh: {readonly pollMs: number}; readonly tmux: {readonly control: boolean}};
	readonly logger: Logger;
	readonly now: () => number;
	readonly stateDir: string;
}

/** herdr answers ping from memory; if it has not in a second, it is not the backend to use. */
const PROBE_TIMEOUT_MS = 1000;

/** The socket herdr's CLI would use, or the reason there is none (a bad HERDR_SESSION). */
export function herdrSocketFor(env: Readonly<Record<string, string | undefined>>): {socketPath: string} | {error: string} {
	try {
		return {socketPath: resolveHerdrSocket(env, path.resolve(env['HOME'] || os.homedir()))};
	} catch (error) {
		return {error: messageOf(error)};
	}
}

/** Does a herdr server answer `ping` on `socketPath`? (Any protocol: a mismatch is reported by the backend's health.) */
export async function herdrAnswers(socketPath: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
	try {
		parsePong(await new HerdrClient(socketPath, timeoutMs).request('ping'));
		return true;
	} catch {
		return false;
	}
}

/** A backend that cannot even be built (bad HERDR_SESSION): every call fails with the reason. */
function brokenHerdr(message: string): Multiplexer {
	const fail = async (): Promise<never> => {
		throw new MuxError(message, 'invalid_session');
	};
	return {
		kind: 'herdr',
		can: HERDR_CAN,
		listPanes: fail,
		subscribe: () => () => {},
		sendText: fail,
		sendKeys: fail,
		readOutput: fail,
		openPane: fail,
		closePane: fail,
		focusedPanes: fail,
		focusPane: fail,
		health: () => ({kind: 'herdr', ok: false, message}),
		dispose: async () => {},
	};
}

/**
 * `--mux herdr|tmux|auto` (SPEC 2): `auto` is herdr when its socket answers `ping`, else tmux.
 * An explicit choice is honoured even when that backend is down: its health says why.
 */
export async function selectMux(deps: MuxDeps): Promise<Multiplexer> {
	const herdr = herdrSocketFor(deps.env);
	const useHerdr = deps.choice === 'herdr' || (deps.choice === 'auto' && 'socketPath' in herdr && (await herdrAnswers(herdr.socketPath, deps.probeTimeoutMs)));
	if (useHerdr) {
		if ('error' in herdr) return brokenHerdr(herdr.error);
		return createHerdrMux({
			socketPath: herdr.socketPath,
			env: deps.env,
			processes: deps.processes,
			...(deps.logger ? {logger: deps.logger} : {}),
			...(deps.now ? {now: deps.now} : {}),
			...(deps.shellCache ? {shellCache: deps.shellCache, readShellCache: deps.readShellCache === true} : {}),
		});
	}
	return createTmuxMux({
		server: deps.tmux ?? {},
		exec: deps.exec,
		processes: deps.processes,
		env: deps.env,
		pollMs: deps.pollMs,
		control: deps.control === true,
		...(deps.logger ? {logger: deps.logger} : {}),
		...(deps.now ? {now: deps.now} : {}),
	});
}

/** How a command uses its backend. */
export interface MuxUse {
	/** Only `status` reads the herdr shells back (it changes nothing), so a stop or a purge always asks herdr itself. */
	readonly readShellCache?: boolean;
	/**
	 * The command runs until stopped (the dashboard, `serve`): tmux talks through one control-mode
	 * client for its lifetime. A one-shot command runs a process per tmux command instead and
	 * never attaches: tmux before 3.7 can crash its server when a notification meets a control
	 * client half-way through attaching (tmux PR 4980), so attaches are kept to one per dashboard
	 * (none with `tmux.control: false` in the config).
	 */
	readonly live?: boolean;
}

/**
 * The backend a command asked for with `--mux`, `--tmux-socket` and `--tmux-path`. Every backend
 * saves the herdr shells it learns.
 */
export function selectMuxFor(world: MuxWorld, options: MuxUse = {}): Promise<Multiplexer> {
	const {tmuxSocket, tmuxPath} = world.options;
	return selectMux({
		choice: world.options.mux ?? 'auto',
		env: world.env,
		exec: world.exec,
		processes: world.processes,
		pollMs: world.config.refresh.pollMs,
		tmux: {...(tmuxSocket ? {socketName: tmuxSocket} : {}), ...(tmuxPath ? {socketPath: tmuxPath} : {})},
		logger: world.logger,
		now: world.now,
		shellCache: fileShellCache(path.join(world.stateDir, 'herdr-shells.json'), world.logger),
		readShellCache: options.readShellCache === true,
		control: options.live === true && world.config.tmux.control,
	});
}
