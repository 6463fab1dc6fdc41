import type {ParseArgsConfig} from 'node:util';
import type {ExitCode} from '../domain/exitCodes.js';
import type {World} from '../world/world.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export type ParsedValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** One subcommand: its usage line, its own options, and what it does. */
export interface Command {
	readonly name: string;
	readonly summary: string;
	/** Shown in `mam-tui <name> --help` and in the usage text. */
	readonly usage: string;
	readonly options: OptionSpec;
	/** Most commands take none; those that do name them in `usage`. */
	readonly positionals?: {readonly min: number; readonly max: number};
	run(world: World, values: ParsedValues, positionals: readonly string[]): Promise<ExitCode>;
}
