// Helpers for reading a captured screen. Claude and Gemini draw inline (no alternate screen), so
// their UI ends wherever the content ends: "the last rows of the pane" would be blank rows; the
// last NON-blank rows are where the composer, footer or prompt sit.

/** The last `count` rows that hold something other than spaces, oldest first, trailing spaces cut. */
export function lastRows(screen: string, count: number, skip?: RegExp): string[] {
	const rows: string[] = [];
	const lines = screen.split('\n');
	for (let i = lines.length - 1; i >= 0 && rows.length < count; i--) {
		const line = (lines[i] ?? '').replace(/[\s\u00a0]+$/u, '');
		if (line.trim() === '' || (skip && skip.test(line))) continue;
		rows.unshift(line);
	}
	return rows;
}

/** The first row matching `pattern`, trimmed and cut to `max` characters for an evidence line. */
export function rowMatching(rows: readonly string[], pattern: RegExp, max = 80): string | undefined {
	const row = rows.find(r => pattern.test(r));
	if (row === undefined) return undefined;
	const text = row.trim().replace(/\s{2,}/g, '  ');
	return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A quoted screen row for an evidence line: `screen row "esc to interrupt · ← for agents"`. */
export function screenSays(row: string): string {
	return `screen row ${JSON.stringify(row)}`;
}

/** A quoted title for an evidence line (agents pad titles with spaces). */
export function titleSays(title: string): string {
	return `title ${JSON.stringify(title.trim())}`;
}

/** A leading braille spinner glyph (U+2800–U+28FF): codex and claude animate their titles with one while they work. */
export const BRAILLE_SPINNER = /^[\u2801-\u28ff]\s/u;
