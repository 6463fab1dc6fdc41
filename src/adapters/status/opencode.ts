import type {Reading, StatusDetector} from './types.js';
import {lastRows, rowMatching, screenSays} from './screen.js';

// opencode 1.18.33, measured (agents/screens/opencode): its title never changes with the state,
// so only the screen tells; the status row is the last non-blank row (row 35 of 36).

function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 10);
	// \u25b3 is `△`.
	const permission = rowMatching(rows, /\u25b3 Permission required/) ?? rowMatching(rows, /Allow once\s+Allow always\s+Reject/);
	if (permission) return {status: 'blocked', evidence: screenSays(permission)};
	const status = rows.slice(-1);
	// The progress bar is all `⬝` in many frames: the hint is the marker, not `■`.
	const busy = rowMatching(status, /esc interrupt/);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	const idle = rowMatching(rows.slice(-3), /ctrl\+p commands/);
	if (idle) return {status: 'idle', evidence: screenSays(idle)};
	return undefined;
}

export const opencodeStatus: StatusDetector = {fromScreen};
