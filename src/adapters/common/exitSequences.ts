/**
 * How a graceful stop asks each agent's TUI to exit, and how it reads the agent's composer
 * first. The facts come from the real TUIs (Claude Code 2.1.197, Codex 0.171.0, opencode
 * 1.18.33, Gemini CLI 0.61.0) in a tmux pane: 252 measured exit trials and a capture of every
 * screen state (idle, working, blocked on an approval, a draft left in the composer).
 *
 * - The command followed at once by Enter exits codex and gemini 0 of 9 times: they drop an
 *   Enter that follows typed text. With a 300 ms pause all four exit every time.
 * - Whenever the command + Enter is accepted while the user left a draft in the composer, the
 *   draft and the command are sent together AS A PROMPT and the agent keeps running.
 * - `Ctrl+U`, 300 ms, the command, 300 ms, `Enter` exited 36 of 36 (idle, after a turn, with a
 *   one-line draft; all four agents) and never sent the draft. Multi-line drafts were not tested.
 * - Grok Build 1.0.41 takes the same sequence (`/exit` is its `/quit`'s alias): 10 of 10 stops
 *   idle and 10 of 10 after a turn ended at step 1; Ctrl+U clears one composer line there too.
 *
 * The screen readers match the plain text (`capture-pane -p`, herdr `pane.read` stripped of
 * escapes): claude and codex colour every word separately, so escapes would split the markers.
 * Glyphs are written as `\u` escapes, because the bundle is ASCII only: ─ 2500, ❯ 276f,
 * NBSP 00a0, › 203a, · 00b7, ┃ 2503, ╹ 2579, ▀ 2580, … 2026, △ 25b3, ● 25cf.
 */
import type {ComposerState, ExitInput, ExitStep} from '../types.js';

/** The sequence that exited all four real TUIs 36 of 36 times and never sent a draft (with 300 ms before Enter). */
export const MEASURED_EXIT_STEPS: readonly ExitStep[] = [
	{kind: 'keys', keys: ['ctrl+u']},
	{kind: 'pause', ms: 300},
	{kind: 'command'},
	// 300 ms was enough in every measured trial; on a loaded machine gemini once dropped an Enter
	// that came 300 ms after a prompt, so the command gets more.
	{kind: 'pause', ms: 500},
	{kind: 'keys', keys: ['Enter']},
];

const MEASURED = 'measured on the real TUI: Ctrl+U, 300 ms, the command, 300 ms, Enter exited 36 of 36 and never sent a one-line draft';

/** The pane's rows, ASCII trailing blanks removed (never U+00A0: claude's empty composer is `❯` + NBSP). */
function rowsOf(screen: string): string[] {
	const rows = screen.split('\n').map(r => r.replace(/[ \t\r]+$/, ''));
	while (rows.length > 0 && rows.at(-1) === '') rows.pop();
	return rows;
}

const isBlank = (row: string) => /^[\s\u00a0]*$/.test(row);
const isRule = (row: string) => /^\u2500{20,}$/.test(row.trim());

/** The first of `markers` found in the last `within` rows, for a blocked verdict's message. */
function promptIn(rows: readonly string[], within: number, markers: readonly RegExp[]): string | undefined {
	const tail = rows.slice(-within).join('\n');
	return markers.map(m => m.exec(tail)?.[0]).find(found => found !== undefined);
}

/** No composer: an approval dialog when its markers show, else a screen this reader does not know. */
function noComposer(rows: readonly string[], markers: readonly RegExp[], what: string): ComposerState {
	const prompt = promptIn(rows, 20, markers);
	return prompt ? {kind: 'blocked', prompt} : {kind: 'unknown', reason: `no ${what} composer on screen`};
}

/** A composer's text rows (first row's glyph already removed) as a state. */
function composerOf(textRows: readonly string[], isPlaceholder: boolean): ComposerState {
	const used = textRows.map(r => r.replace(/^[\s\u00a0]+/, ''));
	const first = used.findIndex(r => r !== '');
	if (first < 0) return {kind: 'empty'};
	let last = used.length - 1;
	while (used[last] === '') last--;
	if (first === last && isPlaceholder) return {kind: 'empty'};
	return {kind: 'draft', lines: last - first + 1};
}

