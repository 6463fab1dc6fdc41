import type {AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {Pane, ProcessRef, SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import {adapterOf, audit} from './session.js';
import {StopRun, type StopClock, type StopProgress} from './stopRun.js';
import {describeSteps, planExit, type ExitPlan, type ScreenRead, type TypedStep} from './stopSequence.js';
import {nextStopStep, type StopEndedBy, type StopMove} from './stopSteps.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import {stopExtra, type StopRecord} from '../registry/extra.js';
import {guardConversation} from './resume.js';
import {agentSide, capture, currentPane, paneHolds, type Captured} from './stopCapture.js';

export {pickAgentProcess} from './stopCapture.js';

export {STOP_STEPS, sameProcess} from './stopRun.js';
export type {StepState, StopClock, StopProgress, StopStep} from './stopRun.js';
export type {StopEndedBy} from './stopSteps.js';

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
	/** Time and waiting; tests pass a clock that advances when slept on. Default: the real one. */
	readonly clock?: StopClock;
}

/** How long step 3 waits for the kernel to reap what it SIGKILLed before calling it a survivor. */
const SIGKILL_REAP_MS = 2000;
/** How long a clean exit's leftover children get to follow the agent out before they count as survivors. */
const CHILDREN_SETTLE_MS = 1000;
/**
 * How many rows of the pane step 1 reads to find the composer. Claude and gemini draw inline,
 * so their UI can end well above a tall pane's bottom; blank rows below it are dropped.
 */
const SCREEN_ROWS = 200;

/** Read the pane's screen (only for an adapter that knows its agent's screens) and decide step 1. */
async function exitPlanFor(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, pane: Pane): Promise<ExitPlan> {
	let screen: ScreenRead | undefined;
	if (adapter.exitInput.readScreen) {
		try {
			screen = {ok: true, text: await mux.readOutput(pane.id, SCREEN_ROWS)};
		} catch (error) {
			screen = {ok: false, error: messageOf(error)};
		}
	}
	const configuredText = deps.config.agents[adapter.id]?.exitInput;
	return planExit({
		exitInput: adapter.exitInput,
		muxStatus: pane.agentStatus,
		...(configuredText === undefined ? {} : {configuredText}),
		...(screen ? {screen} : {}),
	});
}

/** Send the steps in order, pausing where the sequence says. */
async function typeSteps(run: StopRun, mux: Multiplexer, paneId: string, steps: readonly TypedStep[]): Promise<void> {
	for (const step of steps) {
		if (step.kind === 'pause') await run.clock.sleep(step.ms);
		else if (step.kind === 'text') await mux.sendText(paneId, step.text);
		else if (step.keys.length > 0) await mux.sendKeys(paneId, step.keys);
	}
}

/** Step 1: type the exit sequence (when that is safe), wait for the agent process to exit. True when it did. */
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
	const plan = await exitPlanFor(deps, adapter, mux, pane);
	if (!plan.type) {
		run.note(`nothing was typed into pane ${pane.id}: ${plan.why}`);
		run.report('exit-input', 'skipped', `not typing into pane ${pane.id}: ${plan.why}`, {paneId: pane.id});
		return false;
	}
	const typed = describeSteps(plan.steps);
	run.report(
		'exit-input',
		'running',
		`typing ${typed} into pane ${pane.id} (${plan.why}), waiting up to ${Math.round(graceMs / 1000)} s for pid ${agent.pid} to exit`,
		{
			paneId: pane.id,
			steps: typed,
			pid: agent.pid,
		},
	);
	const side = agentSide(cap);
	await run.track(side, cap.protectedPids);
	try {
		await typeSteps(run, mux, pane.id, plan.steps);
	} catch (error) {
		run.report('exit-input', 'failed', `could not type into pane ${pane.id}: ${messageOf(error)}`);
		return false;
	}
	const exited = await run.waitUntil(
		'exit-input',
		graceMs,
		`waiting for pid ${agent.pid} to exit`,
		async () => !(await run.alive(agent)),
		() => run.track(side, cap.protectedPids),
	);
	if (exited) run.report('exit-input', 'done', `the agent (pid ${agent.pid}) exited`);
	else run.report('exit-input', 'failed', `the agent (pid ${agent.pid}) is still running after ${Math.round(graceMs / 1000)} s`);
	return exited;
}

