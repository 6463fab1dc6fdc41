import {ADAPTERS} from '../adapters/index.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {paneAgent} from '../domain/paneAgent.js';
import type {AgentId, AgentStatus, Pane, ProcessRef, SessionRecord} from '../domain/types.js';
import {createDriftMemo} from '../drift/detect.js';
import type {DriftInput} from '../drift/input.js';
import {sameTree} from '../mux/keepPanes.js';
import type {Multiplexer} from '../mux/types.js';
import type {Logger} from '../system/logger.js';
import {snapshotTable, type ProcessTable} from '../system/processes.js';
import {DiscoveryCache, type StatFn} from './discovery.js';
import {driftInputOf} from './driftInput.js';
import {createStatusProbe} from './liveStatus.js';
import {gatherJoinInputs, readListing, type Listing} from './refresh.js';
import {createConversationsMemo, createRowsMemo, joinLive, joinSnapshot, type JoinInputs, type LiveSnapshot} from './snapshot.js';

// THE refresh pipeline: one object that owns everything a refresh needs between the mux, /proc,
// the adapters and the pure join: the process table, the discovery cache (with its folder watch),
// the agents' status probe, drift's and the conversation list's memos and the last listing.
// `mam-tui status`, `mam-tui drift` and the dashboard's supervisor all refresh through it, so
// they judge the same facts the same way; a new caller (a remote `serve`) makes one too:
//
//   const pipeline = createRefreshPipeline({ctx, mux, processes, once: true});
//   try { const snapshot = await pipeline.refresh(registry.list()); … } finally { pipeline.close(); }
//
// A long-lived caller (the supervisor) keeps one and calls `refresh` again: each refresh then
// costs what changed (see DiscoveryCache), and unchanged rows, panes and lists keep their objects.

export interface RefreshPipelineDeps {
	/** Home, env, exec and clock for the adapters (its `processes` is replaced by the pipeline's table). */
	readonly ctx: AdapterContext;
	/** The backend, or null when none could be built (`muxProblem` says why). */
	readonly mux: Multiplexer | null;
	readonly muxProblem?: string;
	/** The process table; a one-shot pipeline reads it once, for the mux's trees, in-use and evidence alike. */
	readonly processes: ProcessTable;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
	readonly stat?: StatFn;
	readonly logger?: Logger;
	readonly now?: () => number;
	/**
	 * One refresh (`status`, `drift`, a remote request): one pass over /proc for everything, no
	 * watch signatures (no later refresh compares them), and the disk read while the mux lists.
	 */
	readonly once?: boolean;
	/** Watch the folders discovery reads (inotify) and call this when one changes (the dashboard). */
	readonly onChange?: () => void;
	/** false: no conversations and no findings (`status` shows neither); pins are still checked. */
	readonly conversations?: boolean;
}

/** What one refresh looks at. */
export interface PipelineRequest {
	/** Look at the disk again (what a change was seen in, or all without a folder watch); default true. */
	readonly rescan?: boolean;
	/** List the panes and processes again (default); false reuses the last listing (a file change). */
	readonly listPanes?: boolean;
	/** Stat every watch path, changed or not (the periodic safety net against a lost inotify event). */
	readonly full?: boolean;
}

export interface RefreshPipeline {
	/** One refresh: listing, agents' statuses, discovery, the join. Rejects only on a bug. */
	refresh(sessions: readonly SessionRecord[], request?: PipelineRequest): Promise<LiveSnapshot>;
	/** One refresh's facts as drift's input (`mam-tui drift`, `drift --fix`). */
	driftInput(sessions: readonly SessionRecord[], request?: PipelineRequest): Promise<DriftInput>;
	/**
	 * A status the mux pushed for one pane, shown at once from the last refresh's facts (no listing,
	 * no disk): the rows are joined again by the same rule as a refresh. Undefined when there is
	 * nothing to show (no listing yet, an unknown or own pane, the same status, another agent, or
	 * an agent's own record decides this pane's status).
	 */
	showStatus(paneId: string, status: AgentStatus, agent?: string): Pick<LiveSnapshot, 'panes' | 'live'> | undefined;
	/** The last listing's panes (null: the mux could not be reached; undefined: none yet). */
	panes(): readonly Pane[] | null | undefined;
	/** The known agent a pane runs, by the one rule (domain/paneAgent.ts). */
	agentOf(pane: Pane): AgentId | undefined;
	/** Would a disk-only refresh find anything to look at (see DiscoveryCache.wantsTick)? */
	wantsTick(): boolean;
	/** Stop watching folders. */
	close(): void;
}

/** Where a one-shot drift run gets its world from; everything is injected so tests use fakes and temp homes. */
export interface CollectSources {
	/** The registry rows (a Registry satisfies this). */
	readonly registry: {list(): readonly SessionRecord[]};
	readonly mux: Multiplexer | null;
	/** Why `mux` is null (shown as a note). */
	readonly muxProblem?: string;
	/** Home, env, exec, process table and clock for the adapters. */
	readonly ctx: AdapterContext;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
}

/**
 * `mam-tui drift`'s input: one refresh exactly as the dashboard's supervisor makes it (the mux's
 * panes with the agents' own statuses, where they disagree with herdr's drift says so), asked once.
 */
export async function collectDriftInput(sources: CollectSources): Promise<DriftInput> {
	const pipeline = createRefreshPipeline({
		ctx: sources.ctx,
		mux: sources.mux,
		...(sources.muxProblem ? {muxProblem: sources.muxProblem} : {}),
		processes: sources.ctx.processes,
		...(sources.adapters ? {adapters: sources.adapters} : {}),
		once: true,
	});
	try {
		return await pipeline.driftInput(sources.registry.list());
	} finally {
		pipeline.close();
	}
}

