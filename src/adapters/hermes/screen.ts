// What hermes 0.19.0's default TUI (prompt_toolkit, drawn inline: no alternate screen) shows, read
// from the plain pane text. Measured in a tmux pane (test/fixtures/screens/hermes/): the bottom
// of the screen is a status bar, a `─` rule, the composer, another `─` rule. The composer's first
// row starts with the prompt `❯`, and an icon before it says the TUI's state (cli.py
// `_get_tui_prompt_fragments`):
//   `❯ …`   idle (a profile other than the default shows its name instead: `coder ❯`)
//   `⚕ ❯`   a turn runs; its placeholder is `msg=interrupt · /queue · /bg · /steer · Ctrl+C cancel`
//   `⚠ ❯`   an approval waits (a dangerous command, or a confirmation): the dialog above has the keys
//   `? ❯`, `✎ ❯`  a clarify question waits;  `🔐 ❯`, `🔑 ❯`  a sudo password or a secret is asked
// The status bar ends `│ ⏱ 4s` while a turn is live (blocked included) and `│ ⏲ 1m 6s` when not.
// Glyphs as `\u` escapes (the bundle is ASCII only): ❯ 276f, ─ 2500, ⚕ 2695, ⚠ 26a0, ✎ 270e,
// 🔐 1f510, 🔑 1f511, ⏱ 23f1, ⏲ 23f2, │ 2502, · 00b7.

import type {ComposerState} from '../types.js';

export type HermesState = 'idle' | 'working' | 'blocked' | 'other';

export interface HermesComposer {
	readonly state: HermesState;
	/** The composer's first row as shown (trimmed), for evidence lines. */
	readonly row: string;
	/** The typed text's rows (placeholder excluded): empty when nothing is typed. */
	readonly text: readonly string[];
}

const ICONS: ReadonlyArray<readonly [RegExp, HermesState]> = [
	[/^\u2695$/u, 'working'],
	[/^(?:\u26a0\ufe0f?|\?|\u270e|\u{1f510}|\u{1f511})$/u, 'blocked'],
];

/** The working placeholder (it fills an empty composer while a turn runs). */
const WORKING_PLACEHOLDER = /^msg=interrupt \u00b7 /;

/** The approval dialog hermes draws above the composer (a dangerous command). */
export const HERMES_APPROVAL = /Dangerous Command|\u2191\/\u2193 to select, Enter to confirm/u;

const isRule = (row: string) => /^\u2500{20,}$/.test(row.trim());

function rowsOf(screen: string): string[] {
	const rows = screen.split('\n').map(r => r.replace(/[ \t\r\u00a0]+$/, ''));
	while (rows.length > 0 && rows.at(-1) === '') rows.pop();
	return rows;
}

/**
 * The composer between the last two `─` rules at the bottom of the screen, or undefined when the
 * screen shows none (starting, exited, narrower than 64 columns where hermes drops the `❯`).
 */
export function hermesComposer(screen: string): HermesComposer | undefined {
	const rows = rowsOf(screen);
	const close = rows.length - 1;
	if (close < 2 || !isRule(rows[close] ?? '')) return undefined;
	let open = close - 1;
	while (open >= 0 && !isRule(rows[open] ?? '')) open--;
	if (open < 0 || open === close - 1) return undefined;
	const first = rows[open + 1] ?? '';
	const prompt = /^(?:(.+?) )?\u276f(?: (.*))?$/u.exec(first);
	if (!prompt) return undefined;
	const icon = prompt[1] ?? '';
	const found = ICONS.find(([re]) => re.test(icon))?.[1];
	// Anything else before the `❯` is a profile's name (or a skin's symbol): idle.
	const state: HermesState = found ?? (icon === '' || !/[^\p{L}\p{N}_.-]/u.test(icon) ? 'idle' : 'other');
	const typed = [prompt[2] ?? '', ...rows.slice(open + 2, close)];
	const placeholder = state === 'working' && typed.length === 1 && WORKING_PLACEHOLDER.test(typed[0] ?? '');
	const text = placeholder ? [] : trimEmpty(typed);
	return {state, row: first.trim(), text};
}

function trimEmpty(rows: readonly string[]): string[] {
	let start = 0;
	let end = rows.length;
	while (start < end && (rows[start] ?? '').trim() === '') start++;
	while (end > start && (rows[end - 1] ?? '').trim() === '') end--;
	return rows.slice(start, end);
}

/**
 * The composer as the stop's exit sequence needs it: empty, a draft of N lines, an approval or a
 * question that has the keyboard (typed keys would answer it), or unknown.
 */
export function readHermesScreen(screen: string): ComposerState {
	const composer = hermesComposer(screen);
	if (!composer) {
		const dialog = rowsOf(screen).slice(-24).join('\n').match(HERMES_APPROVAL)?.[0];
		return dialog ? {kind: 'blocked', prompt: dialog} : {kind: 'unknown', reason: 'no Hermes Agent composer on screen'};
	}
	if (composer.state === 'blocked') {
		const dialog = rowsOf(screen).slice(-24).join('\n').match(HERMES_APPROVAL)?.[0];
		return {kind: 'blocked', prompt: dialog ?? composer.row};
	}
	if (composer.state === 'other') return {kind: 'unknown', reason: `the Hermes Agent composer shows ${JSON.stringify(composer.row)}`};
	return composer.text.length === 0 ? {kind: 'empty'} : {kind: 'draft', lines: composer.text.length};
}
