import type {Multiplexer} from '../mux/types.js';
import {reducer} from '../store/reducer.js';
import {initialState} from '../store/state.js';
import {createStore} from '../store/store.js';
import {superviseWhenReady} from '../sync/supervisor.js';
import type {World} from '../world/world.js';
import type {ServeSource} from './serve.js';
import {hostView, sameInputs, type ViewInputs} from './view.js';

/**
 * The serve's view of this machine: the dashboard's own store, fed by the same supervisor (mux
 * events, the folder watch, the discovery tick) and a registry watch, without a screen.
 */
export function worldSource(world: World, mux: () => Promise<Multiplexer>): ServeSource {
	const registry = world.registry();
	const store = createStore(reducer, initialState({sessions: registry.list(), lastRefresh: world.now()}));
	let version = registry.dataVersion();
	const watch = setInterval(() => {
		try {
			if (registry.dataVersion() === version) return;
			version = registry.dataVersion();
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
		async dispose() {
			clearInterval(watch);
			await live.dispose();
		},
	};
}
