import net from 'node:net';
import path from 'node:path';
import {MuxError} from '../types.js';
import {isObject, parseEvent, type WireEvent} from './wire.js';

/**
 * Every call gets an answer or an error within this long. herdr answers ordinary requests at
 * once (it serves them from its app loop); 3 s covers a busy machine without freezing the
 * dashboard behind a hung server.
 */
export const DEFAULT_TIMEOUT_MS = 3000;

/** Responses can be large (a snapshot of many panes) but never this large; a runaway stream is cut. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The API socket, resolved as herdr's own CLI does (PROTOCOL 1.1): an explicit session name,
 * else `HERDR_SOCKET_PATH` verbatim, else `HERDR_SESSION`, else the default session.
 * `<config>` is `$XDG_CONFIG_HOME/herdr`, else `$HOME/.config/herdr`.
 */
export function resolveHerdrSocket(env: Readonly<Record<string, string | undefined>>, home: string, session?: string): string {
	const config = env['XDG_CONFIG_HOME'] ? path.join(env['XDG_CONFIG_HOME'], 'herdr') : path.join(home, '.config', 'herdr');
	const named = (name: string, from: string) => {
		if (!SESSION_NAME.test(name) || name === '.' || name === '..') {
			throw new MuxError(`${from} ${JSON.stringify(name)} is not a herdr session name (1–64 of A-Z a-z 0-9 . _ -)`, 'invalid_session');
		}
		return name === 'default' ? path.join(config, 'herdr.sock') : path.join(config, 'sessions', name, 'herdr.sock');
	};
	if (session !== undefined) return named(session, 'session');
	if (env['HERDR_SOCKET_PATH']) return env['HERDR_SOCKET_PATH'];
	if (env['HERDR_SESSION']) return named(env['HERDR_SESSION'], 'HERDR_SESSION');
	return path.join(config, 'herdr.sock');
}

/**
 * What each herdr error code means for a user (PROTOCOL 6). The server's own message is
 * appended, so an unmapped code still reads well.
 */
const ERROR_TEXT: Readonly<Record<string, string>> = {
	pane_not_found: 'that pane no longer exists',
	workspace_not_found: 'that workspace no longer exists',
	tab_not_found: 'that tab no longer exists',
	target_pane_not_found: 'the target pane no longer exists',
	invalid_request: 'herdr did not understand the request (mam-tui and herdr versions may not match)',
	invalid_key: 'a key name was not recognised; nothing was sent',
	invalid_env: 'an environment variable name was refused (empty, or contains = or NUL)',
	invalid_agent: 'the agent label was empty',
	invalid_params: 'herdr refused the parameters',
	pane_send_failed: 'the pane did not accept input (its terminal is closed or busy)',
	pane_split_failed: 'herdr could not start a shell in a new pane',
	pane_layout_unavailable: 'the pane layout is not available',
	confirmation_required: 'herdr wants a confirmation first (closing this would drop a worktree)',
	workspace_group_close_required: 'this workspace has worktree workspaces open; herdr closes it only together with them (close_group)',
	internal_error: 'herdr hit an internal error',
	server_unavailable: 'herdr is shutting down or its app loop is gone',
	timeout: 'herdr gave up waiting',
	not_implemented: 'this herdr does not implement that request',
	unsupported_in_app_mode: 'not available while herdr runs in single-process mode',
	connection_local_only: 'herdr answers that only to its own client shell, not over the API socket',
	ui_busy: "herdr's interface is busy with another request; try again in a moment",
	events_lost: 'herdr dropped events this stream had not read yet; mam-tui re-reads the panes',
	unsupported_method: 'this herdr does not know that request (it may be older than mam-tui expects)',
	endpoint_busy: 'herdr is busy serving another client; try again in a moment',
	client_missing: 'no herdr client is attached to show that',
	pane_closed: 'that pane is closing',
	agent_not_found: 'no such agent',
	agent_target_ambiguous: 'the agent name matches more than one pane',
	invalid_agent_name: 'invalid agent name',
	agent_name_taken: 'that agent name is taken',
	unsupported_agent_kind: 'herdr does not know that agent kind',
	invalid_agent_argument: 'an agent argument contains control characters',
	invalid_agent_timeout: 'invalid agent timeout',
	agent_pane_not_found: 'the agent pane no longer exists',
	agent_pane_busy: 'the pane is not at an idle shell prompt',
	agent_pane_unavailable: 'the pane has no live terminal',
	agent_start_input_failed: 'herdr could not type the agent command',
	agent_launch_pending: 'the agent is still starting',
	agent_not_ready: 'the agent is not ready yet',
	agent_not_running: 'the agent went away',
	agent_not_idle: 'the agent is not idle',
	agent_blocked: 'the agent is waiting at an approval or question dialog; nothing was sent',
	agent_prompt_stalled: 'the agent did not take the prompt',
	empty_agent_prompt: 'the prompt was empty',
	agent_prompt_failed: 'the prompt could not be sent',
	agent_send_keys_failed: 'the keys could not be sent to the agent',
	invalid_regex: 'invalid regular expression',
	unsupported_event_wait_match: 'unsupported event match',
	server_not_running: 'herdr is not running',
	protocol_mismatch: 'herdr speaks a protocol this mam-tui does not know',
	stream_conflict: 'another stream already holds this',
	feature_disabled: 'that herdr feature is disabled',
	platform_unsupported: 'not supported on this platform',
};

