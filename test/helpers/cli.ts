import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {execa, type ResultPromise} from 'execa';

/** The built CLI as users run it (package.json bin; npm test builds first): tests run it as a child process. */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/bin/cli.js');

/** Where better-sqlite3 lives, for scripts the tests generate outside the repository. */
export const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

export interface CliRun {
	readonly exitCode: number;
	readonly stdout: string;
	readonly stderr: string;
}

/**
 * A private tmux socket folder for every CLI this test process starts: `--mux auto` falls back to
 * tmux, and it must never reach the user's default server.
 */
const tmuxTmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-cli-tmux-'));
process.on('exit', () => fs.rmSync(tmuxTmpdir, {recursive: true, force: true}));

/**
 * Run `mam-tui ...args` with a clean env plus `env`; never inherits the user's MAM_HOME, HOME,
 * herdr socket or tmux server.
 */
export async function runCli(args: readonly string[], env: Record<string, string>, options: {input?: string; timeoutMs?: number} = {}): Promise<CliRun> {
	// A test that names its private server (--tmux-socket/--tmux-path) keeps tmux's socket folder;
	// any other run gets an empty one, so `--mux auto` finds no default server to fall back to.
	const namesServer = args.some(a => a === '--tmux-socket' || a === '--tmux-path' || a.startsWith('--tmux-'));
	const base: Record<string, string> = {PATH: process.env['PATH'] ?? '/usr/bin:/bin', NO_COLOR: '1', ...(namesServer ? {} : {TMUX_TMPDIR: tmuxTmpdir})};
	// The bin file itself, as a shell starts it: its sh launcher, then node (src/cli/launcher.ts).
	const result = await execa(CLI, [...args], {
		env: {...base, ...env},
		extendEnv: false,
		reject: false,
		input: options.input ?? '',
		timeout: options.timeoutMs ?? 30_000,
	});
	return {exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr)};
}

export interface BuiltCliOptions {
	/** The whole environment of the child (nothing is inherited). */
	readonly env: Readonly<Record<string, string>>;
	/** Working directory (relative paths in arguments land here). */
	readonly cwd: string;
	/** A module node preloads with --import (the crash hook). */
	readonly preload?: string;
	readonly timeoutMs?: number;
}

export type CliChild = ResultPromise<{reject: false; extendEnv: false; stdin: 'ignore'}>;

/**
 * `node dist/bin/cli.js ...args` without a terminal, not awaited: the caller may kill it (by its
 * own handle) half-way, or preload a module into it. Node is named so `--import` reaches it.
 */
export function builtCli(args: readonly string[], options: BuiltCliOptions): CliChild {
	return execa('node', [...(options.preload ? ['--import', options.preload] : []), CLI, ...args], {
		env: {...options.env},
		extendEnv: false,
		reject: false,
		stdin: 'ignore',
		cwd: options.cwd,
		timeout: options.timeoutMs ?? 60_000,
	}) as CliChild;
}

/** A base environment for the CLI: system PATH, UTF-8, no colour, a private HOME and state dir. */
export function cliEnv(home: string, stateDir: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
	return {
		PATH: process.env['PATH'] ?? '/usr/bin:/bin',
		HOME: home,
		MAM_HOME: stateDir,
		LANG: 'C.UTF-8',
		NO_COLOR: '1',
		...extra,
	};
}
