import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {HerdrClient} from '../../src/mux/herdr/client.js';
import {createHerdrMux, type HerdrMux} from '../../src/mux/herdr/index.js';
import type {MuxEvent} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS} from '../support/herdrSchema.js';
import {eventually} from '../helpers/poll.js';

/**
 * A change between the subscription and the snapshot is never missed (issue 19, PROTOCOL 14):
 * the fake makes it in exactly that gap, whichever order the client takes the two in. herdr 0.9
 * (protocol 22) sends no replay, so a client that took the snapshot first would never hear of it.
 */
describe.each(FAKE_PROTOCOLS)('herdr protocol %i: changes in the gap between subscribing and the snapshot', {timeout: 30_000}, protocol => {
	let dir: string;
	let fake: FakeHerdr;
	let first: string;
	const muxes: HerdrMux[] = [];

	beforeAll(async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `mam-gap-${protocol}-`)));
		fake = await startFakeHerdr({socketPath: path.join(dir, 'herdr.sock'), protocol, eventTickMs: 20});
		first = await fake.openWorkspace(dir);
	});
	afterEach(async () => {
		for (const mux of muxes.splice(0)) await mux.dispose();
		expect(fake.violations).toEqual([]);
	});
	afterAll(async () => {
		await fake.stop();
		fs.rmSync(dir, {recursive: true, force: true});
	});

	function watched(): {mux: HerdrMux; events: MuxEvent[]; has: (what: string, test: (e: MuxEvent) => boolean) => Promise<true>} {
		const mux = createHerdrMux({socketPath: fake.socketPath, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 200}, resyncMs: 50});
		muxes.push(mux);
		const events: MuxEvent[] = [];
		mux.subscribe(e => events.push(e));
		const has = (what: string, test: (e: MuxEvent) => boolean) =>
			eventually(what, () => (events.some(test) ? (true as const) : undefined), {retryErrors: true});
		return {mux, events, has};
	}

	it('a pane opened in the gap is watched: its status changes and its close arrive as events', async () => {
		let opened = '';
		fake.inGap(async () => {
			opened = await fake.split(first, dir);
		});
		const {mux, events, has} = watched();
		await eventually('events live with the new pane known', () => (opened && mux.eventsLive() ? true : undefined), {retryErrors: true});
		// Listeners are told to look once the streams are live: a listing now shows the new pane.
		await has('a changed or pane-created event', e => e.type === 'changed' || (e.type === 'pane-created' && e.paneId === opened));
		fake.setAgentStatus(opened, 'blocked');
		await has(`agent-status blocked for ${opened}`, e => e.type === 'agent-status' && e.paneId === opened && e.status === 'blocked');
		await new HerdrClient(fake.socketPath).request('pane.close', {pane_id: opened});
		await has(`pane-closed for ${opened}`, e => e.type === 'pane-closed' && e.paneId === opened);
		// Reported once, however many ways it arrived (event, snapshot, replay).
		expect(events.filter(e => e.type === 'pane-created' && e.paneId === opened).length).toBeLessThanOrEqual(1);
		expect(events.filter(e => e.type === 'pane-closed' && e.paneId === opened)).toHaveLength(1);
	});

	it('a pane closed in the gap of a lifecycle reconnect is reported closed, once', async () => {
		const {mux, events, has} = watched();
		await eventually('events live', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
		const doomed = await fake.split(first, dir);
		await has(`pane-created for ${doomed}`, e => e.type === 'pane-created' && e.paneId === doomed);
		// Its status arriving proves the status stream was re-opened for it: nothing else is pending.
		fake.setAgentStatus(doomed, 'working');
		await has(`agent-status working for ${doomed}`, e => e.type === 'agent-status' && e.paneId === doomed && e.status === 'working');
		fake.inGap(async () => {
			await new HerdrClient(fake.socketPath).request('pane.close', {pane_id: doomed});
		});
		// Only the lifecycle stream is lost: the status stream stays up and takes no snapshot.
		fake.dropSubscriptions('lifecycle');
		await has(`pane-closed for ${doomed}`, e => e.type === 'pane-closed' && e.paneId === doomed);
		await eventually('live again', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
		expect(events.filter(e => e.type === 'pane-closed' && e.paneId === doomed)).toHaveLength(1);
	});

	it('a pane opened in the gap of a lifecycle reconnect is reported created, once, and watched', async () => {
		const {mux, events, has} = watched();
		await eventually('events live', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
		let opened = '';
		fake.inGap(async () => {
			opened = await fake.split(first, dir);
		});
		fake.dropSubscriptions('lifecycle');
		await has('pane-created for the pane opened in the gap', e => e.type === 'pane-created' && e.paneId === opened);
		await eventually('live again', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
		fake.setAgentStatus(opened, 'working');
		await has(`agent-status working for ${opened}`, e => e.type === 'agent-status' && e.paneId === opened && e.status === 'working');
		expect(events.filter(e => e.type === 'pane-created' && e.paneId === opened)).toHaveLength(1);
	});

	it('a status change in the gap of a status-stream re-open is reported', async () => {
		const {mux, has} = watched();
		await eventually('events live', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
		fake.inGap(async () => {
			fake.setAgentStatus(first, 'blocked');
		}, 'status');
		// A new pane changes the watched set: the status stream is re-opened.
		await fake.split(first, dir);
		await has(`agent-status blocked for ${first}`, e => e.type === 'agent-status' && e.paneId === first && e.status === 'blocked');
		fake.setAgentStatus(first, 'idle');
		await has(`agent-status idle for ${first}`, e => e.type === 'agent-status' && e.paneId === first && e.status === 'idle');
	});
});
