import type {AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {Pane, ProcessRef, SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import {pidIndex, processTree} from '../system/processes.js';
import {adapterOf, audit} from './session.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';
import {guardConversation} from './resume.js';

/** The steps of SPEC 6.2, in order. */
export const STOP_STEPS = ['capture', 'exit-input', 'close-pane', 'sigkill'] as const;
export type StopStep = (typeof STOP_STEPS)[number];
export type StepState = 'running' | 'done' | 'failed' | 'skipped';

/** One live update of a stop, for the dashboard and the CLI. */
export interface StopProgress {
	readonly step: StopStep;
	readonly state: StepState;
	/** Since this step began. */
	readonly elapsedMs: number;
	/** Since the stop began. */
	readonly totalMs: number;
	/** One line a user understands. */
	readonly message: string;
}

/** Which step ended the stop; `nothing-running` when the pane and processes were already gone. */
export type StopEndedBy = 'nothing-running' | 'exit-input' | 'close-pane' | 'sigkill';

export interface StopOutcome {
	readonly session: string;
	readonly endedBy: StopEndedBy;
	/** False when something of the captured tree is still alive. */
	readonly ok: boolean;
	/** The process tree captured at step 0 (pid and start time). */
	readonly captured: readonly ProcessRef[];
	/** Captured processes still alive at the end (same pid and start time). */
	readonly survivors: readonly ProcessRef[];
	readonly paneClosed: boolean;
	/** Things worth telling the user (a pane that was reused and therefore left alone, …). */
	readonly notes: readonly string[];
}

export interface StopOptions {
	/** Step 1 wait; default config.stop.graceSeconds. */
	readonly graceMs?: number;
	/** Step 2 wait; default config.stop.killWaitSeconds. */
	readonly killWaitMs?: number;
	readonly onProgress?: (progress: StopProgress) => void;
}

/** How the captured processes are kept in the row's extra (drift reads it to spot stale processes). */
export interface StoppedProcesses {
	readonly at: number;
	readonly endedBy: StopEndedBy;
	readonly processes: readonly ProcessRef[];
	readonly survivors: readonly number[];
}

const POLL_MS = 100;
/** How long step 3 waits for the kernel to reap what it SIGKILLed before calling it a survivor. */
const SIGKILL_REAP_MS = 2000;
/** How long a clean exit's leftover children get to follow the agent out before they count as survivors. */
const CHILDREN_SETTLE_MS = 1000;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'tcsh', 'csh', 'nu']);

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** What is kept of a process: enough to recognise it (refs read back from a row may be partial). */
function slim(p: ProcessRef): ProcessRef {
	const argv = Array.isArray(p.argv) ? p.argv.filter((a): a is string => typeof a === 'string').slice(0, 8) : [];
	return {pid: p.pid, ppid: Number.isInteger(p.ppid) ? p.ppid : 0, startTime: p.startTime, name: typeof p.name === 'string' ? p.name : '?', argv};
}

/** The processes a stopped session left behind last time, read back from its extra. */
export function stoppedProcesses(session: SessionRecord): readonly ProcessRef[] {
	const value = session.extra['stop'];
	if (!value || typeof value !== 'object') return [];
	const list = (value as {processes?: unknown}).processes;
	if (!Array.isArray(list)) return [];
	return list.filter(
		(p): p is ProcessRef =>
			!!p && typeof p === 'object' && Number.isInteger((p as ProcessRef).pid) && Number.isFinite((p as ProcessRef).startTime),
	);
}

/**
 * The agent in the captured tree: the adapter's process, else (under a shell) the shell's first
 * child, else a non-shell root. Undefined when the pane only holds a shell: nothing to stop there.
 */
export function pickAgentProcess(adapter: AgentAdapter, tree: readonly ProcessRef[]): ProcessRef | undefined {
	const matching = tree.find(p => adapter.matchesProcess(p));
	if (matching) return matching;
	const root = tree[0];
	if (!root) return undefined;
	if (SHELLS.has(root.name)) return tree.find(p => p.ppid === root.pid);
	return root;
}

/**
 * The identity rule of SPEC 6.2: a live process is the captured one only with the same pid AND
 * the same start time; a reused pid is somebody else and is never signalled.
 */
