import {ADAPTERS} from '../adapters/index.js';
import {FINDING_KINDS, type AgentId, type Finding, type Pane, type SessionRecord} from '../domain/types.js';
import type {AgentKnowledge, DriftInput, PaneEvidence, SessionFacts} from './input.js';
import {staleProcesses} from './stale.js';
import {candidatesFor, contestedIds, isUnpinnedLive, unpinnedFinding, type CandidateVerdict} from './unpinned.js';
import {
	activePinsOf,
	buildWorld,
	carriedIds,
	carriesPin,
	firstPaneCarrying,
	describePane,
	describeProcess,
	describeRow,
	isActive,
	listSome,
	nativeId,
	paneAgent,
	pinHolders,
	paneAgentCwd,
	rowAgent,
	rowPane,
	runsAgent,
	sameMux,
	validId,
	type DriftWorld,
} from './world.js';

export type {AgentKnowledge, CandidateFacts, DriftInput, PaneEvidence, SessionFacts} from './input.js';

/** Where a running row's pane stands. `unknown`: not ours to judge (mux unreachable, another mux, our own pane). */
type PaneState =
	| {readonly kind: 'unknown'}
	| {readonly kind: 'gone'}
	| {readonly kind: 'exited'; readonly pane: Pane}
	| {readonly kind: 'live'; readonly pane: Pane};

function paneState(world: DriftWorld, row: SessionRecord, agent: AgentId): PaneState {
	if (world.panes === null || !sameMux(world, row)) return {kind: 'unknown'};
	const pane = rowPane(world, row);
	if (!pane) return {kind: 'gone'};
	if (pane.isSelf) return {kind: 'unknown'};
	return runsAgent(world, pane, agent) ? {kind: 'live', pane} : {kind: 'exited', pane};
}

function muxName(world: DriftWorld): string {
	return world.input.mux ?? 'mux';
}

function rowRef(row: SessionRecord): Pick<Finding, 'sessionId' | 'sessionName' | 'sessionVersion'> {
	return {sessionId: row.id, sessionName: row.name, sessionVersion: row.version};
}

function paneGone(world: DriftWorld, row: SessionRecord, agent: AgentId): Finding {
	const mux = muxName(world);
	const elsewhere =
		row.agentSessionId === null
			? []
			: [...(world.panes?.values() ?? [])]
					.sort(byPaneId)
					.filter(p => !p.isSelf && carriesPin(world, p, agent, row.agentSessionId as string))
					.map(p => `${mux}: its conversation ${row.agentSessionId} runs in pane ${p.id}`);
	return {
		kind: 'pane-gone',
		...rowRef(row),
		...(row.paneId ? {paneId: row.paneId} : {}),
		message:
			row.paneId === null
				? `${row.name} is marked running but has no pane recorded`
				: `${row.name} is marked running, but its pane ${row.paneId} no longer exists`,
		evidence: [describeRow(row), `${mux}: ${row.paneId === null ? 'no pane to look for' : `no pane ${row.paneId}`} among ${world.panes?.size ?? 0} panes`, ...elsewhere],
		fix: {type: 'mark-stopped', sessionId: row.id, clearPane: true},
	};
}

function agentExited(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane): Finding {
	return {
		kind: 'agent-exited',
		...rowRef(row),
		paneId: pane.id,
		message: `${row.name}'s pane ${pane.id} is still open, but ${world.agents[agent].label} no longer runs in it`,
		evidence: [describeRow(row), describePane(world, pane)],
		// The pane stays recorded: resume may reuse it while it still holds a shell (SPEC 6.1).
		fix: {type: 'mark-stopped', sessionId: row.id},
	};
}

