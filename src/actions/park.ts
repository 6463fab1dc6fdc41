/**
 * Kept whole (about 470 lines): the claim, its settling after a kill and the steps between them
 * share one ordering that the interrupted-park rule depends on; reading it in one place is the point.
 *
 * Park (issue 28): an idle agent is stopped with its exit input only, to give its memory back,
 * and its row keeps what a wake needs. Every check of parkChecks.ts is made right before acting;
 * the screen is read again just before typing and nothing is typed when it changed; an agent
 * that does not exit within the grace is left running (a park never escalates).
 *
 * Safety across processes: the row is claimed (extra.parking) by a compare-and-set on the version
 * it was read at, before anything is checked, so two mam-tui processes never park one agent
 * twice: the second one's write finds the version changed and refuses.
 *
 * Interrupted (mam-tui killed): the claim names its owner (pid and start time). Just before the
 * exit input is typed, the claim gets the parked record it will become and the agent process
 * it waits on. The row turns `parked` when the park sees that process gone, or, if the park died,
 * when the next mam-tui looks (`settleInterruptedParks`: status, the dashboard, park, wake). So at
 * any point of a killed park the row is `running` with its agent alive, or `parked`, never a
 * running row whose agent is gone.
 */
import type {AgentAdapter} from '../adapters/types.js';
import {readAgentRecord} from '../adapters/status/records.js';
import {detectStatus, type StatusEvidence} from '../adapters/status/index.js';
import {messageOf} from '../domain/result.js';
import type {Pane, ProcessRef, SessionRecord, StatusDetection} from '../domain/types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import type {Multiplexer} from '../mux/types.js';
import {ConflictError, type Registry} from '../registry/registry.js';
import {parkedExtra, parkingExtra, resumeExtra, type ParkClaim, type ParkRecord} from '../registry/extra.js';
import {treeMemory} from '../system/memory.js';
import {processTree, type ProcessTable} from '../system/processes.js';
import {judgePark, workingProcesses, type ParkCheck, type ParkFacts} from './parkChecks.js';
import {guardConversation} from './resume.js';
import {adapterOf, audit, validId, withExtraArgs} from './session.js';
import {pickAgentProcess} from './stopCapture.js';
import {sameProcess} from './stopRun.js';
import {typedSteps, type TypedStep} from './stopSequence.js';
import type {ActionDeps} from './types.js';

export interface ParkOptions {
	/** Look, judge and say what would happen; change nothing. */
	readonly dryRun?: boolean;
	/** How long the agent must have been idle (s); default config.park.soakSeconds. */
	readonly soakSeconds?: number;
	/** How long to wait for the agent to exit after its exit input (ms); default config.stop.graceSeconds. */
	readonly graceMs?: number;
	/** Time and waiting (tests); default the real clock. */
	readonly sleep?: (ms: number) => Promise<void>;
	/** Test hook: awaited as each step is reached (see PARK_STEPS). */
	readonly onStep?: (step: ParkStep) => Promise<void>;
}

/**
 * The points of a park, in order: the row read; claimed; checked once; checked again just before
 * typing; the pending record written; the exit input typed; the agent seen gone; the row parked.
 */
export const PARK_STEPS = ['read', 'claimed', 'looked', 'checked', 'pending', 'typed', 'exited', 'recorded'] as const;
export type ParkStep = (typeof PARK_STEPS)[number];

/** One session's park, as the CLI, the dashboard and the JSON-RPC server report it. */
export type ParkResult =
	| {readonly session: string; readonly outcome: 'parked'; readonly parked: ParkRecord; readonly notes: readonly string[]}
	| {readonly session: string; readonly outcome: 'would-park'; readonly idleSeconds: number; readonly memoryBytes: number; readonly paneId: string}
	/** A check refused (nothing was typed, nothing changed); `check` names it. */
	| {readonly session: string; readonly outcome: 'refused'; readonly check: ParkCheck | 'changed' | 'not-found' | 'host'; readonly why: string}
	/** The exit input was typed but the agent still runs after the grace: left running, not escalated. */
	| {readonly session: string; readonly outcome: 'still-running'; readonly why: string};

