/**
 * Step 1 of a stop, decided before anything is typed: is it safe to type the agent's exit
 * sequence into its pane, and what exactly is typed. Pure, so every verdict is table-tested
 * against real captured screens.
 *
 * Typing is never safe when the keys could do something else than exit:
 * - an approval dialog has the keyboard (herdr says `blocked`, or the screen shows the dialog):
 *   `Ctrl+U`, the command or `Enter` would answer it (herdr #2788);
 * - the composer holds a draft the sequence cannot clear: the command would be sent with the
 *   draft, as a prompt, and the agent keeps running (measured for all four real TUIs);
 * - the screen cannot be read or is not the agent's composer: a draft or dialog cannot be ruled out.
 * Then step 1 is skipped and the stop goes on to closing the pane, which never sends anything.
 */
import type {ComposerState, ExitInput, ExitStep} from '../adapters/types.js';
import type {AgentStatus} from '../domain/types.js';

/** One step as it is sent: the command's text filled in. */
export type TypedStep =
	{readonly kind: 'keys'; readonly keys: readonly string[]} | {readonly kind: 'text'; readonly text: string} | {readonly kind: 'pause'; readonly ms: number};

/** What the pane's screen read gave: its text, or why it could not be read. */
export type ScreenRead = {readonly ok: true; readonly text: string} | {readonly ok: false; readonly error: string};

export interface ExitFacts {
	readonly exitInput: ExitInput;
	/** `agents.<a>.exitInput` from the config, replacing the adapter's command text. */
	readonly configuredText?: string;
	/** The mux's own status of the pane's agent (herdr's `agent_status`; `unknown` on tmux). */
	readonly muxStatus: AgentStatus;
	/** The screen, read only when the adapter has a reader for it. */
	readonly screen?: ScreenRead;
}

export type ExitPlan = {readonly type: true; readonly steps: readonly TypedStep[]; readonly why: string} | {readonly type: false; readonly why: string};

/** The adapter's steps with the command text filled in (the config's text wins). */
export function typedSteps(exitInput: ExitInput, configuredText?: string): TypedStep[] {
	const text = configuredText ?? exitInput.text;
	return exitInput.steps.map((step: ExitStep): TypedStep => (step.kind === 'command' ? {kind: 'text', text} : step));
}

/** `Ctrl+U, 300 ms, /exit, 500 ms, Enter`: the steps as a progress line shows them. */
export function describeSteps(steps: readonly TypedStep[]): string {
	return steps
		.map(step => {
			if (step.kind === 'pause') return `${step.ms} ms`;
			if (step.kind === 'text') return step.text;
			return step.keys.map(k => k.replace(/^ctrl\+(.)$/i, (_m, c: string) => `Ctrl+${c.toUpperCase()}`)).join(' ');
		})
		.join(', ');
}

/** Do the steps clear the composer's line before typing? (`Ctrl+U` first, as measured.) */
function clearsLineFirst(steps: readonly TypedStep[]): boolean {
	const first = steps[0];
	return first?.kind === 'keys' && first.keys.length === 1 && /^(ctrl\+u|C-u)$/i.test(first.keys[0] ?? '');
}

function verdictOf(state: ComposerState, clears: boolean): {type: boolean; why: string} {
	switch (state.kind) {
		case 'empty':
			return {type: true, why: 'the composer is empty'};
		case 'blocked':
			return {type: false, why: `the agent waits on an approval ("${state.prompt}"); typed keys would answer it, so nothing is typed`};
		case 'unknown':
			return {type: false, why: `${state.reason}, so a draft or a dialog cannot be ruled out; nothing is typed`};
		case 'draft':
			if (state.lines === 1 && clears) return {type: true, why: 'the composer holds a one-line draft: Ctrl+U clears it first (it is dropped, never sent)'};
			return {
				type: false,
				why:
					state.lines === 1
						? 'the composer holds a draft this sequence does not clear; typing would send it as a prompt, so nothing is typed'
						: `the composer holds a ${state.lines}-line draft; Ctrl+U clears one line only, so typing could send the rest as a prompt; nothing is typed`,
			};
	}
}

/** Should step 1 type into the pane, and what? */
export function planExit(facts: ExitFacts): ExitPlan {
	const steps = typedSteps(facts.exitInput, facts.configuredText);
	if (facts.muxStatus === 'blocked') {
		return {type: false, why: 'the mux reports the agent blocked on an approval; typed keys would answer the dialog, so nothing is typed'};
	}
	const read = facts.exitInput.readScreen;
	if (!read) return {type: true, steps, why: facts.exitInput.evidence};
	if (!facts.screen) return {type: false, why: "the pane's screen was not read, so a draft cannot be ruled out; nothing is typed"};
	if (!facts.screen.ok) return {type: false, why: `cannot read the pane's screen (${facts.screen.error}), so a draft cannot be ruled out; nothing is typed`};
	const verdict = verdictOf(read(facts.screen.text), clearsLineFirst(steps));
	return verdict.type ? {type: true, steps, why: verdict.why} : {type: false, why: verdict.why};
}
