import type {Reading, StatusDetector} from './types.js';
import {lastRows, rowMatching, screenSays} from './screen.js';

// agy and hermes: no real capture exists (they are stand-ins here). These readers look for
// the approval and interrupt hints their documentation shows (hermes: `[o]nce, [s]ession,
// [a]lways, or [d]eny`; agy, a gemini-cli descendant: `Allow execution of …`, `esc to cancel`)
// and otherwise say nothing. They NEVER say idle: an unknown screen is `unknown`, so a working
// agent is never reported idle on a guess.

const APPROVAL = /\[o\]nce.*\[d\]eny|Allow execution of|Allow once|Do you want to (proceed|allow|run)|\b(approve|allow)\b.*\[y\/n\]/i;
const INTERRUPT = /\besc to (interrupt|cancel)\b|\bctrl\+c to (interrupt|cancel|stop)\b/i;

function fromScreen(screen: string): Reading | undefined {
	const rows = lastRows(screen, 12);
	const ask = rowMatching(rows, APPROVAL);
	if (ask) return {status: 'blocked', evidence: screenSays(ask)};
	const busy = rowMatching(rows.slice(-6), INTERRUPT);
	if (busy) return {status: 'working', evidence: screenSays(busy)};
	return undefined;
}

export const unverifiedStatus: StatusDetector = {unverified: true, fromScreen};