/** Step 2: close the pane, wait for the captured tree to go. Returns whether the pane was closed and all is gone. */
async function stepClosePane(
	run: StopRun,
	deps: ActionDeps,
	mux: Multiplexer,
	cap: Captured,
	killWaitMs: number,
): Promise<{closed: boolean; allGone: boolean}> {
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
	run.report('close-pane', 'running', `closing pane ${pane.id} and sending SIGHUP to its processes, waiting up to ${Math.round(killWaitMs / 1000)} s`, {
		paneId: pane.id,
	});
	await run.track(agentSide(cap), cap.protectedPids);
	try {
		await mux.closePane(pane.id);
	} catch (error) {
		run.report('close-pane', 'failed', `could not close pane ${pane.id}: ${messageOf(error)}`);
		return {closed: false, allGone: false};
	}
	const targets = (): ProcessRef[] => [...cap.processes, ...run.foundChildren()];
	// Closing a pane hangs up its terminal, which signals only the session leader. A wrapper
	// that ignores SIGHUP (gemini's node wrapper: it waits for its child) then keeps the agent
	// alive, so every process of the tree gets the hangup itself.
	await signalEach(run, deps, targets(), cap.protectedPids, 'SIGHUP');
	const allGone = await run.waitUntil(
		'close-pane',
		killWaitMs,
		"waiting for the pane's processes to exit",
		async () => (await run.aliveOf(targets())).length === 0,
	);
	if (allGone) run.report('close-pane', 'done', `pane ${pane.id} closed; every process exited`);
	else {
		const left = await run.aliveOf(targets());
		run.report('close-pane', 'failed', `pane ${pane.id} closed; still alive: ${left.map(p => p.pid).join(', ')}`, {survivors: left.map(p => p.pid)});
	}
	return {closed: true, allGone};
}

/** Send `signal` to each of `refs` still alive with its recorded start time (re-read right before), never to a guarded pid. */
async function signalEach(run: StopRun, deps: ActionDeps, refs: readonly ProcessRef[], guard: ReadonlySet<number>, signal: NodeJS.Signals): Promise<void> {
	const kill = deps.kill ?? ((pid: number, sig: NodeJS.Signals) => process.kill(pid, sig));
	for (const ref of refs) {
		if (guard.has(ref.pid) || !(await run.alive(ref))) continue;
		try {
			kill(ref.pid, signal);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ESRCH') run.note(`could not send ${signal} to ${ref.pid}: ${messageOf(error)}`);
		}
	}
}

/** Step 3: SIGKILL every captured process that still has its captured start time. Returns survivors. */
async function stepSigkill(run: StopRun, deps: ActionDeps, targets: readonly ProcessRef[], guard: ReadonlySet<number>, why = ''): Promise<ProcessRef[]> {
	const alive = (await run.aliveOf(targets)).filter(p => !guard.has(p.pid));
	run.report('sigkill', 'running', `SIGKILL ${alive.map(p => `${p.pid} (${p.name})`).join(', ') || 'nothing'}${why}`, {pids: alive.map(p => p.pid)});
	await signalEach(run, deps, alive, guard, 'SIGKILL');
	await run.waitUntil('sigkill', SIGKILL_REAP_MS, 'waiting for the kernel to reap', async () => (await run.aliveOf(alive)).length === 0);
	const survivors = await run.aliveOf(alive);
	if (survivors.length === 0) run.report('sigkill', 'done', `killed ${alive.length} process${alive.length === 1 ? '' : 'es'}; none left`);
	else run.report('sigkill', 'failed', `still alive after SIGKILL: ${survivors.map(p => p.pid).join(', ')}`, {survivors: survivors.map(p => p.pid)});
	return survivors;
}

