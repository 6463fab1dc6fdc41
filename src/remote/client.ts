// One host's connection: HostConnection is most of this file (about 300 lines), because its hello,
// calls, pings and reconnects share one channel's lifetime and state. The ssh channel is channel.ts.
import readline from 'node:readline';
import type {HostConfig} from '../config/hosts.js';
import {explainExit, sshChannel, type Channel} from './channel.js';
import {messageOf} from '../domain/result.js';
import type {Logger} from '../system/logger.js';
import {monotonicMs} from '../system/clock.js';
import {applyChange, COLLECTIONS, PROTOCOLS, type Capability, type Changes, type Hello, type HostView} from './protocol.js';
import {printable} from '../domain/printable.js';

export type HostState = 'up' | 'connecting' | 'down';

/** One host as `status --json` and the dashboard show it. */
export interface HostStatus {
	readonly name: string;
	readonly state: HostState;
	/** Round-trip time of the last ping (or of the hello), while up. */
	readonly rttMs: number | null;
	/** Up: `mam-tui 0.1.0, protocol 1`; down: why, in words (`host key changed`, `permission denied`, ...). */
	readonly message: string;
	/** When the state last changed (ms since the epoch). */
	readonly since: number;
}

/** A call that did not get its answer because the channel ended first: whether it ran is not known here. */
export class ChannelLost extends Error {
	constructor(host: string, method: string) {
		super(`the connection to ${host} was lost before ${method} answered`);
		this.name = 'ChannelLost';
	}
}

/** A call the serve answered with a JSON-RPC error. */
export class RemoteError extends Error {
	readonly code: number;
	constructor(code: number, message: string) {
		super(message);
		this.code = code;
		this.name = 'RemoteError';
	}
}

export interface ConnectionOptions {
	readonly host: HostConfig;
	/** Opens a channel (default: the user's ssh with sshArgv). */
	readonly open?: (host: HostConfig) => Channel;
	readonly logger?: Logger;
	readonly now?: () => number;
	/** How long the hello may take once ssh runs (a host that accepts and never answers). */
	readonly helloTimeoutMs?: number;
	/** Between pings, which measure the round trip and notice a link that died silently. */
	readonly pingMs?: number;
	/** Reconnect after a drop (default true); `status` connects once. */
	readonly reconnect?: boolean;
	/** Subscribe to the snapshot and its changes (default true); one action needs none. */
	readonly subscribe?: boolean;
	/** The first snapshot only once the host has refreshed (default true, for one-shot commands); false: its rows at once. */
	readonly wholeFirst?: boolean;
	readonly random?: () => number;
}

const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
const DEFAULT_PING_MS = 15_000;
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 60_000;

/**
 * The wait before reconnect attempt `attempt` (0-based): doubling from 1 s up to a minute, with
 * full jitter (a random wait up to that), so hosts that dropped together do not return together.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
	const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
	return Math.round(cap / 2 + (random() * cap) / 2);
}

interface Pending {
	readonly method: string;
	resolve(value: unknown): void;
	reject(error: Error): void;
	readonly onProgress?: (progress: unknown) => void;
}

/**
 * One host's long-lived channel: hello, snapshot, changes, calls; reconnects with backoff and
 * jitter. Nothing here blocks: every wait is a promise or a timer, so a slow or dead host holds
 * up neither keys nor other hosts.
 */
export class HostConnection {
	readonly host: HostConfig;
	private readonly options: ConnectionOptions;
	private readonly now: () => number;
	private channel: Channel | undefined;
	private nextId = 1;
	private readonly pending = new Map<number, Pending>();
	private readonly listeners = new Set<() => void>();
	private attempt = 0;
	private timers = new Set<NodeJS.Timeout>();
	private closed = false;
	private status: HostStatus;
	private hello: Hello | undefined;
	private view: HostView | undefined;
	private viewAt: number | undefined;
	private seq = 0;
	private stderr = '';
	private firstUp: Promise<void>;
	private markSettled: () => void = () => undefined;

	constructor(options: ConnectionOptions) {
		this.options = options;
		this.host = options.host;
		this.now = options.now ?? Date.now;
		this.status = {name: this.host.name, state: 'connecting', rttMs: null, message: 'connecting', since: this.now()};
		this.firstUp = new Promise(resolve => (this.markSettled = resolve));
	}

	/** Connect (and keep reconnecting unless told not to). */
	start(): this {
		this.connect();
		return this;
	}

	/** Resolves once the host is up with its snapshot, or down (the first time either happens). */
	settled(): Promise<void> {
		return this.firstUp;
	}

	state(): HostStatus {
		return this.status;
	}

