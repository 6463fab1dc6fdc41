import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, SessionRecord} from '../domain/types.js';
import type {Multiplexer, MuxEvent} from '../mux/types.js';
import type {Action} from '../store/reducer.js';
import type {AppState} from '../store/state.js';
import type {Store} from '../store/store.js';
import {monotonicMs} from '../system/clock.js';
import type {Logger} from '../system/logger.js';
import type {ProcessTable} from '../system/processes.js';
import {createAttention, type AttentionDeps} from './attention.js';
import {createShown} from './liveUpdate.js';
import type {StatFn} from './discovery.js';
import {createRefreshPipeline} from './pipeline.js';
import type {LiveSnapshot} from './snapshot.js';

export interface SupervisorDeps {
	/**
	 * The dashboard's store: `live/updated` goes in, the registry rows come out (kept fresh by the
	 * registry watch); a change of rows triggers a refresh so new rows get their live data.
	 */
	readonly store: Pick<Store<AppState, Action>, 'getState' | 'subscribe' | 'dispatch'>;
	readonly mux: Multiplexer | null;
	readonly muxProblem?: string;
	readonly ctx: AdapterContext;
	readonly processes: ProcessTable;
	/** Seconds between discovery ticks (config.refresh.discoverySeconds). */
	readonly discoverySeconds: number;
	readonly now?: () => number;
	readonly logger?: Logger;
	/** How long to gather a burst of mux events into one refresh (ms). */
	readonly coalesceMs?: number;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
	readonly stat?: StatFn;
	/** Called after each snapshot (tests watch refreshes through it). */
	readonly onSnapshot?: (snapshot: LiveSnapshot) => void;
	/** Ring (and notify) when a session turns blocked; absent: silent (tests, one-shot commands). */
	readonly attention?: Pick<AttentionDeps, 'notify' | 'exec' | 'bell'>;
}

/** This machine's registry rows: rows another host reported (src/remote) are judged there, never here. */
function localRows(sessions: readonly SessionRecord[]): readonly SessionRecord[] {
	return sessions.some(s => s.host !== undefined) ? sessions.filter(s => s.host === undefined) : sessions;
}

/** What a refresh looks at. */
export interface RefreshRequest {
	/** Look at the disk again (entries a change was seen in, or all without a folder watch). */
	readonly rescan?: boolean;
	/** List the panes and processes again (default true); false reuses the last listing. */
	readonly panes?: boolean;
	/** Stat every watch path, changed or not (the periodic safety net). */
	readonly full?: boolean;
}

/** The supervisor: the one long-lived owner of the mux subscription and the discovery timer. */
export interface Supervisor {
	/** Refresh now; `rescan` also looks at the disk again. Resolves when the store has the result. */
	refresh(options?: RefreshRequest): Promise<void>;
	/** Stop listening and ticking; waits for a refresh in flight. */
	dispose(): Promise<void>;
}

/**
 * A burst of herdr events (a split fires pane_created and layout_updated; a close fires
 * several) should cost one refresh: 100 ms gathers a burst and still feels instant.
 */
const DEFAULT_COALESCE_MS = 100;

/**
 * A file change seen by the folder watch refreshes only the disk side, reusing the last pane and
 * process listing; every this many ticks (a minute) a refresh lists panes and processes again, in
 * case a process came or went without a mux event (an agent that exits in a tmux pane).
 */
const LIST_EVERY_TICKS = 12;
/**
 * Every this many of those listings (five minutes), the refresh also stats every watch path, in
 * case the folder watch missed an event. At 20,000 conversations that is most of a refresh's
 * cost, and once a minute it alone kept an idle dashboard over 1 % CPU.
 */
const STAT_ALL_EVERY_LISTINGS = 5;

/** What tick number `tick` asks for; `diskWanted`: the discovery cache has something to look at. */
export function tickRefresh(tick: number, diskWanted: boolean): RefreshRequest | undefined {
	if (tick % LIST_EVERY_TICKS === 0) return {rescan: true, full: tick % (LIST_EVERY_TICKS * STAT_ALL_EVERY_LISTINGS) === 0};
	return diskWanted ? {rescan: true, panes: false} : undefined;
}

interface Job {
	rescan: boolean;
	panes: boolean;
	full: boolean;
	waiters: (() => void)[];
}

/**
 * Refresh on mux events (coalesced) and on a discovery tick, dispatching `live/updated` with
 * panes, per-session live data, conversations, findings and the mux health. Refreshes never
 * overlap: one that is asked for while another runs is run once after it, with the union of
 * what was asked. Health changes are dispatched at once, without a refresh.
 */