/**
 * Claude Code draws inline (no alternate screen): its composer is the last `❯`+NBSP row between
 * two `─` rules, followed by a footer of one or two rows (two while its tmux focus-events notice
 * shows). A draft keeps the NBSP; past prompts and menu cursors use an ASCII space. When blocked,
 * composer and footer are replaced by the dialog (`Do you want to proceed?`).
 */
export function readClaudeScreen(screen: string): ComposerState {
	const rows = rowsOf(screen);
	for (let close = rows.length - 1; close >= Math.max(0, rows.length - 4); close--) {
		if (!isRule(rows[close] ?? '')) continue;
		let open = close - 1;
		while (open >= 0 && !isRule(rows[open] ?? '')) open--;
		const first = rows[open + 1] ?? '';
		if (open < 0 || !first.startsWith('\u276f\u00a0')) break;
		return composerOf([first.slice(2), ...rows.slice(open + 2, close)], false);
	}
	return noComposer(rows, [/Do you want to proceed\?/, /Esc to cancel/], 'Claude Code');
}

/**
 * Codex is anchored to the bottom: the composer (`› ` and indented continuation rows), one blank
 * row, then a footer of one or two indented rows. Its placeholder (`› Ask Codex to do anything`)
 * looks like text in a plain capture; what tells them apart is the footer's `? for shortcuts`,
 * which goes away while the composer holds a draft. When blocked the composer and footer are
 * replaced by the approval (`Press enter to confirm or esc to cancel`).
 */
export function readCodexScreen(screen: string): ComposerState {
	const rows = rowsOf(screen);
	let blank = rows.length - 1;
	while (blank >= 0 && !isBlank(rows[blank] ?? '')) blank--;
	const footer = rows.slice(blank + 1);
	// The approval's options look like a composer (`› 1. Yes, proceed (y)` and indented rows)
	// over a one-row footer; only the real footer names the model (`fake-model default · <cwd>`),
	// or, in the first frame before the model is known, is the bare `? for shortcuts` hint.
	const footerOk =
		blank > 0 &&
		footer.length >= 1 &&
		footer.length <= 3 &&
		footer.every(r => /^ {2}\S/.test(r) || /^\s{20,}\S/.test(r)) &&
		footer.some(r => r.includes(' \u00b7 ') || r.trim() === '? for shortcuts') &&
		!footer.some(r => r.includes('Press enter to confirm'));
	// Blank rows belong to the composer too: it keeps its height after a line is deleted.
	let open = blank - 1;
	while (open >= 0 && (/^ {2}\S/.test(rows[open] ?? '') || isBlank(rows[open] ?? ''))) open--;
	const first = rows[open] ?? '';
	if (!footerOk || open < 0 || !first.startsWith('\u203a ')) {
		return noComposer(rows, [/Press enter to confirm or esc to cancel/, /Would you like to run the following command\?/], 'Codex');
	}
	const idleFooter = footer.some(r => r.includes('? for shortcuts'));
	return composerOf([first.slice(2), ...rows.slice(open + 1, blank)], idleFooter);
}

/**
 * opencode (alternate screen): the composer is a `┃` block closed by a `╹▀▀…` row; its last `┃`
 * row names the agent and model (`Build · Fake Model Fake`) under a padding row, and a padding
 * row opens it. Its placeholder starts `Ask anything…`. When
 * blocked the block becomes the permission panel (`△ Permission required`) with no `╹` row.
 */
export function readOpencodeScreen(screen: string): ComposerState {
	const rows = rowsOf(screen);
	// The alternate screen holds only the live UI, so the last `╹▀` row is the composer's.
	let close = rows.length - 1;
	while (close >= 0 && !/^\s*\u2579\u2580/.test(rows[close] ?? '')) close--;
	const column = (rows[close] ?? '').indexOf('\u2579');
	const inBlock = (row: string | undefined) => row !== undefined && column >= 0 && row.indexOf('\u2503') === column && row.slice(0, column).trim() === '';
	let open = close - 1;
	while (open >= 0 && inBlock(rows[open])) open--;
	const block = rows.slice(open + 1, close).map(r => r.slice(column + 1));
	if (close < 0 || column < 0 || block.length < 3 || !/\u00b7/.test(block.at(-1) ?? '')) {
		return noComposer(rows, [/\u25b3 Permission required/, /Allow once\s+Allow always\s+Reject/], 'opencode');
	}
	const text = block.slice(1, -2);
	const placeholder = text.filter(r => r.trim() !== '').every(r => r.trim().startsWith('Ask anything\u2026'));
	return composerOf(text, placeholder);
}

