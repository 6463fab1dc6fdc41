import type {Reading, StatusDetector} from './types.js';
import {BRAILLE_SPINNER, lastRows, rowMatching, screenSays, titleSays} from './screen.js';

// Grok Build 1.0.41, measured (test/fixtures/screens/grok): the title tells all three states,
// `<what> - grok`, where <what> is the session's title (user text) or nothing at first:
// `grok` and `say hi - grok` idle, `⠋ - Waiting for response… - say hi - grok` working (a braille
// spinner first), `⚠ Action Required - ⠦ - Write a greeting… - say hi - grok` blocked.

function fromTitle(title: string): Reading | undefined {
	const text = title.trim();
	// \u26a0 is `⚠`.
	if (/^\u26a0\s*Action Required\b/u.test(text)) return {status: 'blocked', evidence: titleSays(text)};
	if (BRAILLE_SPINNER.test(text) && / - grok$/.test(text)) return {status: 'working', evidence: titleSays(text)};
	if (text === 'grok' || / - grok$/.test(text)) return {status: 'idle', evidence: titleSays(text)};
	return undefined;
}

/** The hint row under the composer, or the permission card that replaces the composer. */
function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 14);
	const ask = rowMatching(rows.slice(-3), /\b\d+\/\d+:select\b/) ?? rowMatching(rows, /\(\u25cb\) No, reject/);
	if (ask) return {status: 'blocked', evidence: screenSays(ask)};
	const hints = rows.slice(-3);
	const busy = rowMatching(hints, /Ctrl\+c:cancel/);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	const idle = rowMatching(hints, /Shift\+Tab:mode/) ?? rowMatching(hints, /Logged in with/);
	if (idle) return {status: 'idle', evidence: screenSays(idle)};
	return undefined;
}

export const grokStatus: StatusDetector = {fromTitle, fromScreen};