export function sameProcess(live: Pick<ProcessRef, 'pid' | 'startTime'> | undefined, ref: Pick<ProcessRef, 'pid' | 'startTime'>): boolean {
	return live !== undefined && live.pid === ref.pid && live.startTime === ref.startTime;
}

/** mam-tui itself and every ancestor: never signalled, whatever the captured tree says. */
function protectedPids(all: readonly ProcessRef[], selfPid: number): Set<number> {
	const byPid = pidIndex(all);
	const out = new Set<number>([selfPid]);
	let current = byPid.get(selfPid);
	while (current && current.ppid > 0 && !out.has(current.ppid)) {
		out.add(current.ppid);
		current = byPid.get(current.ppid);
	}
	return out;
}

/**
 * One run of the stop algorithm. Every check asks the process table again; nothing is trusted
 * from before: a pid is only ever signalled while it still has the start time captured at step 0.
 */
class StopRun {
	private readonly deps: ActionDeps;
	private readonly session: SessionRecord;
	private readonly options: StopOptions;
	private readonly startedAt: number;
	private stepStartedAt: number;
	private readonly notes: string[] = [];

	get sessionName(): string {
		return this.session.name;
	}

	constructor(deps: ActionDeps, session: SessionRecord, options: StopOptions) {
		this.deps = deps;
		this.session = session;
		this.options = options;
		this.startedAt = Date.now();
		this.stepStartedAt = this.startedAt;
	}

	/** Publish a step change and write it to the audit log. */
	report(step: StopStep, state: StepState, message: string, detail: Record<string, unknown> = {}): void {
		if (state === 'running') this.stepStartedAt = Date.now();
		const now = Date.now();
		this.options.onProgress?.({step, state, elapsedMs: now - this.stepStartedAt, totalMs: now - this.startedAt, message});
		const outcome = state === 'running' ? 'started' : state === 'done' ? 'ok' : state === 'failed' ? 'failed' : 'info';
		audit(this.deps, {session: this.session.name, action: 'stop', step, outcome, detail: {message, ...detail}});
	}

	/** A progress tick while waiting, so a UI can show the elapsed time (not audited). */
	tick(step: StopStep, message: string): void {
		const now = Date.now();
		this.options.onProgress?.({step, state: 'running', elapsedMs: now - this.stepStartedAt, totalMs: now - this.startedAt, message});
	}

	note(text: string): void {
		this.notes.push(text);
	}

	allNotes(): readonly string[] {
		return this.notes;
	}

	/** Is this exact process (pid and start time) still alive? */
	async alive(ref: ProcessRef): Promise<boolean> {
		return sameProcess(await this.deps.processes.get(ref.pid), ref);
	}

	async aliveOf(refs: readonly ProcessRef[]): Promise<ProcessRef[]> {
		const out: ProcessRef[] = [];
		for (const ref of refs) if (await this.alive(ref)) out.push(ref);
		return out;
	}

	/** Poll until `done` or `ms` pass; true when `done` came true. */
	async waitUntil(step: StopStep, ms: number, message: string, done: () => Promise<boolean>): Promise<boolean> {
		const deadline = Date.now() + ms;
		let lastTick = Date.now();
		for (;;) {
			if (await done()) return true;
			if (Date.now() >= deadline) return false;
			if (Date.now() - lastTick >= 1000) {
				lastTick = Date.now();
				this.tick(step, message);
			}
			await sleep(POLL_MS);
		}
	}
}

/** The pane as the mux lists it now, or undefined when it is gone. */
async function currentPane(mux: Multiplexer, paneId: string): Promise<Pane | undefined> {
	return (await mux.listPanes()).find(p => p.id === paneId);
}

/**
 * Does the pane still hold the process tree captured at step 0? Same root pid with the same start
 * time (a reused pane gets a new root), and not mam-tui's own pane.
 */
async function paneHolds(run: StopRun, mux: Multiplexer, paneId: string, root: ProcessRef): Promise<{holds: boolean; gone: boolean; why?: string}> {
	const pane = await currentPane(mux, paneId);
	if (!pane) return {holds: false, gone: true};
	if (pane.isSelf) return {holds: false, gone: false, why: `pane ${paneId} is mam-tui's own pane`};
	const rootPid = pane.shellPid ?? pane.processes[0]?.pid;
	if (rootPid !== root.pid) return {holds: false, gone: false, why: `pane ${paneId} now runs another process (pid ${rootPid ?? '?'})`};
	if (!(await run.alive(root))) return {holds: false, gone: false, why: `pane ${paneId}'s pid ${root.pid} now belongs to another process`};
	return {holds: true, gone: false};
}

