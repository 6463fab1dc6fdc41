import {ADAPTERS} from '../adapters/index.js';
import {FINDING_KINDS, type AgentId, type Finding, type Pane, type SessionRecord} from '../domain/types.js';
import type {AgentKnowledge, DriftInput, SessionFacts} from './input.js';
import {paneFindings as allPaneFindings} from './paneFindings.js';
import {paneState, rowFindings, type Contested, type Verdicts} from './rowFindings.js';
import {candidatesFor, contestedIds, isUnpinnedLive, type CandidateVerdict} from './unpinned.js';
import {buildWorld, rowAgent, type DriftWorld, type Screens} from './world.js';

// SPEC 5 detection: which rows are judged (again), in what order, and what the live view keeps
// between refreshes (the memo). The rules themselves are in rowFindings.ts and paneFindings.ts.

export type {AgentKnowledge, CandidateFacts, DriftInput, PaneEvidence, SessionFacts} from './input.js';

/** Candidates of every running unpinned row whose pane is not gone or exited (those get their own finding). */
function unpinnedVerdicts(world: DriftWorld, core: Core | undefined): Verdicts {
	const verdicts = new Map<number, {row: SessionRecord; verdict: CandidateVerdict}>();
	for (const row of world.input.sessions) {
		const agent = rowAgent(world, row);
		if (!agent || !isUnpinnedLive(row)) continue;
		const state = paneState(world, row, agent);
		if (state.kind === 'gone' || state.kind === 'exited') continue;
		verdicts.set(row.id, {row, verdict: core ? keptVerdict(world, core, row, agent) : candidatesFor(world, row, agent)});
	}
	return verdicts;
}

/**
 * The same verdict object while the row's candidate facts are the same (the discovery cache hands
 * the same conversation list while its cwd is unchanged): a verdict depends on those facts and
 * on the other rows' pins, which the core holds fixed.
 */
function keptVerdict(world: DriftWorld, core: Core, row: SessionRecord, agent: AgentId): CandidateVerdict {
	const facts = world.input.facts.get(row.id);
	const found = facts?.candidates;
	const memo = rowMemo(core, row);
	const kept = memo.verdict;
	if (
		kept &&
		kept.realCwd === facts?.realCwd &&
		(found === undefined
			? kept.found === undefined
			: found.ok
				? kept.found?.ok === true && kept.found.value.conversations === found.value.conversations && kept.found.value.problems === found.value.problems
				: kept.found?.ok === false && kept.found.error === found.error)
	) {
		return kept.verdict;
	}
	const verdict = candidatesFor(world, row, agent);
	memo.verdict = {found, realCwd: facts?.realCwd, verdict};
	return verdict;
}

/**
 * What `detectDrift` keeps between calls (the live view detects on every refresh). Make one with
 * `createDriftMemo`. With a memo the result may be the array returned last time: do not change it.
 */
export interface DriftMemo {
	last?: Core;
	/**
	 * The candidate screens (unpinned.ts), kept across cores: a new row list (a registry change)
	 * makes a new core, while the discovery cache still hands the same conversation lists. Held
	 * with the agents they were judged by (a screen asks the agent's id pattern).
	 */
	screens?: {readonly agents: AgentKnowledge; readonly byList: Screens};
}

export function createDriftMemo(): DriftMemo {
	return {};
}

/** The memo's screens for `agents` (new ones when the agents are not those of the kept ones). */
function screensOf(memo: DriftMemo, agents: AgentKnowledge): Screens {
	if (memo.screens?.agents !== agents) memo.screens = {agents, byList: new WeakMap()};
	return memo.screens.byList;
}

interface RowMemo {
	verdict?: {readonly found: SessionFacts['candidates']; readonly realCwd: string | undefined; readonly verdict: CandidateVerdict};
	findings?: {readonly key: string; readonly verdict: CandidateVerdict | undefined; readonly findings: readonly Finding[]};
}

/**
 * Everything detection derives from the rows, panes, process table and mux alone, kept while
 * those are the very same arrays (a refresh for a file change reuses the last listing and rows):
 * the indexes, the pane findings, and per row its findings with the facts they were judged on.
 * Only rows whose disk facts changed (or whose rivals for a candidate did) are judged again.
 */
interface Core {
	readonly sessions: readonly SessionRecord[];
	readonly panes: readonly Pane[] | null;
	readonly processes: DriftInput['processes'];
	readonly mux: DriftInput['mux'];
	/** The evidence last judged on (a new map that names the same ids keeps the core: see `coreOf`). */
	paneEvidence: DriftInput['paneEvidence'];
	readonly agents: AgentKnowledge;
	readonly sorted: readonly SessionRecord[];
	readonly world: DriftWorld;
	/** A Map, not a WeakMap: the core holds its rows anyway, and 500 fresh WeakMap keys per pane event cost GC time. */
	readonly rows: Map<SessionRecord, RowMemo>;
	paneFindings?: readonly Finding[];
	/** The sorted result of the last call on this core (returned again when no row was judged again). */
	lastFindings?: Finding[];
}

function rowMemo(core: Core, row: SessionRecord): RowMemo {
	let memo = core.rows.get(row);
	if (!memo) core.rows.set(row, (memo = {}));
	return memo;
}

/** Do two evidence maps name the same ids for the same agents? (What the row rules read of it: see `carriedIds`.) */
function sameIdsNamed(a: DriftInput['paneEvidence'], b: DriftInput['paneEvidence']): boolean {
	if (a === b) return true;
	if (!a || !b || a.size !== b.size) return false;
	for (const [pane, evidence] of b) {
		const was = a.get(pane);
		if (!was || was.agent !== evidence.agent || was.ids.length !== evidence.ids.length || was.ids.some((id, i) => evidence.ids[i] !== id)) return false;
	}
	return true;
}

