import {PassThrough} from 'node:stream';
import {afterEach, describe, expect, it} from 'vitest';
import type {Actions, PurgePlanView} from '../../src/actions/index.js';
import {confirmPurge, expectedConfirmation} from '../../src/actions/purge.js';
import {refusal} from '../../src/actions/types.js';
import type {HostConfig} from '../../src/config/hosts.js';
import {HostConnection} from '../../src/remote/client.js';
import type {Channel} from '../../src/remote/channel.js';
import {CAPABILITIES, type HostView} from '../../src/remote/protocol.js';
import {remoteActions} from '../../src/remote/remoteActions.js';
import {serve, type ServeSource} from '../../src/remote/serve.js';
import {eventually} from '../helpers/poll.js';

/** The wire without ssh: a serve and a client joined by two in-process streams. */

const HOST: HostConfig = {name: 'devbox', ssh: 'me@devbox', sshOptions: {}, command: ['mam-tui']};

function view(sessions: Record<string, unknown>[]): HostView {
	return {registry: '/r', sessions, panes: [], findings: [], conversations: [], attention: [], mux: {kind: 'tmux', ok: true, message: 'ok'}};
}

/** A source whose view the test changes. */
function fakeSource(initial: HostView, fixed: string[] = []) {
	let current = initial;
	const listeners = new Set<() => void>();
	const source: ServeSource = {
		view: () => current,
		subscribe: fn => (listeners.add(fn), () => listeners.delete(fn)),
		ready: async () => undefined,
		fix: async key => {
			fixed.push(key);
			return {ok: true, value: {status: 'applied', message: `fixed ${key}`}};
		},
		dispose: async () => undefined,
	};
	return {
		source,
		set(next: HostView) {
			current = next;
			for (const fn of listeners) fn();
		},
	};
}

const plan = (fingerprint: string): PurgePlanView => ({
	agent: 'claude',
	id: 'c0ffee00-0000-4000-8000-000000000001',
	label: 'old',
	plan: {agent: 'claude', id: 'c0ffee00-0000-4000-8000-000000000001', descendants: [], items: [], totalBytes: 0},
	fingerprint,
});

function fakeActions(calls: string[], remotePlan: () => PurgePlanView): Actions {
	const no = async () => refusal('unsupported', 'not in this fake');
	return {
		resume: no,
		stop: async (ref, options) => {
			calls.push(`stop ${JSON.stringify(ref)}`);
			options?.onProgress?.({step: 'exit-input', state: 'running', message: 'typing /exit'} as never);
			return {ok: true, value: {ok: true} as never};
		},
		purgePlan: async () => ({ok: true, value: remotePlan()}),
		expectedConfirmation,
		confirmPurge,
		purge: async (plans, typed) => {
			calls.push(`purge ${plans.map(p => p.fingerprint).join(',')} typed=${typed}`);
			return {ok: true, value: []};
		},
		newSession: no,
		adopt: no,
		restore: no,
		trashList: async () => ({ok: true, value: []}),
		trashEmptyOne: no,
		park: async (selection, options) => {
			calls.push(`park ${JSON.stringify(selection)} dryRun=${options?.dryRun === true}`);
			return 'names' in selection ? selection.names.map(session => ({session, outcome: 'refused', check: 'idle', why: 'working'}) as const) : [];
		},
		wake: async selection => {
			calls.push(`wake ${JSON.stringify(selection)}`);
			return [];
		},
	};
}

interface Wire {
	readonly connection: HostConnection;
	readonly served: Promise<void>;
	cut(): void;
}

const open: Wire[] = [];
afterEach(async () => {
	for (const w of open.splice(0)) {
		w.connection.close();
		w.cut();
		await w.served;
	}
});

function wire(options: {
	actions: Actions;
	source: ServeSource;
	protocols?: number[];
	capabilities?: string[];
	helloTimeoutMs?: number;
	version?: string;
}): Wire {
	const toServe = new PassThrough();
	const fromServe = new PassThrough();
	let endChannel: (code: number | null) => void = () => undefined;
	const served = serve({
		input: toServe,
		output: fromServe,
		version: options.version ?? '9.9.9',
		actions: options.actions,
		source: () => options.source,
		...(options.protocols ? {protocols: options.protocols} : {}),
		...(options.capabilities ? {capabilities: options.capabilities} : {}),
	});
	const cut = () => {
		toServe.end();
		endChannel(null);
	};
	const channel: Channel = {
		input: fromServe,
		output: toServe,
		ended: new Promise(resolve => (endChannel = resolve)),
		close: cut,
	};
	const connection = new HostConnection({
		host: HOST,
		open: () => channel,
		reconnect: false,
		...(options.helloTimeoutMs ? {helloTimeoutMs: options.helloTimeoutMs} : {}),
	}).start();
	const w = {connection, served, cut};
	open.push(w);
	return w;
}

