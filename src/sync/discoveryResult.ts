import type {InUseHolder} from '../adapters/types.js';
import type {Conversation, ResumeState} from '../domain/types.js';
import type {PaneEvidence} from '../drift/input.js';

// What discovery hands the join (snapshot.ts, driftInput.ts) and the keys it is looked up by.
// Its own module so the cache (discovery.ts) and the list it merges (discoveryMerge.ts) both
// import it without importing each other.

/** What one `discover(cwd)` found (parents only, every age), or why it failed. */
export type CwdFacts =
	{readonly ok: true; readonly conversations: readonly Conversation[]; readonly problems: readonly string[]} | {readonly ok: false; readonly error: string};

/** Who uses a conversation, or why that could not be told. */
export type UseFacts = {readonly ok: true; readonly holders: readonly InUseHolder[]} | {readonly ok: false; readonly error: string};

/** Everything the adapters said, keyed so the snapshot can look rows up. */
export interface DiscoveryResult {
	/** By `cwdKey(agent, cwd)`. */
	readonly byCwd: ReadonlyMap<string, CwdFacts>;
	/** By `pinKey(agent, id, cwd)`. */
	readonly verify: ReadonlyMap<string, ResumeState>;
	/** By `inUseKey(agent, id)`: processes using the conversation (checked only where verify said yes). */
	readonly inUse: ReadonlyMap<string, UseFacts>;
	/** Every conversation found in the known cwds, newest first, registered or not. */
	readonly conversations: readonly Conversation[];
	/** By pane id: which conversation the agent of a pane no pinned row accounts for is on (asked only when `panes` were given). */
	readonly paneEvidence?: ReadonlyMap<string, PaneEvidence>;
	/**
	 * The folders of `conversations` whose adapter verdict is `yes` (`resumableFolders`), or more:
	 * the join asks each whether it still exists. Absent: the join works them out from the list.
	 */
	readonly folders?: readonly string[];
}

/** The distinct folders of `list`'s conversations whose adapter verdict is `yes`, in list order. */
export function resumableFolders(list: readonly Conversation[]): string[] {
	const cwds = new Set<string>();
	for (const c of list) if (c.resumeState.kind === 'yes') cwds.add(c.cwd);
	return [...cwds];
}

export const cwdKey = (agent: string, cwd: string): string => `${agent}\0${cwd}`;

export const pinKey = (agent: string, id: string, cwd: string): string => `${agent}\0${id}\0${cwd}`;

export const inUseKey = (agent: string, id: string): string => `${agent}\0${id}`;