function pinChanged(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane): Finding | undefined {
	const pin = row.agentSessionId;
	const reported = nativeId(pane, agent);
	if (pin === null || reported === undefined || reported === pin) return undefined;
	const owner = world.input.sessions.find(o => o.id !== row.id && isActive(o) && o.agent === row.agent && o.agentSessionId === reported);
	const valid = validId(world, agent, reported);
	const base: Finding = {
		kind: 'pin-changed',
		...rowRef(row),
		paneId: pane.id,
		message: `${muxName(world)} reports conversation ${reported} in ${row.name}'s pane, but the row is pinned to ${pin}`,
		evidence: [
			describeRow(row),
			describePane(world, pane),
			...(valid ? [] : [`${JSON.stringify(reported)} is not a valid ${agent} id: not re-pinned`]),
			...(owner ? [`${reported} is already pinned by ${owner.name}: not re-pinned`] : []),
		],
	};
	return valid && !owner ? {...base, fix: {type: 'repin', sessionId: row.id, from: pin, to: reported}} : base;
}

function artifactMissing(world: DriftWorld, row: SessionRecord): Finding | undefined {
	const verdict = world.input.facts.get(row.id)?.verify;
	if (row.agentSessionId === null || verdict?.kind !== 'no') return undefined;
	return {
		kind: 'artifact-missing',
		...rowRef(row),
		...(row.paneId ? {paneId: row.paneId} : {}),
		message: `${row.name} is pinned to ${row.agentSessionId}, but no resumable conversation exists for it: ${verdict.reason}`,
		evidence: [describeRow(row), `${row.agent} adapter: verify(${row.agentSessionId}) says no — ${verdict.reason}`],
		offer: `forget the row ${row.name} (its audit history stays)`,
	};
}

function runningFindings(world: DriftWorld, row: SessionRecord, agent: AgentId, verdicts: Verdicts, contested: Contested): Finding[] {
	const state = paneState(world, row, agent);
	const missing = artifactMissing(world, row);
	const also = missing ? [missing] : [];
	if (state.kind === 'gone') return [paneGone(world, row, agent), ...also];
	if (state.kind === 'exited') return [agentExited(world, row, agent, state.pane), ...also];
	const pane = state.kind === 'live' ? state.pane : undefined;
	const changed = pane ? pinChanged(world, row, agent, pane) : undefined;
	if (changed) return [changed];
	// A live (or possibly live) agent may not have written its first message yet: a missing
	// artifact only means something once the agent is gone.
	const verdict = verdicts.get(row.id)?.verdict;
	return verdict ? [unpinnedFinding(world, row, agent, pane, verdict, contested)] : [];
}

/** The live pane a stopped row's agent runs in: its own pane (unless it runs another conversation), or one carrying its pin. */
function livePaneOf(world: DriftWorld, row: SessionRecord, agent: AgentId): Pane | undefined {
	if (world.panes === null) return undefined;
	const own = sameMux(world, row) ? rowPane(world, row) : undefined;
	if (own && !own.isSelf && runsAgent(world, own, agent)) return own;
	const pin = row.agentSessionId;
	if (pin === null) return undefined;
	// A pin held twice (duplicate-pin) does not say which row the pane is: leave it to the user.
	if (pinHolders(world, row.agent, pin) > 1) return undefined;
	return firstPaneCarrying(world, agent, pin);
}

function stoppedFindings(world: DriftWorld, row: SessionRecord, agent: AgentId): Finding[] {
	const pane = livePaneOf(world, row, agent);
	if (pane) {
		return [
			{
				kind: 'stopped-but-live',
				...rowRef(row),
				paneId: pane.id,
				message: `${row.name} is marked stopped, but ${world.agents[agent].label} runs in pane ${pane.id}`,
				evidence: [describeRow(row), describePane(world, pane)],
				fix: {type: 'mark-running', sessionId: row.id, paneId: pane.id, ...(world.input.mux ? {mux: world.input.mux} : {}), ...(pane.server ? {server: pane.server} : {})},
			},
		];
	}
	const found: Finding[] = [];
	const stale = staleProcesses(world, row, agent);
	if (stale.length > 0) {
		const pids = stale.map(s => s.proc.pid);
		found.push({
			kind: 'stale-process',
			...rowRef(row),
			message: `${row.name} is stopped, but ${stale.length === 1 ? 'a process' : `${stale.length} processes`} of it still run${stale.length === 1 ? 's' : ''}: pid ${listSome(pids.map(String))}`,
			evidence: [describeRow(row), ...stale.map(s => `process table: ${describeProcess(s.proc)} — ${s.why}`)],
			offer: `stop escalation: SIGKILL pid ${pids.join(', ')} (only if pid and start time still match)`,
		});
	}
	const missing = artifactMissing(world, row);
	if (missing) found.push(missing);
	return found;
}