/** One readable line for a herdr error response. */
export function herdrErrorMessage(code: string, serverMessage: string, method: string): string {
	const text = ERROR_TEXT[code] ?? `herdr refused it (${code || 'no code'})`;
	const detail = serverMessage && serverMessage !== text ? ` — herdr: ${serverMessage}` : '';
	return `herdr ${method}: ${text}${detail}`;
}

function transportError(error: NodeJS.ErrnoException, socketPath: string): MuxError {
	switch (error.code ?? '') {
		case 'ENOENT':
			return new MuxError(`no herdr socket at ${socketPath} (is herdr running? set HERDR_SOCKET_PATH to pick another)`, 'server_not_running');
		case 'ECONNREFUSED':
			return new MuxError(`herdr at ${socketPath} refused the connection (stale socket: herdr is not running)`, 'server_not_running');
		case 'EACCES':
		case 'EPERM':
			return new MuxError(`no permission to open the herdr socket ${socketPath}`, 'permission_denied');
		case 'ENOTSOCK':
			return new MuxError(`${socketPath} is not a socket`, 'server_not_running');
		default:
			return new MuxError(`cannot talk to herdr at ${socketPath}: ${error.message}`, 'connection_failed');
	}
}

/** A success result: an object with a `type`; the per-method fields are read by wire.ts. */
export type HerdrResult = Readonly<Record<string, unknown>> & {readonly type: string};

/** A parsed response line: the result, or the error mapped to a MuxError. */
function readResponse(line: string, method: string, socketPath: string): HerdrResult {
	let value: unknown;
	try {
		value = JSON.parse(line);
	} catch {
		throw new MuxError(`herdr at ${socketPath} answered ${method} with something that is not JSON: ${JSON.stringify(line.slice(0, 60))}`, 'bad_response');
	}
	if (!isObject(value)) throw new MuxError(`herdr at ${socketPath} answered ${method} with a non-object`, 'bad_response');
	// Match by connection, not by id: a request herdr cannot parse is answered with id "".
	const error = value['error'];
	if (isObject(error)) {
		const code = typeof error['code'] === 'string' ? error['code'] : '';
		const message = typeof error['message'] === 'string' ? error['message'] : '';
		throw new MuxError(herdrErrorMessage(code, message, method), code || 'herdr_error');
	}
	const result = value['result'];
	if (!isObject(result) || typeof result['type'] !== 'string') {
		throw new MuxError(`herdr at ${socketPath} answered ${method} without a result`, 'bad_response');
	}
	return result as HerdrResult;
}

/** One subscription requested from `events.subscribe` (PROTOCOL 5.1). */
export type HerdrSubscription = {readonly type: string; readonly pane_id?: string};

/** An open `events.subscribe` stream. */
export interface HerdrStream {
	/** Resolves on `subscription_started`; rejects (MuxError) when the server refuses or stays silent. */
	readonly started: Promise<void>;
	/** Resolves with why the stream ended, for whatever cause (its code: the error herdr sent, or how the connection ended). Never rejects. */
	readonly closed: Promise<MuxError>;
	/** End the stream from our side. */
	close(): void;
}

/** Splits a socket's bytes into lines without holding more than one line's worth. */
class LineReader {
	private buffer = '';
	private readonly onLine: (line: string) => void;
	private readonly onOverflow: () => void;

	constructor(onLine: (line: string) => void, onOverflow: () => void) {
		this.onLine = onLine;
		this.onOverflow = onOverflow;
	}

	push(chunk: string): void {
		// Only the new chunk is searched: a listing of 500 panes is one line of hundreds of kB
		// arriving in many chunks, and searching the whole buffer each time grew with its square.
		let newline = chunk.indexOf('\n');
		while (newline >= 0) {
			const line = this.buffer + chunk.slice(0, newline);
			this.buffer = '';
			chunk = chunk.slice(newline + 1);
			if (line.trim().length > 0) this.onLine(line);
			newline = chunk.indexOf('\n');
		}
		this.buffer += chunk;
		if (this.buffer.length > MAX_LINE_BYTES) this.onOverflow();
	}
}

/**
 * herdr's JSON socket API (PROTOCOL 1.2): one request per connection, one answer line, then
 * the server closes. Every call has a timeout; transport failures, garbage and error responses
 * all come back as a MuxError with a readable message.
 */
export class HerdrClient {
	readonly socketPath: string;
	private readonly timeoutMs: number;
	private counter = 0;

	constructor(socketPath: string, timeoutMs = DEFAULT_TIMEOUT_MS) {
		this.socketPath = socketPath;
		this.timeoutMs = timeoutMs;
	}

