import {printable} from '../domain/printable.js';

/**
 * A reader that goes away before the output ends (`mam-tui status --json | head`) only ends the
 * output: without a handler, the EPIPE that the next write gets kills the process with a stack trace.
 */
function endOnEpipe(error: NodeJS.ErrnoException): void {
	if (error.code !== 'EPIPE') throw error;
}

/** Installs `endOnEpipe` once: stdout itself remembers it (no flag of our own). */
function guardStdout(): void {
	if (!process.stdout.listeners('error').includes(endOnEpipe)) process.stdout.on('error', endOnEpipe);
}

/** Ink owns stdout in the dashboard; CLI commands print through these two. */
export function out(text: string): void {
	guardStdout();
	const shown = printableLines(text);
	process.stdout.write(shown.endsWith('\n') ? shown : `${shown}\n`);
}

/** Each line of `text` printable: what a host or a transcript wrote is shown, never obeyed by the terminal. */
function printableLines(text: string): string {
	return text.split('\n').map(printable).join('\n');
}

/**
 * A `--json` answer: indented on a terminal, one line when piped (where jq or a script reads it,
 * and where indenting hundreds of sessions and panes was a tenth of a status run).
 */
export function outJson(value: unknown): void {
	out(process.stdout.isTTY ? JSON.stringify(value, null, 2) : JSON.stringify(value));
}

export function errOut(text: string): void {
	const shown = printableLines(text);
	process.stderr.write(shown.endsWith('\n') ? shown : `${shown}\n`);
}

/** Left-aligned columns; the last column is not padded. */
export function table(header: readonly string[], raw: readonly (readonly string[])[]): string {
	// Names and paths may come from another machine or a transcript: a newline or an escape in one
	// must not break the table or drive the terminal.
	const rows = raw.map(r => r.map(printable));
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)));
	const line = (cells: readonly string[]) =>
		cells
			.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
			.join('  ')
			.trimEnd();
	return [line(header), ...rows.map(line)].join('\n');
}

/** `/home/me/src/x` → `~/src/x`. */
export function shortPath(p: string, home: string): string {
	return p === home ? '~' : p.startsWith(`${home}/`) ? `~${p.slice(home.length)}` : p;
}