	/** The host's sessions, panes, ... as last received; undefined before the first snapshot. */
	snapshot(): HostView | undefined {
		return this.view;
	}

	/** When the serve saw the state `snapshot()` shows (its clock). */
	snapshotAt(): number | undefined {
		return this.viewAt;
	}

	capabilities(): readonly Capability[] {
		return this.hello?.capabilities ?? [];
	}

	remoteVersion(): string | undefined {
		return this.hello?.version;
	}

	/** Called after any change of state or snapshot. */
	onChange(listener: () => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Call a method; `onProgress` gets the call's live steps. Rejects with ChannelLost if the channel ends first. */
	call<T = unknown>(method: string, params: unknown = {}, onProgress?: (progress: unknown) => void): Promise<T> {
		const channel = this.channel;
		if (!channel || this.status.state !== 'up') return Promise.reject(new Error(`${this.host.name} is ${this.status.state}: ${this.status.message}`));
		return this.send<T>(channel, method, params, onProgress);
	}

	/** Close the channel and stop reconnecting. */
	close(): void {
		this.closed = true;
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		this.channel?.close();
		this.setStatus({state: 'down', rttMs: null, message: 'closed'});
	}

	private emit(): void {
		for (const listener of this.listeners) {
			try {
				listener();
			} catch (error) {
				this.options.logger?.warn('remote: listener failed', messageOf(error));
			}
		}
	}

	private setStatus(next: Omit<HostStatus, 'name' | 'since'>): void {
		const same = next.state === this.status.state;
		this.status = {name: this.host.name, ...next, since: same ? this.status.since : this.now()};
		if (next.state !== 'connecting') this.markSettled();
		this.emit();
	}

	private timer(ms: number, fn: () => void): NodeJS.Timeout {
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			fn();
		}, ms);
		timer.unref();
		this.timers.add(timer);
		return timer;
	}

	private send<T>(channel: Channel, method: string, params: unknown, onProgress?: (progress: unknown) => void): Promise<T> {
		const id = this.nextId++;
		return new Promise<T>((resolve, reject) => {
			this.pending.set(id, {method, resolve: resolve as (value: unknown) => void, reject, ...(onProgress ? {onProgress} : {})});
			try {
				channel.output.write(`${JSON.stringify({jsonrpc: '2.0', id, method, params})}\n`);
			} catch {
				this.pending.delete(id);
				reject(new ChannelLost(this.host.name, method));
			}
		});
	}

	private connect(): void {
		if (this.closed) return;
		this.stderr = '';
		this.setStatus({state: 'connecting', rttMs: null, message: this.attempt === 0 ? 'connecting' : `reconnecting (attempt ${this.attempt + 1})`});
		let channel: Channel;
		try {
			channel = (this.options.open ?? sshChannel)(this.host);
		} catch (error) {
			this.dropped(`cannot start ssh: ${messageOf(error)}`);
			return;
		}
		this.channel = channel;
		channel.errors?.on('data', (chunk: Buffer) => {
			// Only the tail matters (the reason is ssh's last words); bounded so a noisy host costs nothing.
			this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4096);
		});
		const lines = readline.createInterface({input: channel.input, crlfDelay: Infinity});
		lines.on('line', line => this.onLine(line));
		let why: string | undefined;
		void channel.ended.then(code => {
			lines.close();
			if (this.channel !== channel) return;
			this.channel = undefined;
			for (const [id, call] of this.pending) {
				this.pending.delete(id);
				call.reject(new ChannelLost(this.host.name, call.method));
			}
			if (!this.closed) this.dropped(why ?? explainExit(this.stderr, code));
		});
		const helloTimer = this.timer(this.options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS, () => {
			why = `no answer from mam-tui on the host within ${Math.round((this.options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS) / 1000)} s`;
			channel.close();
		});
		void this.handshake(channel)
			.then(result => {
				clearTimeout(helloTimer);
				this.timers.delete(helloTimer);
				if (typeof result === 'string') {
					why = result;
					channel.close();
				}
			})
			.catch((error: unknown) => {
				if (error instanceof ChannelLost) return;
				why = messageOf(error);
				channel.close();
			});
	}

	/** Hello, agree on a protocol, subscribe. Returns why the host cannot be used, or undefined. */
	private async handshake(channel: Channel): Promise<string | undefined> {
		const started = monotonicMs();
		const greeting = this.send<Hello>(channel, 'hello', {protocols: PROTOCOLS, program: 'mam-tui'});
		// Asked together with the hello, not after its answer: one round trip fewer before a host's
		// rows show (on a slow link, the round trip is most of it). The serve answers lines in
		// order, so the hello has agreed a protocol by then; a serve that shares none refuses the
		// subscribe, and the hello's answer says why the host cannot be used.
		const subscribed =
			this.options.subscribe !== false
				? this.send<{seq: number; view: HostView; at: number}>(channel, 'subscribe', {whole: this.options.wholeFirst !== false})
				: undefined;
		subscribed?.catch(() => undefined);
		const hello = await greeting;
		const rtt = monotonicMs() - started;
		if (hello.program !== 'mam-tui' || !Array.isArray(hello.protocols)) return 'the host answered, but not as mam-tui serve';
		if (hello.protocol === null || !PROTOCOLS.includes(hello.protocol as 1)) {
			return `the host runs protocol ${printable(hello.protocols.join(', '))}, this needs ${PROTOCOLS.join(' or ')} (update mam-tui on one side; nothing is installed for you)`;
		}
		this.hello = hello;
		if (subscribed) {
			const first = await subscribed;
			this.view = first.view;
			this.viewAt = first.at;
			this.seq = first.seq;
		}
		this.attempt = 0;
		// The host's own words: shown (status, the status bar), never obeyed by the terminal.
		this.setStatus({state: 'up', rttMs: Math.round(rtt), message: printable(`mam-tui ${String(hello.version)}, protocol ${hello.protocol}`)});
		this.schedulePing(channel);
		return undefined;
	}

	private schedulePing(channel: Channel): void {
		this.timer(this.options.pingMs ?? DEFAULT_PING_MS, () => {
			if (this.channel !== channel || this.closed) return;
			const started = monotonicMs();
			const deadline = this.timer(this.options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS, () => channel.close());
			this.send(channel, 'ping', {})
				.then(() => {
					clearTimeout(deadline);
					this.timers.delete(deadline);
					if (this.status.state === 'up') this.setStatus({state: 'up', rttMs: Math.round(monotonicMs() - started), message: this.status.message});
					this.schedulePing(channel);
				})
				.catch(() => undefined);
		});
	}

	private dropped(message: string): void {
		this.hello = undefined;
		this.setStatus({state: 'down', rttMs: null, message});
		if (this.closed || this.options.reconnect === false) return;
		const wait = backoffMs(this.attempt++, this.options.random);
		this.timer(wait, () => this.connect());
	}

	private onLine(line: string): void {
		let message: Record<string, unknown>;
		try {
			message = JSON.parse(line) as Record<string, unknown>;
		} catch {
			this.options.logger?.warn(`remote ${this.host.name}: a line that is not JSON`, line.slice(0, 200));
			return;
		}
		if (typeof message !== 'object' || message === null) return;
		if (typeof message['method'] === 'string') {
			this.onNotification(message['method'], message['params']);
			return;
		}
		const id = message['id'];
		const call = typeof id === 'number' ? this.pending.get(id) : undefined;
		if (!call || typeof id !== 'number') return;
		this.pending.delete(id);
		const error = message['error'] as {code?: unknown; message?: unknown} | undefined;
		if (error)
			call.reject(new RemoteError(typeof error.code === 'number' ? error.code : -32603, typeof error.message === 'string' ? error.message : 'remote error'));
		else call.resolve(message['result']);
	}

	private resubscribe(): void {
		const channel = this.channel;
		if (!channel) return;
		this.send<{seq: number; view: HostView; at: number}>(channel, 'subscribe', {})
			.then(first => {
				this.view = first.view;
				this.viewAt = first.at;
				this.seq = first.seq;
				this.emit();
			})
			.catch(() => undefined);
	}

	private onNotification(method: string, params: unknown): void {
		if (typeof params !== 'object' || params === null) return;
		if (method === 'progress') {
			const {call, progress} = params as {call?: unknown; progress?: unknown};
			if (typeof call === 'number') this.pending.get(call)?.onProgress?.(progress);
			return;
		}
		if (method === 'changes' && this.view) {
			const changes = params as Changes;
			// Lines arrive in order on one channel; a gap would mean a lost line, so nothing is guessed.
			if (changes.seq !== this.seq + 1) {
				this.options.logger?.warn(`remote ${this.host.name}: changes ${changes.seq} after ${this.seq}; taking a new snapshot`);
				this.resubscribe();
				return;
			}
			let view: HostView = this.view;
			for (const name of COLLECTIONS) {
				const change = changes.collections?.[name];
				if (change) view = {...view, [name]: applyChange(name, view[name], change)};
			}
			if (changes.mux) view = {...view, mux: changes.mux};
			this.view = view;
			this.viewAt = changes.at;
			this.seq = changes.seq;
			this.emit();
		}
	}
}
