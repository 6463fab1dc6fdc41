import type {AdapterContext, AgentAdapter, InUseHolder} from '../adapters/types.js';
import type {Config} from '../config/config.js';
import type {Result} from '../domain/result.js';
import type {Multiplexer} from '../mux/types.js';
import type {Registry} from '../registry/registry.js';
import type {Logger} from '../system/logger.js';
import type {ProcessTable} from '../system/processes.js';

/** Everything an action touches, handed in so tests run actions against fixture worlds. */
export interface ActionDeps {
	readonly registry: Registry;
	/** The multiplexer backend; asked for lazily, since purge and adopt never need one. */
	readonly mux: () => Promise<Multiplexer>;
	/** The adapter for an agent name, or undefined for one this build does not know. */
	readonly adapterFor: (agent: string) => AgentAdapter | undefined;
	readonly context: AdapterContext;
	readonly processes: ProcessTable;
	readonly config: Config;
	readonly now: () => number;
	readonly logger?: Logger;
	/** Sends a signal to a pid. Defaults to process.kill; tests wrap it to prove who is never signalled. */
	readonly kill?: (pid: number, signal: NodeJS.Signals) => void;
	/** mam-tui's own pid: it and its ancestors are never signalled. Defaults to process.pid. */
	readonly selfPid?: number;
	/** `$MAM_HOME/trash`: where purges keep what they take out, for restore. Absent: purges are hard. */
	readonly trashDir?: string;
	/**
	 * mam-tui's search index (`$MAM_HOME/search.db`): a purge erases the conversation's rows in
	 * the same operation. Absent: no index to keep in step (tests, a world without a state folder).
	 */
	readonly searchIndex?: SearchIndexPort;
	/**
	 * mam-tui's parse memo (`$MAM_HOME/parse-memo.db`, src/system/parseMemo.ts): a purge erases
	 * the rows of every file its plan deletes or rewrites in the same operation. Absent: none.
	 */
	readonly parseMemo?: ParseMemoPort;
}

/** What purge needs of the parse memo. */
export interface ParseMemoPort {
	/** Erase the rows of these files (folders: every file under them), leaving no byte of them. */
	forget(paths: readonly string[]): void;
}

/** What purge needs of the search index. */
export interface SearchIndexPort {
	/** Erase these conversations' rows (no byte of their text left in the index's files). */
	forget(agent: string, ids: readonly string[]): void;
	/** Read a restored conversation and its descendants into the index now, not at the next watch pass. */
	indexAgain(adapter: AgentAdapter, context: AdapterContext, id: string): Promise<void>;
}

/** Names a session: by registry name, or by the agent's own conversation id. */
export type SessionRef = {readonly name: string} | {readonly agent: string; readonly id: string};

export const REFUSAL_KINDS = [
	'not-found',
	'bad-input',
	'unknown-agent',
	'unsupported',
	'purged',
	'unpinned',
	'live',
	'running',
	'in-use',
	'cwd-missing',
	'not-resumable',
	'self-pane',
	'mux-mismatch',
	'not-running',
	'not-confirmed',
	'changed',
	'failed',
] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/** Why an action did nothing (or, for `failed`, could not finish). `message` is shown as-is. */
export interface Refusal {
	readonly kind: RefusalKind;
	readonly message: string;
	/** For `in-use`: who holds the conversation. */
	readonly holders?: readonly InUseHolder[];
}

export type ActionResult<T> = Result<T, Refusal>;

export function refusal(kind: RefusalKind, message: string, holders?: readonly InUseHolder[]): {readonly ok: false; readonly error: Refusal} {
	return {ok: false, error: {kind, message, ...(holders ? {holders} : {})}};
}

/** `pid 123 (claude --resume …): argv names the id`, one holder per line. */
export function describeHolders(holders: readonly InUseHolder[]): string {
	return holders.map(h => `pid ${h.pid} (${h.command}): ${h.reason}`).join('; ');
}