describe('hello, snapshot and changes', () => {
	it('agrees on a protocol, lists capabilities, then keeps the snapshot current with changes', async () => {
		const fake = fakeSource(
			view([
				{name: 'a', liveStatus: 'idle'},
				{name: 'b', liveStatus: 'idle'},
			]),
		);
		const {connection} = wire({actions: fakeActions([], () => plan('f1')), source: fake.source});
		await connection.settled();
		expect(connection.state()).toMatchObject({state: 'up', message: 'mam-tui 9.9.9, protocol 1'});
		expect(connection.capabilities()).toEqual([...CAPABILITIES]);
		expect(connection.snapshot()?.sessions.map(s => s['name'])).toEqual(['a', 'b']);
		fake.set(
			view([
				{name: 'a', liveStatus: 'blocked'},
				{name: 'c', liveStatus: 'working'},
			]),
		);
		await eventually('the change arrived', () => connection.snapshot()?.sessions.find(s => s['name'] === 'c'));
		expect(connection.snapshot()?.sessions).toEqual([
			{name: 'a', liveStatus: 'blocked'},
			{name: 'c', liveStatus: 'working'},
		]);
	});

	it('asks for the snapshot together with the hello: one round trip before the rows', async () => {
		const written = new PassThrough();
		let ended: (code: number | null) => void = () => undefined;
		const channel: Channel = {input: new PassThrough(), output: written, ended: new Promise(resolve => (ended = resolve)), close: () => ended(null)};
		const connection = new HostConnection({host: HOST, open: () => channel, reconnect: false}).start();
		await new Promise(resolve => setImmediate(resolve));
		// Nothing has been answered yet: both requests are already on the wire.
		const lines = String(written.read() ?? '')
			.trim()
			.split('\n')
			.map(line => (JSON.parse(line) as {method: string}).method);
		expect(lines).toEqual(['hello', 'subscribe']);
		connection.close();
	});

	it('says which protocol the host runs when none is shared, and installs nothing', async () => {
		const {connection} = wire({actions: fakeActions([], () => plan('f1')), source: fakeSource(view([])).source, protocols: [2]});
		await connection.settled();
		expect(connection.state()).toMatchObject({state: 'down'});
		expect(connection.state().message).toMatch(/^the host runs protocol 2, this needs 1/);
	});

	it('a serve that never answers is marked down after the hello wait, without blocking the event loop', async () => {
		const silent: Channel = {input: new PassThrough(), output: new PassThrough(), ended: new Promise(() => undefined), close: () => undefined};
		let ended: (code: number | null) => void = () => undefined;
		const channel = {...silent, ended: new Promise<number | null>(resolve => (ended = resolve)), close: () => ended(null)};
		const connection = new HostConnection({host: HOST, open: () => channel, reconnect: false, helloTimeoutMs: 300}).start();
		let ticks = 0;
		const ticker = setInterval(() => ticks++, 10);
		await connection.settled();
		clearInterval(ticker);
		expect(connection.state().message).toMatch(/no answer from mam-tui on the host/);
		expect(ticks).toBeGreaterThan(5);
	});
});

describe("a host's own words", () => {
	it('its version is shown in the host line with ? for each control character', async () => {
		const {connection} = wire({actions: fakeActions([], () => plan('f1')), source: fakeSource(view([])).source, version: '9.9.9\u001b]0;pwned\u0007'});
		await connection.settled();
		expect(connection.state().message).toBe('mam-tui 9.9.9?]0;pwned?, protocol 1');
	});
});

