import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {createHerdrMux, type HerdrMuxOptions} from '../../src/mux/herdr/index.js';
import type {MuxEvent, MuxHealth} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {FAKE_HERDR_VERSIONS, startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS} from '../support/herdrSchema.js';
import {eventually} from '../helpers/poll.js';

let dir: string;
let fake: FakeHerdr;
let socket: string;
const disposers: (() => Promise<void>)[] = [];

function mux(extra: Partial<HerdrMuxOptions> = {}) {
	const m = createHerdrMux({socketPath: socket, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 200}, resyncMs: 50, ...extra});
	disposers.push(() => m.dispose());
	return m;
}

function watch(m: ReturnType<typeof mux>): {events: MuxEvent[]; healths: MuxHealth[]; stop: () => void} {
	const events: MuxEvent[] = [];
	const healths: MuxHealth[] = [];
	const stop = m.subscribe(e => {
		events.push(e);
		if (e.type === 'health') healths.push(e.health);
	});
	return {events, healths, stop};
}

describe.each(FAKE_PROTOCOLS)('herdr faults (protocol %i): each is a clear health message, never a crash', {timeout: 30_000}, protocol => {
	beforeAll(async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-faults-')));
		socket = path.join(dir, 'herdr.sock');
		fake = await startFakeHerdr({socketPath: socket, protocol, eventTickMs: 20});
		await fake.openWorkspace(dir);
	});

	afterEach(async () => {
		fake.misbehave(undefined);
		for (const dispose of disposers.splice(0)) await dispose();
		// The next test counts streams: wait until the fake saw this test's streams close.
		await eventually('streams closed', () => (fake.subscriberCount() === 0 ? true : undefined), {retryErrors: true});
		expect(fake.violations).toEqual([]);
	});

	afterAll(async () => {
		await fake.stop();
		fs.rmSync(dir, {recursive: true, force: true});
	});

	it('socket missing', async () => {
		const m = createHerdrMux({socketPath: path.join(dir, 'nobody-here.sock'), env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 100}});
		disposers.push(() => m.dispose());
		await expect(m.listPanes()).rejects.toMatchObject({code: 'server_not_running', message: expect.stringContaining('no herdr socket at')});
		expect(m.health()).toMatchObject({kind: 'herdr', ok: false, message: expect.stringContaining('is herdr running?')});
		const w = watch(m);
		await eventually('a reconnect message', () => (w.healths.some(h => /reconnecting in/.test(h.message)) ? true : undefined), {retryErrors: true});
		w.stop();
	});

	it('a garbage answer line', async () => {
		const m = mux();
		fake.misbehave({kind: 'garbage'});
		await expect(m.listPanes()).rejects.toMatchObject({code: 'bad_response', message: expect.stringContaining('not JSON')});
		expect(m.health()).toMatchObject({ok: false, message: expect.stringContaining('not JSON')});
		fake.misbehave(undefined);
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		expect(m.health()).toMatchObject({ok: true});
	});

	it('a protocol older than any mam-tui knows is refused, saying what to do', async () => {
		const m = mux();
		fake.misbehave({kind: 'wrong-protocol', protocol: 19});
		await expect(m.listPanes()).rejects.toMatchObject({code: 'protocol_mismatch'});
		expect(m.health()).toMatchObject({
			ok: false,
			message: expect.stringMatching(/speaks protocol 19, older than any mam-tui knows \(20 \(herdr 0\.8\) and 22 \(herdr 0\.9\)\); upgrade herdr/),
		});
		expect(fake.methods.at(-1)).toBe('ping');
	});

	it.each([
		[23, 22],
		[40, 22],
		[21, 20],
	])('an untested protocol %i whose answers fit is used as %i, and the health line says so', async (number, as) => {
		const m = mux();
		fake.misbehave({kind: 'wrong-protocol', protocol: number});
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		expect(m.health()).toMatchObject({
			ok: true,
			message: `herdr ${FAKE_HERDR_VERSIONS[protocol]} (untested protocol ${number}, treating as ${as}) at ${socket}`,
		});
		const w = watch(m);
		await eventually('the streams open', () => (m.eventsLive() ? true : undefined), {retryErrors: true});
		w.stop();
	});

	it('an untested protocol whose answers do not fit says so in the failure and the health line', async () => {
		const m = mux();
		fake.misbehave({kind: 'wrong-protocol', protocol: 23});
		const pane = (await m.listPanes())[0]?.id ?? '';
		// A read without its text: an answer outside the shape mam-tui reads, as a newer herdr might send.
		fake.misbehave({kind: 'raw', result: {type: 'pane_read', read: {pane_id: pane}}, methods: ['pane.read']});
		await expect(m.readOutput(pane, 3)).rejects.toMatchObject({
			code: 'bad_response',
			message: expect.stringContaining('(this herdr speaks untested protocol 23, treating as 22)'),
		});
		expect(m.health()).toMatchObject({ok: false, message: expect.stringMatching(/^herdr pane\.read: herdr sent a malformed pane read .*untested protocol 23/)});
		fake.misbehave(undefined);
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		expect(m.health()).toMatchObject({ok: true, message: expect.stringContaining(`(protocol ${protocol})`)});
	});

	it.each([
		['agent_blocked', /the agent is waiting at an approval or question dialog; nothing was sent/],
		['connection_local_only', /only to its own client shell/],
		['workspace_group_close_required', /worktree workspaces open/],
		['ui_busy', /interface is busy/],
		['events_lost', /dropped events/],
		['a_code_from_the_future', /herdr refused it \(a_code_from_the_future\)/],
	])('herdr answering %s: a readable error, and listing still works', async (code, text) => {
		const m = mux();
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		const pane = fake.paneIds()[0] ?? '';
		fake.misbehave({kind: 'error', code, message: 'details from herdr', methods: ['pane.send_keys', 'pane.read', 'pane.close']});
		for (const call of [() => m.sendKeys(pane, ['Enter']), () => m.readOutput(pane, 5), () => m.closePane(pane)]) {
			await expect(call()).rejects.toMatchObject({name: 'MuxError', code, message: expect.stringMatching(text)});
		}
		expect(fake.paneIds()).toContain(pane);
		// A refused request is not a broken connection: the backend stays healthy.
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		expect(m.health().ok).toBe(true);
	});

	it('herdr answering a listing with an error: the health line says it, and it recovers', async () => {
		const m = mux();
		fake.misbehave({kind: 'error', code: 'ui_busy', methods: ['session.snapshot']});
		await expect(m.listPanes()).rejects.toMatchObject({code: 'ui_busy'});
		fake.misbehave(undefined);
		expect((await m.listPanes()).length).toBeGreaterThan(0);
		expect(m.health().ok).toBe(true);
	});

	it('a stream ended with events_lost reconnects at once and resyncs, without a health alarm', async () => {
		const m = mux();
		const w = watch(m);
		await eventually('the streams open', () => (m.eventsLive() && fake.subscriberCount() === 2 ? true : undefined), {retryErrors: true});
		const changedBefore = w.events.filter(e => e.type === 'changed').length;
		fake.loseEvents();
		await eventually('a resync', () => (w.events.filter(e => e.type === 'changed').length > changedBefore ? true : undefined), {retryErrors: true});
		await eventually('live again', () => (m.eventsLive() && fake.subscriberCount() === 2 ? true : undefined), {retryErrors: true});
		expect(w.healths.filter(h => !h.ok)).toEqual([]);
		const [first] = fake.paneIds();
		const added = await fake.split(first ?? '', dir);
		await eventually('pane-created after the resync', () => (w.events.some(e => e.type === 'pane-created' && e.paneId === added) ? true : undefined), {
			retryErrors: true,
		});
		w.stop();
	});

	it('a connection closed without an answer', async () => {
		const m = mux();
		fake.misbehave({kind: 'refuse', methods: ['session.snapshot']});
		await expect(m.listPanes()).rejects.toThrow(/closed the connection without answering session.snapshot/);
		expect(m.health().ok).toBe(false);
	});

	it('a call that never answers times out', async () => {
		const m = mux({timeoutMs: 300});
		fake.misbehave({kind: 'silent', methods: ['session.snapshot']});
		await expect(m.listPanes()).rejects.toMatchObject({code: 'timeout', message: expect.stringContaining('did not answer session.snapshot within 300 ms')});
		expect(m.health()).toMatchObject({ok: false, message: expect.stringContaining('within 300 ms')});
	});

	it('a slow answer within the timeout is fine', async () => {
		const m = mux({timeoutMs: 2000});
		fake.misbehave({kind: 'slow', delayMs: 100});
		expect((await m.listPanes()).length).toBeGreaterThan(0);
	});

	it('a disconnect during the subscription: reconnects, resyncs, and events flow again', async () => {
		const m = mux();
		const w = watch(m);
		await eventually('the streams open', () => (m.eventsLive() && fake.subscriberCount() === 2 ? true : undefined), {retryErrors: true});
		fake.dropSubscriptions();
		await eventually('a lost-stream message', () => (w.healths.some(h => !h.ok && /event stream lost/.test(h.message)) ? true : undefined), {
			retryErrors: true,
		});
		await eventually('healthy again', () => (m.health().ok && m.eventsLive() ? true : undefined), {retryErrors: true});
		await eventually('a resync', () => (w.events.some(e => e.type === 'changed') ? true : undefined), {retryErrors: true});
		const [first] = fake.paneIds();
		const added = await fake.split(first ?? '', dir);
		await eventually('pane-created after the reconnect', () => (w.events.some(e => e.type === 'pane-created' && e.paneId === added) ? true : undefined), {
			retryErrors: true,
		});
		w.stop();
	});

	it('herdr going away and coming back (socket removed, then listening again)', async () => {
		const m = mux();
		const w = watch(m);
		await eventually('the streams open', () => (m.eventsLive() && fake.subscriberCount() === 2 ? true : undefined), {retryErrors: true});
		await fake.stopListening();
		await eventually('a no-socket message', () => (w.healths.some(h => !h.ok && /no herdr socket/.test(h.message)) ? true : undefined), {retryErrors: true});
		await fake.listen();
		await eventually('reconnected', () => (m.health().ok && m.eventsLive() ? true : undefined), {retryErrors: true});
		w.stop();
	});

	it('a stream that never starts', async () => {
		const m = mux({timeoutMs: 300});
		fake.misbehave({kind: 'silent', methods: ['events.subscribe']});
		const w = watch(m);
		await eventually('a start timeout', () => (w.healths.some(h => /did not start the event stream within 300 ms/.test(h.message)) ? true : undefined), {
			retryErrors: true,
		});
		fake.misbehave(undefined);
		await eventually('recovers', () => (m.health().ok ? true : undefined), {retryErrors: true});
		w.stop();
	});

	it('a garbage line on the stream ends it and the client reconnects; unknown events are ignored', async () => {
		const m = mux();
		const w = watch(m);
		await eventually('the streams open', () => (m.eventsLive() && fake.subscriberCount() === 2 ? true : undefined), {retryErrors: true});
		fake.injectRaw(JSON.stringify({event: 'brand_new_event', data: {type: 'brand_new_event', surprise: [1, 2]}, extra: true}));
		fake.injectRaw('{"event": "pane_closed"');
		await eventually('a not-an-event message', () => (w.healths.some(h => /not an event/.test(h.message)) ? true : undefined), {retryErrors: true});
		await eventually('healthy again', () => (m.health().ok && m.eventsLive() ? true : undefined), {retryErrors: true});
		expect(w.events.filter(e => e.type !== 'health' && e.type !== 'changed')).toEqual([]);
		w.stop();
	});
});
