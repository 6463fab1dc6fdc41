import fs from 'node:fs';
import {ADAPTERS} from '../adapters/index.js';
import type {AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {
	isAgentId,
	type AgentId,
	type Conversation,
	type Finding,
	type LiveStatus,
	type MuxKind,
	type Pane,
	type ProcessRef,
	type ResumeState,
	type SessionRecord,
} from '../domain/types.js';
import {detectDrift, type DriftMemo} from '../drift/detect.js';
import type {DriftInput, SessionFacts} from '../drift/input.js';
import type {Multiplexer, MuxHealth} from '../mux/types.js';
import {ownPane, type PaneFacts} from '../drift/paneJoin.js';
import type {SessionLive} from '../store/state.js';
import {monotonicMs} from '../system/clock.js';
import type {ProcessTable} from '../system/processes.js';
import {inUseText} from './conversationUse.js';
import type {StatusProbe} from './liveStatus.js';
import {cwdKey, pinKey, inUseKey, type DiscoveryCache, type DiscoveryResult} from './discovery.js';

/** The live picture of registry, panes and disk at one moment: plain data, no handles. */
export interface LiveSnapshot {
	readonly at: number;
	readonly mux: MuxHealth | null;
	/** Why `panes` is null. */
	readonly muxProblem?: string;
	/** The panes, or null when the backend could not be reached (then nothing is judged "gone"). */
	readonly panes: readonly Pane[] | null;
	/** Per registry row, by session name. */
	readonly live: Readonly<Record<string, SessionLive>>;
	/** Panes that run a known agent but belong to no active row (mam-tui's own pane never counts). */
	readonly untracked: readonly Pane[];
	readonly conversations: readonly Conversation[];
	readonly findings: readonly Finding[];
}

type Adapters = Readonly<Record<AgentId, Pick<AgentAdapter, 'label' | 'idPattern' | 'matchesProcess'>>>;

/** What the pure join needs. */
export interface JoinInputs {
	readonly at: number;
	/** false: no drift detection (a snapshot taken without conversations, for `status`). */
	readonly findings?: boolean;
	readonly sessions: readonly SessionRecord[];
	readonly muxKind: MuxKind | null;
	readonly health: MuxHealth | null;
	readonly panes: readonly Pane[] | null;
	/** Why `panes` is null. */
	readonly muxProblem?: string;
	readonly discovery: DiscoveryResult;
	readonly processes: readonly ProcessRef[] | null;
	/** Does the folder exist (injected so the join stays testable without a disk). */
	readonly cwdExists: (cwd: string) => boolean;
	/** The realpath of a cwd when it differs (discovery matches conversations by realpath). */
	readonly realCwd?: (cwd: string) => string | undefined;
	readonly adapters?: Adapters;
	/** Keeps drift detection's work between refreshes (see `DriftMemo`); the live supervisor holds one. */
	readonly driftMemo?: DriftMemo;
	/** The last snapshot's live data: rows whose live data is equal keep those objects. */
	readonly previousLive?: Readonly<Record<string, SessionLive>>;
}

function agentOf(adapters: Adapters, agent: string): AgentId | undefined {
	return isAgentId(agent) && Object.hasOwn(adapters, agent) ? agent : undefined;
}

/** Does the pane run `agent`: the mux says so, or a process of its tree is that agent. */
function runsAgent(adapters: Adapters, pane: Pane, agent: AgentId): boolean {
	return pane.agent === agent || pane.processes.some(p => adapters[agent].matchesProcess(p));
}

/** The known agent a pane runs, if any. */
export function paneAgent(adapters: Adapters, pane: Pane): AgentId | undefined {
	if (pane.agent !== undefined && agentOf(adapters, pane.agent)) return pane.agent as AgentId;
	for (const proc of pane.processes) {
		const found = (Object.keys(adapters) as AgentId[]).find(id => adapters[id].matchesProcess(proc));
		if (found) return found;
	}
	return undefined;
}

/** The join's view of agents (the same questions drift asks its world). */
function joinFacts(adapters: Adapters): PaneFacts {
	return {
		runs: (pane, agent) => {
			const a = agentOf(adapters, agent);
			return a !== undefined && runsAgent(adapters, pane, a);
		},
		runsOther: (pane, agent) => {
			const other = paneAgent(adapters, pane);
			return other !== undefined && other !== agent;
		},
		reported: (pane, agent) => (pane.agentSessionId && (pane.agent === undefined || pane.agent === agent) ? pane.agentSessionId : undefined),
	};
}

/**
 * The pane a row lives in: its recorded pane (when the row belongs to this backend), else a pane
 * that reports the row's pinned conversation (a herdr pane moved to another workspace gets a new id).
 */
function paneOf(row: SessionRecord, inputs: Pick<JoinInputs, 'muxKind' | 'panes' | 'adapters'>, byId: ReadonlyMap<string, Pane>): Pane | undefined {
	const recorded = ownPane(row, byId, inputs.muxKind, joinFacts(inputs.adapters ?? ADAPTERS));
	if (recorded) return recorded;
	if (row.agentSessionId === null || row.status === 'purged') return undefined;
	return inputs.panes?.find(p => !p.isSelf && p.agentSessionId === row.agentSessionId && (p.agent === undefined || p.agent === row.agent));
}

function liveStatusOf(row: SessionRecord, pane: Pane | undefined, runs: boolean, reachable: boolean): LiveStatus {
	if (row.status === 'purged') return 'stopped';
	// The detectors' reading, unless it only repeats what the mux said (herdr's `done` stays `done`).
	if (pane && runs) return pane.detection && pane.detection.source !== 'mux' ? pane.detection.status : pane.agentStatus;
	if (pane) return 'exited';
	if (row.status === 'stopped') return 'stopped';
	// A running row whose pane cannot be seen: gone if the mux answered, unknown if it did not.
	return reachable ? 'exited' : 'unknown';
}


/** SPEC 6.1: resumable = pinned, on disk with a real message, cwd present, nobody using it. */
function resumeStateOf(row: SessionRecord, inputs: JoinInputs, pane: Pane | undefined, runs: boolean): ResumeState {
	if (row.status === 'purged') return {kind: 'no', reason: 'purged'};
	const agent = agentOf(inputs.adapters ?? ADAPTERS, row.agent);
	if (!agent) return {kind: 'unknown', reason: `unknown agent ${JSON.stringify(row.agent)}`};
	if (row.agentSessionId === null) return {kind: 'no', reason: 'no conversation pinned yet'};
	if (pane && runs) return {kind: 'no', reason: `live in pane ${pane.id}`};
	const verified = inputs.discovery.verify.get(pinKey(row.agent, row.agentSessionId, row.cwd));
	if (!verified) return {kind: 'unknown', reason: 'not checked yet'};
	if (verified.kind !== 'yes') return verified;
	if (!inputs.cwdExists(row.cwd)) return {kind: 'no', reason: `its folder ${row.cwd} no longer exists`};
	const use = inputs.discovery.inUse.get(inUseKey(row.agent, row.agentSessionId));
	if (!use) return {kind: 'unknown', reason: 'use not checked yet'};
	if (!use.ok) return {kind: 'unknown', reason: use.error};
	if (use.holders.length > 0) return {kind: 'no', reason: inUseText(use.holders)};
	return {kind: 'yes'};
}

function driftInputOf(inputs: JoinInputs): DriftInput {
	const facts = new Map<number, SessionFacts>();
	for (const row of inputs.sessions) {
		const real = inputs.realCwd?.(row.cwd);
		const found = inputs.discovery.byCwd.get(cwdKey(row.agent, row.cwd));
		const verify = row.agentSessionId === null ? undefined : inputs.discovery.verify.get(pinKey(row.agent, row.agentSessionId, row.cwd));
		const wantsCandidates = row.status === 'running' && row.agentSessionId === null;
		const candidates =
			wantsCandidates && found
				? found.ok
					? {ok: true as const, value: {conversations: found.conversations, problems: found.problems}}
					: {ok: false as const, error: found.error}
				: undefined;
		facts.set(row.id, {...(real ? {realCwd: real} : {}), ...(candidates ? {candidates} : {}), ...(verify ? {verify} : {})});
	}
	return {
		sessions: inputs.sessions,
		mux: inputs.muxKind,
		panes: inputs.panes,
		...(inputs.panes === null ? {muxProblem: inputs.muxProblem ?? inputs.health?.message ?? 'no multiplexer'} : {}),
		facts,
		processes: inputs.processes,
		...(inputs.discovery.paneEvidence ? {paneEvidence: inputs.discovery.paneEvidence} : {}),
	};
}

/** Registry ids of rows whose agent runs in their pane (resume state "live in pane"); the join decides the same way. */
export function liveRowIds(sessions: readonly SessionRecord[], panes: readonly Pane[] | null, muxKind: MuxKind | null, adapters: Adapters = ADAPTERS): Set<number> {
	const byId = new Map((panes ?? []).map(p => [p.id, p]));
	const live = new Set<number>();
	for (const row of sessions) {
		if (row.status === 'purged') continue;
		const pane = paneOf(row, {muxKind, panes, adapters}, byId);
		const agent = agentOf(adapters, row.agent);
		if (pane && !pane.isSelf && agent !== undefined && runsAgent(adapters, pane, agent)) live.add(row.id);
	}
	return live;
}

/** Join registry rows, panes and discovery into the snapshot. Pure but for the injected cwd checks. */
export function joinSnapshot(inputs: JoinInputs): LiveSnapshot {
	const adapters = inputs.adapters ?? ADAPTERS;
	const byId = new Map((inputs.panes ?? []).map(p => [p.id, p]));
	let live: Record<string, SessionLive> = {};
	const claimed = new Set<string>();
	const previous = inputs.previousLive;
	let changed = previous === undefined;
	for (const row of inputs.sessions) {
		const pane = paneOf(row, inputs, byId);
		const agent = agentOf(adapters, row.agent);
		const runs = pane !== undefined && !pane.isSelf && agent !== undefined && runsAgent(adapters, pane, agent);
		if (pane && row.status !== 'purged') claimed.add(pane.id);
		const next: SessionLive = {
			liveStatus: liveStatusOf(row, pane, runs, inputs.panes !== null),
			resumeState: resumeStateOf(row, inputs, pane, runs),
			...(pane ? {pane} : {}),
		};
		// A row whose live data did not change keeps its object, so the view can skip it.
		const before = previous && Object.hasOwn(previous, row.name) ? previous[row.name] : undefined;
		if (before && sameLive(before, next)) live[row.name] = before;
		else {
			live[row.name] = next;
			changed = true;
		}
	}
	// Nothing changed (a file-change refresh, for most rows): the very record of last time.
	if (!changed && previous && Object.keys(previous).length === Object.keys(live).length) live = previous as Record<string, SessionLive>;
	const untracked = (inputs.panes ?? []).filter(p => !p.isSelf && !claimed.has(p.id) && paneAgent(adapters, p) !== undefined);
	let findings: Finding[] = [];
	try {
		// Without conversations (status) there is nothing to judge drift against, and nobody shows findings.
		if (inputs.findings !== false) findings = detectDrift(driftInputOf(inputs), adapters, inputs.driftMemo);
	} catch {
		// The drift engine is pure; a bug in it must not take the live view down with it.
		findings = [];
	}
	return {
		at: inputs.at,
		mux: inputs.health,
		...(inputs.panes === null ? {muxProblem: inputs.muxProblem ?? inputs.health?.message ?? 'no multiplexer'} : {}),
		panes: inputs.panes,
		live,
		untracked,
		conversations: inputs.discovery.conversations,
		findings,
	};
}

function sameResume(a: ResumeState, b: ResumeState): boolean {
	return a.kind === b.kind && (a.kind === 'yes' || (b.kind !== 'yes' && a.reason === b.reason));
}

function sameLive(a: SessionLive, b: SessionLive): boolean {
	return a.liveStatus === b.liveStatus && a.pane === b.pane && sameResume(a.resumeState, b.resumeState);
}

function isDirectory(cwd: string): boolean {
	try {
		return fs.statSync(cwd).isDirectory();
	} catch {
		return false;
	}
}

function realpathIfDifferent(cwd: string): string | undefined {
	try {
		// One realpath(3) call, not an lstat per path component (the result is the same).
		const real = fs.realpathSync.native(cwd);
		return real === cwd ? undefined : real;
	} catch {
		return undefined;
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
	/** The last snapshot's live data (unchanged rows keep their objects). */
	readonly previousLive?: Readonly<Record<string, SessionLive>>;
	/** Reads the agents' statuses onto the panes (every refresh: records and changed screens). */
	readonly status?: StatusProbe;
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
 * One refresh: the mux's panes (one batched round) and one process table, then discovery
 * through its mtime cache, then the pure join. An unreachable mux leaves `panes` null and the
 * health saying why; it never fails the snapshot.
 */
export async function buildSnapshot(deps: SnapshotDeps): Promise<LiveSnapshot> {
	const {panes: listed, problem, processes} = deps.listing ?? (await readListing(deps));
	const panes = deps.status ? await deps.status.detect(listed) : listed;
	const live = liveRowIds(deps.sessions, panes, deps.mux?.kind ?? null);
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
	return joinSnapshot({
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
		...(deps.previousLive ? {previousLive: deps.previousLive} : {}),
		// Per cwd, not per row: 500 rows share a few dozen cwds.
		cwdExists: perRefresh(isDirectory),
		realCwd: perRefresh(realpathIfDifferent),
	});
}

/** `fn` asked once per distinct argument for the length of one refresh. */
function perRefresh<T>(fn: (cwd: string) => T): (cwd: string) => T {
	const known = new Map<string, T>();
	return cwd => {
		if (known.has(cwd)) return known.get(cwd) as T;
		const value = fn(cwd);
		known.set(cwd, value);
		return value;
	};
}
