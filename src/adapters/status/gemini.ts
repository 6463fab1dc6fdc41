import type {Reading, StatusDetector} from './types.js';
import {lastRows, rowMatching, screenSays, titleSays} from './screen.js';

// Gemini CLI 0.61.0, measured (agents/screens/gemini): the title tells all three states; the
// screen is drawn inline.

/** `◇  Ready (alpha)`, `✦  Working… (alpha)`, `✋  Action Required (alpha)`, padded with spaces. */
function fromTitle(title: string): Reading | undefined {
	const text = title.trim();
	// \u270b `✋`, \u2726 `✦`, \u25c7 `◇`, \u25cf `●` (regex literals stay ASCII: the bundle is ASCII only).
	if (/^\u270b\s+Action Required/u.test(text)) return {status: 'blocked', evidence: titleSays(text)};
	if (/^\u2726\s+Working/u.test(text)) return {status: 'working', evidence: titleSays(text)};
	if (/^\u25c7\s+Ready/u.test(text)) return {status: 'idle', evidence: titleSays(text)};
	return undefined;
}

function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 12);
	const ask = rowMatching(rows, /Allow execution of|\u25cf 1\. Allow once/);
	if (ask) return {status: 'blocked', evidence: screenSays(ask)};
	// `⠹ Thinking... (esc to cancel, 0s)` replaces the `? for shortcuts` row above the composer.
	const busy = rowMatching(rows.slice(-8), /\(esc to cancel/);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	const footer = rowMatching(rows.slice(-3), /^\s*workspace \(\/directory\)/);
	if (footer) return {status: 'idle', evidence: screenSays(footer)};
	return undefined;
}

export const geminiStatus: StatusDetector = {fromTitle, fromScreen};
