import {applyFix, type FixAnswer, type FixOutcome} from '../actions/driftFix.js';
import type {Finding} from '../domain/types.js';
import {refusal, type ActionResult} from '../actions/types.js';
import type {Multiplexer} from '../mux/types.js';
import {reducer} from '../store/reducer.js';
import {initialState, type AppState} from '../store/state.js';
import {createStore} from '../store/store.js';
import {superviseWhenReady} from '../sync/supervisor.js';
import type {World} from '../world/world.js';
import type {ServeSource} from './serve.js';
import {findingKey, hostView, sameInputs, type ViewInputs} from './view.js';

/**
 * The serve's view of this machine: the dashboard's own store, fed by the same supervisor (mux
 * events, the folder watch, the discovery tick) and a registry watch, without a screen.
 */
export function worldSource(world: World, mux: () => Promise<Multiplexer>): ServeSource {
	const registry = world.registry();
	const store = createStore(reducer, initialState({sessions: registry.list(), lastRefresh: world.now()}));
	let version = registry.changeStamp();
	const watch = setInterval(() => {
		try {
			if (registry.changeStamp() === version) return;
			version = registry.changeStamp();
			store.dispatch({type: 'registry/loaded', sessions: registry.list(), at: world.now()});
		} catch (error) {
			world.logger.warn('serve: registry refresh failed', error);
		}
	}, world.config.refresh.pollMs);
	watch.unref();
	let markReady: () => void = () => undefined;
	const ready = new Promise<void>(resolve => (markReady = resolve));
	const live = superviseWhenReady(mux(), {
		onSnapshot: () => markReady(),
		store,
		ctx: world.adapterContext(),
		processes: world.processes,
		discoverySeconds: world.config.refresh.discoverySeconds,
		now: world.now,
		logger: world.logger,
	});
	let inputs: ViewInputs | undefined;
	let view = hostView(store.getState(), world.registryPath);
	return {
		view() {
			const state = store.getState();
			if (!sameInputs(inputs, state)) {
				inputs = state;
				view = hostView(state, world.registryPath);
			}
			return view;
		},
		subscribe: onChange => store.subscribe(onChange),
		ready: () => ready,
		async fix(key) {
			await ready;
			return fixByKey(
				store.getState().findings,
				key,
				finding => applyFix(registry, finding, {now: world.now}),
				() => store.dispatch({type: 'registry/loaded', sessions: registry.list(), at: world.now()}),
			);
		},
		async dispose() {
			clearInterval(watch);
			await live.dispose();
		},
	};
}

/**
 * `drift.fix`: the finding this machine sees now under `key`, fixed here. The other side sends a
 * key, never a fix: what changes is what this machine's own drift found, checked again by the fix
 * itself (compare-and-set on the row).
 */
export function fixByKey(
	findings: AppState['findings'],
	key: string,
	apply: (finding: Finding) => FixOutcome | undefined,
	reload: () => void,
): ActionResult<FixAnswer> {
	const finding = findings.find(f => f.host === undefined && findingKey(f) === key);
	if (!finding) return refusal('not-found', 'that finding is gone here (fixed, or things changed since); nothing was done');
	const outcome = apply(finding);
	if (!outcome) return refusal('unsupported', `${finding.kind}: no automatic fix${finding.offer ? ` — ${finding.offer}` : ''}; nothing was done`);
	reload();
	return {ok: true, value: {status: outcome.status, message: outcome.message}};
}