	private nextId(method: string): string {
		this.counter += 1;
		return `mam:${method}:${this.counter}`;
	}

	/** Send one request on a fresh connection and read its one answer line. */
	request(method: string, params: Readonly<Record<string, unknown>> = {}, timeoutMs = this.timeoutMs): Promise<HerdrResult> {
		const line = `${JSON.stringify({id: this.nextId(method), method, params})}\n`;
		return new Promise<HerdrResult>((resolve, reject) => {
			let settled = false;
			const socket = net.createConnection(this.socketPath);
			socket.setEncoding('utf8');
			const finish = (fn: () => void) => {
				if (settled) return;
				settled = true;
				clearTimeout(timer);
				socket.destroy();
				fn();
			};
			const timer = setTimeout(
				() => finish(() => reject(new MuxError(`herdr at ${this.socketPath} did not answer ${method} within ${timeoutMs} ms`, 'timeout'))),
				timeoutMs,
			);
			const reader = new LineReader(
				answer =>
					finish(() => {
						try {
							resolve(readResponse(answer, method, this.socketPath));
						} catch (error) {
							reject(error);
						}
					}),
				() => finish(() => reject(new MuxError(`herdr at ${this.socketPath} sent an oversized answer to ${method}`, 'bad_response'))),
			);
			socket.on('connect', () => socket.write(line));
			socket.on('data', chunk => reader.push(String(chunk)));
			socket.on('error', error => finish(() => reject(transportError(error, this.socketPath))));
			socket.on('close', () =>
				finish(() => reject(new MuxError(`herdr at ${this.socketPath} closed the connection without answering ${method}`, 'connection_closed'))),
			);
		});
	}

	/**
	 * Open an `events.subscribe` stream. `onEvent` gets every event line (both wire shapes,
	 * unknown kinds included); an error line ends the stream with that error, and any other line
	 * that is not an event ends it as a bad response.
	 */
	subscribe(subscriptions: readonly HerdrSubscription[], onEvent: (event: WireEvent) => void, timeoutMs = this.timeoutMs): HerdrStream {
		const method = 'events.subscribe';
		const line = `${JSON.stringify({id: this.nextId(method), method, params: {subscriptions}})}\n`;
		const socket = net.createConnection(this.socketPath);
		socket.setEncoding('utf8');
		let started = false;
		let endReason = 'the event stream closed';
		let endCode = 'connection_closed';
		let resolveStarted: () => void = () => {};
		let rejectStarted: (error: Error) => void = () => {};
		const startedPromise = new Promise<void>((resolve, reject) => {
			resolveStarted = resolve;
			rejectStarted = reject;
		});
		// A rejection nobody awaits (the caller closed first) must not crash the process.
		startedPromise.catch(() => {});
		const fail = (error: MuxError) => {
			endReason = error.message;
			endCode = error.code;
			if (!started) rejectStarted(error);
			socket.destroy();
		};
		const timer = setTimeout(
			() => fail(new MuxError(`herdr at ${this.socketPath} did not start the event stream within ${timeoutMs} ms`, 'timeout')),
			timeoutMs,
		);
		const reader = new LineReader(
			text => {
				if (!started) {
					try {
						readResponse(text, method, this.socketPath);
						started = true;
						clearTimeout(timer);
						resolveStarted();
					} catch (error) {
						fail(error instanceof MuxError ? error : new MuxError(String(error), 'bad_response'));
					}
					return;
				}
				let value: unknown;
				try {
					value = JSON.parse(text);
				} catch {
					value = undefined;
				}
				// herdr can end a stream with an error line (events_lost): the stream ends with that error.
				if (isObject(value) && isObject(value['error'])) {
					try {
						readResponse(text, method, this.socketPath);
					} catch (error) {
						fail(error instanceof MuxError ? error : new MuxError(String(error), 'bad_response'));
					}
					return;
				}
				const event = parseEvent(value);
				if (!event) {
					fail(new MuxError(`herdr at ${this.socketPath} sent a line that is not an event: ${JSON.stringify(text.slice(0, 60))}`, 'bad_response'));
					return;
				}
				onEvent(event);
			},
			() => fail(new MuxError(`herdr at ${this.socketPath} sent an oversized event`, 'bad_response')),
		);
		const closed = new Promise<MuxError>(resolve => {
			socket.on('close', () => {
				clearTimeout(timer);
				if (!started) rejectStarted(new MuxError(`herdr at ${this.socketPath} closed the event stream before it started: ${endReason}`, 'connection_closed'));
				resolve(new MuxError(endReason, endCode));
			});
		});
		socket.on('connect', () => socket.write(line));
		socket.on('data', chunk => reader.push(String(chunk)));
		socket.on('error', error => fail(transportError(error, this.socketPath)));
		return {
			started: startedPromise,
			closed,
			close() {
				endReason = 'closed by mam-tui';
				endCode = 'closed_by_client';
				socket.destroy();
			},
		};
	}
}
