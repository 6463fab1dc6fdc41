// The composition root: the only file in src/ that imports React, Ink and components/.
import {render} from 'ink';
import {App} from '../components/App.js';
import {AppProvider, type UiActions} from '../components/StoreContext.js';
import {CliError, EXIT, type ExitCode} from './domain/exitCodes.js';
import {reducer, type Action} from './store/reducer.js';
import {initialState, type AppState} from './store/state.js';
import {createStore, type Store} from './store/store.js';
import type {World} from './cli/world.js';

/** Re-read the registry when another process changed it. */
function startRegistryWatch(world: World, store: Store<AppState, Action>): () => void {
	const registry = world.registry();
	let lastVersion = registry.dataVersion();
	const timer = setInterval(() => {
		try {
			const version = registry.dataVersion();
			if (version === lastVersion) return;
			lastVersion = version;
			store.dispatch({type: 'registry/loaded', sessions: registry.list(), at: world.now()});
		} catch (error) {
			world.logger.warn('registry refresh failed', error);
		}
	}, world.config.refresh.pollMs);
	timer.unref();
	return () => clearInterval(timer);
}

/** Build the store from the registry, render the dashboard, and clean up when the user quits. */
export async function runDashboard(world: World): Promise<ExitCode> {
	if (!process.stdin.isTTY) {
		throw new CliError('the dashboard needs a terminal; use `mam-tui status` in scripts', EXIT.usage);
	}
	const registry = world.registry();
	// The first frame comes straight from the registry; live data streams in after it.
	const store = createStore(reducer, initialState({sessions: registry.list(), lastRefresh: world.now()}));
	const stopWatch = startRegistryWatch(world, store);
	let quit = () => {};
	const actions: UiActions = {
		quit: () => quit(),
		refresh: () => store.dispatch({type: 'registry/loaded', sessions: registry.list(), at: world.now()}),
	};
	const instance = render(
		<AppProvider store={store} actions={actions}>
			<App home={world.adapterContext().home} />
		</AppProvider>,
		{exitOnCtrlC: false},
	);
	quit = () => instance.unmount();
	try {
		await instance.waitUntilExit();
	} finally {
		stopWatch();
	}
	return EXIT.ok;
}