/** A claim older than this is from a mam-tui that died mid-park. */
const PARK_CLAIM_MS = 5 * 60_000;
/** Enough rows to find the composer of an inline TUI in a tall pane (as stop reads). */
const SCREEN_ROWS = 200;
const POLL_MS = 100;
/** After the agent exited, how long its children get to follow before what is left counts as not freed. */
const CHILDREN_SETTLE_MS = 1000;

const realSleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** Trailing blanks dropped: a screen compares equal when nothing a person sees changed. */
function normalised(screen: string): string {
	return screen
		.split('\n')
		.map(r => r.replace(/[ \t\r]+$/, ''))
		.join('\n')
		.replace(/\n+$/, '');
}

/** This process's start time (a claim names its owner by pid and start time). */
function ownStartTime(deps: ActionDeps): Promise<number | undefined> {
	return deps.processes.get(process.pid).then(
		p => p?.startTime,
		() => undefined,
	);
}

async function alive(processes: ProcessTable, ref: Pick<ProcessRef, 'pid' | 'startTime'>): Promise<boolean> {
	return sameProcess(await processes.get(ref.pid), ref);
}

/** The claim's owner still runs (a claim without a start time: its pid does) and the claim is not stale. */
async function claimHeld(processes: ProcessTable, claim: ParkClaim, now: number): Promise<boolean> {
	if (now - claim.at >= PARK_CLAIM_MS) return false;
	if (claim.pid === process.pid) return true;
	const owner = await processes.get(claim.pid);
	return owner !== undefined && (claim.start === undefined || owner.startTime === claim.start);
}

/**
 * Claim the row for this park: a compare-and-set on the version `row` was read at, so of two
 * processes that read the same row only the first to write wins. A live claim of another refuses.
 */
async function claimPark(deps: ActionDeps, row: SessionRecord): Promise<{ok: true; row: SessionRecord} | {ok: false; result: ParkResult}> {
	const held = parkingExtra.read(row.extra);
	if (held && (await claimHeld(deps.processes, held, deps.now()))) {
		return {ok: false, result: {session: row.name, outcome: 'refused', check: 'registry', why: `another mam-tui (pid ${held.pid}) is parking ${row.name}`}};
	}
	if (row.status !== 'running')
		return {ok: false, result: {session: row.name, outcome: 'refused', check: 'registry', why: `${row.name} is ${row.status}, not running`}};
	const start = await ownStartTime(deps);
	const claim: ParkClaim = {at: deps.now(), pid: process.pid, ...(start !== undefined ? {start} : {})};
	try {
		const claimed = deps.registry.update(row.id, {extra: parkingExtra.write(row.extra, claim)}, row.version);
		return {ok: true, row: claimed};
	} catch (error) {
		if (error instanceof ConflictError)
			return {ok: false, result: {session: row.name, outcome: 'refused', check: 'changed', why: `${error.message}; nothing was done`}};
		throw error;
	}
}

function releaseClaim(deps: ActionDeps, row: SessionRecord): void {
	try {
		deps.registry.transaction(() => {
			const current = deps.registry.getById(row.id);
			// Only this park's own claim: a later park's is not ours to drop.
			if (current && parkingExtra.read(current.extra)?.pid === process.pid) deps.registry.update(row.id, {extra: parkingExtra.remove(current.extra)});
		});
	} catch (error) {
		deps.logger?.warn(`could not release the park claim of ${row.name}: ${messageOf(error)}`);
	}
}

/** The row becomes parked with `record` (its claim and resume marks dropped), unless it is gone. */
function writeParked(registry: Registry, id: number, record: ParkRecord): void {
	registry.transaction(() => {
		const current = registry.getById(id);
		if (!current) return;
		registry.update(id, {status: 'parked', paneId: null, extra: parkedExtra.write(resumeExtra.remove(parkingExtra.remove(current.extra)), record)});
	});
}

