import fs from 'node:fs';
import type {AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, Pane, ProcessRef, SessionRecord} from '../domain/types.js';
import type {DriftMemo} from '../drift/detect.js';
import type {Multiplexer} from '../mux/types.js';
import type {SessionLive} from '../store/state.js';
import {monotonicMs} from '../system/clock.js';
import {folderExists} from '../system/folder.js';
import type {ProcessTable} from '../system/processes.js';
import type {DiscoveryCache} from './discovery.js';
import type {StatusProbe} from './liveStatus.js';
import {joinSnapshot, liveRowIds, type ConversationsMemo, type JoinInputs, type LiveSnapshot, type RowsMemo} from './snapshot.js';

// One refresh's I/O: the mux listing, the process table, discovery and the cwd checks, gathered
// into the pure join's inputs. Callers do not wire these steps themselves: the refresh pipeline
// (pipeline.ts `createRefreshPipeline`) owns them for status, drift and the supervisor alike.

function realpathIfDifferent(cwd: string): string | undefined {
	try {
		// One realpath(3) call, not an lstat per path component (the result is the same).
		const real = fs.realpathSync.native(cwd);
		return real === cwd ? undefined : real;
	} catch {
		return undefined; // a vanished cwd: the literal path is all there is
	}
}

/** What a refresh reads from. */
export interface SnapshotDeps {
	readonly sessions: readonly SessionRecord[];
	/** The backend, or null when none could be built (`muxProblem` says why). */
	readonly mux: Multiplexer | null;
	readonly muxProblem?: string;
	readonly discovery: Pick<DiscoveryCache, 'refresh'>;
	readonly processes: ProcessTable;
	/** A discovery tick (look at the disk again) rather than a pane event. */
	readonly rescan: boolean;
	/** With the discovery cache's folder watch: stat every watch path, changed or not. */
	readonly full?: boolean;
	/** Reuse this listing instead of asking the mux and /proc again (a refresh for a file change). */
	readonly listing?: Listing;
	/** false: skip discovering conversations (no conversations, no drift candidates); pins are still checked. */
	readonly conversations?: boolean;
	readonly now: () => number;
	/** Drift detection's memo, kept by the caller across refreshes. */
	readonly driftMemo?: DriftMemo;
	/** The conversation list's resume rule, kept by the caller across refreshes. */
	readonly conversationsMemo?: ConversationsMemo;
	/** The rows' join, kept by the caller across refreshes. */
	readonly rowsMemo?: RowsMemo;
	/** The last snapshot's live data (unchanged rows keep their objects). */
	readonly previousLive?: Readonly<Record<string, SessionLive>>;
	/** Reads the agents' statuses onto the panes (every refresh: records and changed screens). */
	readonly status?: StatusProbe;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
}

/** One listing of the mux's panes and of the process table. */
export interface Listing {
	/** The panes, or null when the backend could not be reached. */
	readonly panes: readonly Pane[] | null;
	/** Why `panes` is null. */
	readonly problem?: string;
	readonly processes: readonly ProcessRef[] | null;
}

/**
 * The mux's panes (one batched round) and one process table. The mux reads the process table
 * itself for the panes' trees (after asking the mux); a table that can say so hands that same
 * pass over, since it began after this listing did: one pass over /proc (a thousand processes,
 * tens of ms) instead of two.
 */
export async function readListing(deps: Pick<SnapshotDeps, 'mux' | 'muxProblem' | 'processes'>): Promise<Listing> {
	const began = monotonicMs();
	const listed: {panes: readonly Pane[] | null; problem?: string} = deps.mux
		? await deps.mux.listPanes().then(
				(panes): {panes: readonly Pane[] | null} => ({panes}),
				(error: unknown) => ({panes: null, problem: messageOf(error)}),
			)
		: {panes: null, problem: deps.muxProblem ?? 'no multiplexer'};
	const processes = deps.processes.listedSince?.(began) ?? (await deps.processes.list().catch(() => null));
	return {...listed, processes};
}

/**
 * One refresh's facts: the mux's panes (one batched round) and one process table, then discovery
 * through its mtime cache. An unreachable mux leaves `panes` null and the health saying why; it
 * never fails the refresh.
 */
export async function gatherJoinInputs(deps: SnapshotDeps): Promise<JoinInputs> {
	const {panes: listed, problem, processes} = deps.listing ?? (await readListing(deps));
	const panes = deps.status ? await deps.status.detect(listed) : listed;
	const live = liveRowIds(deps.sessions, panes, deps.mux?.kind ?? null, deps.adapters);
	const discovery = await deps.discovery.refresh(deps.sessions, {
		rescan: deps.rescan,
		live,
		...(deps.full ? {full: true} : {}),
		...(deps.conversations === false ? {conversations: false} : {}),
		...(processes ? {processes} : {}),
		...(deps.conversations === false ? {} : {panes}),
	});
	let health = deps.mux ? deps.mux.health() : null;
	// A refused listing (not a transport failure) leaves the backend "ok"; the listing still failed.
	if (health && problem && health.ok) health = {...health, ok: false, message: problem};
	return {
		at: deps.now(),
		sessions: deps.sessions,
		muxKind: deps.mux?.kind ?? null,
		health,
		panes,
		...(problem ? {muxProblem: problem} : {}),
		discovery,
		processes,
		...(deps.conversations === false ? {findings: false} : {}),
		...(deps.driftMemo ? {driftMemo: deps.driftMemo} : {}),
		...(deps.conversationsMemo ? {conversationsMemo: deps.conversationsMemo} : {}),
		...(deps.rowsMemo ? {rowsMemo: deps.rowsMemo} : {}),
		...(deps.previousLive ? {previousLive: deps.previousLive} : {}),
		...(deps.adapters ? {adapters: deps.adapters} : {}),
		// Per cwd, not per row: 500 rows share a few dozen cwds.
		cwdExists: perRefresh(folderExists),
		realCwd: perRefresh(realpathIfDifferent),
	};
}

/** One refresh: gather the facts, then the pure join. */
export async function buildSnapshot(deps: SnapshotDeps): Promise<LiveSnapshot> {
	return joinSnapshot(await gatherJoinInputs(deps));
}

/** `fn` asked once per distinct argument for the length of one refresh (or one command). */
export function perRefresh<T>(fn: (cwd: string) => T): (cwd: string) => T {
	const known = new Map<string, T>();
	return cwd => {
		if (known.has(cwd)) return known.get(cwd) as T;
		const value = fn(cwd);
		known.set(cwd, value);
		return value;
	};
}
