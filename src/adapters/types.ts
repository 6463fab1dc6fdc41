import type {AgentId, Conversation, PlanItemKind, ProcessRef} from '../domain/types.js';
import type {LiveUse} from './common/liveEvidence.js';
import type {Exec} from '../system/exec.js';
import type {ProcessTable} from '../system/processes.js';
import type {ReadPool} from '../system/sqliteRead.js';
import type {ParseCache, Refresh} from './common/refresh.js';

/**
 * The world an adapter works in. Adapters never reach for `os.homedir()`, `process.env` or
 * execa themselves: everything comes from here, so tests point them at fixture homes.
 */
export interface AdapterContext {
	/** Whose agent data to read (`--home`, else `$HOME_DIR`, else `$HOME`). */
	readonly home: string;
	/**
	 * True when `home` is the caller's own home. Only then do env overrides such as
	 * `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_DATA_HOME` apply (SPEC 4.2); for any other home the
	 * adapter uses the default layout under that home.
	 */
	readonly ownHome: boolean;
	readonly env: Readonly<Record<string, string | undefined>>;
	/** Starts processes from argv arrays (the agent's own delete command, for instance). */
	readonly exec: Exec;
	readonly processes: ProcessTable;
	/** Milliseconds since the Unix epoch. */
	readonly now: () => number;
	/** A private scratch folder root (for sqlite copies); adapters remove what they create. */
	readonly tmpDir: string;
	/**
	 * Set only for the length of one refresh (the discovery cache makes one per refresh): a
	 * refresh asks `verify` and `inUse` once per row, and without it every call would read the
	 * whole store again (500 rows × 20,000 conversations). Adapters keep whole-store scans, parsed
	 * files and vouched listings in it (common/refresh.ts); absent everywhere else, so actions and
	 * purges always read fresh.
	 */
	readonly refresh?: Refresh;
	/**
	 * Parsed files kept across calls by whoever owns this context for long (one mam-tui process's
	 * world): the conversations view, the live refreshes and the actions then parse a file again
	 * only when it changed. Absent: every call outside a refresh parses what it reads.
	 */
	readonly parses?: ParseCache;
	/**
	 * Read connections kept open for one refresh (or one search sync) by its owner, which closes
	 * them when it ends: every row's call then opens a shared store once. Pass it to
	 * `withReadOnlyDb`; absent, each read opens and closes its own connection.
	 */
	readonly reads?: ReadPool;
}

/** One message of a conversation as the search index keeps it: who said it, when, and its text. */
export interface ConversationMessage {
	/** `user`, `assistant`, … as the agent records it. */
	readonly role: string;
	/** ms since the epoch; 0 when the record has no time. */
	readonly at: number;
	readonly text: string;
}

import type {TokenUsage} from '../domain/usage.js';
export type {TokenUsage};

/** What `messages` read: the messages after `since`, and where the next read starts. */
export interface MessageRead {
	readonly messages: readonly ConversationMessage[];
	/** Opaque to callers: hand it back as `since` to read only what came after. */
	readonly cursor: string;
	/**
	 * True when the source does not continue from `since` (rewound, rewritten, replaced): the
	 * messages are the whole conversation, and what was read before must be forgotten.
	 */
	readonly restart: boolean;
	/** The conversation's total usage so far (not this read's share); absent when the agent records none. */
	readonly usage?: TokenUsage;
	/** Started without a person at the keyboard (`codex exec`, `claude -p`, a gateway). */
	readonly headless?: boolean;
}

/** Filters for `discover`. */
export interface DiscoverQuery {
	/** Only conversations whose recorded cwd (realpath) equals this one. */
	readonly cwd?: string;
	/** Only conversations created at or after this time (ms). */
	readonly since?: number;
	/** Include child / sub-agent conversations (default: parents only). */
	readonly includeChildren?: boolean;
	/**
	 * The caller reads only the facts (id, cwd, times, title, parent: the search index): an
	 * adapter may leave out what costs a read per conversation for nothing else (resumeState is
	 * then `unknown`).
	 */
	readonly factsOnly?: boolean;
}

/** What discovery found, plus problems that made part of the store unreadable. */
export interface DiscoverResult {
	/** Newest first (by createdAt). */
	readonly conversations: readonly Conversation[];
	/** Per-store problems (`<path>: database is locked`), shown as `unknown: <reason>`. */
	readonly problems: readonly string[];
}

/** A command to start in a pane. */
export interface LaunchSpec {
	readonly argv: readonly string[];
	readonly env?: Readonly<Record<string, string>>;
}

/**
 * One step of a graceful exit. `command` types the exit command (the adapter's `text`, or the
 * user's `agents.<a>.exitInput`); `pause` waits, because codex and gemini drop an Enter that
 * follows typed text at once (exit-input.md: 0 of 9 exits each without a pause).
 */
