import type {TrashListing} from './trash.js';
import {restorePurge, trashEmptyOne, trashList, type RestoreResult} from './trashActions.js';
import type {SessionRecord} from '../domain/types.js';
import {adoptConversation, type AdoptOutcome, type AdoptRequest} from './adopt.js';
import {newSession, type NewSessionRequest} from './newSession.js';
import {confirmPurge, expectedConfirmation, purgeConfirmed, purgePlan, type PurgeOptions, type PurgePlanView, type PurgeResult} from './purge.js';
import {resumeSession, type ResumeOutcome} from './resume.js';
import {requireSession} from './session.js';
import {stopSession, type StopOptions, type StopOutcome} from './stop.js';
import {parkSessions, type ParkOptions, type ParkResult, type ParkSelection} from './park.js';
import {wakeSessions, type WakeOptions, type WakeResult, type WakeSelection} from './wake.js';
import type {ActionDeps, ActionResult, SessionRef} from './types.js';

/** The only code that changes anything (SPEC 2). The CLI and the dashboard call these. */
export interface Actions {
	/** Resume a stopped session; `{agent, id}` adopts the conversation into the registry first. */
	resume(ref: SessionRef): Promise<ActionResult<ResumeOutcome>>;
	/** Stop with escalation (exit input → close pane → SIGKILL), reporting each step through `onProgress`. */
	stop(ref: SessionRef, options?: StopOptions): Promise<ActionResult<StopOutcome>>;
	/** What a purge would delete, after refusing running or in-use conversations. Deletes nothing. */
	purgePlan(ref: SessionRef): Promise<ActionResult<PurgePlanView>>;
	/** What the user must type to confirm these plans. */
	expectedConfirmation(plans: readonly PurgePlanView[]): string;
	/** True only when `typed` is exactly the expected confirmation. */
	confirmPurge(plans: readonly PurgePlanView[], typed: string): boolean;
	/** Re-check identity and use, then delete; `typed` must confirm or nothing happens. */
	purge(plans: readonly PurgePlanView[], typed: string, options?: PurgeOptions): Promise<ActionResult<readonly PurgeResult[]>>;
	/** Open a pane with a new conversation and register it (running, unpinned, epoch now). */
	newSession(request: NewSessionRequest): Promise<ActionResult<SessionRecord>>;
	/** Register a conversation found on disk as a stopped session. */
	adopt(request: AdoptRequest): Promise<ActionResult<AdoptOutcome>>;
	/** Put a purge back from the trash and check that the conversation resumes. */
	restore(purgeId: string): Promise<ActionResult<RestoreResult>>;
	/** The purges in the trash, after retention. */
	trashList(): Promise<ActionResult<readonly TrashListing[]>>;
	/** Hard-delete one finished purge from the trash. */
	trashEmptyOne(purgeId: string): Promise<ActionResult<string>>;
	/** Park idle sessions (issue 28): every check right before acting; one result per session, refusals named. */
	park(selection: ParkSelection, options?: ParkOptions): Promise<readonly ParkResult[]>;
	/** Wake parked sessions where they were; one result per session with the time until ready. */
	wake(selection: WakeSelection, options?: WakeOptions): Promise<readonly WakeResult[]>;
}

export function createActions(deps: ActionDeps): Actions {
	return {
		async resume(ref) {
			if ('name' in ref) {
				const session = requireSession(deps, ref);
				return session.ok ? resumeSession(deps, session.value) : session;
			}
			const adopted = await adoptConversation(deps, {agent: ref.agent, id: ref.id});
			return adopted.ok ? resumeSession(deps, adopted.value.session) : adopted;
		},
		async stop(ref, options) {
			const session = requireSession(deps, ref);
			return session.ok ? stopSession(deps, session.value, options) : session;
		},
		purgePlan: ref => purgePlan(deps, ref),
		expectedConfirmation,
		confirmPurge,
		purge: (plans, typed, options) => purgeConfirmed(deps, plans, typed, options),
		newSession: request => newSession(deps, request),
		adopt: request => adoptConversation(deps, request),
		restore: purgeId => restorePurge(deps, purgeId),
		trashList: () => trashList(deps),
		trashEmptyOne: purgeId => trashEmptyOne(deps, purgeId),
		park: (selection, options) => parkSessions(deps, selection, options),
		wake: (selection, options) => wakeSessions(deps, selection, options),
	};
}

export type {ActionDeps, ActionResult, Refusal, RefusalKind, SessionRef} from './types.js';
export type {StopOptions, StopOutcome, StopProgress, StopStep, StepState, StopEndedBy} from './stop.js';
export type {PurgePlanView, PurgeProgress, PurgeResult, PurgeStep} from './purge.js';
export type {ResumeOutcome} from './resume.js';
export type {ParkOptions, ParkResult, ParkSelection} from './park.js';
export type {WakeOptions, WakeResult, WakeSelection} from './wake.js';
export type {TrashListing} from './trash.js';
export type {AdoptOutcome, AdoptRequest} from './adopt.js';
export type {NewSessionRequest} from './newSession.js';
