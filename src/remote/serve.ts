import readline from 'node:readline';
import type {Readable, Writable} from 'node:stream';
import type {Actions, ParkOptions, ParkSelection, PurgePlanView, PurgeProgress, SessionRef, WakeSelection} from '../actions/index.js';
import {refusal, type ActionResult} from '../actions/types.js';
import type {FixAnswer} from '../actions/driftFix.js';
import type {AdoptRequest} from '../actions/adopt.js';
import {messageOf} from '../domain/result.js';
import type {Logger} from '../system/logger.js';
import {
	CAPABILITIES,
	COLLECTIONS,
	diffCollection,
	METHOD_CAPABILITY,
	PROTOCOLS,
	RPC_ERROR,
	type Capability,
	type Changes,
	type Hello,
	type HostView,
	type RpcRequest,
} from './protocol.js';

/** Where the serve's view comes from: the same supervisor and store the dashboard runs. */
export interface ServeSource {
	/** The current view, rebuilt only when the store changed. */
	view(): HostView;
	/** Call `onChange` after every store change (the serve diffs and pushes). Returns the unsubscribe. */
	subscribe(onChange: () => void): () => void;
	/** Resolves after the first refresh (panes, live status, findings), so a first snapshot is whole. */
	ready(): Promise<void>;
	/** Apply the safe fix of the finding this machine sees now under `key` (`drift.fix`). */
	fix(key: string): Promise<ActionResult<FixAnswer>>;
	/** Stop the supervisor and the registry watch. */
	dispose(): Promise<void>;
}

export interface ServeDeps {
	readonly input: Readable;
	readonly output: Writable;
	readonly version: string;
	readonly actions: Actions;
	/** Started on `subscribe`: a serve that only runs one action never lists panes or reads conversations. */
	readonly source: () => ServeSource;
	readonly logger?: Logger;
	/** What this serve offers (default every capability the build has). */
	readonly capabilities?: readonly Capability[];
	readonly protocols?: readonly number[];
	readonly now?: () => number;
}

/** Longest line accepted (a request is a few hundred bytes; 1 MB leaves room and bounds memory). */
const MAX_LINE = 1_000_000;

/** How long a subscribe waits for the first refresh before it answers with what it has. */
const FIRST_REFRESH_WAIT_MS = 3000;

class ParamError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(params: Record<string, unknown>, key: string): string {
	const value = params[key];
	if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) throw new ParamError(`${key} must be a non-empty string`);
	return value;
}

function refOf(raw: unknown): SessionRef {
	if (!isObject(raw)) throw new ParamError('ref must be {name} or {agent, id}');
	if ('name' in raw) return {name: str(raw, 'name')};
	return {agent: str(raw, 'agent'), id: str(raw, 'id')};
}

function names(raw: Record<string, unknown>): string[] {
	const list = raw['names'];
	if (!Array.isArray(list) || list.length === 0) throw new ParamError('selection.names must be a non-empty list of names');
	return list.map((name: unknown, i) => {
		if (typeof name !== 'string' || name.length === 0 || name.includes('\0')) throw new ParamError(`selection.names[${i}] must be a non-empty string`);
		return name;
	});
}

function parkSelectionOf(raw: unknown): ParkSelection {
	if (!isObject(raw)) throw new ParamError('selection must be {names} or {idleOverSeconds}');
	if ('names' in raw) return {names: names(raw)};
	const seconds = raw['idleOverSeconds'];
	if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) throw new ParamError('selection.idleOverSeconds must be a number of seconds');
	return {idleOverSeconds: seconds};
}

function parkOptionsOf(params: Record<string, unknown>): ParkOptions {
	const graceMs = optionalMs(params, 'graceMs');
	const soak = params['soakSeconds'];
	if (soak !== undefined && (typeof soak !== 'number' || !Number.isFinite(soak) || soak < 0 || soak > 86_400))
		throw new ParamError('soakSeconds must be seconds');
	return {...(params['dryRun'] === true ? {dryRun: true} : {}), ...(graceMs ? {graceMs} : {}), ...(typeof soak === 'number' ? {soakSeconds: soak} : {})};
}

function wakeSelectionOf(raw: unknown): WakeSelection {
	if (!isObject(raw)) throw new ParamError('selection must be {names} or {all}');
	if ('names' in raw) return {names: names(raw)};
	if (raw['all'] !== true) throw new ParamError('selection must be {names} or {all: true}');
	return raw['cwd'] === undefined ? {all: true} : {all: true, cwd: str(raw, 'cwd')};
}

function optionalMs(params: Record<string, unknown>, key: string): number | undefined {
	const value = params[key];
	if (value === undefined) return undefined;
	if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 3_600_000) throw new ParamError(`${key} must be milliseconds`);
	return value;
}

