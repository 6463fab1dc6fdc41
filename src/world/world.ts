import os from 'node:os';
import path from 'node:path';
import type {AdapterContext} from '../adapters/types.js';
import type {MuxChoice} from '../domain/types.js';
import {loadConfig, type Config} from '../config/config.js';
import {configPath, registryPath, stateDir} from '../registry/paths.js';
import {Registry} from '../registry/registry.js';
import {realExec, type Exec} from '../system/exec.js';
import {createFileLogger, type Logger} from '../system/logger.js';
import {createProcessTable, type ProcessTable} from '../system/processes.js';
import {ParseCache} from '../adapters/common/refresh.js';
import {ParseMemo, parseMemoPath} from '../system/parseMemo.js';
import {packageVersion} from '../system/version.js';

/** The options every command accepts. */
export interface GlobalOptions {
	readonly mux?: MuxChoice;
	/** `--tmux-socket NAME`: the tmux server `tmux -L NAME` talks to. */
	readonly tmuxSocket?: string;
	/** `--tmux-path PATH`: the tmux server socket `tmux -S PATH` talks to. */
	readonly tmuxPath?: string;
	readonly registry?: string;
	readonly home?: string;
	/** `--host NAME`: run the command on that configured host (src/config/hosts.ts); absent or `local`: here. */
	readonly host?: string;
	readonly json: boolean;
	readonly verbose: boolean;
}

/** What a command runs against: built once per process, closed on exit. */
export interface World {
	readonly options: GlobalOptions;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly config: Config;
	readonly logger: Logger;
	readonly registryPath: string;
	readonly stateDir: string;
	readonly exec: Exec;
	readonly processes: ProcessTable;
	readonly now: () => number;
	/** Opens the registry on first use (a command that never needs it never creates it). */
	registry(): Registry;
	adapterContext(): AdapterContext;
	close(): void;
}

/** The user's own home: $HOME, else the OS answer. */
function ownHomeDir(env: Readonly<Record<string, string | undefined>>): string {
	return path.resolve(env['HOME'] || os.homedir());
}

/** `--home`, else `$HOME_DIR`, else `$HOME` (SPEC 4.2). */
export function dataHome(option: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
	return path.resolve(option || env['HOME_DIR'] || ownHomeDir(env));
}

export function createWorld(options: GlobalOptions, env: Readonly<Record<string, string | undefined>> = process.env): World {
	const home = ownHomeDir(env);
	const pathEnv = {env, home};
	const config = loadConfig(configPath(pathEnv));
	const dir = stateDir(pathEnv);
	const regPath = registryPath(options.registry, pathEnv);
	const logger = createFileLogger(path.join(dir, 'mam-tui.log'), options.verbose ? 'debug' : 'info');
	const processes = createProcessTable();
	let registry: Registry | undefined;
	const agentHome = dataHome(options.home, env);
	// One parse cache for the process: the dashboard's refreshes, its conversations view and its
	// actions; what it parsed is kept under the state dir for the next start (src/system/parseMemo.ts).
	const parses = new ParseCache(new ParseMemo(parseMemoPath(dir), {appVersion: packageVersion(), log: logger}));
	return {
		options,
		env,
		config,
		logger,
		registryPath: regPath,
		stateDir: dir,
		exec: realExec,
		processes,
		now: Date.now,
		registry() {
			registry ??= Registry.open(regPath);
			return registry;
		},
		adapterContext() {
			return {
				parses,
				home: agentHome,
				ownHome: agentHome === home,
				env,
				exec: realExec,
				processes,
				now: Date.now,
				tmpDir: os.tmpdir(),
			};
		},
		close() {
			// The last batch of parses goes to disk after the command's answer is out.
			parses.close();
			registry?.close();
		},
	};
}
