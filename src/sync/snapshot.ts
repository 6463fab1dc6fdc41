import {ADAPTERS} from '../adapters/index.js';
import type {AgentAdapter} from '../adapters/types.js';
import {NOBODY, resumability} from '../domain/resumability.js';
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
import {paneAgent, reportedId, runsAgent} from '../domain/paneAgent.js';
import {paneStatus} from '../domain/paneStatus.js';
import {detectDrift, type DriftMemo} from '../drift/detect.js';
import {ownPane} from '../drift/paneJoin.js';
import type {MuxHealth} from '../mux/types.js';
import type {SessionLive} from '../store/state.js';
import {driftInputOf} from './driftInput.js';
import {pinKey, inUseKey, resumableFolders, type DiscoveryResult} from './discoveryResult.js';

// The pure join of one refresh: registry rows, panes and what discovery found → the snapshot the
// dashboard shows (live data and resume state per row, untracked panes, conversations, findings).
// The I/O that gathers its inputs is in refresh.ts.

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
	/** Keeps the conversation list's resume rule between refreshes (see `ConversationsMemo`). */
	readonly conversationsMemo?: ConversationsMemo;
	/** Keeps the rows' join between refreshes (see `RowsMemo`). */
	readonly rowsMemo?: RowsMemo;
	/** The last snapshot's live data: rows whose live data is equal keep those objects. */
	readonly previousLive?: Readonly<Record<string, SessionLive>>;
}

function agentOf(adapters: Adapters, agent: string): AgentId | undefined {
	return isAgentId(agent) && Object.hasOwn(adapters, agent) ? agent : undefined;
}

/** The panes by id, and by the conversation they report (in listing order). */
interface PaneIndex {
	readonly byId: ReadonlyMap<string, Pane>;
	readonly byConversation: ReadonlyMap<string, readonly Pane[]>;
}

function indexPanes(panes: readonly Pane[] | null): PaneIndex {
	const byConversation = new Map<string, Pane[]>();
	for (const pane of panes ?? []) {
		if (pane.isSelf || !pane.agentSessionId) continue;
		const same = byConversation.get(pane.agentSessionId);
		if (same) same.push(pane);
		else byConversation.set(pane.agentSessionId, [pane]);
	}
	return {byId: new Map((panes ?? []).map(p => [p.id, p])), byConversation};
}

/**
 * The pane a row lives in: its recorded pane (when the row belongs to this backend), else a pane
 * that reports the row's pinned conversation (a herdr pane moved to another workspace gets a new id).
 */
function paneOf(row: SessionRecord, muxKind: MuxKind | null, index: PaneIndex, adapters: Adapters): Pane | undefined {
	const recorded = ownPane(row, index.byId, muxKind, adapters);
	if (recorded) return recorded;
	if (row.agentSessionId === null || row.status === 'purged') return undefined;
	return index.byConversation.get(row.agentSessionId)?.find(p => reportedId(p, row.agent) !== undefined);
}

function liveStatusOf(row: SessionRecord, pane: Pane | undefined, runs: boolean, reachable: boolean): LiveStatus {
	if (row.status === 'purged') return 'stopped';
	if (pane && runs) return paneStatus(pane);
	if (pane) return 'exited';
	if (row.status === 'stopped' || row.status === 'parked') return 'stopped';
	// A running row whose pane cannot be seen: gone if the mux answered, unknown if it did not.
	return reachable ? 'exited' : 'unknown';
}

/** SPEC 6.1 by the one rule (domain/resumability.ts), from what this refresh found out. */
function resumeStateOf(row: SessionRecord, inputs: JoinInputs, pane: Pane | undefined, runs: boolean, cwdExists: (cwd: string) => boolean): ResumeState {
	if (row.status !== 'purged' && !agentOf(inputs.adapters ?? ADAPTERS, row.agent))
		return {kind: 'unknown', reason: `unknown agent ${JSON.stringify(row.agent)}`};
	const pin = row.agentSessionId;
	return resumability({
		purged: row.status === 'purged',
		pin,
		...(pane && runs ? {livePane: pane.id} : {}),
		cwd: row.cwd,
		cwdPresent: cwdExists(row.cwd),
		onDisk: pin === null ? undefined : inputs.discovery.verify.get(pinKey(row.agent, pin, row.cwd)),
		use: pin === null ? undefined : inputs.discovery.inUse.get(inUseKey(row.agent, pin)),
	}).state;
}

