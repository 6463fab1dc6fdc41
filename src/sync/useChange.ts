import {argvNames} from '../adapters/common/inUse.js';
import type {AdapterContext, AgentAdapter, InUseHolder} from '../adapters/types.js';
import type {AgentId, ProcessRef} from '../domain/types.js';

// What a new process listing changed for the registry rows' in-use answers (a view: purge, resume
// and stop ask inUse themselves, fresh). A busy machine starts and ends processes every second;
// asking every row again for each of them made a quiet dashboard's cost that of the machine's.

/** A process as the in-use answers name it: pid and start time (a reused pid is another process). */
export function identityOf(proc: Pick<ProcessRef, 'pid' | 'startTime'>): string {
	return `${proc.pid}:${proc.startTime}`;
}

/** What changed between two listings, as far as the in-use answers go. */
export interface UseChange {
	/** The processes (`identityOf`) of this listing: an answer naming one that is not here is asked again. */
	readonly now: ReadonlySet<string>;
	/** Could a new process use some conversation? Then every answer is asked again. */
	readonly newUsers: boolean;
}

/**
 * Folders whose open files are no conversation's: devices, the kernel's views, programs and
 * libraries, system configuration. A path elsewhere (a home, a project, /tmp) could be a store's.
 */
const NEVER_A_STORE = ['/dev/', '/proc/', '/sys/', '/usr/', '/lib/', '/lib32/', '/lib64/', '/bin/', '/sbin/', '/etc/'];

/** Could a process holding `file` open be holding a conversation's file? Pipes, sockets and anonymous inodes are not paths. */
function mayBeStoreFile(file: string): boolean {
	return file.startsWith('/') && !NEVER_A_STORE.some(dir => file.startsWith(dir));
}

/** A word no id of a shaped pattern (uuid, dated, prefixed) can be. */
const ANY_WORD = 'node';
/** As long as argv parts are made for ids (`argvNamesIn`'s floor). */
const ARGV_PART_LONGEST = 64;

/**
 * Could one of `added` use a conversation, by the in-use rule's three kinds of evidence? It is an
 * agent's process (its live uses), its argv has a word some agent's id pattern accepts or a
 * row pins (argv names an id), or it holds open a file outside the system's folders (a store's file). Fail safe:
 * a table that cannot read a few processes' open files says yes.
 */
async function mayUse(ctx: AdapterContext, adapters: readonly AgentAdapter[], added: readonly ProcessRef[], pinned: ReadonlySet<string>): Promise<boolean> {
	if (added.length === 0) return false;
	if (added.some(proc => adapters.some(adapter => adapter.matchesProcess(proc)))) return true;
	// An id pattern that takes any word (gemini's: `--session-id` takes the user's) would take every
	// argv: for those agents only the rows' own ids count (their sub-agents run inside the agent's process).
	const shaped = adapters.filter(adapter => !adapter.idPattern.test(ANY_WORD));
	for (const part of argvNames(added, ARGV_PART_LONGEST).byPart.keys()) {
		if (pinned.has(part) || shaped.some(adapter => adapter.idPattern.test(part))) return true;
	}
	const openOf = ctx.processes.openFilesOfPids?.bind(ctx.processes);
	if (!openOf) return true;
	return (await openOf(added.map(proc => proc.pid))).some(f => mayBeStoreFile(f.path));
}

/**
 * The change from `before` (the listing every answer was last judged under) to `after`. An answer
 * asked in between (a new row, under a listing of its own) saw at least what `before` had; what
 * came since is in `after` and judged here, and a holder that left is not in `now`.
 */
export async function listingChange(
	ctx: AdapterContext,
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
	before: readonly ProcessRef[],
	after: readonly ProcessRef[],
	/** The conversation ids the rows pin. */
	pinned: ReadonlySet<string>,
): Promise<UseChange> {
	const was = new Set(before.map(identityOf));
	const now = new Set(after.map(identityOf));
	const added = after.filter(proc => !was.has(identityOf(proc)));
	return {now, newUsers: await mayUse(ctx, Object.values(adapters), added, pinned)};
}

/** Must an answer made under the last listing be asked again after `change`? */
export function answerMoved(change: UseChange, answer: {readonly ok: true; readonly holders: readonly InUseHolder[]} | {readonly ok: false}): boolean {
	return change.newUsers || !answer.ok || answer.holders.some(h => !change.now.has(identityOf(h)));
}