export type ExitStep = {readonly kind: 'keys'; readonly keys: readonly string[]} | {readonly kind: 'command'} | {readonly kind: 'pause'; readonly ms: number};

/**
 * What the pane's screen says about typing into it, read from its plain text (no escapes).
 * `draft`: the composer holds text the user typed; `lines` is how many rows it spans.
 * `blocked`: an approval dialog has the keyboard, so typed keys would answer it.
 * `unknown`: no composer this reader recognises (another version, a menu, a half-drawn screen).
 */
export type ComposerState =
	| {readonly kind: 'empty'}
	| {readonly kind: 'draft'; readonly lines: number}
	| {readonly kind: 'blocked'; readonly prompt: string}
	| {readonly kind: 'unknown'; readonly reason: string};

/** How a graceful stop asks the agent to exit (SPEC 4.4). */
export interface ExitInput {
	/** The exit command (e.g. `/exit`); config `agents.<a>.exitInput` replaces it. */
	readonly text: string;
	/** Keys, the command and pauses, in order. */
	readonly steps: readonly ExitStep[];
	/**
	 * Reads the agent's composer from the last rows of its pane. Absent for agents whose
	 * screens were never captured: the steps then run without that check.
	 */
	readonly readScreen?: (screen: string) => ComposerState;
	/** Where the sequence comes from (`measured …` / `unverified …`), shown in the stop's progress. */
	readonly evidence: string;
}

export type {PlanItemKind};

/** One thing a purge will delete. */
export interface PlanItem {
	readonly kind: PlanItemKind;
	/** The file or folder (for `rows`: the database; for `lines` and `key`: the shared file). */
	readonly path: string;
	/** For `rows`: the table and how many rows; for `lines`: how many lines; for `key`: how many members. */
	readonly table?: string;
	readonly count?: number;
	/** Bytes freed (files and folders: on-disk size; rows/lines: an estimate, may be 0). */
	readonly bytes: number;
	/** The conversation id this item belongs to (the target or one of its descendants). */
	readonly sessionId: string;
	/** One line a user understands: `transcript`, `sub-agent transcript`, `history.jsonl lines`. */
	readonly description: string;
}

/** The complete purge plan of SPEC 4.1 `artifacts`. */
export interface PurgePlan {
	readonly agent: AgentId;
	readonly id: string;
	/** Child / sub-agent / continuation ids at every depth. */
	readonly descendants: readonly string[];
	readonly items: readonly PlanItem[];
	readonly totalBytes: number;
	/** Places that name the id and that purge deliberately leaves, each with why (shown with the plan). */
	readonly kept?: readonly KeptPlace[];
	/**
	 * Files the purge changes besides its items, each with why: what the agent's own delete
	 * command writes (codex logs into its log database). Shown with the plan; not copied to the
	 * trash (they are the agent's, not the conversation's).
	 */
	readonly changed?: readonly KeptPlace[];
}

/** A place that names the conversation and stays, with the reason. */
export interface KeptPlace {
	readonly path: string;
	readonly reason: string;
}

export interface PurgeOutcome {
	readonly removed: readonly PlanItem[];
	/** Non-fatal problems (the agent's delete command missing or failing, …). */
	readonly warnings: readonly string[];
	/**
	 * Databases whose freed pages could not be overwritten yet because the agent holds them
	 * (common/sqlitePurge.ts `eraseFreed`), one residual line each: the rows are gone, their bytes may not be.
	 */
	readonly held?: readonly string[];
}

/** A process that uses a conversation. */
export interface InUseHolder {
	readonly pid: number;
	readonly startTime: number;
	readonly command: string;
	/** `argv names the id`, `holds <path> open`, `live session record`. */
	readonly reason: string;
}

export interface AdapterCapabilities {
	readonly resume: boolean;
	readonly purge: boolean;
}

/** Thrown when an id does not match the adapter's pattern; nothing was touched. */
export class InvalidIdError extends Error {
	constructor(agent: AgentId, id: string) {
		super(`invalid ${agent} session id ${JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id)}`);
		this.name = 'InvalidIdError';
	}
}

/**
 * One agent (SPEC 4.1). Every method that takes an id validates it against `idPattern`
 * first and throws InvalidIdError before any I/O.
 */
export interface AgentAdapter {
	readonly id: AgentId;
	/** Human name shown in the UI (`Claude Code`). */
	readonly label: string;
	/** Static so the contract suite can gate tests at collection time. */
	readonly capabilities: AdapterCapabilities;
	/** Anchored regex every valid agent session id matches. */
	readonly idPattern: RegExp;
	/** How the agent's process shows in `ps` (comm or argv[0] basename, or the script a runtime runs). */
	readonly processNames: readonly string[];
	/** Long-lived, idle-by-nature children (a standalone server); stall detection ignores them. */
	readonly residentChildren: readonly string[];
	/** What a graceful stop types (SPEC 4.4); config may override the text. */
	readonly exitInput: ExitInput;