/**
 * `mam-tui serve --stdio`: answer one client on a stream pair until it closes. An action in
 * flight when the client goes away (the ssh channel was cut) runs to its end here, so this side
 * is never left half-done; its audit record says how it ended. Resolves when the input ended and
 * every call finished.
 */
export async function serve(deps: ServeDeps): Promise<void> {
	const now = deps.now ?? Date.now;
	const capabilities = deps.capabilities ?? CAPABILITIES;
	const protocols = deps.protocols ?? PROTOCOLS;
	let agreed: number | null = null;
	let closed = false;
	let source: ServeSource | undefined;
	let unsubscribe: (() => void) | undefined;
	let last: HostView | undefined;
	let seq = 0;
	let pushScheduled = false;
	const inFlight = new Set<Promise<unknown>>();

	const send = (message: unknown): void => {
		if (closed) return;
		try {
			deps.output.write(`${JSON.stringify(message)}\n`);
		} catch (error) {
			deps.logger?.warn('serve: write failed', messageOf(error));
			closed = true;
		}
	};
	deps.output.on('error', (error: unknown) => {
		// EPIPE: the channel is gone. Calls in flight still finish; nothing more is sent.
		closed = true;
		deps.logger?.info('serve: output closed', messageOf(error));
	});

	const push = (): void => {
		pushScheduled = false;
		if (!source || !last) return;
		const next = source.view();
		const collections: Changes['collections'] = {};
		let any = false;
		for (const name of COLLECTIONS) {
			const change = diffCollection(name, last[name], next[name]);
			if (change) {
				collections[name] = change;
				any = true;
			}
		}
		const muxChanged = JSON.stringify(last.mux) !== JSON.stringify(next.mux);
		last = next;
		if (!any && !muxChanged) return;
		seq++;
		const changes: Changes = {seq, collections, ...(muxChanged ? {mux: next.mux} : {}), at: now()};
		send({jsonrpc: '2.0', method: 'changes', params: changes});
	};

	const methods: Record<string, (params: Record<string, unknown>, id: number | string) => Promise<unknown>> = {
		ping: async () => ({at: now()}),
		subscribe: async params => {
			source ??= deps.source();
			const started = source;
			// The rows alone (before the first refresh) show every session without its live status:
			// a one-shot `status` waits for it; the dashboard takes the rows at once, live data follows as changes.
			if (params['whole'] !== false) await Promise.race([started.ready(), new Promise(resolve => setTimeout(resolve, FIRST_REFRESH_WAIT_MS).unref())]);
			last = started.view();
			// A burst of store changes (one refresh dispatches several) costs one diff, sent at once after it.
			unsubscribe ??= started.subscribe(() => {
				if (pushScheduled) return;
				pushScheduled = true;
				setImmediate(push);
			});
			return {seq, view: last, at: now()};
		},
		resume: async params => deps.actions.resume(refOf(params['ref'])),
		stop: async (params, id) => {
			const graceMs = optionalMs(params, 'graceMs');
			const killWaitMs = optionalMs(params, 'killWaitMs');
			return deps.actions.stop(refOf(params['ref']), {
				...(graceMs ? {graceMs} : {}),
				...(killWaitMs ? {killWaitMs} : {}),
				onProgress: progress => send({jsonrpc: '2.0', method: 'progress', params: {call: id, progress}}),
			});
		},
		'purge.plan': async params => deps.actions.purgePlan(refOf(params['ref'])),
		'purge.confirm': async (params, id) =>
			purgeConfirm(deps.actions, params, progress => send({jsonrpc: '2.0', method: 'progress', params: {call: id, progress}})),
		'trash.list': async () => deps.actions.trashList(),
		'trash.empty': async params => deps.actions.trashEmptyOne(str(params, 'purgeId')),
		restore: async params => deps.actions.restore(str(params, 'purgeId')),
		adopt: async params => deps.actions.adopt(adoptRequestOf(params['request'])),
		'drift.fix': async params => {
			source ??= deps.source();
			return source.fix(str(params, 'key'));
		},
		// Park and wake answer a list (one result per session); wrapped so every call has one shape.
		park: async params => ({ok: true, value: await deps.actions.park(parkSelectionOf(params['selection']), parkOptionsOf(params))}),
		wake: async params => ({ok: true, value: await deps.actions.wake(wakeSelectionOf(params['selection']))}),
	};

	const answer = async (request: RpcRequest): Promise<void> => {
		const id = request.id;
		const reply = (body: {result: unknown} | {error: {code: number; message: string; data?: unknown}}) => {
			if (id !== undefined) send({jsonrpc: '2.0', id, ...body});
		};
		if (request.method === 'hello') {
			const theirs =
				isObject(request.params) && Array.isArray(request.params['protocols'])
					? request.params['protocols'].filter((p): p is number => typeof p === 'number')
					: [];
			const common = protocols.filter(p => theirs.includes(p));
			agreed = common.length > 0 ? Math.max(...common) : null;
			const hello: Hello = {program: 'mam-tui', version: deps.version, protocols, protocol: agreed, capabilities};
			reply({result: hello});
			return;
		}
		if (agreed === null) {
			reply({error: {code: RPC_ERROR.noProtocol, message: `say hello first with a protocol this serve speaks (${protocols.join(', ')})`, data: {protocols}}});
			return;
		}
		const method = methods[request.method];
		if (!method) {
			reply({error: {code: RPC_ERROR.methodNotFound, message: `unknown method ${JSON.stringify(request.method)}`}});
			return;
		}
		const needs = METHOD_CAPABILITY[request.method];
		if (needs !== undefined && !capabilities.includes(needs)) {
			reply({error: {code: RPC_ERROR.methodNotFound, message: `this serve cannot ${needs}`}});
			return;
		}
		const params = request.params === undefined ? {} : request.params;
		if (!isObject(params)) {
			reply({error: {code: RPC_ERROR.invalidParams, message: 'params must be an object'}});
			return;
		}
		try {
			reply({result: await method(params, id ?? '')});
		} catch (error) {
			if (error instanceof ParamError) reply({error: {code: RPC_ERROR.invalidParams, message: error.message}});
			else {
				deps.logger?.error(`serve: ${request.method} failed`, error);
				reply({error: {code: RPC_ERROR.internal, message: messageOf(error)}});
			}
		}
	};

	const onLine = (line: string): void => {
		if (line.trim() === '') return;
		let request: unknown;
		try {
			request = line.length > MAX_LINE ? undefined : JSON.parse(line);
		} catch {
			send({jsonrpc: '2.0', id: null, error: {code: RPC_ERROR.parse, message: 'not JSON'}});
			return;
		}
		if (
			!isObject(request) ||
			request['jsonrpc'] !== '2.0' ||
			typeof request['method'] !== 'string' ||
			(request['id'] !== undefined && typeof request['id'] !== 'number' && typeof request['id'] !== 'string')
		) {
			send({jsonrpc: '2.0', id: null, error: {code: RPC_ERROR.invalidRequest, message: 'not a JSON-RPC 2.0 request'}});
			return;
		}
		const call = answer(request as unknown as RpcRequest);
		inFlight.add(call);
		void call.finally(() => inFlight.delete(call));
	};

	const lines = readline.createInterface({input: deps.input, crlfDelay: Infinity});
	lines.on('line', onLine);
	await new Promise<void>(resolve => lines.once('close', () => resolve()));
	// The client is gone: what was asked before it left still runs to its end (never half a purge).
	while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
	closed = true;
	unsubscribe?.();
	await source?.dispose();
}