interface Captured {
	readonly pane: Pane | undefined;
	/** The pane's root process (its shell, or the agent when the mux ran it directly). */
	readonly root: ProcessRef | undefined;
	readonly agent: ProcessRef | undefined;
	/** The pane's tree, root first. */
	readonly tree: readonly ProcessRef[];
	/** What a previous stop left alive (same pid and start time), outside the pane's tree. */
	readonly stale: readonly ProcessRef[];
	/** tree + stale: every process the stop may end. */
	readonly processes: readonly ProcessRef[];
	readonly protectedPids: ReadonlySet<number>;
}

async function capture(deps: ActionDeps, adapter: AgentAdapter, session: SessionRecord, pane: Pane | undefined): Promise<Captured> {
	const all = await deps.processes.list();
	const guard = protectedPids(all, deps.selfPid ?? process.pid);
	const rootPid = pane ? (pane.shellPid ?? pane.processes[0]?.pid) : undefined;
	const tree = (rootPid === undefined ? [] : processTree(all, rootPid)).filter(p => !guard.has(p.pid)).map(slim);
	const byPid = pidIndex(all);
	const stale = stoppedProcesses(session)
		.filter(p => sameProcess(byPid.get(p.pid), p) && !tree.some(t => t.pid === p.pid) && !guard.has(p.pid))
		.map(slim);
	return {pane, root: tree[0], agent: pickAgentProcess(adapter, tree), tree, stale, processes: [...tree, ...stale], protectedPids: guard};
}

/** Step 1: type the exit input, wait for the agent process to exit. True when it did. */
async function stepExitInput(run: StopRun, deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, cap: Captured, graceMs: number): Promise<boolean> {
	const {pane, root, agent} = cap;
	if (!pane || !root || !agent) {
		run.report('exit-input', 'skipped', 'no pane to type into');
		return false;
	}
	const check = await paneHolds(run, mux, pane.id, root);
	if (!check.holds) {
		if (check.gone && !(await run.alive(agent))) {
			run.report('exit-input', 'done', `pane ${pane.id} and the agent are already gone`);
			return true;
		}
		run.report('exit-input', 'skipped', check.why ?? `pane ${pane.id} is gone`);
		if (check.why) run.note(check.why);
		return false;
	}
	const text = deps.config.agents[adapter.id]?.exitInput ?? adapter.exitInput.text;
	run.report('exit-input', 'running', `typing ${text} into pane ${pane.id}, waiting up to ${Math.round(graceMs / 1000)} s for pid ${agent.pid} to exit`, {
		paneId: pane.id,
		text,
		pid: agent.pid,
	});
	try {
		await mux.sendText(pane.id, text);
		if (adapter.exitInput.keys.length > 0) await mux.sendKeys(pane.id, adapter.exitInput.keys);
	} catch (error) {
		run.report('exit-input', 'failed', `could not type into pane ${pane.id}: ${messageOf(error)}`);
		return false;
	}
	const exited = await run.waitUntil('exit-input', graceMs, `waiting for pid ${agent.pid} to exit`, async () => !(await run.alive(agent)));
	if (exited) run.report('exit-input', 'done', `the agent (pid ${agent.pid}) exited`);
	else run.report('exit-input', 'failed', `the agent (pid ${agent.pid}) is still running after ${Math.round(graceMs / 1000)} s`);
	return exited;
}