	/** The argv (+env) that starts a new conversation in `cwd`. Pure. */
	spawn(ctx: AdapterContext, cwd: string): LaunchSpec;
	/**
	 * Optional. Run by mam-tui just before it starts the agent on `id` (resume) and after it
	 * stopped it: removes what the agent leaves that would make it destroy the conversation at its
	 * next start (gemini 0.61's header-only stub, REAL.md surprise 12). Returns the files removed.
	 */
	guardConversation?(ctx: AdapterContext, id: string): Promise<readonly string[]>;
	/** The argv that resumes conversation `id` (SPEC 4.4). Pure; run it in the conversation's cwd. */
	resume(ctx: AdapterContext, id: string): LaunchSpec;
	/** True when `proc` is this agent's process (argv / name). Pure. */
	matchesProcess(proc: ProcessRef): boolean;

	/**
	 * Conversations on disk matching `query`, newest first, parents only unless asked.
	 * Read-only and trace-free (SPEC 4.3); a missing root yields an empty result, never a throw;
	 * an unreadable store is reported in `problems`.
	 */
	discover(ctx: AdapterContext, query?: DiscoverQuery): Promise<DiscoverResult>;
	/**
	 * Optional. The files and folders whose modification time (or size) changes whenever
	 * `discover` or `verify` for `cwd` could answer differently: the store's folder (its mtime
	 * changes when a conversation file is added or removed), files that grow in place, a database
	 * and its `-wal`. Only stat()ed, never opened. The live snapshot re-runs discovery for `cwd`
	 * only when one of them changed; without this member it re-runs on every discovery tick.
	 */
	watchPaths?(ctx: AdapterContext, cwd: string): readonly string[];
	/**
	 * Does a resumable artifact for `id` exist (holding at least one real message), and, when
	 * `cwd` is given, does it belong to that cwd? A child id verifies too. `unknown` when the
	 * store cannot be read.
	 */
	verify(ctx: AdapterContext, id: string, cwd?: string): Promise<Conversation['resumeState']>;
	/**
	 * The conversation's messages after `since` (a cursor an earlier call returned; absent: from
	 * the start), read-only and trace-free like `discover`. Append-only files are read from the
	 * byte offset the cursor holds, databases from the row id or sequence number it holds.
	 * Undefined when the conversation is not on disk.
	 */
	messages(ctx: AdapterContext, id: string, since?: string): Promise<MessageRead | undefined>;
	/** The complete purge plan: every file, folder and row naming `id` or a descendant, with sizes. */
	artifacts(ctx: AdapterContext, id: string): Promise<PurgePlan>;
	/**
	 * Delete exactly `plan`, the one `artifacts` returned and the user was shown (the agent's own
	 * delete command first where it has one, then what it left). Checks the plan with
	 * `assertPlanOf` first. Every deleted path resolves inside the agent's root; symlinks are not
	 * followed.
	 */
	purge(ctx: AdapterContext, plan: PurgePlan): Promise<PurgeOutcome>;
	/** What still names `id` or a descendant after a purge; each line says where (`[child session X]`). */
	residual(ctx: AdapterContext, id: string): Promise<readonly string[]>;
	/**
	 * Processes using the conversation: argv naming the id, or holding its files open —
	 * except the agent's known background service. Empty when nobody uses it.
	 */
	inUse(ctx: AdapterContext, id: string): Promise<readonly InUseHolder[]>;
	/**
	 * Optional. Which conversation each live process of this agent is on, with the evidence
	 * (README "In use"): of `procs` (a pane's tree, for adopt), else of every process of the
	 * agent. The agent's background service gets no entry. `inUse` answers from the same claims.
	 */
	liveUses?(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<readonly LiveUse[]>;
}

/** Throw InvalidIdError unless `id` matches `adapter.idPattern`. Call first in every id-taking method. */
export function assertValidId(adapter: Pick<AgentAdapter, 'id' | 'idPattern'>, id: string): void {
	if (typeof id !== 'string' || id.length === 0 || id.length > 256 || !adapter.idPattern.test(id)) {
		throw new InvalidIdError(adapter.id, String(id));
	}
}

/**
 * Throw unless `plan` is this adapter's and its id matches `idPattern` (InvalidIdError): call
 * first in `purge`. Descendants need not match (claude's sub-agents are `agent-…`); the paths are
 * held inside the agent's roots by the deleters themselves.
 */
export function assertPlanOf(adapter: Pick<AgentAdapter, 'id' | 'idPattern'>, plan: PurgePlan): void {
	if (plan.agent !== adapter.id) throw new Error(`a ${String(plan.agent)} purge plan handed to the ${adapter.id} adapter`);
	assertValidId(adapter, plan.id);
}
