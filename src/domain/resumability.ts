import type {ResumeState} from './types.js';

// SPEC 6.1, the ONE rule: a conversation is resumable when it is pinned, on disk with a real
// message, its cwd is present, and nobody uses it. The snapshot (sessions view), the conversations
// view and `mam-tui conversations`, and the resume action all ask this function; they differ only
// in how they find the facts (the adapters find them, this judges them).

/** Who holds a conversation open (an adapter's `InUseHolder` has these and more). */
export interface UseHolder {
	readonly pid: number;
	readonly command: string;
	readonly reason: string;
}

/** Who uses the conversation, or why that could not be told. */
export type UseFact = {readonly ok: true; readonly holders: readonly UseHolder[]} | {readonly ok: false; readonly error: string};

/** Nobody uses it (or, for a conversation list, the in-use rule was already applied to `onDisk`). */
export const NOBODY: UseFact = {ok: true, holders: []};

/** The facts the rule judges. `undefined` means "not found out yet": the verdict then says which one is missing. */
export interface ResumeFacts {
	readonly purged?: boolean;
	/** The pinned conversation id; null when nothing is pinned yet. */
	readonly pin: string | null;
	/** The pane the conversation's agent runs in now, for this session: resuming would start it twice. */
	readonly livePane?: string;
	/** Another session whose agent runs the same conversation now. */
	readonly liveElsewhere?: {readonly session: string; readonly pane: string};
	readonly cwd: string;
	readonly cwdPresent: boolean | undefined;
	/** The adapter's word on the conversation on disk (it exists and holds a real message). */
	readonly onDisk: ResumeState | undefined;
	readonly use: UseFact | undefined;
}

/** Why a conversation is not resumable, for callers that word it themselves (the resume action's refusals). */
export type ResumeBlock = 'purged' | 'unpinned' | 'live' | 'live-elsewhere' | 'cwd-missing' | 'not-on-disk' | 'in-use' | 'use-unknown';

export type ResumeVerdict =
	| {readonly state: {readonly kind: 'yes'}}
	| {readonly state: ResumeState; readonly block: ResumeBlock}
	/** A fact is not known yet: find it out and ask again (the state says so meanwhile). */
	| {readonly state: ResumeState; readonly missing: 'cwdPresent' | 'onDisk' | 'use'};

/** `in use by pid N (command: reason)`: the one wording of the sessions and conversations views. */
export function inUseText(holders: readonly UseHolder[]): string {
	const first = holders[0];
	if (!first) return '';
	const more = holders.length > 1 ? ` and ${holders.length - 1} more` : '';
	return `in use by pid ${first.pid} (${first.command.slice(0, 60)}: ${first.reason})${more}`;
}

/** The rule, in the order a user wants to hear the reasons. */
export function resumability(facts: ResumeFacts): ResumeVerdict {
	if (facts.purged) return {state: {kind: 'no', reason: 'purged'}, block: 'purged'};
	if (facts.pin === null) return {state: {kind: 'no', reason: 'no conversation pinned yet'}, block: 'unpinned'};
	if (facts.livePane !== undefined) return {state: {kind: 'no', reason: `live in pane ${facts.livePane}`}, block: 'live'};
	const other = facts.liveElsewhere;
	if (other) return {state: {kind: 'no', reason: `live in session ${other.session} (pane ${other.pane})`}, block: 'live-elsewhere'};
	if (facts.cwdPresent === undefined) return {state: {kind: 'unknown', reason: 'folder not checked yet'}, missing: 'cwdPresent'};
	if (!facts.cwdPresent) return {state: {kind: 'no', reason: `its folder ${facts.cwd} no longer exists`}, block: 'cwd-missing'};
	if (facts.onDisk === undefined) return {state: {kind: 'unknown', reason: 'not checked yet'}, missing: 'onDisk'};
	if (facts.onDisk.kind !== 'yes') return {state: facts.onDisk, block: 'not-on-disk'};
	if (facts.use === undefined) return {state: {kind: 'unknown', reason: 'use not checked yet'}, missing: 'use'};
	if (!facts.use.ok) return {state: {kind: 'unknown', reason: facts.use.error}, block: 'use-unknown'};
	if (facts.use.holders.length > 0) return {state: {kind: 'no', reason: inUseText(facts.use.holders)}, block: 'in-use'};
	return {state: {kind: 'yes'}};
}