describe('actions over the wire', () => {
	it("drift.fix carries the finding's key to the host, which fixes what it sees; a host without the capability refuses", async () => {
		const fixed: string[] = [];
		const {connection} = wire({actions: fakeActions([], () => plan('f1')), source: fakeSource(view([]), fixed).source});
		await connection.settled();
		const key = JSON.stringify(['untracked-pane', '', '%1', 'tmux pane %1 runs Codex CLI']);
		expect(await remoteActions(connection).fixFinding(key)).toEqual({ok: true, value: {status: 'applied', message: `fixed ${key}`}});
		expect(fixed).toEqual([key]);

		const old = wire({actions: fakeActions([], () => plan('f1')), source: fakeSource(view([]), fixed).source, capabilities: ['snapshot', 'adopt']});
		await old.connection.settled();
		const refused = await remoteActions(old.connection).fixFinding(key);
		expect(refused).toMatchObject({ok: false, error: {kind: 'unsupported'}});
		expect(fixed).toEqual([key]);
	});

	it('a capability the host lacks disables that action only, with a message', async () => {
		const calls: string[] = [];
		const {connection} = wire({actions: fakeActions(calls, () => plan('f1')), source: fakeSource(view([])).source, capabilities: ['snapshot', 'stop']});
		await connection.settled();
		const actions = remoteActions(connection);
		const planned = await actions.purgePlan({name: 'old'});
		expect(planned).toMatchObject({ok: false, error: {kind: 'unsupported'}});
		if (!planned.ok) expect(planned.error.message).toMatch(/devbox cannot purge: its mam-tui 9\.9\.9 does not offer it/);
		const progress: unknown[] = [];
		expect(await actions.stop({name: 'a'}, {onProgress: p => progress.push(p)})).toMatchObject({ok: true});
		expect(calls).toEqual(['stop {"name":"a"}']);
		expect(progress).toEqual([{step: 'exit-input', state: 'running', message: 'typing /exit'}]);
	});

	it('park and wake reach the host with their selection; a host without park refuses each named session', async () => {
		const calls: string[] = [];
		const {connection} = wire({actions: fakeActions(calls, () => plan('f1')), source: fakeSource(view([])).source});
		await connection.settled();
		const actions = remoteActions(connection);
		expect(await actions.park({names: ['api-fix']}, {dryRun: true})).toEqual([{session: 'api-fix', outcome: 'refused', check: 'idle', why: 'working'}]);
		expect(await actions.wake({all: true, cwd: '/w'})).toEqual([]);
		expect(calls).toEqual(['park {"names":["api-fix"]} dryRun=true', 'wake {"all":true,"cwd":"/w"}']);

		const older = wire({actions: fakeActions(calls, () => plan('f1')), source: fakeSource(view([])).source, capabilities: ['snapshot', 'stop']});
		await older.connection.settled();
		const refused = await remoteActions(older.connection).park({names: ['a', 'b']});
		expect(refused.map(r => [r.session, r.outcome, r.outcome === 'refused' && r.check])).toEqual([
			['a', 'refused', 'host'],
			['b', 'refused', 'host'],
		]);
		expect(calls).toHaveLength(2);
	});

	it('purge: the serve plans again and refuses when the fingerprint changed; a wrong confirmation never leaves', async () => {
		const calls: string[] = [];
		let fingerprint = 'f1';
		const audit: unknown[] = [];
		const {connection} = wire({actions: fakeActions(calls, () => plan(fingerprint)), source: fakeSource(view([])).source});
		await connection.settled();
		const actions = remoteActions(connection, entry => audit.push(entry));
		const shown = await actions.purgePlan({name: 'old'});
		if (!shown.ok) throw new Error(shown.error.message);
		expect(await actions.purge([shown.value], 'nope')).toMatchObject({ok: false, error: {kind: 'not-confirmed'}});
		fingerprint = 'f2';
		const changed = await actions.purge([shown.value], 'old');
		expect(changed).toMatchObject({ok: false, error: {kind: 'changed'}});
		expect(calls).toEqual([]);
		fingerprint = 'f1';
		expect(await actions.purge([shown.value], 'old')).toMatchObject({ok: true});
		expect(calls).toEqual(['purge f1 typed=old']);
		expect(audit).toContainEqual(expect.objectContaining({action: 'remote:purge.confirm', outcome: 'ok', detail: expect.objectContaining({host: 'devbox'})}));
	});

	it('a channel cut before the answer: the local side says what is known, and the serve finishes the call', async () => {
		const calls: string[] = [];
		let release: () => void = () => undefined;
		const gate = new Promise<void>(resolve => (release = resolve));
		const actions = fakeActions(calls, () => plan('f1'));
		const slow: Actions = {
			...actions,
			purge: async (plans, typed, options) => {
				await gate;
				return actions.purge(plans, typed, options);
			},
		};
		const w = wire({actions: slow, source: fakeSource(view([])).source});
		await w.connection.settled();
		const remote = remoteActions(w.connection);
		const shown = await remote.purgePlan({name: 'old'});
		if (!shown.ok) throw new Error(shown.error.message);
		const pending = remote.purge([shown.value], 'old');
		await new Promise(resolve => setImmediate(resolve));
		w.cut();
		const result = await pending;
		expect(result).toMatchObject({ok: false, error: {kind: 'failed'}});
		if (!result.ok) expect(result.error.message).toMatch(/lost while purge\.confirm ran there; whether it finished is not known here/);
		void w.served.then(() => calls.push('serve ended'));
		await new Promise(resolve => setTimeout(resolve, 50));
		// The serve waits for the call in flight: it ends only after the purge did.
		expect(calls).toEqual([]);
		release();
		await w.served;
		expect(calls).toEqual(['purge f1 typed=old', 'serve ended']);
	});
});