function duplicatePins(world: DriftWorld): Finding[] {
	const groups = new Map<string, SessionRecord[]>();
	for (const row of world.input.sessions) {
		if (!isActive(row) || row.agentSessionId === null) continue;
		const key = `${row.agent}\0${row.agentSessionId}`;
		groups.set(key, [...(groups.get(key) ?? []), row]);
	}
	return [...groups.values()]
		.filter(rows => rows.length > 1)
		.map(unsorted => {
			const rows = [...unsorted].sort((a, b) => a.id - b.id);
			const first = rows[0] as SessionRecord;
			const names = rows.map(r => r.name);
			return {
				kind: 'duplicate-pin',
				...rowRef(first),
				message: `${listSome(names)} are all pinned to ${first.agent} conversation ${first.agentSessionId}; only one can own it`,
				evidence: rows.map(describeRow),
			};
		});
}

/** Does a registry row account for this pane (by pane id, or because the pane carries its pin)? */
function tracked(world: DriftWorld, pane: Pane, agent: AgentId): boolean {
	// By index (pins of the agent's rows; rows recorded on this pane), not a scan of every row per pane.
	const pins = activePinsOf(world, agent);
	for (const id of carriedIds(world, pane, agent) ?? []) if (pins.has(id)) return true;
	// The one join: a row of another server, or a stopped row whose old pane runs something else now, is not this pane's.
	return (world.rowsByPane.get(pane.id) ?? []).some(row => row.agent === agent && rowPane(world, row) === pane);
}

function untrackedPane(world: DriftWorld, pane: Pane): Finding | undefined {
	const agent = paneAgent(world, pane);
	if (pane.isSelf || agent === undefined || tracked(world, pane, agent)) return undefined;
	const cwd = paneAgentCwd(world, pane, agent);
	const reported = nativeId(pane, agent);
	const evidence = world.input.paneEvidence?.get(pane.id);
	const own = evidence?.agent === agent ? evidence : undefined;
	const label = world.agents[agent].label;
	const base: Finding = {
		kind: 'untracked-pane',
		paneId: pane.id,
		message: `${muxName(world)} pane ${pane.id} runs ${label}, but no session row references it`,
		evidence: [describePane(world, pane), ...(own?.seen ?? []).map(line => `${agent} evidence: ${line}`), ...(cwd ? [] : ['no cwd known for the pane: cannot adopt it'])],
	};
	if (cwd === undefined) return base;
	const pick = adoptedPin(world, agent, reported, own);
	const claimedBy = (id: string) => world.input.sessions.find(r => isActive(r) && r.agent === agent && r.agentSessionId === id)?.name;
	if (pick.kind === 'several') {
		const free = pick.ids.filter(id => claimedBy(id) === undefined);
		return {
			...base,
			message: `${muxName(world)} pane ${pane.id} runs ${label} on one of ${listSome(free)}; pick which`,
			candidates: free,
			offer: `mam-tui adopt --pane ${pane.id} --agent ${agent} --id <one of the candidates>`,
		};
	}
	const waits = pick.kind === 'none' ? ` (it is pinned once ${label} writes its conversation in ${cwd})` : '';
	return {
		...base,
		...(waits ? {message: `${base.message}${waits}`} : {}),
		...(pick.kind === 'one' ? {candidates: [pick.id]} : {}),
		fix: {
			type: 'adopt-pane',
			paneId: pane.id,
			agent,
			cwd,
			...(pick.kind === 'one' ? {agentSessionId: pick.id} : {}),
			...(world.input.mux ? {mux: world.input.mux} : {}),
			...(own?.startedAt !== undefined ? {epoch: own.startedAt} : {}),
			...(pane.server ? {server: pane.server} : {}),
		},
	};
}

