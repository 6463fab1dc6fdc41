import type {Reading, StatusDetector} from './types.js';
import {BRAILLE_SPINNER, lastRows, rowMatching, screenSays, titleSays} from './screen.js';

// Codex 0.171.0, measured (agents/screens/codex): it reports its own state as OSC 7501, its title
// says working and blocked, its screen (alternate screen, anchored at the bottom) all three.

/** `state=idle:app=codex`, `state=working…`, `state=blocked…:kind=permission`, `state=done…` (turn over), `state=clear` (exit). */
function fromOsc(payload: string): Reading | undefined {
	const state = /(?:^|:)state=([a-z]+)/.exec(payload)?.[1] ?? '';
	const evidence = `OSC 7501 ${payload}`;
	switch (state) {
		case 'working':
			return {status: 'working', evidence};
		case 'blocked':
			return {status: 'blocked', evidence};
		case 'idle':
		case 'done':
			return {status: 'idle', evidence};
		case 'clear':
			return {status: 'exited', evidence};
		default:
			return undefined;
	}
}

/**
 * `[ ! ] Action Required | …` (toggling with `[ . ]`) when blocked, a braille spinner while it
 * works. The idle title is the thread title, which is user text: it never says idle.
 */
function fromTitle(title: string): Reading | undefined {
	if (/^\[ [.!] \] Action Required/.test(title)) return {status: 'blocked', evidence: titleSays(title)};
	if (BRAILLE_SPINNER.test(title)) return {status: 'working', evidence: `${titleSays(title)} (spinner)`};
	return undefined;
}

function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 12);
	const confirm = rowMatching(rows.slice(-2), /Press enter to confirm or esc to cancel/);
	if (confirm) return {status: 'blocked', evidence: screenSays(rowMatching(rows, /Would you like to /) ?? confirm)};
	// `• Working (1s • esc to interrupt)` sits three rows above the composer, which stays.
	const busy = rowMatching(rows.slice(-6), /esc to interrupt/);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	const resumed = rowMatching(rows.slice(-4), /^To continue this session, run:|^\s*codex resume /);
	if (resumed) return {status: 'exited', evidence: screenSays(resumed)};
	// The composer `› …` (row -3) with the model line under it; a past prompt is never that low.
	// \u203a is `›`.
	const composer = rowMatching(rows.slice(-3), /^\u203a /);
	if (composer) return {status: 'idle', evidence: screenSays(composer)};
	return undefined;
}

export const codexStatus: StatusDetector = {fromOsc, fromTitle, fromScreen};
