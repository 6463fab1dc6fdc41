import {describe, expect, it} from 'vitest';
import {nextStopStep, type StopMove, type StopSeen} from '../../src/actions/stopSteps.js';

/** Every decision of the escalation (SPEC 6.2), without panes, processes or time. */
const TABLE: ReadonlyArray<[string, StopSeen, StopMove]> = [
	['an agent runs: type the exit input', {after: 'capture', agentAlive: true, leftovers: 0}, {run: 'exit-input'}],
	['an agent runs beside leftovers: still the exit input first', {after: 'capture', agentAlive: true, leftovers: 2}, {run: 'exit-input'}],
	["only an earlier stop's leftovers: straight to SIGKILL", {after: 'capture', agentAlive: false, leftovers: 1}, {run: 'sigkill'}],
	['nothing alive at all', {after: 'capture', agentAlive: false, leftovers: 0}, {end: 'nothing-running'}],
	['the agent obeyed and took its helpers along', {after: 'exit-input', exited: true, left: 0}, {end: 'exit-input'}],
	['the agent obeyed but left a helper', {after: 'exit-input', exited: true, left: 1}, {run: 'sigkill'}],
	['the agent did not exit (or nothing was typed)', {after: 'exit-input', exited: false, left: 0}, {run: 'close-pane'}],
	['closing the pane ended everything', {after: 'close-pane', allGone: true}, {end: 'close-pane'}],
	['something outlived the pane', {after: 'close-pane', allGone: false}, {run: 'sigkill'}],
	['SIGKILL after an obeyed exit ends a step-1 stop', {after: 'sigkill', agentExitedAtStep1: true}, {end: 'exit-input'}],
	['SIGKILL otherwise ends the stop at step 3', {after: 'sigkill', agentExitedAtStep1: false}, {end: 'sigkill'}],
];

describe('the next step of a stop', () => {
	it.each(TABLE)('%s', (_what, seen, move) => {
		expect(nextStopStep(seen)).toEqual(move);
	});
});