/** Kernel threads (kthreadd, pid 2, and its children) come and go by the minute; none runs an agent or holds a file. */
function userland(rows: readonly ProcessRef[]): readonly ProcessRef[] {
	return rows.filter(p => p.pid !== 2 && p.ppid !== 2);
}

/**
 * The last listing again when `next` shows the very same panes (the mux hands back last time's
 * array when no pane changed) and the same processes (pid, start, parent, name, argv). Everything
 * made from a listing alone (the agents' live uses, the open files, the in-use answers, drift's
 * indexes) is kept with it, so an idle minute's listing costs the listing, not a re-derivation
 * of the whole machine. A full refresh (every five minutes) takes the new listing whatever it shows.
 */
export function steadyListing(before: Listing | undefined, next: Listing, full: boolean): Listing {
	if (full || !before?.processes || !next.processes || next.panes !== before.panes || next.problem !== before.problem) return next;
	return sameTree(userland(before.processes), userland(next.processes)) ? before : next;
}

export function createRefreshPipeline(deps: RefreshPipelineDeps): RefreshPipeline {
	const once = deps.once === true;
	const adapters = deps.adapters ?? ADAPTERS;
	const now = deps.now ?? deps.ctx.now;
	// One moment, one pass over /proc: the mux's pane trees, in-use and pane evidence share it.
	const processes = once ? snapshotTable(deps.processes) : deps.processes;
	const ctx: AdapterContext = once ? {...deps.ctx, processes} : deps.ctx;
	const discovery = new DiscoveryCache({
		ctx,
		adapters,
		...(deps.stat ? {stat: deps.stat} : {}),
		...(deps.onChange ? {onChange: deps.onChange} : {}),
		...(once ? {once: true} : {}),
	});
	const agentOf = (pane: Pane): AgentId | undefined => paneAgent(pane, adapters);
	const status = createStatusProbe({ctx, mux: deps.mux, agentOf, ...(deps.logger ? {logger: deps.logger} : {})});
	const driftMemo = createDriftMemo();
	const conversationsMemo = createConversationsMemo();
	const rowsMemo = createRowsMemo();
	const source = {mux: deps.mux, ...(deps.muxProblem ? {muxProblem: deps.muxProblem} : {}), processes};
	const conversations = deps.conversations !== false;
	let listing: Listing | undefined;
	let last: {inputs: JoinInputs; snapshot: LiveSnapshot} | undefined;

	/**
	 * The listing of this refresh. A one-shot pipeline checks the rows the registry calls stopped
	 * while the mux lists (herdr works in its own process): the listing only tells which rows are
	 * live, and a live row's disk answers would go unused. Adapter reads are synchronous, so they
	 * start once the request to the mux is out.
	 */
	const listFor = async (sessions: readonly SessionRecord[], request: PipelineRequest): Promise<{listing: Listing; early: boolean}> => {
		if (request.listPanes === false && listing) return {listing, early: false};
		const listed = readListing(source);
		if (!once || last) return {listing: steadyListing(listing, await listed, request.full === true), early: false};
		const stopped = sessions.filter(s => s.status === 'stopped' || s.status === 'parked');
		const early = discovery.refresh(stopped, {rescan: true, conversations: false}).catch(() => undefined);
		const [result] = await Promise.all([listed, early]);
		return {listing: result, early: true};
	};

	const gather = async (sessions: readonly SessionRecord[], request: PipelineRequest): Promise<JoinInputs> => {
		const listed = await listFor(sessions, request);
		listing = listed.listing;
		return gatherJoinInputs({
			sessions,
			...source,
			discovery,
			listing: listed.listing,
			// After the early pass, only what it did not read (live rows' answers go unused anyway).
			rescan: listed.early ? false : request.rescan !== false,
			...(request.full ? {full: true} : {}),
			...(conversations ? {} : {conversations: false}),
			now,
			driftMemo,
			conversationsMemo,
			rowsMemo,
			status,
			...(last ? {previousLive: last.snapshot.live} : {}),
			adapters,
		});
	};

	return {
		async refresh(sessions, request = {}) {
			const inputs = await gather(sessions, request);
			const snapshot = joinSnapshot(inputs);
			last = {inputs, snapshot};
			return snapshot;
		},
		async driftInput(sessions, request = {}) {
			return driftInputOf(await gather(sessions, request));
		},
		showStatus(paneId, next, agent) {
			const shown = last?.inputs.panes;
			if (!last || !listing?.panes || !shown) return undefined;
			const pane = shown.find(p => p.id === paneId);
			if (!pane || pane.agentStatus === next) return undefined;
			const runs = agentOf(pane);
			if (runs === undefined || (agent !== undefined && agent !== runs)) return undefined;
			// The agent's own record overrode the mux here: the refresh that follows reads it again.
			if (pane.detection && pane.detection.source !== 'mux') return undefined;
			const patch = (p: Pane): Pane => (p.id === paneId ? {...p, agentStatus: next} : p);
			// The kept listing too: a refresh that reuses it (a file change) must not bring the old status back.
			listing = {...listing, panes: listing.panes.map(patch)};
			const panes = shown.map(patch);
			const inputs: JoinInputs = {...last.inputs, panes, previousLive: last.snapshot.live};
			const live = joinLive(inputs);
			last = {inputs, snapshot: {...last.snapshot, panes, live}};
			return {panes, live};
		},
		panes: () => listing?.panes,
		agentOf,
		wantsTick: () => discovery.wantsTick(),
		close: () => discovery.close(),
	};
}