/**
 * What `conversationsOf` gave last time, for the same list and the same missing folders: the same
 * array again (the view skips an unchanged list of 20,000). The supervisor keeps one.
 */
export interface ConversationsMemo {
	last?: {readonly list: readonly Conversation[]; readonly missing: string; readonly out: readonly Conversation[]};
	/**
	 * The copies made for the folders in `missing`, by the adapter's conversation object: a file
	 * change gives a new list that holds all but one of the same objects, and copying every
	 * conversation of a missing folder again cost milliseconds a refresh (and the garbage).
	 */
	copies?: {readonly missing: string; readonly made: WeakMap<Conversation, Conversation>};
	/** The folders of the list's resumable conversations (a few dozen for 20,000 conversations). */
	folders?: {readonly list: readonly Conversation[]; readonly cwds: readonly string[]};
}

/** `list`'s resumable folders: discovery's (`folders`) when it gave them, else worked out once per list. */
function foldersOf(list: readonly Conversation[], given: readonly string[] | undefined, memo?: ConversationsMemo): readonly string[] {
	if (given) return given;
	if (memo?.folders?.list === list) return memo.folders.cwds;
	const folders = {list, cwds: resumableFolders(list)};
	if (memo) memo.folders = folders;
	return folders.cwds;
}

export function createConversationsMemo(): ConversationsMemo {
	return {};
}

/**
 * The conversation list with the resume rule applied: the adapter's verdict (with the in-use rule
 * already applied by discovery) and the folder check. The same array when every folder is there.
 */
export function conversationsOf(
	list: readonly Conversation[],
	cwdExists: (cwd: string) => boolean,
	memo?: ConversationsMemo,
	folders?: readonly string[],
): readonly Conversation[] {
	// Each folder asked once per refresh, not each conversation (the list stands across most refreshes).
	const missing = new Set(foldersOf(list, folders, memo).filter(cwd => !cwdExists(cwd)));
	if (missing.size === 0) return list;
	const key = [...missing].sort().join('\0');
	const last = memo?.last;
	if (last && last.list === list && last.missing === key) return last.out;
	const made = memo?.copies?.missing === key ? memo.copies.made : new WeakMap<Conversation, Conversation>();
	const out = list.map(c => {
		if (c.resumeState.kind !== 'yes' || !missing.has(c.cwd)) return c;
		let copy = made.get(c);
		if (!copy) {
			copy = {...c, resumeState: conversationResumeState(c, false)};
			made.set(c, copy);
		}
		return copy;
	});
	if (memo) {
		memo.last = {list, missing: key, out};
		memo.copies = {missing: key, made};
	}
	return out;
}

/** One conversation's resume state by the rule; `resumeState` is the adapter's (and discovery's in-use) verdict. */
export function conversationResumeState(c: Pick<Conversation, 'id' | 'cwd' | 'resumeState'>, cwdPresent: boolean): ResumeState {
	return resumability({pin: c.id, cwd: c.cwd, cwdPresent, onDisk: c.resumeState, use: NOBODY}).state;
}

/** Registry ids of rows whose agent runs in their pane (resume state "live in pane"); the join decides the same way. */
export function liveRowIds(
	sessions: readonly SessionRecord[],
	panes: readonly Pane[] | null,
	muxKind: MuxKind | null,
	adapters: Adapters = ADAPTERS,
): Set<number> {
	const index = indexPanes(panes);
	const live = new Set<number>();
	for (const row of sessions) {
		if (row.status === 'purged') continue;
		const pane = paneOf(row, muxKind, index, adapters);
		if (pane && runsAgent(pane, row.agent, adapters)) live.add(row.id);
	}
	return live;
}

/**
 * Each row's live data (pane, live status, resume state) by the one join; rows whose live data
 * did not change keep last time's objects (and the whole record stays the same when none did).
 */
export function joinLive(inputs: JoinInputs): Readonly<Record<string, SessionLive>> {
	return joinRows(inputs).live;
}

type JoinedRows = {readonly live: Readonly<Record<string, SessionLive>>; readonly claimed: ReadonlySet<string>};

/**
 * The rows' last join and everything it read: the same rows, panes and answers (the very
 * objects: discovery keeps an answer's object while it stands) and the same folders present give
 * the same join. A file change re-reads a conversation list, which the rows' join never reads:
 * joining 500 rows again for it cost milliseconds a refresh. The pipeline keeps one.
 */