type AdoptedPin = {readonly kind: 'one'; readonly id: string} | {readonly kind: 'several'; readonly ids: readonly string[]} | {readonly kind: 'none'};

/** The conversation an adopted pane is pinned to: the mux's word, else the agent's evidence, else the only one written since it started. */
function adoptedPin(world: DriftWorld, agent: AgentId, reported: string | undefined, evidence: PaneEvidence | undefined): AdoptedPin {
	if (reported !== undefined && validId(world, agent, reported)) return {kind: 'one', id: reported};
	const named = (evidence?.ids ?? []).filter(id => validId(world, agent, id));
	const pool = named.length > 0 ? named : (evidence?.recent ?? []).filter(id => validId(world, agent, id));
	// A conversation another row owns is not this pane's (unless the evidence names it: then the pane is tracked).
	const free = named.length > 0 ? pool : pool.filter(id => !activePinsOf(world, agent).has(id));
	if (free.length === 1) return {kind: 'one', id: free[0] as string};
	if (free.length > 1) return {kind: 'several', ids: free};
	return {kind: 'none'};
}

function byPaneId(a: Pane, b: Pane): number {
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

type Verdicts = ReadonlyMap<number, {row: SessionRecord; verdict: CandidateVerdict}>;
type Contested = ReadonlyMap<string, readonly string[]>;

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
}

export function createDriftMemo(): DriftMemo {
	return {};
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
	readonly paneEvidence: DriftInput['paneEvidence'];
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

function coreOf(input: DriftInput, agents: AgentKnowledge, memo: DriftMemo | undefined): Core | undefined {
	const last = memo?.last;
	if (
		last &&
		last.sessions === input.sessions &&
		last.panes === input.panes &&
		last.processes === input.processes &&
		last.mux === input.mux &&
		last.agents === agents &&
		last.paneEvidence === input.paneEvidence
	) {
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
		world: buildWorld({...input, sessions: sorted}, agents),
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

function rowFindings(world: DriftWorld, row: SessionRecord, agent: AgentId, verdicts: Verdicts, contested: Contested): Finding[] {
	if (row.status === 'running') return runningFindings(world, row, agent, verdicts, contested);
	if (row.status === 'stopped') return stoppedFindings(world, row, agent);
	return [];
}

const KIND_ORDER = new Map<string, number>(FINDING_KINDS.map((k, i) => [k, i]));

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
 * herdr reads the screen and is known to get claude wrong (herdr #3414, #3993, #4009). Where the
 * agent's own live record says otherwise, the dashboard shows the agent's word (the pane's
 * detection keeps herdr's in `overrides`); this finding says so with both pieces of evidence.
 * Info only, no fix: nothing in the registry is wrong. herdr's `unknown` is no disagreement.
 */
export function statusDisagreements(world: DriftWorld): Finding[] {
	const out: Finding[] = [];
	for (const pane of world.sortedPanes) {
		const detection = pane.detection;
		const herdr = detection?.overrides;
		if (pane.isSelf || !detection || !herdr || herdr.status === 'unknown') continue;
		const row = world.rowsByPane.get(pane.id)?.[0];
		out.push({
			kind: 'status-disagrees',
			level: 'info',
			paneId: pane.id,
			...(row ? {sessionId: row.id, sessionName: row.name} : {}),
			message: `${pane.agent ?? 'the agent'} in pane ${pane.id} says ${detection.status}, herdr says ${herdr.status}: the agent's own record is shown`,
			evidence: [detection.evidence, herdr.evidence],
		});
	}
	return out;
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
		paneFindings = [...duplicatePins(world), ...world.sortedPanes.flatMap(pane => untrackedPane(world, pane) ?? []), ...statusDisagreements(world)];
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