/** Step 2: close the pane, wait for the captured tree to go. Returns whether the pane was closed and all is gone. */
async function stepClosePane(run: StopRun, mux: Multiplexer, cap: Captured, killWaitMs: number): Promise<{closed: boolean; allGone: boolean}> {
	const {pane, root} = cap;
	if (!pane || !root) {
		run.report('close-pane', 'skipped', 'no pane to close');
		return {closed: false, allGone: false};
	}
	const check = await paneHolds(run, mux, pane.id, root);
	if (check.gone) {
		run.report('close-pane', 'skipped', `pane ${pane.id} is already gone`);
		return {closed: true, allGone: (await run.aliveOf(cap.processes)).length === 0};
	}
	if (!check.holds) {
		const why = check.why ?? `pane ${pane.id} changed`;
		run.note(`${why}; it was not closed`);
		run.report('close-pane', 'skipped', `${why}; not closing it`);
		return {closed: false, allGone: false};
	}
	run.report('close-pane', 'running', `closing pane ${pane.id}, waiting up to ${Math.round(killWaitMs / 1000)} s`, {paneId: pane.id});
	try {
		await mux.closePane(pane.id);
	} catch (error) {
		run.report('close-pane', 'failed', `could not close pane ${pane.id}: ${messageOf(error)}`);
		return {closed: false, allGone: false};
	}
	const allGone = await run.waitUntil('close-pane', killWaitMs, 'waiting for the pane\'s processes to exit', async () => (await run.aliveOf(cap.processes)).length === 0);
	if (allGone) run.report('close-pane', 'done', `pane ${pane.id} closed; every process exited`);
	else {
		const left = await run.aliveOf(cap.processes);
		run.report('close-pane', 'failed', `pane ${pane.id} closed; still alive: ${left.map(p => p.pid).join(', ')}`, {survivors: left.map(p => p.pid)});
	}
	return {closed: true, allGone};
}

/** Step 3: SIGKILL every captured process that still has its captured start time. Returns survivors. */
async function stepSigkill(run: StopRun, deps: ActionDeps, targets: readonly ProcessRef[], guard: ReadonlySet<number>): Promise<ProcessRef[]> {
	const kill = deps.kill ?? ((pid: number, signal: NodeJS.Signals) => process.kill(pid, signal));
	const alive = (await run.aliveOf(targets)).filter(p => !guard.has(p.pid));
	run.report('sigkill', 'running', `SIGKILL ${alive.map(p => `${p.pid} (${p.name})`).join(', ') || 'nothing'}`, {pids: alive.map(p => p.pid)});
	for (const ref of alive) {
		// Re-read right before signalling: the pid must still carry the captured start time.
		if (!(await run.alive(ref))) continue;
		try {
			kill(ref.pid, 'SIGKILL');
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ESRCH') run.note(`could not SIGKILL ${ref.pid}: ${messageOf(error)}`);
		}
	}
	await run.waitUntil('sigkill', SIGKILL_REAP_MS, 'waiting for the kernel to reap', async () => (await run.aliveOf(alive)).length === 0);
	const survivors = await run.aliveOf(alive);
	if (survivors.length === 0) run.report('sigkill', 'done', `killed ${alive.length} process${alive.length === 1 ? '' : 'es'}; none left`);
	else run.report('sigkill', 'failed', `still alive after SIGKILL: ${survivors.map(p => p.pid).join(', ')}`, {survivors: survivors.map(p => p.pid)});
	return survivors;
}

function record(deps: ActionDeps, session: SessionRecord, outcome: StopOutcome): void {
	const stop: StoppedProcesses = {at: deps.now(), endedBy: outcome.endedBy, processes: outcome.captured, survivors: outcome.survivors.map(p => p.pid)};
	deps.registry.transaction(() => {
		const current = deps.registry.getById(session.id);
		if (!current) return;
		deps.registry.update(session.id, {
			status: current.status === 'purged' ? 'purged' : 'stopped',
			...(outcome.paneClosed ? {paneId: null} : {}),
			extra: {...current.extra, stop},
		});
	});
}

/**
 * Stop a session (SPEC 6.2): capture its process tree, type the exit input, close the pane,
 * SIGKILL what survives. Each step checks that the pane still holds the captured process first;
 * mam-tui's own pane is never a target. Stops a stopped row's leftover processes too (step 3).
 */