/**
 * Purge on this machine what the client confirmed. The plans are made again here, now: what is
 * deleted is what this machine finds, never a list of paths from the wire. A plan whose
 * fingerprint differs from the one the user confirmed is refused; `purgeConfirmed` then checks
 * identity, use and the typed confirmation once more right before it deletes.
 */
async function purgeConfirm(actions: Actions, params: Record<string, unknown>, onProgress: (progress: PurgeProgress) => void) {
	const raw = params['plans'];
	if (!Array.isArray(raw) || raw.length === 0) throw new ParamError('plans must be a non-empty list of {agent, id, fingerprint}');
	const typed = typeof params['typed'] === 'string' ? params['typed'] : '';
	const hard = params['hard'] === true;
	const views: PurgePlanView[] = [];
	for (const entry of raw) {
		if (!isObject(entry)) throw new ParamError('each plan must be {agent, id, fingerprint}');
		const ref = {agent: str(entry, 'agent'), id: str(entry, 'id')};
		const fingerprint = str(entry, 'fingerprint');
		const fresh = await actions.purgePlan(ref);
		if (!fresh.ok) return fresh;
		if (fresh.value.fingerprint !== fingerprint) {
			return refusal('changed', `${fresh.value.label}: what would be deleted changed since the plan was shown; nothing was deleted (plan again)`);
		}
		views.push(fresh.value);
	}
	return actions.purge(views, typed, {hard, onProgress});
}

function adoptRequestOf(raw: unknown): AdoptRequest {
	if (!isObject(raw)) throw new ParamError('request must be {agent, id, name?} or {pane, agent?, id?, name?}');
	const pick = (key: string) => (raw[key] === undefined ? {} : {[key]: str(raw, key)});
	return {...pick('agent'), ...pick('id'), ...pick('name'), ...pick('pane')};
}