/** What becomes of a claim its owner no longer holds (pure). */
export function settlementOf(
	claim: ParkClaim,
	facts: {readonly held: boolean; readonly agentAlive: boolean; readonly now: number},
): 'leave' | 'park' | 'release' {
	if (facts.held) return 'leave';
	// The exit input may have been typed: once that agent is gone the row is what the park meant.
	if (claim.pending && !facts.agentAlive) return 'park';
	// Typed, owner dead, agent still there: it may be exiting now; the row says running, which it is.
	if (claim.pending && facts.now - claim.at < PARK_CLAIM_MS) return 'leave';
	return 'release';
}

/**
 * Finish what killed parks left (see the file's comment): a running row whose claim's owner is
 * gone is parked when the agent the claim waited on is gone, else its claim is dropped once it
 * is stale. Rows without a claim cost nothing. Returns the names of the rows changed.
 */
export async function settleInterruptedParks(
	deps: Pick<ActionDeps, 'registry' | 'processes' | 'now' | 'logger'>,
	rows: readonly SessionRecord[] = deps.registry.list(),
): Promise<string[]> {
	const changed: string[] = [];
	for (const row of rows) {
		const claim = row.status === 'running' ? parkingExtra.read(row.extra) : undefined;
		if (!claim) continue;
		const now = deps.now();
		const held = await claimHeld(deps.processes, claim, now);
		const agentAlive = claim.pending ? await alive(deps.processes, claim.pending.agent) : false;
		const settle = settlementOf(claim, {held, agentAlive, now});
		if (settle === 'leave') continue;
		try {
			if (settle === 'park') {
				const pending = claim.pending as NonNullable<ParkClaim['pending']>;
				// Only the row as it was judged: a row changed meanwhile is left to whoever changed it.
				deps.registry.transaction(() => {
					if (deps.registry.getById(row.id)?.version !== row.version) throw new ConflictError(row.name);
					writeParked(deps.registry, row.id, pending.record);
				});
				deps.registry.audit({
					session: row.name,
					action: 'park',
					outcome: 'ok',
					detail: {...pending.record, notes: [`finished after the mam-tui that parked it (pid ${claim.pid}) was interrupted`]},
				});
			} else {
				deps.registry.update(row.id, {extra: parkingExtra.remove(row.extra)}, row.version);
			}
			changed.push(row.name);
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
		}
	}
	return changed;
}

/** What the checks look at, gathered now. */
interface Seen {
	readonly facts: ParkFacts;
	readonly pane?: Pane;
	readonly agent?: ProcessRef;
	/** The agent and everything under it (the pane's shell, the user's, is not the agent's memory). */
	readonly agentTree: readonly ProcessRef[];
	readonly screen?: string;
}

async function readScreen(mux: Multiplexer, paneId: string): Promise<string | undefined> {
	try {
		return await mux.readOutput(paneId, SCREEN_ROWS);
	} catch {
		return undefined;
	}
}

/** The agent's status by its own evidence: the live record, OSC and title, the visible screen; herdr's word on herdr. */
async function detectionOf(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, pane: Pane, screen: string | undefined): Promise<StatusDetection> {
	const record = readAgentRecord(adapter.id, deps.context, pane.processes);
	if (mux.can.reportsAgentStatus) return detectStatus(adapter.id, record ? {record} : {}, {status: pane.agentStatus});
	let visible: {text: string; osc?: string} | undefined;
	try {
		visible = (await mux.readScreens?.([pane.id]))?.get(pane.id);
	} catch {
		visible = undefined;
	}
	const evidence: StatusEvidence = {
		...(record ? {record} : {}),
		...(visible?.osc !== undefined ? {osc: visible.osc} : {}),
		...(pane.title ? {title: pane.title} : {}),
		...(visible ? {screen: visible.text} : screen !== undefined ? {screen} : {}),
	};
	return detectStatus(adapter.id, evidence);
}

/** Seconds since the conversation or one of its sub-agents was last written (the agent's own evidence of activity). */
async function idleSecondsOf(deps: ActionDeps, adapter: AgentAdapter, row: SessionRecord, pin: string): Promise<number | undefined> {
	try {
		const found = await adapter.discover(deps.context, {cwd: row.cwd, includeChildren: true});
		const mine = found.conversations.filter(c => c.id === pin || c.parentId === pin);
		if (!mine.some(c => c.id === pin)) return undefined;
		const last = Math.max(...mine.map(c => c.updatedAt));
		return Math.max(0, (deps.now() - last) / 1000);
	} catch {
		return undefined;
	}
}

