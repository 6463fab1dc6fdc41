import {createRequire} from 'node:module';
import {execa, type ResultPromise} from 'execa';
import {CLI} from '../../helpers/cli.js';

export {CLI};

/** Where better-sqlite3 lives, for scripts the tests generate outside the repository. */
export const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

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

/** `node dist/src/cli.js ...args` without a terminal; the caller may kill it (by its own handle). */
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
