/**
 * Park (issue 28): an idle agent is stopped with its exit input only, to give its memory back,
 * and its row keeps what a wake needs. Every check of parkChecks.ts is made right before acting;
 * the screen is read again just before typing and nothing is typed when it changed; an agent
 * that does not exit within the grace is left running (a park never escalates).
 *
 * Safety across processes: the row is claimed (extra.parking) by a compare-and-set on its
 * version before anything is checked, so two mam-tui processes never park one agent twice. The
 * row turns `parked` only after the agent exited: a park interrupted at any point leaves it
 * `running` (its claim goes stale) or `parked`, never neither.
 */
import type {AgentAdapter} from '../adapters/types.js';
import {readAgentRecord} from '../adapters/status/records.js';
import {detectStatus, type StatusEvidence} from '../adapters/status/index.js';
import {messageOf} from '../domain/result.js';
import type {Pane, ProcessRef, SessionRecord, StatusDetection} from '../domain/types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import type {Multiplexer} from '../mux/types.js';
import {ConflictError} from '../registry/registry.js';
import {parkedExtra, parkingExtra, resumeExtra, type ParkRecord} from '../registry/extra.js';
import {treeMemory} from '../system/memory.js';
import {processTree} from '../system/processes.js';
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
	/** Test hook: runs between the check and the re-read of the screen just before typing. */
	readonly beforeRecheck?: () => Promise<void>;
}

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

/** Claim the row for this park (compare-and-set on its version). A fresh claim of another process refuses. */
function claimPark(deps: ActionDeps, row: SessionRecord): {ok: true; row: SessionRecord} | {ok: false; result: ParkResult} {
	try {
		return deps.registry.transaction(() => {
			const current = deps.registry.getById(row.id);
			if (!current) return {ok: false, result: {session: row.name, outcome: 'refused', check: 'not-found', why: `session ${row.name} is gone`}};
			const claim = parkingExtra.read(current.extra);
			if (claim && deps.now() - claim.at < PARK_CLAIM_MS) {
				return {ok: false, result: {session: row.name, outcome: 'refused', check: 'registry', why: `another mam-tui (pid ${claim.pid}) is parking ${row.name}`}};
			}
			if (current.status !== 'running') return {ok: false, result: {session: row.name, outcome: 'refused', check: 'registry', why: `${row.name} is ${current.status}, not running`}};
			const claimed = deps.registry.update(row.id, {extra: parkingExtra.write(current.extra, {at: deps.now(), pid: process.pid})}, row.version);
			return {ok: true, row: claimed};
		});
	} catch (error) {
		if (error instanceof ConflictError) return {ok: false, result: {session: row.name, outcome: 'refused', check: 'changed', why: `${error.message}; nothing was done`}};
		throw error;
	}
}

