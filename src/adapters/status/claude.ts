import type {AgentRecord, Reading, StatusDetector} from './types.js';
import {BRAILLE_SPINNER, lastRows, rowMatching, screenSays, titleSays} from './screen.js';

// Claude Code 2.1.197, measured (agents/screens/claude): the live record is the one signal that
// tells blocked apart, the title only tells working, the screen all three but is drawn inline.

/** `sessions/<pid>.json` `status`: idle, busy, waiting (for a permission prompt or an answer). */
function fromRecord(record: AgentRecord): Reading | undefined {
	const where = `${record.file} says ${JSON.stringify(record.status)}`;
	switch (record.status) {
		case 'idle':
			return {status: 'idle', evidence: where};
		case 'busy':
		case 'shell':
			return {status: 'working', evidence: where};
		case 'waiting':
			return {status: 'blocked', evidence: record.waitingFor ? `${where} (${record.waitingFor})` : where};
		default:
			// A word this version does not know: let the title and the screen decide.
			return undefined;
	}
}

/** `⠂ Claude Code` / `⠐ Claude Code` while busy; `✳ Claude Code` both idle AND blocked, so it never says idle. */
function fromTitle(title: string): Reading | undefined {
	return BRAILLE_SPINNER.test(title) ? {status: 'working', evidence: `${titleSays(title)} (spinner)`} : undefined;
}

/** Claude's temporary hint row under the footer; it pushes the footer up one row. */
const TMUX_NOTICE = /focus-events off/;

function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 10, TMUX_NOTICE);
	const footer = rows.slice(-3);
	// The approval menu replaces composer and footer: `❯ 1. Yes` … `Esc to cancel · Tab to amend`.
	// \u276f is `❯` (regex literals stay ASCII: the bundle is ASCII only).
	const menu = rowMatching(rows, /^\s*\u276f 1\. /);
	const cancel = rowMatching(rows.slice(-2), /Esc to cancel/);
	if (menu && cancel) return {status: 'blocked', evidence: screenSays(rowMatching(rows, /Do you want to/) ?? menu)};
	const busy = rowMatching(footer, /esc to interrupt/);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	const resumed = rowMatching(footer, /^Resume this session with:|^claude --resume /);
	if (resumed) return {status: 'exited', evidence: screenSays(resumed)};
	// The empty composer is `❯` + NBSP; a draft keeps the NBSP; the footer hint goes with a draft.
	const composer = rowMatching(rows.slice(-4), /^\u276f\u00a0/u);
	const hint = rowMatching(footer, /\? for shortcuts/);
	if (composer || hint) return {status: 'idle', evidence: screenSays(hint ?? composer ?? '')};
	return undefined;
}

export const claudeStatus: StatusDetector = {fromRecord, fromTitle, fromScreen};