export interface RowsMemo {
	last?: {
		readonly inputs: Pick<JoinInputs, 'sessions' | 'panes' | 'muxKind' | 'adapters'>;
		readonly verify: DiscoveryResult['verify'];
		readonly inUse: DiscoveryResult['inUse'];
		/** Each row cwd's answer from `cwdExists`. */
		readonly cwds: ReadonlyMap<string, boolean>;
		readonly joined: JoinedRows;
	};
}

export function createRowsMemo(): RowsMemo {
	return {};
}

/** The same keys with the very same values (in any order)? */
function sameValues<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean {
	if (a === b) return true;
	if (a.size !== b.size) return false;
	for (const [key, value] of b) if (a.get(key) !== value) return false;
	return true;
}

/** The memo's join, when `inputs` are what it was made from and every folder it asked about is as it was. */
function keptRows(memo: RowsMemo | undefined, inputs: JoinInputs): JoinedRows | undefined {
	const last = memo?.last;
	if (!last) return undefined;
	const was = last.inputs;
	if (was.sessions !== inputs.sessions || was.panes !== inputs.panes || was.muxKind !== inputs.muxKind || was.adapters !== inputs.adapters) return undefined;
	if (!sameValues(last.verify, inputs.discovery.verify) || !sameValues(last.inUse, inputs.discovery.inUse)) return undefined;
	for (const [cwd, present] of last.cwds) if (inputs.cwdExists(cwd) !== present) return undefined;
	return last.joined;
}

function joinRows(inputs: JoinInputs): JoinedRows {
	const kept = keptRows(inputs.rowsMemo, inputs);
	if (kept) return kept;
	const cwds = new Map<string, boolean>();
	const cwdExists = (cwd: string): boolean => {
		let present = cwds.get(cwd);
		if (present === undefined) cwds.set(cwd, (present = inputs.cwdExists(cwd)));
		return present;
	};
	const joined = joinEachRow(inputs, indexPanes(inputs.panes), cwdExists);
	if (inputs.rowsMemo) {
		const {sessions, panes, muxKind, adapters} = inputs;
		inputs.rowsMemo.last = {inputs: {sessions, panes, muxKind, adapters}, verify: inputs.discovery.verify, inUse: inputs.discovery.inUse, cwds, joined};
	}
	return joined;
}

function joinEachRow(inputs: JoinInputs, index: PaneIndex, cwdExists: (cwd: string) => boolean): JoinedRows {
	const adapters = inputs.adapters ?? ADAPTERS;
	const live: Record<string, SessionLive> = {};
	const claimed = new Set<string>();
	const previous = inputs.previousLive;
	let changed = previous === undefined;
	for (const row of inputs.sessions) {
		const pane = paneOf(row, inputs.muxKind, index, adapters);
		const runs = pane !== undefined && runsAgent(pane, row.agent, adapters);
		if (pane && row.status !== 'purged') claimed.add(pane.id);
		const next: SessionLive = {
			liveStatus: liveStatusOf(row, pane, runs, inputs.panes !== null),
			resumeState: resumeStateOf(row, inputs, pane, runs, cwdExists),
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
	if (!changed && previous && Object.keys(previous).length === Object.keys(live).length) return {live: previous, claimed};
	return {live, claimed};
}

/** Join registry rows, panes and discovery into the snapshot. Pure but for the injected cwd checks. */
export function joinSnapshot(inputs: JoinInputs): LiveSnapshot {
	const adapters = inputs.adapters ?? ADAPTERS;
	const {live, claimed} = joinRows(inputs);
	const untracked = (inputs.panes ?? []).filter(p => !claimed.has(p.id) && paneAgent(p, adapters) !== undefined);
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
		conversations: conversationsOf(inputs.discovery.conversations, inputs.cwdExists, inputs.conversationsMemo, inputs.discovery.folders),
		findings,
	};
}

function sameResume(a: ResumeState, b: ResumeState): boolean {
	return a.kind === b.kind && (a.kind === 'yes' || (b.kind !== 'yes' && a.reason === b.reason));
}

function sameLive(a: SessionLive, b: SessionLive): boolean {
	return a.liveStatus === b.liveStatus && a.pane === b.pane && sameResume(a.resumeState, b.resumeState);
}
