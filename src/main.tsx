// The composition root: the only file in src/ that imports React, Ink and components/.
import fs from 'node:fs';
import {render} from 'ink';
import {App} from '../components/App.js';
import {AppProvider} from '../components/StoreContext.js';
import {KeymapError, keymapWith, type Keymap} from '../components/input/keymap.js';
import {ADAPTERS, adapterFor} from './adapters/index.js';
import {worldActions} from './actions/fromWorld.js';
import {settleInterruptedParks} from './actions/park.js';
import {CliError, EXIT, type ExitCode} from './domain/exitCodes.js';
import {reducer, type Action} from './store/reducer.js';
import {initialState, type AppState} from './store/state.js';
import {createStore, type Store} from './store/store.js';
import {superviseWhenReady} from './sync/supervisor.js';
import {startAutoPark} from './ui/autoPark.js';
import {startAutoPin} from './ui/autoPin.js';
import {applyFix} from './actions/driftFix.js';
import {refusal} from './actions/types.js';
import {startHosts} from './remote/hub.js';
import {routedActions} from './remote/router.js';
import {discoverAllConversations} from './ui/allConversations.js';
import {createUiController} from './ui/controller.js';
import {startDetailLoader} from './ui/detailLoader.js';
import {startTextSearch} from './ui/textSearch.js';
import {startIndexWorker} from './search/worker.js';
import {startExpiry} from './ui/expiry.js';
import {enterFullScreen} from './ui/fullScreen.js';
import type {World} from './world/world.js';

/**
 * For `npm run bench` only: with MAM_BENCH_FIRST_FRAME=<file>, write Date.now() into the file once
 * the first frame showing registry rows is rendered (test/bench times cold start with it).
 */
function firstFrameHook(env: World['env'], store: Store<AppState, Action>): (() => void) | undefined {
	const file = env['MAM_BENCH_FIRST_FRAME'];
	if (!file) return undefined;
	let written = false;
	return () => {
		if (written || store.getState().sessions.length === 0) return;
		written = true;
		fs.writeFileSync(file, String(Date.now()));
	};
}

/** Re-read the registry when it changed: another process's commit, or this one's own (`Registry.changeStamp`, cheap to poll). */
function startRegistryWatch(world: World, store: Store<AppState, Action>): {reload: () => void; stop: () => void} {
	const registry = world.registry();
	let lastVersion = registry.changeStamp();
	const reload = () => {
		try {
			lastVersion = registry.changeStamp();
			store.dispatch({type: 'registry/loaded', sessions: registry.list(), at: world.now()});
		} catch (error) {
			world.logger.warn('registry refresh failed', error);
		}
	};
	const timer = setInterval(() => {
		if (registry.changeStamp() !== lastVersion) reload();
	}, world.config.refresh.pollMs);
	timer.unref();
	return {reload, stop: () => clearInterval(timer)};
}

/** The keys with config.yaml's `keys:` applied; a bad entry is a usage error naming the key (exit 2). */
function effectiveKeymap(world: World): Keymap {
	try {
		return keymapWith(world.config.keys);
	} catch (error) {
		if (error instanceof KeymapError) throw new CliError(`config.yaml ${error.message}`, EXIT.usage);
		throw error;
	}
}

/** How long quitting waits for the supervisor and the mux to let go. */
const DISPOSE_LIMIT_MS = 3000;
/** How long the process may linger after the dashboard closed before it is ended. */
const EXIT_GRACE_MS = 1000;

async function settleWithin(work: readonly Promise<unknown>[], limitMs: number): Promise<void> {
	let timer: NodeJS.Timeout | undefined;
	const limit = new Promise<void>(resolve => {
		timer = setTimeout(resolve, limitMs);
	});
	await Promise.race([Promise.allSettled(work), limit]);
	clearTimeout(timer);
}

