import {confirmPurge, expectedConfirmation} from '../actions/purge.js';
import {worldActions, type WorldActions} from '../actions/fromWorld.js';
import type {Actions} from '../actions/index.js';
import {checkHostName, HostError, LOCAL_HOST, type HostConfig} from '../config/hosts.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {HostConnection} from '../remote/client.js';
import {remoteActions} from '../remote/remoteActions.js';
import type {World} from '../world/world.js';

/** The configured host `--host NAME` names; undefined for this machine. Exit 2 naming the problem otherwise. */
export function chosenHost(world: World): HostConfig | undefined {
	const name = world.options.host;
	if (name === undefined || name === LOCAL_HOST) return undefined;
	try {
		checkHostName(name);
	} catch (error) {
		if (error instanceof HostError) throw new CliError(`--host: ${error.message}`, EXIT.usage);
		throw error;
	}
	const host = world.config.hosts.find(h => h.name === name);
	if (!host) {
		const known = world.config.hosts.map(h => h.name);
		throw new CliError(`--host ${name}: no such host in config.yaml (${known.length > 0 ? `hosts: ${known.join(', ')}` : 'no hosts: configured'})`, EXIT.usage);
	}
	return host;
}

/** Actions whose every call first waits for the channel (the factory a command gets is synchronous). */
function whenReady(ready: Promise<Actions>): Actions {
	return {
		resume: async ref => (await ready).resume(ref),
		stop: async (ref, options) => (await ready).stop(ref, options),
		purgePlan: async ref => (await ready).purgePlan(ref),
		expectedConfirmation,
		confirmPurge,
		purge: async (plans, typed, options) => (await ready).purge(plans, typed, options),
		newSession: async request => (await ready).newSession(request),
		adopt: async request => (await ready).adopt(request),
		restore: async purgeId => (await ready).restore(purgeId),
		trashList: async () => (await ready).trashList(),
		trashEmptyOne: async purgeId => (await ready).trashEmptyOne(purgeId),
		park: async (selection, options) => (await ready).park(selection, options),
		wake: async (selection, options) => (await ready).wake(selection, options),
	};
}

/**
 * `--host NAME`: the command's actions run on that host, over one channel opened for the
 * command; this machine's registry gets the audit record of what was asked. Without `--host`,
 * the local actions.
 */
export function hostAwareActions(world: World): WorldActions {
	const host = chosenHost(world);
	const local = worldActions(world);
	if (!host) return local;
	const connection = new HostConnection({host, reconnect: false, subscribe: false, logger: world.logger}).start();
	const ready = connection.settled().then(() => {
		const state = connection.state();
		if (state.state !== 'up') throw new CliError(`${host.name} is down: ${state.message}`, EXIT.failed);
		return remoteActions(connection, entry => local.deps.registry.audit(entry));
	});
	// The rejection is seen by whichever call awaits it first; an unused one must not crash the process.
	ready.catch(() => undefined);
	return {
		deps: local.deps,
		actions: whenReady(ready),
		async dispose() {
			connection.close();
			await local.dispose();
		},
	};
}
