import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';

// Which program a process runs, for `matchesProcess` and for telling an agent's background
// service apart (inUse.ts finds the processes; this decides what they are).

const RUNTIMES = /^(?:node|nodejs|bun|deno|python[0-9.]*)$/;

/** Index of the program word in argv: argv[0], or the script a runtime such as `node` runs. */
function programIndex(argv: readonly string[]): number {
	if (!RUNTIMES.test(path.basename(argv[0] ?? ''))) return 0;
	const script = argv.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
	return script < 0 ? 0 : script;
}

/**
 * True when the process is one of `names`: its comm, its argv[0], or — for a runtime such as
 * `node` or `python3` — the script it runs (`node --flag /usr/bin/gemini …`). Later words never
 * count, so `mam-tui stop gemini` is not a gemini process.
 */
export function runsProgram(proc: Pick<ProcessRef, 'name' | 'argv'>, names: readonly string[]): boolean {
	if (names.includes(proc.name)) return true;
	return names.includes(path.basename(proc.argv[programIndex(proc.argv)] ?? ''));
}

/** The first word after the program (`gateway` in `hermes gateway run`), if any. */
export function subcommand(argv: readonly string[]): string | undefined {
	return argv.slice(programIndex(argv) + 1).find(arg => !arg.startsWith('-'));
}