/** Build the store from the registry, render the dashboard, and clean up when the user quits (or `signal` aborts). */
export async function runDashboard(world: World, options: {readonly signal?: AbortSignal} = {}): Promise<ExitCode> {
	if (!process.stdin.isTTY) {
		throw new CliError('the dashboard needs a terminal; use `mam-tui status` in scripts', EXIT.usage);
	}
	const keymap = effectiveKeymap(world);
	const registry = world.registry();
	let sessions = registry.list();
	// A park whose mam-tui was killed is finished (or let go) before the first frame.
	if ((await settleInterruptedParks({registry, processes: world.processes, now: world.now, logger: world.logger}, sessions)).length > 0)
		sessions = registry.list();
	// The first frame comes straight from the registry; live data streams in after it.
	const store = createStore(reducer, initialState({sessions, lastRefresh: world.now()}));
	const watch = startRegistryWatch(world, store);
	// The backend is chosen once, on first use, so the first frame never waits for it.
	const bound = worldActions(world, {}, {live: true});
	const mux = bound.deps.mux;
	// Other machines (config.yaml hosts:): their rows join the list as they arrive; a row's
	// actions go to its machine. Nothing waits for a host.
	const hub = startHosts({
		hosts: world.config.hosts,
		store,
		audit: entry => bound.deps.registry.audit(entry),
		logger: world.logger,
	});
	const actions =
		world.config.hosts.length > 0
			? routedActions(
					bound.actions,
					hub,
					() => store.getState().sessions,
					() => world.config.hosts.map(h => h.name),
				)
			: bound.actions;
	// Panes, live status, resume state and findings stream in from the supervisor.
	const live = superviseWhenReady(mux(), {
		store,
		ctx: world.adapterContext(),
		processes: world.processes,
		discoverySeconds: world.config.refresh.discoverySeconds,
		now: world.now,
		logger: world.logger,
		// A session turning blocked rings the bell (and with `notify: desktop` sends notify-send).
		attention: {notify: world.config.notify, exec: world.exec},
	});
	// Off unless config.yaml's park.agents names an agent: then idle rows are parked, audited, a few a minute.
	const autoPark = startAutoPark({
		config: world.config.park,
		getState: () => store.getState(),
		park: (selection, options) => actions.park(selection, options),
		notify: (level, text) => store.dispatch({type: 'notice/set', notice: {level, text, at: world.now()}}),
		now: world.now,
		logger: world.logger,
	});
	let quit = () => {};
	// The registry read again and a refresh that rescans the disk: after a key, a fix or a pin.
	const refreshNow = () => {
		watch.reload();
		void live.refresh({rescan: true});
	};
	const controller = createUiController({
		store,
		actions,
		registry,
		mux,
		logger: world.logger,
		now: world.now,
		refresh: refreshNow,
		quit: () => quit(),
		config: world.config,
		adapterFor,
		discoverAll: () => discoverAllConversations({adapters: ADAPTERS, context: world.adapterContext(), logger: world.logger}),
		fixOnHost: async (host, key) => hub.actionsFor(host)?.fixFinding(key) ?? refusal('not-found', `${host} is not in config.yaml's hosts; nothing was sent`),
	});
	const stopExpiry = startExpiry(store, world.now);
	// A running row whose own pane names its conversation is pinned as soon as the agent writes it.
	const stopAutoPin = startAutoPin({
		getState: () => store.getState(),
		subscribe: listener => store.subscribe(listener),
		apply: finding => applyFix(registry, finding, {now: world.now}),
		notify: (level, text) => store.dispatch({type: 'notice/set', notice: {level, text, at: world.now()}}),
		refresh: refreshNow,
	});
	const stopDetail = startDetailLoader({
		store,
		registry,
		adapterFor,
		context: world.adapterContext(),
		processes: world.processes,
		mux,
		logger: world.logger,
		now: world.now,
	});
	const searchContext = world.adapterContext();
	const stopTextSearch = startTextSearch({
		store,
		startIndex: () =>
			startIndexWorker(
				{stateDir: world.stateDir, home: searchContext.home, ownHome: searchContext.ownHome, env: {...searchContext.env}, tmpDir: searchContext.tmpDir},
				line => world.logger.debug(line),
			),
		logger: world.logger,
	});
	// Before the first frame: Ink then draws on the alternate screen from its first line.
	const screen = enterFullScreen(process.stdout, () => quit());
	let instance: ReturnType<typeof render>;
	try {
		instance = render(
			<AppProvider store={store} actions={controller} keymap={keymap}>
				<App home={world.adapterContext().home} />
			</AppProvider>,
			{exitOnCtrlC: false, onRender: firstFrameHook(world.env, store)},
		);
	} catch (error) {
		// The error message must land on the primary screen, where the user can read it.
		screen.leave();
		throw error;
	}
	quit = () => instance.unmount();
	// The demo ends the dashboard this way on SIGTERM/SIGHUP, so its cleanup runs after Ink let go of the terminal.
	if (options.signal?.aborted) quit();
	options.signal?.addEventListener('abort', quit, {once: true});
	try {
		await instance.waitUntilExit();
	} finally {
		// Ink has unmounted (its last frame went to the alternate screen, which is now dropped).
		screen.leave();
		watch.stop();
		hub.dispose();
		stopDetail();
		stopTextSearch();
		stopExpiry();
		stopAutoPin();
		// Quitting must be prompt even when a refresh is stuck on a slow disk or a silent mux.
		await settleWithin([autoPark.dispose(), live.dispose(), bound.dispose()], DISPOSE_LIMIT_MS);
		// The user asked to leave: a handle something forgot to close (a watcher, a socket) must not
		// keep the process alive. The timer is unref'd, so a clean exit never waits for it.
		setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
	}
	// Ended by a signal: the caller (a script, a closing terminal) should see it was not a plain quit.
	return screen.signalled() && !options.signal ? EXIT.failed : EXIT.ok;
}