function record(deps: ActionDeps, session: SessionRecord, outcome: StopOutcome): void {
	const stop: StopRecord = {at: deps.now(), endedBy: outcome.endedBy, processes: outcome.captured, survivors: outcome.survivors.map(p => p.pid)};
	deps.registry.transaction(() => {
		const current = deps.registry.getById(session.id);
		if (!current) return;
		deps.registry.update(session.id, {
			status: current.status === 'purged' ? 'purged' : 'stopped',
			...(outcome.paneClosed ? {paneId: null} : {}),
			extra: stopExtra.write(current.extra, stop),
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
		// The same id in another (or a restarted) server is another pane: never this session's to stop.
		if (pane && !isRecordedPane(session, pane, mux.kind)) pane = undefined;
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

/** Run the steps in the order `nextStopStep` gives, each one's I/O here. */
async function escalate(
	run: StopRun,
	deps: ActionDeps,
	adapter: AgentAdapter,
	mux: Multiplexer | undefined,
	cap: Captured,
	options: StopOptions,
): Promise<StopOutcome> {
	const graceMs = options.graceMs ?? deps.config.stop.graceSeconds * 1000;
	const killWaitMs = options.killWaitMs ?? deps.config.stop.killWaitSeconds * 1000;
	const agentAlive = mux !== undefined && cap.pane !== undefined && cap.agent !== undefined && (await run.alive(cap.agent));
	let exited = false;
	let closed = false;
	let paneClosed = cap.pane === undefined;
	let left: ProcessRef[] = [];
	let survivors: ProcessRef[] = [];
	let move: StopMove = nextStopStep({after: 'capture', agentAlive, leftovers: cap.stale.length});
	if ('end' in move) run.report('exit-input', 'skipped', cap.pane ? `no agent is running in pane ${cap.pane.id}` : 'the pane is gone and no process is left');
	else if (move.run === 'sigkill') {
		run.report('exit-input', 'skipped', 'no agent in a pane: only leftover processes to end');
		run.report('close-pane', 'skipped', 'no pane to close');
	}
	while ('run' in move) {
		if (move.run === 'exit-input' && mux) {
			exited = await stepExitInput(run, deps, adapter, mux, cap, graceMs);
			if (exited) {
				// The pane's own shell is no leftover: the pane stays for the user (herdr keeps it).
				const rest = (): ProcessRef[] => [...agentSide(cap), ...run.foundChildren()];
				// An agent ends its helpers as it exits; give them a moment to follow before listing survivors.
				await run.waitUntil('exit-input', CHILDREN_SETTLE_MS, "waiting for the agent's children to exit", async () => (await run.aliveOf(rest())).length === 0);
				paneClosed = cap.pane ? (await currentPane(mux, cap.pane.id)) === undefined : true;
				left = await run.aliveOf(rest());
				if (left.length > 0) run.note(`the agent exited at step 1 but left ${left.map(p => `pid ${p.pid} (${p.name})`).join(', ')} running; SIGKILLed`);
			}
			move = nextStopStep({after: 'exit-input', exited, left: left.length});
		} else if (move.run === 'close-pane' && mux) {
			const step2 = await stepClosePane(run, deps, mux, cap, killWaitMs);
			closed = step2.closed;
			paneClosed = step2.allGone || closed || cap.pane === undefined;
			move = nextStopStep({after: 'close-pane', allGone: step2.allGone});
		} else {
			if (exited) survivors = await stepSigkill(run, deps, left, cap.protectedPids, ': left behind by the agent');
			else {
				// A pane left open (reused, or only leftovers were targeted) keeps its shell.
				await run.track(agentSide(cap), cap.protectedPids);
				const captured = closed ? cap.processes : agentSide(cap);
				survivors = await stepSigkill(run, deps, [...captured, ...run.foundChildren()], cap.protectedPids);
			}
			move = nextStopStep({after: 'sigkill', agentExitedAtStep1: exited});
		}
	}
	return {
		session: run.sessionName,
		endedBy: move.end,
		ok: survivors.length === 0,
		captured: [...cap.processes, ...run.foundChildren()],
		survivors,
		paneClosed,
		notes: run.allNotes(),
	};
}