async function look(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, row: SessionRecord, soakSeconds: number): Promise<Seen> {
	const base = {name: row.name, status: row.status, soakSeconds, pin: row.agentSessionId, canResume: adapter.capabilities.resume};
	const empty = {focused: undefined, detection: undefined, idleSeconds: undefined, composer: undefined, muxBlocked: false, work: [], onDisk: undefined};
	const missing = (why: string): Seen => ({facts: {...base, ...empty, pane: {missing: why}}, agentTree: []});
	if (row.mux && row.mux !== mux.kind) return missing(`${row.name} lives in ${row.mux}, but mam-tui is using ${mux.kind}`);
	if (!row.paneId) return missing(`${row.name} has no pane`);
	const pane = (await mux.listPanes()).find(p => isRecordedPane(row, p, mux.kind));
	if (!pane) return missing(`pane ${row.paneId} is gone`);
	const all = await deps.processes.list();
	const rootPid = pane.shellPid ?? pane.processes[0]?.pid;
	const tree = rootPid === undefined ? [] : processTree(all, rootPid);
	const agent = pickAgentProcess(adapter, tree);
	if (!agent || !adapter.matchesProcess(agent)) return missing(`pane ${pane.id} does not run ${adapter.label}`);
	const agentTree = processTree(all, agent.pid);
	let focused: ReadonlySet<string> | undefined;
	try {
		focused = mux.focusedPanes ? await mux.focusedPanes() : undefined;
	} catch {
		focused = undefined;
	}
	const screen = await readScreen(mux, pane.id);
	const detection = await detectionOf(deps, adapter, mux, pane, screen);
	const read = adapter.exitInput.readScreen;
	const composer = read && screen !== undefined ? read(screen) : read ? {kind: 'unknown' as const, reason: "the pane's screen could not be read"} : undefined;
	const work = workingProcesses(agentTree, agent, {residentChildren: adapter.residentChildren, isAgent: p => adapter.matchesProcess(p)});
	const pin = row.agentSessionId;
	const validPin = pin === null ? undefined : validId(adapter, pin);
	let onDisk: ParkFacts['onDisk'];
	let idleSeconds: number | undefined;
	if (pin !== null && validPin?.ok) {
		const state = await adapter.verify(deps.context, pin, row.cwd);
		onDisk = state.kind === 'yes' ? {ok: true} : {ok: false, why: state.reason};
		idleSeconds = await idleSecondsOf(deps, adapter, row, pin);
	} else if (validPin && !validPin.ok) onDisk = {ok: false, why: validPin.error.message};
	const facts: ParkFacts = {
		...base,
		pane: {id: pane.id, isSelf: pane.isSelf},
		focused,
		detection,
		idleSeconds,
		composer,
		muxBlocked: pane.agentStatus === 'blocked',
		work,
		onDisk,
	};
	return {facts, pane, agent, agentTree, ...(screen !== undefined ? {screen} : {})};
}

async function typeSteps(mux: Multiplexer, paneId: string, steps: readonly TypedStep[], sleep: (ms: number) => Promise<void>): Promise<void> {
	for (const step of steps) {
		if (step.kind === 'pause') await sleep(step.ms);
		else if (step.kind === 'text') await mux.sendText(paneId, step.text);
		else if (step.keys.length > 0) await mux.sendKeys(paneId, step.keys);
	}
}

async function waitFor(ms: number, sleep: (ms: number) => Promise<void>, done: () => Promise<boolean>): Promise<boolean> {
	const deadline = Date.now() + ms;
	for (;;) {
		if (await done()) return true;
		if (Date.now() >= deadline) return false;
		await sleep(POLL_MS);
	}
}

function refusedResult(deps: ActionDeps, row: SessionRecord, check: ParkCheck | 'changed', why: string): ParkResult {
	audit(deps, {session: row.name, action: 'park', outcome: 'refused', detail: {check, message: why}});
	return {session: row.name, outcome: 'refused', check, why};
}