function coreOf(input: DriftInput, agents: AgentKnowledge, memo: DriftMemo | undefined): Core | undefined {
	const last = memo?.last;
	if (
		last &&
		last.sessions === input.sessions &&
		last.panes === input.panes &&
		last.processes === input.processes &&
		last.mux === input.mux &&
		last.agents === agents &&
		sameIdsNamed(last.paneEvidence, input.paneEvidence)
	) {
		// Only what the pane findings read changed (a folder's recent conversations, what was seen):
		// the indexes and the row findings stand, the pane findings are made again.
		if (last.paneEvidence !== input.paneEvidence) {
			last.paneEvidence = input.paneEvidence;
			delete last.paneFindings;
			delete last.lastFindings;
		}
		return last;
	}
	if (!memo) return undefined;
	const sorted = [...input.sessions].sort((a, b) => a.id - b.id);
	const core: Core = {
		sessions: input.sessions,
		panes: input.panes,
		processes: input.processes,
		mux: input.mux,
		paneEvidence: input.paneEvidence,
		agents,
		sorted,
		world: buildWorld({...input, sessions: sorted}, agents, screensOf(memo, agents)),
		rows: new Map(),
	};
	memo.last = core;
	return core;
}

/** The facts a row's own findings were judged on, besides its verdict: the verify answer, and who else wants its candidates. */
function factsKey(world: DriftWorld, row: SessionRecord, verdict: CandidateVerdict | undefined, contested: Contested): string {
	const verify = world.input.facts.get(row.id)?.verify;
	const rivals = verdict?.kind === 'known' ? verdict.ids.map(id => (contested.get(`${row.agent}\0${id}`) ?? []).join('\n')).join('\0') : '';
	const reason = verify && 'reason' in verify ? verify.reason : '';
	return `${verify?.kind ?? ''}\0${reason}\0${rivals}`;
}

const KIND_ORDER: ReadonlyMap<string, number> = new Map(FINDING_KINDS.map((k, i) => [k, i]));

/** Rows first (by id), then panes (by id); within one, SPEC 5 kind order. Independent of input order. */
function compareFindings(a: Finding, b: Finding): number {
	const session = (a.sessionId ?? Number.MAX_SAFE_INTEGER) - (b.sessionId ?? Number.MAX_SAFE_INTEGER);
	if (session !== 0) return session;
	const kind = (KIND_ORDER.get(a.kind) ?? 0) - (KIND_ORDER.get(b.kind) ?? 0);
	if (kind !== 0) return kind;
	const pa = a.paneId ?? '';
	const pb = b.paneId ?? '';
	return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/**
 * SPEC 5: every drift between the registry, the live panes and what the adapters found on disk.
 * Pure and deterministic. At most one finding with a fix per row, so fixes never race each other.
 * Never raises a finding about mam-tui's own pane.
 */
export function detectDrift(input: DriftInput, agents: AgentKnowledge = ADAPTERS, memo?: DriftMemo): Finding[] {
	const core = coreOf(input, agents, memo);
	const sessions = core ? core.sorted : [...input.sessions].sort((a, b) => a.id - b.id);
	// With a memo the indexes are the core's (filled on first ask, shared); only the facts are this call's.
	const world = core ? {...core.world, input: {...input, sessions}} : buildWorld({...input, sessions}, agents);
	const verdicts = unpinnedVerdicts(world, core);
	const contested = contestedIds(verdicts);
	const findings: Finding[] = [];
	let judged = false;
	for (const row of sessions) {
		const agent = rowAgent(world, row);
		if (!agent) continue;
		if (!core) {
			findings.push(...rowFindings(world, row, agent, verdicts, contested));
			continue;
		}
		// A row whose facts are as they were keeps its findings (the same objects).
		const memoed = rowMemo(core, row);
		const verdict = verdicts.get(row.id)?.verdict;
		const key = factsKey(world, row, verdict, contested);
		const kept = memoed.findings;
		if (kept && kept.key === key && kept.verdict === verdict) {
			findings.push(...kept.findings);
			continue;
		}
		const found = rowFindings(world, row, agent, verdicts, contested);
		memoed.findings = {key, verdict, findings: found};
		findings.push(...found);
		judged = true;
	}
	// Nothing judged again: the very list of last time (no sort; the view sees an unchanged array).
	if (core?.lastFindings && !judged) return core.lastFindings;
	let paneFindings = core?.paneFindings;
	if (!paneFindings) {
		paneFindings = allPaneFindings(world);
		if (core) core.paneFindings = paneFindings;
	}
	findings.push(...paneFindings);
	findings.sort(compareFindings);
	if (core) core.lastFindings = findings;
	return findings;
}

/** What this detection could not check, in one line each (the mux was unreachable, rows of another mux, …). */
export function driftNotes(input: DriftInput): string[] {
	const notes: string[] = [];
	if (input.panes === null) {
		notes.push(
			`${input.mux ?? 'no multiplexer'} unreachable${input.muxProblem ? ` (${input.muxProblem})` : ''}: pane-gone, agent-exited, pin-changed, stopped-but-live and untracked-pane were not checked`,
		);
	}
	if (input.processes === null) notes.push('the process table could not be read: stale-process was not checked');
	const other = input.sessions.filter(r => r.status === 'running' && r.mux !== null && input.mux !== null && r.mux !== input.mux);
	if (other.length > 0 && input.panes !== null) {
		notes.push(`${other.length} running session(s) live in another multiplexer than ${input.mux}: their panes were not checked`);
	}
	return notes;
}
