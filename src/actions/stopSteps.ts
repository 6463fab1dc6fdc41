/**
 * The order of a stop's steps (SPEC 6.2) as a pure function: what the stop saw after a step →
 * the next step, or which step ended the stop. stop.ts does the I/O of each step and asks this
 * what comes next, so the escalation is table-tested without panes, processes or time.
 */

import type {StopEndedBy} from '../registry/extra.js';

/** Which step ended the stop (`nothing-running`: the pane and processes were already gone); recorded in the row. */
export type {StopEndedBy};

/** What the stop knows once a step is over. */
export type StopSeen =
	/** Step 0: is the pane's agent alive, and how many processes did an earlier stop leave alive? */
	| {readonly after: 'capture'; readonly agentAlive: boolean; readonly leftovers: number}
	/** Step 1: did the agent exit, and how many of its processes (helpers) outlived it? */
	| {readonly after: 'exit-input'; readonly exited: boolean; readonly left: number}
	/** Step 2: is every process of the tree gone since the pane closed? */
	| {readonly after: 'close-pane'; readonly allGone: boolean}
	/** Step 3: it only ever ends the stop; it ended one the agent obeyed at step 1, or not. */
	| {readonly after: 'sigkill'; readonly agentExitedAtStep1: boolean};

export type StopMove = {readonly run: 'exit-input' | 'close-pane' | 'sigkill'} | {readonly end: StopEndedBy};

export function nextStopStep(seen: StopSeen): StopMove {
	switch (seen.after) {
		case 'capture':
			if (seen.agentAlive) return {run: 'exit-input'};
			return seen.leftovers > 0 ? {run: 'sigkill'} : {end: 'nothing-running'};
		case 'exit-input':
			if (!seen.exited) return {run: 'close-pane'};
			// The agent obeyed; what it left behind is ended like any survivor, and the stop still
			// counts as ended by the exit input.
			return seen.left > 0 ? {run: 'sigkill'} : {end: 'exit-input'};
		case 'close-pane':
			return seen.allGone ? {end: 'close-pane'} : {run: 'sigkill'};
		case 'sigkill':
			return {end: seen.agentExitedAtStep1 ? 'exit-input' : 'sigkill'};
	}
}
