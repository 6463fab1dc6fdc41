import {messageOf} from '../../domain/result.js';
import {MuxError} from '../types.js';
import type {HerdrClient, HerdrStream, HerdrSubscription} from './client.js';
import type {WireEvent} from './wire.js';

// One herdr event stream (`events.subscribe`) kept open: reconnected with exponential backoff,
// restarted on demand (a new pane set), and live only once the snapshot after subscribing is in.
// events.ts runs two of them (lifecycle events and pane statuses) and applies what they say.

/** Failures that are part of normal life, retried at once and not reported as a problem. */
const BENIGN_CODES: ReadonlySet<string> = new Set([
	// A pane we watch vanished before the status subscription reached herdr: it fails whole.
	'pane_not_found',
	// herdr dropped events this stream had not read yet: a resync covers them.
	'events_lost',
]);

export function isBenign(error: unknown): boolean {
	return error instanceof MuxError && BENIGN_CODES.has(error.code);
}

export interface StreamLoopOptions {
	readonly client: HerdrClient;
	readonly backoff: {readonly initialMs: number; readonly maxMs: number};
	/** The subscriptions for the next connection; undefined = nothing to watch yet (wait for restart). `retry` after a failure. */
	readonly subscriptions: (retry: boolean) => Promise<readonly HerdrSubscription[] | undefined>;
	/** Runs once herdr started the stream, before it counts as live: the snapshot taken after subscribing. */
	readonly synced: () => Promise<void>;
	readonly onEvent: (event: WireEvent) => void;
	/** undefined = streaming; a message = down, with when the next attempt comes. */
	readonly onState: (error: string | undefined) => void;
	/** The stream is back after a failure. */
	readonly onReconnected: () => void;
	/** Failures that are part of normal life: retried at once, not reported. */
	readonly benign: (error: unknown) => boolean;
}

/** One `events.subscribe` stream that reconnects with exponential backoff until stopped. */
export class StreamLoop {
	/** True between the snapshot after `subscription_started` and the stream's end. */
	live = false;
	private readonly options: StreamLoopOptions;
	private stopped = false;
	private restarting = false;
	private stream: HerdrStream | undefined;
	private wakeUp: (() => void) | undefined;
	private done: Promise<void> | undefined;

	constructor(options: StreamLoopOptions) {
		this.options = options;
	}

	start(): void {
		this.done = this.run();
	}

	/** Re-open with fresh subscriptions now (no backoff). */
	restart(): void {
		if (this.stream) {
			this.restarting = true;
			this.stream.close();
		}
		this.wakeUp?.();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		this.stream?.close();
		this.wakeUp?.();
		await this.done;
	}

	/** Wait `ms` (or until restart/stop); without `ms`, until restart/stop. */
	private wait(ms?: number): Promise<void> {
		return new Promise(resolve => {
			let timer: NodeJS.Timeout | undefined;
			const finish = () => {
				clearTimeout(timer);
				if (this.wakeUp === finish) this.wakeUp = undefined;
				resolve();
			};
			if (ms !== undefined) {
				timer = setTimeout(finish, ms);
				timer.unref();
			}
			this.wakeUp = finish;
		});
	}

	/** One connection: subscribe, snapshot, then stream until it ends. Resolves when it ended as asked (restart). */
	private async connect(failed: boolean, reset: () => void): Promise<void> {
		const subscriptions = await this.options.subscriptions(failed);
		if (this.stopped) return;
		if (!subscriptions) {
			this.options.onState(undefined);
			await this.wait();
			return;
		}
		const stream = this.options.client.subscribe(subscriptions, this.options.onEvent);
		this.stream = stream;
		await stream.started;
		// Subscribed first, then the snapshot: nothing can fall between the two (PROTOCOL 14).
		await this.options.synced();
		if (this.stopped || this.stream !== stream) return;
		// Closed by restart() while the snapshot was on its way: open again with the new set.
		if (this.restarting) throw new RestartRequested();
		this.live = true;
		reset();
		this.options.onState(undefined);
		if (failed) this.options.onReconnected();
		const ended = await stream.closed;
		this.live = false;
		if (this.stopped || this.restarting) return;
		throw new MuxError(`herdr event stream lost (${ended.message})`, ended.code);
	}

	private async run(): Promise<void> {
		const {initialMs, maxMs} = this.options.backoff;
		let delay = initialMs;
		let failed = false;
		// Let the caller finish wiring before the first I/O.
		await Promise.resolve();
		while (!this.stopped) {
			try {
				await this.connect(failed, () => {
					delay = initialMs;
					failed = false;
				});
				this.restarting = false;
			} catch (error) {
				this.live = false;
				this.stream?.close();
				this.stream = undefined;
				const restarted = this.restarting;
				this.restarting = false;
				if (this.stopped) break;
				// Closed by restart() while it was still connecting: not a failure.
				if (restarted) continue;
				failed = true;
				if (this.options.benign(error)) {
					await this.wait(initialMs);
					continue;
				}
				const when = delay < 1000 ? `${delay} ms` : `${Math.round(delay / 1000)} s`;
				this.options.onState(`${messageOf(error)}; reconnecting in ${when}`);
				await this.wait(delay);
				delay = Math.min(delay * 2, maxMs);
			}
		}
		this.stream?.close();
		this.stream = undefined;
	}
}

/** Thrown inside a connection attempt that restart() interrupted. */
class RestartRequested extends Error {}