/** Park one session (see the file's comment). */
export async function parkSession(deps: ActionDeps, given: SessionRecord, options: ParkOptions = {}): Promise<ParkResult> {
	const adapter = adapterOf(deps, given.agent);
	if (!adapter.ok) return {session: given.name, outcome: 'refused', check: 'registry', why: adapter.error.message};
	const before = deps.registry.getById(given.id);
	// A killed park of this row is finished (or let go) first.
	if (before) await settleInterruptedParks(deps, [before]);
	const read = deps.registry.getById(given.id);
	if (!read) return {session: given.name, outcome: 'refused', check: 'not-found', why: `session ${given.name} is gone`};
	await options.onStep?.('read');
	const claimed = await claimPark(deps, read);
	if (!claimed.ok) {
		if (claimed.result.outcome === 'refused')
			audit(deps, {session: given.name, action: 'park', outcome: 'refused', detail: {check: claimed.result.check, message: claimed.result.why}});
		return claimed.result;
	}
	const row = claimed.row;
	try {
		await options.onStep?.('claimed');
		return await parkClaimed(deps, adapter.value, row, options);
	} catch (error) {
		audit(deps, {session: row.name, action: 'park', outcome: 'failed', detail: {message: messageOf(error)}});
		return {session: row.name, outcome: 'refused', check: 'changed', why: `the park failed: ${messageOf(error)}; the session was left running`};
	} finally {
		releaseClaim(deps, row);
	}
}

async function parkClaimed(deps: ActionDeps, adapter: AgentAdapter, row: SessionRecord, options: ParkOptions): Promise<ParkResult> {
	const sleep = options.sleep ?? realSleep;
	const soakSeconds = options.soakSeconds ?? deps.config.park.soakSeconds;
	const mux = await deps.mux();
	// Judged on the row as it was before this park's own claim.
	const seen = await look(deps, adapter, mux, {...row, extra: parkingExtra.remove(row.extra)}, soakSeconds);
	const refused = judgePark(seen.facts);
	if (refused) return refusedResult(deps, row, refused.check, refused.why);
	const {pane, agent} = seen;
	if (!pane || !agent || seen.screen === undefined) return refusedResult(deps, row, 'pane', 'the pane could not be read');
	const memory = treeMemory(seen.agentTree.map(p => p.pid));
	const idleSeconds = Math.floor(seen.facts.idleSeconds ?? 0);
	if (options.dryRun) {
		audit(deps, {session: row.name, action: 'park', step: 'dry-run', outcome: 'info', detail: {paneId: pane.id, idleSeconds, memoryBytes: memory.bytes}});
		return {session: row.name, outcome: 'would-park', idleSeconds, memoryBytes: memory.bytes, paneId: pane.id};
	}
	await options.onStep?.('looked');
	// Right before typing: everything again, and the screen must be the one the checks read.
	const again = await look(deps, adapter, mux, {...row, extra: parkingExtra.remove(row.extra)}, soakSeconds);
	const late = judgePark(again.facts);
	if (late) return refusedResult(deps, row, late.check, `${late.why} (seen just before typing)`);
	if (again.screen === undefined || normalised(again.screen) !== normalised(seen.screen) || again.agent?.pid !== agent.pid) {
		return refusedResult(deps, row, 'composer', `the screen of pane ${pane.id} changed since it was checked; nothing was typed`);
	}
	await options.onStep?.('checked');
	const pin = row.agentSessionId as string;
	const record: ParkRecord = {
		at: deps.now(),
		freedBytes: memory.bytes,
		idleSeconds,
		argv: withExtraArgs(deps, adapter, adapter.resume(deps.context, pin).argv),
		cwd: row.cwd,
		paneId: pane.id,
		...(pane.placement ? {placement: pane.placement} : {}),
	};
	// Before anything is typed, the row says what it becomes once this agent is gone: a park
	// killed from here on is finished by the next mam-tui that looks (settleInterruptedParks).
	const claim = parkingExtra.read(row.extra);
	try {
		if (!claim) throw new ConflictError(row.name);
		deps.registry.update(
			row.id,
			{extra: parkingExtra.write(row.extra, {...claim, pending: {record, agent: {pid: agent.pid, startTime: agent.startTime}}})},
			row.version,
		);
	} catch (error) {
		if (error instanceof ConflictError)
			return refusedResult(deps, row, 'changed', `${row.name} changed in the registry while it was checked; nothing was typed`);
		throw error;
	}
	await options.onStep?.('pending');
	const steps = typedSteps(adapter.exitInput, deps.config.agents[adapter.id]?.exitInput);
	const graceMs = options.graceMs ?? deps.config.stop.graceSeconds * 1000;
	audit(deps, {
		session: row.name,
		action: 'park',
		step: 'exit-input',
		outcome: 'started',
		detail: {paneId: pane.id, pid: agent.pid, idleSeconds, memoryBytes: memory.bytes, memorySource: memory.source},
	});
	try {
		await typeSteps(mux, pane.id, steps, sleep);
	} catch (error) {
		return refusedResult(deps, row, 'pane', `could not type into pane ${pane.id}: ${messageOf(error)}`);
	}
	await options.onStep?.('typed');
	const exited = await waitFor(graceMs, sleep, async () => !(await alive(deps.processes, agent)));
	if (!exited) {
		const why = `the agent (pid ${agent.pid}) still runs ${Math.round(graceMs / 1000)} s after its exit input; a park never escalates, so it was left running`;
		audit(deps, {session: row.name, action: 'park', step: 'exit-input', outcome: 'failed', detail: {message: why}});
		return {session: row.name, outcome: 'still-running', why};
	}
	await options.onStep?.('exited');
	const rest = seen.agentTree.filter(p => p.pid !== agent.pid);
	await waitFor(CHILDREN_SETTLE_MS, sleep, async () => (await Promise.all(rest.map(p => alive(deps.processes, p)))).every(a => !a));
	const left: ProcessRef[] = [];
	for (const p of rest) if (await alive(deps.processes, p)) left.push(p);
	const stillHeld = left.length > 0 ? treeMemory(left.map(p => p.pid)).bytes : 0;
	const notes =
		left.length > 0 ? [`the agent exited but left ${left.map(p => `pid ${p.pid} (${p.name})`).join(', ')} running: not counted as freed, and not killed`] : [];
	const parked: ParkRecord = {...record, at: deps.now(), freedBytes: Math.max(0, memory.bytes - stillHeld)};
	writeParked(deps.registry, row.id, parked);
	await options.onStep?.('recorded');
	await guardConversation(deps, adapter, row.name, pin, 'stop');
	audit(deps, {session: row.name, action: 'park', outcome: 'ok', detail: {...parked, notes}});
	return {session: row.name, outcome: 'parked', parked, notes};
}

