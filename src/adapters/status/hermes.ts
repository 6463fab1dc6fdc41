import {hermesComposer, HERMES_APPROVAL} from '../hermes/screen.js';
import type {Reading, StatusDetector} from './types.js';
import {lastRows, rowMatching, screenSays} from './screen.js';

// Hermes Agent 0.19.0, measured (test/fixtures/screens/hermes): it never sets the terminal title
// and keeps no live record, so the screen tells. The icon in front of the composer's `❯` names
// the state (hermes/screen.ts); the status bar's clock is `⏱` while a turn is live, `⏲` otherwise.

/** ` ⚕ stand-in │ 12/65.5K │ … │ 1m │ ⏲ 4s │ ✓ 0s`: the status bar over the composer. */
const STATUS_BAR = /^\s*\u2695 .*\u2502 (\u23f1|\u23f2) /u;

function fromScreen(screen: string): Reading | undefined {
	const composer = hermesComposer(screen);
	const rows = lastRows(screen, 24);
	if (composer?.state === 'blocked') {
		const dialog = rowMatching(rows, HERMES_APPROVAL);
		return {status: 'blocked', evidence: screenSays(dialog ?? composer.row)};
	}
	if (!composer) {
		const dialog = rowMatching(rows, HERMES_APPROVAL);
		if (dialog) return {status: 'blocked', evidence: screenSays(dialog)};
		// While a turn's output is printed the composer is taken down for a moment; the screen then
		// ends with the prompt just taken, `● <prompt>` (and `Initializing agent...`) over a `─` rule.
		const tail = rows.slice(-4);
		const echoed = rowMatching(tail.slice(0, -1), /^\u25cf \S/u);
		return echoed !== undefined && /^\u2500{20,}$/u.test((tail.at(-1) ?? '').trim()) ? {status: 'working', evidence: screenSays(echoed)} : undefined;
	}
	const bar = rowMatching(rows.slice(-12), STATUS_BAR);
	if (composer.state === 'working') return {status: 'working', evidence: screenSays(composer.row)};
	if (composer.state === 'idle' && bar !== undefined) {
		// A turn still live with an idle-looking composer (a moment between states): working.
		return bar.includes('\u23f1') ? {status: 'working', evidence: screenSays(bar)} : {status: 'idle', evidence: screenSays(bar)};
	}
	return undefined;
}

export const hermesStatus: StatusDetector = {fromScreen};
