import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, SessionRecord} from '../domain/types.js';
import type {Multiplexer, MuxEvent} from '../mux/types.js';
import type {Action} from '../store/reducer.js';
import type {Logger} from '../system/logger.js';
import type {ProcessTable} from '../system/processes.js';
import {DiscoveryCache, type StatFn} from './discovery.js';
import {buildSnapshot, type LiveSnapshot} from './snapshot.js';

export interface SupervisorDeps {
	/** Where `live/updated` goes. */
	readonly dispatch: (action: Action) => void;
	/** The registry rows as of now (the store's, kept fresh by the registry watch). */
	readonly sessions: () => readonly SessionRecord[];
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
}

/** The supervisor: the one long-lived owner of the mux subscription and the discovery timer. */
export interface Supervisor {
	/** Refresh now; `rescan` also looks at the disk again. Resolves when the store has the result. */
	refresh(options?: {readonly rescan?: boolean}): Promise<void>;
	/** Stop listening and ticking; waits for a refresh in flight. */
	dispose(): Promise<void>;
}

/**
 * A burst of herdr events (a split fires pane_created and layout_updated; a close fires
 * several) should cost one refresh: 100 ms gathers a burst and still feels instant.
 */
const DEFAULT_COALESCE_MS = 100;

/**
 * Refresh on mux events (coalesced) and on a discovery tick, dispatching `live/updated` with
 * panes, per-session live data, conversations, findings and the mux health. Refreshes never
 * overlap: one that is asked for while another runs is run once after it, with the union of
 * what was asked. Health changes are dispatched at once, without a refresh.
 */
export function startSupervisor(deps: SupervisorDeps): Supervisor {
	const now = deps.now ?? Date.now;
	const discovery = new DiscoveryCache({ctx: deps.ctx, ...(deps.adapters ? {adapters: deps.adapters} : {}), ...(deps.stat ? {stat: deps.stat} : {})});
	let disposed = false;
	let running: Promise<void> | undefined;
	let pending: {rescan: boolean; waiters: (() => void)[]} | undefined;
	let coalesceTimer: NodeJS.Timeout | undefined;

	const runOnce = async (rescan: boolean): Promise<void> => {
		try {
			const snapshot = await buildSnapshot({
				sessions: deps.sessions(),
				mux: deps.mux,
				...(deps.muxProblem ? {muxProblem: deps.muxProblem} : {}),
				discovery,
				processes: deps.processes,
				rescan,
				now,
			});
			if (disposed) return;
			deps.dispatch({
				type: 'live/updated',
				panes: snapshot.panes ?? [],
				live: snapshot.live,
				conversations: snapshot.conversations,
				findings: snapshot.findings,
				mux: snapshot.mux,
			});
			deps.onSnapshot?.(snapshot);
		} catch (error) {
			deps.logger?.warn('live refresh failed', messageOf(error));
		}
	};

	const drain = async (): Promise<void> => {
		while (pending && !disposed) {
			const job = pending;
			pending = undefined;
			await runOnce(job.rescan);
			for (const done of job.waiters) done();
		}
		for (const done of pending?.waiters ?? []) done();
		pending = undefined;
		running = undefined;
	};

	const refresh = (options: {readonly rescan?: boolean} = {}): Promise<void> => {
		if (disposed) return Promise.resolve();
		return new Promise<void>(resolve => {
			pending = {rescan: (pending?.rescan ?? false) || options.rescan === true, waiters: [...(pending?.waiters ?? []), resolve]};
			running ??= drain();
		});
	};

	const onEvent = (event: MuxEvent): void => {
		if (disposed) return;
		if (event.type === 'health') {
			deps.dispatch({type: 'live/updated', mux: event.health});
			return;
		}
		clearTimeout(coalesceTimer);
		coalesceTimer = setTimeout(() => void refresh(), deps.coalesceMs ?? DEFAULT_COALESCE_MS);
		coalesceTimer.unref();
	};

	const unsubscribe = deps.mux?.subscribe(onEvent);
	const tick = setInterval(() => void refresh({rescan: true}), Math.max(1, deps.discoverySeconds) * 1000);
	tick.unref();
	void refresh({rescan: true});

	return {
		refresh,
		async dispose() {
			disposed = true;
			clearInterval(tick);
			clearTimeout(coalesceTimer);
			unsubscribe?.();
			await running;
		},
	};
}