export async function stopSession(deps: ActionDeps, session: SessionRecord, options: StopOptions = {}): Promise<ActionResult<StopOutcome>> {
	const adapter = adapterOf(deps, session.agent);
	if (!adapter.ok) return adapter;
	let mux: Multiplexer | undefined;
	let pane: Pane | undefined;
	if (session.paneId) {
		mux = await deps.mux();
		if (session.mux && session.mux !== mux.kind) {
			return refusal('mux-mismatch', `session ${session.name} lives in ${session.mux} but mam-tui is using ${mux.kind}; rerun with --mux ${session.mux}`);
		}
		pane = await currentPane(mux, session.paneId);
		if (pane?.isSelf) return refusal('self-pane', `pane ${pane.id} is the one mam-tui runs in; it is never stopped from here`);
	}
	const run = new StopRun(deps, session, options);
	run.report('capture', 'running', `capturing the process tree of ${session.name}`);
	const cap = await capture(deps, adapter.value, session, pane);
	if (pane && !cap.root) {
		run.report('capture', 'failed', `cannot see the processes of pane ${pane.id}`);
		return refusal('failed', `cannot see the processes of pane ${pane.id}; nothing was done`);
	}
	const what = `captured ${cap.processes.length} process${cap.processes.length === 1 ? '' : 'es'}${cap.agent ? `, agent pid ${cap.agent.pid}` : ''}`;
	run.report('capture', 'done', what, {processes: cap.processes});
	const outcome = await escalate(run, deps, adapter.value, mux, cap, options);
	record(deps, session, outcome);
	// What the agent wrote on its way out that its next start would destroy the conversation for (gemini's stub).
	if (session.agentSessionId) await guardConversation(deps, adapter.value, session.name, session.agentSessionId, 'stop');
	audit(deps, {
		session: session.name,
		action: 'stop',
		outcome: outcome.ok ? 'ok' : 'failed',
		detail: {endedBy: outcome.endedBy, survivors: outcome.survivors.map(p => p.pid), notes: outcome.notes},
	});
	return {ok: true, value: outcome};
}

async function escalate(run: StopRun, deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer | undefined, cap: Captured, options: StopOptions): Promise<StopOutcome> {
	const graceMs = options.graceMs ?? deps.config.stop.graceSeconds * 1000;
	const killWaitMs = options.killWaitMs ?? deps.config.stop.killWaitSeconds * 1000;
	const done = (endedBy: StopEndedBy, survivors: readonly ProcessRef[], paneClosed: boolean): StopOutcome => ({
		session: run.sessionName,
		endedBy,
		ok: survivors.length === 0,
		captured: cap.processes,
		survivors,
		paneClosed,
		notes: run.allNotes(),
	});
	const agentAlive = mux !== undefined && cap.pane !== undefined && cap.agent !== undefined && (await run.alive(cap.agent));
	if (!agentAlive && cap.stale.length === 0) {
		run.report('exit-input', 'skipped', cap.pane ? `no agent is running in pane ${cap.pane.id}` : 'the pane is gone and no process is left');
		return done('nothing-running', [], cap.pane === undefined);
	}
	if (agentAlive && mux && (await stepExitInput(run, deps, adapter, mux, cap, graceMs))) {
		// The pane's own shell is no leftover: the pane stays for the user (herdr keeps it).
		const rest = cap.processes.filter(p => !(p.pid === cap.root?.pid && p.pid !== cap.agent?.pid));
		// An agent ends its helpers as it exits; give them a moment to follow before listing survivors.
		await run.waitUntil('exit-input', CHILDREN_SETTLE_MS, 'waiting for the agent\'s children to exit', async () => (await run.aliveOf(rest)).length === 0);
		const paneGone = cap.pane ? (await currentPane(mux, cap.pane.id)) === undefined : true;
		return done('exit-input', await run.aliveOf(rest), paneGone);
	}
	let closed = false;
	if (agentAlive && mux) {
		const step2 = await stepClosePane(run, mux, cap, killWaitMs);
		closed = step2.closed;
		if (step2.allGone) return done('close-pane', [], true);
	} else {
		run.report('exit-input', 'skipped', 'no agent in a pane: only leftover processes to end');
		run.report('close-pane', 'skipped', 'no pane to close');
	}
	// A pane left open (reused, or only leftovers were targeted) keeps its shell.
	const targets = closed ? cap.processes : cap.processes.filter(p => p.pid !== cap.root?.pid || p.pid === cap.agent?.pid);
	const survivors = await stepSigkill(run, deps, targets, cap.protectedPids);
	return done('sigkill', survivors, closed || cap.pane === undefined);
}
