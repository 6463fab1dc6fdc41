import type {AgentId} from '../domain/types.js';

/** A conversation on disk, as the conversations view names it. */
export interface ConversationRef {
	readonly agent: AgentId;
	readonly id: string;
}

/**
 * What the UI may ask of the outside world. Implemented in src/ (the composition root adapts the
 * actions to it), faked in tests. Every method returns at once; progress and outcomes come back
 * through the store.
 */
export interface UiActions {
	/** Leave the dashboard. Never stops or kills anything. */
	quit(): void;
	/** Re-read the registry and live data now. */
	refresh(): void;
	/** Bring the session's pane to the front in herdr or tmux. */
	focus(name: string): void;
	resume(name: string): void;
	/** Ask before stopping: put what the stop will do (sessions, panes, steps, waits) in `state.stopDialog`. */
	openStop(names: readonly string[]): void;
	/** Run the three-step stop on each session; progress is rendered from `state.operations`. */
	stop(names: readonly string[]): void;
	/** Park these sessions (the confirmation was answered): each is checked again, then stopped with its exit input only. */
	park(names: readonly string[]): void;
	/** Reopen a parked session where it was. */
	wake(name: string): void;
	/** Open the purge dialog for these sessions: loads the plans (or the refusal) into `state.purge`. */
	openPurge(names: readonly string[]): void;
	/** The user pressed enter on the purge dialog with `typed`; the action checks it again. */
	confirmPurge(typed: string): void;
	/** Apply the safe fix of `state.findings[index]`. */
	applyFix(index: number): void;
	newSession(agent: AgentId, cwd: string): void;
	adopt(conversation: ConversationRef): void;
	resumeConversation(conversation: ConversationRef): void;
	openPurgeConversation(conversation: ConversationRef): void;
	/** Read every folder's conversations (the view's `A`) into `state.allConversations`. */
	loadAllConversations(): void;
	/** Restore the last purge of this dashboard from the trash (the notice after a purge offers `u`). */
	undoPurge(): void;
	/** Read mam-tui's trash into `state.trash` (the trash view). */
	loadTrash(): void;
	/** Put one purge back from the trash (non-destructive: restore refuses rather than overwrite). */
	restoreTrash(purgeId: string): void;
	/** Hard-delete one purge from the trash; the trash view asked for the typed confirmation. */
	emptyTrash(purgeId: string): void;
}
