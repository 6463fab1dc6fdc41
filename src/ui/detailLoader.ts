import type {AgentAdapter, AdapterContext} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {ProcessRef, SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import type {Registry} from '../registry/registry.js';
import type {Action} from '../store/reducer.js';
import {selectedSession} from '../store/selectors.js';
import type {AppState, DetailProcess, PlanView, SessionDetail} from '../store/state.js';
import type {Store} from '../store/store.js';
import type {Logger} from '../system/logger.js';
import {processTree, type ProcessTable} from '../system/processes.js';
import {bootSeconds} from '../system/procTime.js';
import {planLinesOf} from './planLines.js';

export interface DetailDeps {
	readonly store: Store<AppState, Action>;
	readonly registry: Registry;
	readonly adapterFor: (agent: string) => AgentAdapter | undefined;
	readonly context: AdapterContext;
	readonly processes: ProcessTable;
	readonly mux: () => Promise<Multiplexer>;
	readonly logger: Logger;
	readonly now: () => number;
}

/** Moving the cursor quickly should load the row it stops on, not every row it passes. */
const SETTLE_MS = 150;
const OUTPUT_LINES = 20;
/** While a running row stays selected, its pane's last lines are read again this often (and only then). */
export const OUTPUT_REFRESH_MS = 2000;
/** Linux's USER_HZ: /proc/<pid>/stat counts start times in these ticks since boot. */
const TICKS_PER_SECOND = 100;

/** When the machine booted (ms), from /proc/stat; undefined where there is none. */
/** The pane's tree, root first, each with its depth and wall-clock start. */
export function detailProcesses(tree: readonly ProcessRef[], bootMs: number | undefined): DetailProcess[] {
	const depth = new Map<number, number>();
	return tree.map(p => {
		const d = depth.has(p.ppid) ? (depth.get(p.ppid) ?? 0) + 1 : 0;
		depth.set(p.pid, d);
		return {
			pid: p.pid,
			depth: d,
			...(bootMs === undefined ? {} : {startedAt: bootMs + (p.startTime / TICKS_PER_SECOND) * 1000}),
			command: p.argv.join(' ') || p.name,
		};
	});
}

async function planFor(adapter: AgentAdapter, ctx: AdapterContext, session: SessionRecord): Promise<PlanView | undefined> {
	if (!session.agentSessionId || !adapter.idPattern.test(session.agentSessionId)) return undefined;
	const plan = await adapter.artifacts(ctx, session.agentSessionId);
	return {
		target: session.name,
		agent: plan.agent,
		id: plan.id,
		descendants: plan.descendants,
		lines: planLinesOf(plan.items),
		totalBytes: plan.totalBytes,
	};
}

async function load(deps: DetailDeps, session: SessionRecord): Promise<SessionDetail> {
	// Another machine's row: its processes, files and panes are there, not here (a pane id or a
	// pid read here would be some other local thing's).
	if (session.host !== undefined) return {name: session.name, processes: [], audit: [], loadedAt: deps.now()};
	const detail: {-readonly [K in keyof SessionDetail]: SessionDetail[K]} = {
		name: session.name,
		processes: [],
		audit: deps.registry.auditLog(session.name, 20),
		loadedAt: deps.now(),
	};
	const adapter = deps.adapterFor(session.agent);
	if (!adapter) return {...detail, error: `unknown agent ${session.agent}`};
	try {
		if (session.agentSessionId && adapter.idPattern.test(session.agentSessionId)) {
			detail.resumeCommand = adapter.resume(deps.context, session.agentSessionId).argv;
		}
		detail.plan = await planFor(adapter, deps.context, session);
		const pane = deps.store.getState().live[session.name]?.pane;
		if (pane?.shellPid) detail.processes = detailProcesses(processTree(await deps.processes.list(), pane.shellPid), bootMs());
		if (pane && session.status === 'running') {
			const mux = await deps.mux();
			detail.output = await mux.readOutput(pane.id, OUTPUT_LINES);
		}
	} catch (error) {
		detail.error = messageOf(error);
	}
	return detail;
}

/**
 * Keeps `state.detail` about the selected session: artifacts, process tree, resume command, recent
 * output, audit. Runs outside React (components do no I/O); returns the unsubscribe function.
 */
export function startDetailLoader(deps: DetailDeps): () => void {
	let timer: NodeJS.Timeout | undefined;
	let outputTimer: NodeJS.Timeout | undefined;
	let wanted: string | undefined;
	let lastKey = '';
	/** Re-read the selected pane's last lines while it stays selected; nothing for other rows. */
	const followOutput = (name: string) => {
		clearInterval(outputTimer);
		outputTimer = setInterval(() => {
			const state = deps.store.getState();
			const detail = state.detail;
			const pane = state.live[name]?.pane;
			if (wanted !== name || !detail || detail.name !== name || !pane) return;
			deps
				.mux()
				.then(mux => mux.readOutput(pane.id, OUTPUT_LINES))
				.then(output => {
					const current = deps.store.getState().detail;
					if (wanted === name && current?.name === name && current.output !== output) {
						deps.store.dispatch({type: 'detail/loaded', detail: {...current, output}});
					}
				})
				.catch((error: unknown) => deps.logger.debug('pane output refresh failed', error));
		}, OUTPUT_REFRESH_MS);
		outputTimer.unref();
	};
	const schedule = () => {
		const state = deps.store.getState();
		const session = selectedSession(state);
		// Reload when the selection or the row itself changes (pinned, stopped, …).
		const key = session ? `${session.name}:${session.version}:${state.live[session.name]?.pane?.id ?? ''}` : '';
		if (key === lastKey) return;
		lastKey = key;
		wanted = session?.name;
		clearTimeout(timer);
		clearInterval(outputTimer);
		if (!session) return deps.store.dispatch({type: 'detail/loaded', detail: null});
		timer = setTimeout(() => {
			load(deps, session)
				.then(detail => {
					if (wanted !== session.name) return;
					deps.store.dispatch({type: 'detail/loaded', detail});
					if (detail.output !== undefined) followOutput(session.name);
				})
				.catch((error: unknown) => deps.logger.warn('detail load failed', error));
		}, SETTLE_MS);
	};
	const unsubscribe = deps.store.subscribe(schedule);
	schedule();
	return () => {
		unsubscribe();
		clearTimeout(timer);
		clearInterval(outputTimer);
	};
}

/** The boot time in milliseconds, for a process's start time (one meaning: procTime's). */
function bootMs(): number | undefined {
	const seconds = bootSeconds();
	return seconds === null ? undefined : seconds * 1000;
}