function releaseClaim(deps: ActionDeps, row: SessionRecord): void {
	try {
		deps.registry.updateExtra(row.id, extra => parkingExtra.remove(extra));
	} catch (error) {
		deps.logger?.warn(`could not release the park claim of ${row.name}: ${messageOf(error)}`);
	}
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
	const composer = read && screen !== undefined ? read(screen) : read ? {kind: 'unknown' as const, reason: 'the pane\'s screen could not be read'} : undefined;
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

async function alive(deps: ActionDeps, ref: ProcessRef): Promise<boolean> {
	return sameProcess(await deps.processes.get(ref.pid), ref);
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
	const claimed = claimPark(deps, deps.registry.getById(given.id) ?? given);
	if (!claimed.ok) {
		if (claimed.result.outcome === 'refused') audit(deps, {session: given.name, action: 'park', outcome: 'refused', detail: {check: claimed.result.check, message: claimed.result.why}});
		return claimed.result;
	}
	const row = claimed.row;
	try {
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
	await options.beforeRecheck?.();
	// Right before typing: everything again, and the screen must be the one the checks read.
	const again = await look(deps, adapter, mux, {...row, extra: parkingExtra.remove(row.extra)}, soakSeconds);
	const late = judgePark(again.facts);
	if (late) return refusedResult(deps, row, late.check, `${late.why} (seen just before typing)`);
	if (again.screen === undefined || normalised(again.screen) !== normalised(seen.screen) || again.agent?.pid !== agent.pid) {
		return refusedResult(deps, row, 'composer', `the screen of pane ${pane.id} changed since it was checked; nothing was typed`);
	}
	const steps = typedSteps(adapter.exitInput, deps.config.agents[adapter.id]?.exitInput);
	const graceMs = options.graceMs ?? deps.config.stop.graceSeconds * 1000;
	audit(deps, {session: row.name, action: 'park', step: 'exit-input', outcome: 'started', detail: {paneId: pane.id, pid: agent.pid, idleSeconds, memoryBytes: memory.bytes, memorySource: memory.source}});
	try {
		await typeSteps(mux, pane.id, steps, sleep);
	} catch (error) {
		return refusedResult(deps, row, 'pane', `could not type into pane ${pane.id}: ${messageOf(error)}`);
	}
	const exited = await waitFor(graceMs, sleep, async () => !(await alive(deps, agent)));
	if (!exited) {
		const why = `the agent (pid ${agent.pid}) still runs ${Math.round(graceMs / 1000)} s after its exit input; a park never escalates, so it was left running`;
		audit(deps, {session: row.name, action: 'park', step: 'exit-input', outcome: 'failed', detail: {message: why}});
		return {session: row.name, outcome: 'still-running', why};
	}
	const rest = seen.agentTree.filter(p => p.pid !== agent.pid);
	await waitFor(CHILDREN_SETTLE_MS, sleep, async () => (await Promise.all(rest.map(p => alive(deps, p)))).every(a => !a));
	const left: ProcessRef[] = [];
	for (const p of rest) if (await alive(deps, p)) left.push(p);
	const stillHeld = left.length > 0 ? treeMemory(left.map(p => p.pid)).bytes : 0;
	const notes = left.length > 0 ? [`the agent exited but left ${left.map(p => `pid ${p.pid} (${p.name})`).join(', ')} running: not counted as freed, and not killed`] : [];
	const pin = row.agentSessionId as string;
	const launch = adapter.resume(deps.context, pin);
	const record: ParkRecord = {
		at: deps.now(),
		freedBytes: Math.max(0, memory.bytes - stillHeld),
		idleSeconds,
		argv: withExtraArgs(deps, adapter, launch.argv),
		cwd: row.cwd,
		paneId: pane.id,
		...(pane.placement ? {placement: pane.placement} : {}),
	};
	deps.registry.transaction(() => {
		const current = deps.registry.getById(row.id);
		if (!current) return;
		deps.registry.update(row.id, {status: 'parked', paneId: null, extra: parkedExtra.write(resumeExtra.remove(parkingExtra.remove(current.extra)), record)});
	});
	await guardConversation(deps, adapter, row.name, pin, 'stop');
	audit(deps, {session: row.name, action: 'park', outcome: 'ok', detail: {...record, notes}});
	return {session: row.name, outcome: 'parked', parked: record, notes};
}

/** Which sessions a park names: by name, or every running one idle over `idleOverSeconds`. */
export type ParkSelection = {readonly names: readonly string[]} | {readonly idleOverSeconds: number; readonly agents?: readonly string[]; readonly limit?: number};

/**
 * Park sessions one after another (each one's checks run right before it acts). With
 * `idleOverSeconds`, every running session is a candidate, and the soak is that long.
 */
export async function parkSessions(deps: ActionDeps, selection: ParkSelection, options: ParkOptions = {}): Promise<readonly ParkResult[]> {
	const out: ParkResult[] = [];
	if ('names' in selection) {
		for (const name of selection.names) {
			const row = deps.registry.get(name);
			out.push(row ? await parkSession(deps, row, options) : {session: name, outcome: 'refused', check: 'not-found', why: `no session named ${JSON.stringify(name)}`});
		}
		return out;
	}
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
