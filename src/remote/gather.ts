import type {HostConfig} from '../config/hosts.js';
import type {Logger} from '../system/logger.js';
import {HostConnection, type HostStatus} from './client.js';
import type {HostView} from './protocol.js';

/** One host as a one-shot command saw it: its state and, when it answered, its view. */
export interface GatheredHost {
	readonly status: HostStatus;
	readonly view?: HostView;
}

/**
 * How long a one-shot command waits for its hosts. A host not up or down by then is reported as
 * still connecting: one slow host must not hold up the answer about the others.
 */
export const GATHER_WAIT_MS = 5000;

/** Connect to every host at once, take each one's snapshot, close. Never rejects. */
export async function gatherHosts(hosts: readonly HostConfig[], options: {readonly logger?: Logger; readonly waitMs?: number} = {}): Promise<GatheredHost[]> {
	const connections = hosts.map(host => new HostConnection({host, reconnect: false, ...(options.logger ? {logger: options.logger} : {})}).start());
	let timer: NodeJS.Timeout | undefined;
	const deadline = new Promise<void>(resolve => {
		timer = setTimeout(resolve, options.waitMs ?? GATHER_WAIT_MS);
	});
	await Promise.race([Promise.all(connections.map(c => c.settled())), deadline]);
	clearTimeout(timer);
	const gathered = connections.map(c => {
		const view = c.snapshot();
		return {status: c.state(), ...(view && c.state().state === 'up' ? {view} : {})};
	});
	for (const c of connections) c.close();
	return gathered;
}
