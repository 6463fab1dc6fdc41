/**
 * What one stop keeps while it runs: its clock, its progress and audit lines, its notes, and
 * the children the agent starts while it is being stopped. Every liveness question asks the
 * process table again (pid and start time).
 */
import type {ProcessRef, SessionRecord} from '../domain/types.js';
import {pidIndex, processTree} from '../system/processes.js';
import {audit} from './session.js';
import type {ActionDeps} from './types.js';

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

/**
 * A stop's time. `now` and `sleep` come as a pair (not `deps.now` plus real timers): a clock that
 * never advances while the stop sleeps would make every wait endless.
 */
export interface StopClock {
	now(): number;
	sleep(ms: number): Promise<void>;
}

const REAL_CLOCK: StopClock = {now: () => Date.now(), sleep: ms => new Promise<void>(resolve => setTimeout(resolve, ms))};

const POLL_MS = 100;

/** What a run takes from the stop's options. */
interface RunOptions {
	readonly onProgress?: (progress: StopProgress) => void;
	readonly clock?: StopClock;
}

/** What is kept of a process: enough to recognise it (refs read back from a row may be partial). */
export function slim(p: ProcessRef): ProcessRef {
	const argv = Array.isArray(p.argv) ? p.argv.filter((a): a is string => typeof a === 'string').slice(0, 8) : [];
	return {pid: p.pid, ppid: Number.isInteger(p.ppid) ? p.ppid : 0, startTime: p.startTime, name: typeof p.name === 'string' ? p.name : '?', argv};
}

/**
 * The identity rule of SPEC 6.2: a live process is the captured one only with the same pid AND
 * the same start time; a reused pid is somebody else and is never signalled.
 */
export function sameProcess(live: Pick<ProcessRef, 'pid' | 'startTime'> | undefined, ref: Pick<ProcessRef, 'pid' | 'startTime'>): boolean {
	return live !== undefined && live.pid === ref.pid && live.startTime === ref.startTime;
}

/**
 * One run of the stop algorithm. Every check asks the process table again; nothing is trusted
 * from before: a pid is only ever signalled while it still has the start time captured at step 0
 * (or seen when it was found as a child of a captured process, see `track`).
 */
export class StopRun {
	private readonly deps: ActionDeps;
	private readonly session: SessionRecord;
	private readonly options: RunOptions;
	readonly clock: StopClock;
	private readonly startedAt: number;
	private stepStartedAt: number;
	private readonly notes: string[] = [];
	/** Children the agent started after step 0 (codex's `git`, a tool's shell), found while waiting. */
	private readonly found = new Map<number, ProcessRef>();

	get sessionName(): string {
		return this.session.name;
	}

	constructor(deps: ActionDeps, session: SessionRecord, options: RunOptions) {
		this.deps = deps;
		this.session = session;
		this.options = options;
		this.clock = options.clock ?? REAL_CLOCK;
		this.startedAt = this.clock.now();
		this.stepStartedAt = this.startedAt;
	}

	/** Publish a step change and write it to the audit log. */
	report(step: StopStep, state: StepState, message: string, detail: Record<string, unknown> = {}): void {
		if (state === 'running') this.stepStartedAt = this.clock.now();
		const now = this.clock.now();
		this.options.onProgress?.({step, state, elapsedMs: now - this.stepStartedAt, totalMs: now - this.startedAt, message});
		const outcome = state === 'running' ? 'started' : state === 'done' ? 'ok' : state === 'failed' ? 'failed' : 'info';
		audit(this.deps, {session: this.session.name, action: 'stop', step, outcome, detail: {message, ...detail}});
	}

	/** A progress tick while waiting, so a UI can show the elapsed time (not audited). */
	tick(step: StopStep, message: string): void {
		const now = this.clock.now();
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

	/** The children found by `track`, in the order found. */
	foundChildren(): readonly ProcessRef[] {
		return [...this.found.values()];
	}

	/**
	 * Add the live descendants of `parents` (each alive with its captured start time) that
	 * started no earlier than that parent: the agent's tree as it is now. Only the agent's own
	 * subtree is passed in, never the pane's shell, whose later children are the user's.
	 */
	async track(parents: readonly ProcessRef[], guard: ReadonlySet<number>): Promise<void> {
		const all = await this.deps.processes.list();
		const byPid = pidIndex(all);
		for (const parent of [...parents, ...this.found.values()]) {
			if (!sameProcess(byPid.get(parent.pid), parent)) continue;
			for (const p of processTree(all, parent.pid).slice(1)) {
				if (guard.has(p.pid) || p.startTime < parent.startTime || parents.some(q => q.pid === p.pid) || this.found.has(p.pid)) continue;
				this.found.set(p.pid, slim(p));
			}
		}
	}

	/** Poll until `done` or `ms` pass; true when `done` came true. `each` runs on every poll. */
	async waitUntil(step: StopStep, ms: number, message: string, done: () => Promise<boolean>, each?: () => Promise<void>): Promise<boolean> {
		const deadline = this.clock.now() + ms;
		let lastTick = this.clock.now();
		for (;;) {
			await each?.();
			if (await done()) return true;
			if (this.clock.now() >= deadline) return false;
			if (this.clock.now() - lastTick >= 1000) {
				lastTick = this.clock.now();
				this.tick(step, message);
			}
			await this.clock.sleep(POLL_MS);
		}
	}
}
