import {MuxError, type MuxEvent, type MuxHealth} from '../types.js';
import {HerdrClient, type HerdrResult} from './client.js';
import {judgeProtocol, protocolLabel, type ProtocolVerdict} from './protocol.js';
import {parsePong, parseSnapshot, type WireSnapshot} from './wire.js';

// The herdr connection's health: every request goes through here, so a transport failure, an
// answer outside the shapes mam-tui reads, a refused protocol or a broken event stream is seen
// once and shown in one health line (the status bar, `status`).

/** Codes that mean the connection, not the request, failed: the protocol is re-checked next time. */
const TRANSPORT_CODES: ReadonlySet<string> = new Set([
	'server_not_running',
	'connection_failed',
	'connection_closed',
	'timeout',
	'bad_response',
	'permission_denied',
]);

export interface HerdrConnectionOptions {
	readonly socketPath: string;
	readonly timeoutMs?: number;
	readonly now: () => number;
	/** Where health changes go (the backend's listeners). */
	readonly emit: (event: MuxEvent) => void;
}

export class HerdrConnection {
	readonly client: HerdrClient;
	private readonly now: () => number;
	private readonly emit: (event: MuxEvent) => void;
	private version: string | undefined;
	/** The protocol of the last `ping` that was not refused. */
	private protocol: Exclude<ProtocolVerdict, {kind: 'refused'}> | undefined;
	private protocolOk = false;
	private callError: string | undefined = 'not connected yet';
	private lastOkAt: number | undefined;
	private lastHealth: MuxHealth;
	private streamErrors: {readonly lifecycle?: string | undefined; readonly status?: string | undefined} = {};

	constructor(options: HerdrConnectionOptions) {
		this.client = new HerdrClient(options.socketPath, options.timeoutMs);
		this.now = options.now;
		this.emit = options.emit;
		this.lastHealth = this.computeHealth();
	}

	get socketPath(): string {
		return this.client.socketPath;
	}

	/** Current health, no I/O. */
	health(): MuxHealth {
		return this.lastHealth;
	}

	private computeHealth(): MuxHealth {
		// A stream's message says when the next reconnect comes, so it goes first when both failed.
		const problem = this.streamErrors.lifecycle ?? this.streamErrors.status ?? this.callError;
		const protocol = this.protocol ? protocolLabel(this.protocol) : 'protocol ?';
		const message = problem ?? `herdr ${this.version ?? '?'} (${protocol}) at ${this.socketPath}`;
		return {kind: 'herdr', ok: problem === undefined, message, ...(this.lastOkAt !== undefined ? {lastOkAt: this.lastOkAt} : {})};
	}

	private updateHealth(): void {
		const next = this.computeHealth();
		if (next.ok === this.lastHealth.ok && next.message === this.lastHealth.message) {
			this.lastHealth = next;
			return;
		}
		const recovered = next.ok && !this.lastHealth.ok;
		this.lastHealth = next;
		this.emit({type: 'health', health: next});
		// Back after a failure: a listing that failed meanwhile may still be what listeners show.
		if (recovered) this.emit({type: 'changed'});
	}

	/** One request; a transport failure marks the backend unhealthy and forces a new protocol check. */
	async call(method: string, params: Readonly<Record<string, unknown>> = {}): Promise<HerdrResult> {
		try {
			const result = await this.client.request(method, params);
			if (this.callError !== undefined && this.protocolOk) {
				this.callError = undefined;
				this.updateHealth();
			}
			return result;
		} catch (error) {
			if (error instanceof MuxError && TRANSPORT_CODES.has(error.code)) {
				this.protocolOk = false;
				this.callError = error.message;
				this.updateHealth();
			}
			throw error;
		}
	}

	/**
	 * One request and the reading of its answer. An answer outside the shapes mam-tui reads counts
	 * like a transport failure (the health says so, the protocol is checked again), and names an
	 * untested protocol when herdr speaks one: that is where such a herdr would first show it.
	 */
	async ask<T>(method: string, params: Readonly<Record<string, unknown>>, read: (result: HerdrResult) => T): Promise<T> {
		const result = await this.call(method, params);
		try {
			return read(result);
		} catch (error) {
			if (!(error instanceof MuxError)) throw error;
			const untested = this.protocol?.kind === 'untested' ? ` (this herdr speaks ${protocolLabel(this.protocol)})` : '';
			const wrapped = new MuxError(`herdr ${method}: ${error.message}${untested}`, error.code);
			this.protocolOk = false;
			this.callError = wrapped.message;
			this.updateHealth();
			throw wrapped;
		}
	}

	/** `ping` once per connection attempt; a protocol protocol.ts refuses is reported with what to do. */
	async ensureProtocol(): Promise<void> {
		if (this.protocolOk) return;
		const pong = await this.ask('ping', {}, parsePong);
		this.version = pong.version;
		const verdict = judgeProtocol(pong.protocol, pong.version, this.socketPath);
		if (verdict.kind === 'refused') {
			this.protocol = undefined;
			this.callError = verdict.message;
			this.updateHealth();
			throw new MuxError(this.callError, 'protocol_mismatch');
		}
		this.protocol = verdict;
		this.protocolOk = true;
		this.callError = undefined;
		this.updateHealth();
	}

	/** A listing succeeded. */
	markOk(): void {
		this.callError = undefined;
		this.lastOkAt = this.now();
		this.updateHealth();
	}

	async snapshot(): Promise<WireSnapshot> {
		await this.ensureProtocol();
		return this.ask('session.snapshot', {}, parseSnapshot);
	}

	/** An event stream opened (`error` undefined) or failed. */
	streamState(which: 'lifecycle' | 'status', error: string | undefined): void {
		this.streamErrors = {...this.streamErrors, [which]: error};
		if (error === undefined) {
			this.lastOkAt = this.now();
		} else {
			this.protocolOk = false;
		}
		this.updateHealth();
	}
	/** The streams were stopped on purpose: their errors no longer count. */
	streamsStopped(): void {
		this.streamErrors = {};
		this.updateHealth();
	}
}
