import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';

// Which program a process runs, for every adapter's `matchesProcess` and for telling an agent's
// background service apart (inUse.ts finds the processes; this decides what they are). THE rule:
// a process is an agent when its comm, its argv[0], or — for a runtime such as `node` or
// `python3` — the script it runs is the agent's program. Any later word is an argument: `vim
// codex`, `less claude`, `tail -f hermes.log` and `mam-tui stop gemini` are not agents.

const RUNTIMES = /^(?:node|nodejs|bun|deno|python[0-9.]*)$/;

/** Index of the program word in argv: argv[0], or the script a runtime such as `node` runs. */
function programIndex(argv: readonly string[]): number {
	if (!RUNTIMES.test(path.basename(argv[0] ?? ''))) return 0;
	const script = argv.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
	return script < 0 ? 0 : script;
}

/** The program word itself (argv[0], or the script a runtime runs), as written; '' for an empty argv. */
export function programOf(argv: readonly string[]): string {
	return argv[programIndex(argv)] ?? '';
}

/**
 * True when the process is one of `names`: its comm, the basename of its program word, or — with
 * `packages` — a program word inside one of those package folders (`node …/@anthropic-ai/claude-code/cli.js`).
 */
export function runsProgram(proc: Pick<ProcessRef, 'name' | 'argv'>, names: readonly string[], packages: readonly string[] = []): boolean {
	if (names.includes(proc.name)) return true;
	const program = programOf(proc.argv);
	return names.includes(path.basename(program)) || packages.some(p => program.includes(p));
}

/** The first word after the program (`gateway` in `hermes gateway run`), if any. */
export function subcommand(argv: readonly string[]): string | undefined {
	return argv.slice(programIndex(argv) + 1).find(arg => !arg.startsWith('-'));
}