/** Which sessions a park names: by name, or every running one idle over `idleOverSeconds`. */
export type ParkSelection =
	{readonly names: readonly string[]} | {readonly idleOverSeconds: number; readonly agents?: readonly string[]; readonly limit?: number};

/**
 * Park sessions one after another (each one's checks run right before it acts). With
 * `idleOverSeconds`, every running session is a candidate, and the soak is that long.
 */
export async function parkSessions(deps: ActionDeps, selection: ParkSelection, options: ParkOptions = {}): Promise<readonly ParkResult[]> {
	const out: ParkResult[] = [];
	if ('names' in selection) {
		for (const name of selection.names) {
			const row = deps.registry.get(name);
			out.push(
				row ? await parkSession(deps, row, options) : {session: name, outcome: 'refused', check: 'not-found', why: `no session named ${JSON.stringify(name)}`},
			);
		}
		return out;
	}
	await settleInterruptedParks(deps);
	const rows = deps.registry.list().filter(r => r.status === 'running' && (!selection.agents || selection.agents.includes(r.agent)));
	let parked = 0;
	for (const row of rows) {
		if (selection.limit !== undefined && parked >= selection.limit) break;
		const result = await parkSession(deps, row, {...options, soakSeconds: Math.max(selection.idleOverSeconds, options.soakSeconds ?? 0)});
		if (result.outcome === 'parked' || result.outcome === 'would-park') parked++;
		out.push(result);
	}
	return out;
}