export function startSupervisor(deps: SupervisorDeps): Supervisor {
	const now = deps.now ?? Date.now;
	let disposed = false;
	let running: Promise<void> | undefined;
	let pending: Job | undefined;
	let coalesceTimer: NodeJS.Timeout | undefined;
	let diskTimer: NodeJS.Timeout | undefined;
	const attention = deps.attention
		? createAttention({
				...deps.attention,
				note: text => deps.store.dispatch({type: 'notice/set', notice: {level: 'info', text, at: now()}}),
				...(deps.logger ? {logger: deps.logger} : {}),
			})
		: undefined;

	const shown = createShown();

	const runOnce = async (job: Job): Promise<void> => {
		try {
			const snapshot = await pipeline.refresh(localRows(deps.store.getState().sessions), {rescan: job.rescan, listPanes: job.panes, full: job.full});
			if (disposed) return;
			const update = shown.changes({
				panes: snapshot.panes ?? [],
				live: snapshot.live,
				conversations: snapshot.conversations,
				findings: snapshot.findings,
				mux: snapshot.mux,
			});
			if (update) deps.store.dispatch(update);
			attention?.observe(snapshot.live, snapshot.untracked);
			deps.onSnapshot?.(snapshot);
		} catch (error) {
			deps.logger?.warn('live refresh failed', messageOf(error));
		}
	};

	const drain = async (): Promise<void> => {
		while (pending && !disposed) {
			const job = pending;
			pending = undefined;
			await runOnce(job);
			for (const done of job.waiters) done();
		}
		for (const done of pending?.waiters ?? []) done();
		pending = undefined;
		running = undefined;
	};

	const refresh = (options: RefreshRequest = {}): Promise<void> => {
		if (disposed) return Promise.resolve();
		return new Promise<void>(resolve => {
			pending = {
				rescan: (pending?.rescan ?? false) || options.rescan === true,
				panes: (pending?.panes ?? false) || options.panes !== false,
				full: (pending?.full ?? false) || options.full === true,
				waiters: [...(pending?.waiters ?? []), resolve],
			};
			running ??= drain();
		});
	};

	/**
	 * A file change: refresh the disk side only. The first change after a quiet spell is taken at
	 * once (a new turn shows without waiting out the window); changes within the window after a
	 * disk refresh are gathered into one more at its end, so a burst of writes still costs at most
	 * one refresh per window.
	 */
	let lastDisk = Number.NEGATIVE_INFINITY;
	const soonDisk = (): void => {
		if (disposed || diskTimer) return;
		const wait = Math.max(0, lastDisk + (deps.coalesceMs ?? DEFAULT_COALESCE_MS) - monotonicMs());
		diskTimer = setTimeout(() => {
			diskTimer = undefined;
			lastDisk = monotonicMs();
			void refresh({rescan: true, panes: false});
		}, wait);
		diskTimer.unref();
	};
	const pipeline = createRefreshPipeline({
		ctx: deps.ctx,
		mux: deps.mux,
		...(deps.muxProblem ? {muxProblem: deps.muxProblem} : {}),
		processes: deps.processes,
		...(deps.adapters ? {adapters: deps.adapters} : {}),
		...(deps.stat ? {stat: deps.stat} : {}),
		...(deps.logger ? {logger: deps.logger} : {}),
		now,
		onChange: soonDisk,
	});

	/** Gather a burst: the first change arms the timer, later ones ride along. */
	const soon = (): void => {
		if (disposed || coalesceTimer) return;
		coalesceTimer = setTimeout(() => {
			coalesceTimer = undefined;
			void refresh();
		}, deps.coalesceMs ?? DEFAULT_COALESCE_MS);
		coalesceTimer.unref();
	};

	/**
	 * herdr says a pane's agent changed status: show it at once, from the event and the last
	 * refresh's facts (a listing is a herdr round trip and a pass over /proc, a quarter of a second
	 * at 500 panes), joined by the same rule as a refresh. The full refresh the event also asks for
	 * follows and replaces this with what the listing says (findings included). Skipped while a
	 * refresh runs: its result, from the older listing, would hide the status again until the next.
	 */
	const showStatus = (event: Extract<MuxEvent, {type: 'agent-status'}>): void => {
		if (running) return;
		const joined = pipeline.showStatus(event.paneId, event.status, event.agent);
		const update = joined && shown.changes({panes: joined.panes ?? [], live: joined.live});
		if (update) deps.store.dispatch(update);
	};

	const onEvent = (event: MuxEvent): void => {
		if (disposed) return;
		if (event.type === 'health') {
			const update = shown.changes({mux: event.health});
			if (update) deps.store.dispatch(update);
			return;
		}
		if (event.type === 'agent-status') showStatus(event);
		if (event.type === 'output') {
			// Panes printed (tmux): their screens and records are read again; the pane list stands.
			if (pipeline.panes()?.some(p => event.paneIds.includes(p.id) && pipeline.agentOf(p) !== undefined)) void refresh({panes: false});
			return;
		}
		soon();
	};

	const unsubscribe = deps.mux?.subscribe(onEvent);
	let all = deps.store.getState().sessions;
	let rows = localRows(all);
	const unwatch = deps.store.subscribe(() => {
		const next = deps.store.getState().sessions;
		if (next === all) return;
		all = next;
		// Another host's rows changing is that host's business: only this machine's rows refresh here.
		const local = localRows(next);
		if (local.length === rows.length && local.every((row, i) => row === rows[i])) return;
		rows = local;
		soon();
	});
	let ticks = 0;
	const tick = setInterval(
		() => {
			ticks += 1;
			const job = tickRefresh(ticks, pipeline.wantsTick());
			if (job) void refresh(job);
		},
		Math.max(1, deps.discoverySeconds) * 1000,
	);
	tick.unref();
	void refresh({rescan: true});

	return {
		refresh,
		async dispose() {
			disposed = true;
			clearInterval(tick);
			clearTimeout(coalesceTimer);
			clearTimeout(diskTimer);
			unsubscribe?.();
			unwatch();
			await running;
			pipeline.close();
		},
	};
}

/**
 * Start the supervisor once the backend is chosen (choosing may wait for a herdr ping); until
 * then refresh and dispose are queued behind it. A backend that could not be chosen still gives
 * a supervisor: registry and disk stay live, the health says why there are no panes.
 */
export function superviseWhenReady(mux: Promise<Multiplexer>, deps: Omit<SupervisorDeps, 'mux' | 'muxProblem'>): Supervisor {
	const started = mux.then(
		m => startSupervisor({...deps, mux: m}),
		(error: unknown) => startSupervisor({...deps, mux: null, muxProblem: messageOf(error)}),
	);
	return {
		refresh: async options => (await started).refresh(options),
		dispose: async () => (await started).dispose(),
	};
}