/**
 * Gemini CLI draws inline: the composer (` > ` and its continuation rows) sits under a `─` rule
 * and a hint row, above the footer (`workspace (/directory) … /model` and a row of values). The
 * placeholder is `Type your message or @path/to/file`; the `? for shortcuts` hint above the rule
 * goes away while the composer holds a draft. When blocked, composer and footer are replaced by
 * one box (`Allow execution of [Shell]?`).
 */
export function readGeminiScreen(screen: string): ComposerState {
	const rows = rowsOf(screen);
	let footer = rows.length - 1;
	while (footer >= Math.max(0, rows.length - 3) && !/^\s*workspace \(\/directory\)/.test(rows[footer] ?? '')) footer--;
	let rule = footer - 1;
	while (rule >= 0 && !isRule(rows[rule] ?? '')) rule--;
	const between = rows.slice(rule + 1, footer);
	const at = between.findIndex(r => r.startsWith(' > '));
	if (footer < 0 || rule < 0 || at < 0) {
		return noComposer(rows, [/Allow execution of/, /Action Required/, /\u25cf 1\. Allow once/], 'Gemini CLI');
	}
	const text = [(between[at] ?? '').slice(3), ...between.slice(at + 1)];
	const placeholder = /^\s*Type your message or @path\/to\/file$/.test(text.filter(r => r.trim() !== '').join('\n'));
	return composerOf(text, placeholder);
}

/**
 * Grok Build 1.0.41 (alternate screen): the composer is a rounded box at the bottom
 * (`╭─…─╮`, `│ ❯ text │`, continuation rows `│   text │`, `╰─… <model> ─╯`) with a hint row
 * under it. After a turn the box holds a GHOST suggestion (grok's guess at the next prompt, dim
 * italic, identical to typed text in a plain capture): the hint row then says
 * `Tab/→:accept suggestion` and no `Enter:send`, which it shows as soon as anything is typed
 * (also beside the suggestion hint when a typed prefix of it is shown). When blocked the box is
 * replaced by the permission card (`Yes, proceed`, `No, reject`, `1/4:select`), whose first
 * option is "always-approve": a stray Enter there approves everything, so nothing may be typed.
 */
export function readGrokScreen(screen: string): ComposerState {
	const rows = rowsOf(screen);
	let close = rows.length - 1;
	while (close >= Math.max(0, rows.length - 6) && !/^\s*\u2570\u2500.*\u2500\u256f$/.test(rows[close] ?? '')) close--;
	let open = close - 1;
	while (open >= 0 && /^\s*\u2502.*\u2502$/.test(rows[open] ?? '')) open--;
	const inner = rows.slice(open + 1, close).map(r => r.trim().slice(1, -1));
	const first = (inner[0] ?? '').replace(/^\s+/, '');
	if (close < Math.max(0, rows.length - 6) || open < 0 || !/^\s*\u256d\u2500+\u256e$/.test(rows[open] ?? '') || !first.startsWith('\u276f')) {
		return noComposer(rows, [/\b\d+\/\d+:select\b/, /\(\u25cb\) No, reject/, /Yes, proceed/], 'Grok Build');
	}
	const hints = rows.slice(close + 1).join('\n');
	const ghost = /accept suggestion/.test(hints) && !/Enter:send/.test(hints);
	return composerOf([first.slice(1), ...inner.slice(1)], ghost);
}

/** The exit input of one of the measured agents. */
export function measuredExitInput(text: string, readScreen: (screen: string) => ComposerState): ExitInput {
	return {text, steps: MEASURED_EXIT_STEPS, readScreen, evidence: MEASURED};
}

/**
 * The exit input of an agent whose TUI was never run here (agy, hermes): the measured
 * sequence, since `Ctrl+U` clears the line in readline-style composers and a pause costs little,
 * but nothing reads its screen, so a draft or a dialog cannot be seen first.
 */
export function unverifiedExitInput(text: string): ExitInput {
	return {
		text,
		steps: MEASURED_EXIT_STEPS,
		evidence: 'unverified: this TUI was never measured; its screen is not checked for a draft or a dialog before typing',
	};
}
