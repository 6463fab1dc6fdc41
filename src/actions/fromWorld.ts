import {adapterFor} from '../adapters/index.js';
import type {World} from '../world/world.js';
import {selectMuxFor, type MuxUse} from '../mux/select.js';
import type {Multiplexer} from '../mux/types.js';
import {createActions, type Actions} from './index.js';
import {trashDirIn} from './trashActions.js';
import {searchIndexPort} from './searchIndex.js';
import {forgetInMemo, parseMemoPath} from '../system/parseMemo.js';
import type {ActionDeps} from './types.js';

/** Actions bound to a CLI world, plus the cleanup of whatever backend they opened. */
export interface WorldActions {
	readonly deps: ActionDeps;
	readonly actions: Actions;
	/** Dispose the multiplexer if one was opened. */
	dispose(): Promise<void>;
}

/** Builds the actions a command runs; tests inject fixture adapters or a chosen backend through it. */
export type ActionsFactory = (world: World) => WorldActions;

/**
 * The real wiring: registry, adapters, `--mux` backend (opened only when an action asks for it;
 * `use.live` for a command that runs until stopped).
 */
export function worldActions(world: World, overrides: Partial<ActionDeps> = {}, use: MuxUse = {}): WorldActions {
	let pending: Promise<Multiplexer> | undefined;
	const deps: ActionDeps = {
		registry: world.registry(),
		mux: () => (pending ??= selectMuxFor(world, use)),
		adapterFor,
		context: world.adapterContext(),
		processes: world.processes,
		config: world.config,
		now: world.now,
		logger: world.logger,
		trashDir: trashDirIn(world.stateDir),
		searchIndex: searchIndexPort(world.stateDir),
		parseMemo: {forget: paths => forgetInMemo(parseMemoPath(world.stateDir), paths)},
		...overrides,
	};
	return {
		deps,
		actions: createActions(deps),
		async dispose() {
			if (!pending) return;
			try {
				await (await pending).dispose();
			} catch (error) {
				world.logger.warn('mux dispose failed', error);
			}
		},
	};
}
