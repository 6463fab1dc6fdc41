import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {HerdrClient} from '../../src/mux/herdr/client.js';
import {HERDR_PROTOCOLS} from '../../src/mux/herdr/protocol.js';
import {FAKE_PROTOCOLS, herdrValidator} from '../support/herdrSchema.js';
import {FAKE_HERDR_VERSIONS, herdrNumber, startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {eventually} from '../helpers/poll.js';

let dir: string;
let socket: string;
let fake: FakeHerdr;

/** One raw line to the fake, the raw answer back (to see exactly what is on the wire). */
function raw(line: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const s = net.createConnection(socket);
		let out = '';
		s.setEncoding('utf8');
		s.on('connect', () => s.write(`${line}\n`));
		s.on('data', chunk => (out += String(chunk)));
		s.on('close', () => resolve(out.trim()));
		s.on('error', reject);
	});
}

/** Open an event stream and collect its lines until `count` arrived. */
function stream(subscriptions: unknown[]): {lines: unknown[]; close: () => void} {
	const lines: unknown[] = [];
	const s = net.createConnection(socket);
	let buffer = '';
	s.setEncoding('utf8');
	s.on('connect', () => s.write(`${JSON.stringify({id: 's1', method: 'events.subscribe', params: {subscriptions}})}\n`));
	s.on('data', chunk => {
		buffer += String(chunk);
		for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
			lines.push(JSON.parse(buffer.slice(0, i)));
			buffer = buffer.slice(i + 1);
		}
	});
	return {lines, close: () => s.destroy()};
}

describe.each(FAKE_PROTOCOLS)('the fake herdr itself, playing protocol %i', {timeout: 30_000}, protocol => {
	const traits = HERDR_PROTOCOLS.find(p => p.protocol === protocol);
	beforeAll(async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-fake-')));
		socket = path.join(dir, 'herdr.sock');
		fake = await startFakeHerdr({socketPath: socket, protocol, eventTickMs: 20});
	});
	afterEach(() => {
		fake.violations.splice(0);
	});
	afterAll(async () => {
		await fake.stop();
		fs.rmSync(dir, {recursive: true, force: true});
	});

	it("numbers ids herdr's way (bijective base 32)", () => {
		expect([1, 9, 10, 31, 32, 33, 64, 65].map(herdrNumber)).toEqual(['1', '9', 'A', 'Z', '0', '11', '10', '21']);
	});

	it("answers ping with its version, protocol and that protocol's capabilities", async () => {
		const pong = JSON.parse(await raw('{"id":"p","method":"ping","params":{}}')) as {result: {version: string; protocol: number; capabilities: object}};
		expect(pong.result).toMatchObject({type: 'pong', version: FAKE_HERDR_VERSIONS[protocol], protocol});
		expect(Object.keys(pong.result.capabilities).sort()).toEqual([...(traits?.capabilities ?? ['?'])].sort());
		expect(fake.violations).toEqual([]);
	});

	it(`answers a bad request with invalid_request, ${protocol === 22 ? 'keeping its id' : 'id ""'}, and records the violation`, async () => {
		const answer = JSON.parse(await raw('{"id":"x","method":"pane.frobnicate","params":{}}')) as unknown;
		expect(answer).toEqual({
			id: traits?.invalidRequestKeepsId ? 'x' : '',
			error: {code: 'invalid_request', message: expect.stringContaining('invalid request')},
		});
		expect(fake.violations).toEqual([expect.stringContaining('request:')]);
		const notJson = JSON.parse(await raw('hello')) as unknown;
		expect(notJson).toMatchObject({id: '', error: {code: 'invalid_request'}});
	});

	it(`${traits?.replaysLifecycle ? 'replays' : 'does not replay'} past lifecycle events to a new subscriber`, async () => {
		const pane = await fake.openWorkspace(dir);
		const s = stream([{type: 'pane.created'}]);
		await eventually('started', () => (s.lines.length >= 1 ? true : undefined), {retryErrors: true});
		// A pane made after subscribing is always sent; the one made before only by a replaying protocol.
		const later = await fake.split(pane, dir);
		const created = () => s.lines.slice(1).map(l => (l as {data: {pane: {pane_id: string}}}).data.pane.pane_id);
		await eventually('the live event', () => (created().includes(later) ? true : undefined), {retryErrors: true});
		expect(created().includes(pane)).toBe(traits?.replaysLifecycle);
		s.close();
		expect(fake.violations).toEqual([]);
	});

	it('its schema check catches a malformed line (a negative pid)', () => {
		const check = herdrValidator(protocol);
		const good = {id: 'a', result: {type: 'pane_process_info', process_info: {pane_id: 'w1:p1', shell_pid: 10}}};
		expect(check('success_response', good)).toBeUndefined();
		expect(check('success_response', {...good, result: {...good.result, process_info: {pane_id: 'w1:p1', shell_pid: -1}}})).toMatch(/success_response/);
		expect(check('event', {event: 'pane_closed', data: {pane_id: 'w1:p1', workspace_id: 'w1'}})).toMatch(/event/);
	});

	it('sends lifecycle events underscored with a type inside, status events dotted without', async () => {
		const pane = await fake.openWorkspace(dir);
		const s = stream([{type: 'pane.closed'}, {type: 'pane.agent_status_changed', pane_id: pane}]);
		await eventually('started', () => (s.lines.length >= 1 ? true : undefined), {retryErrors: true});
		fake.setAgentStatus(pane, 'working');
		await new HerdrClient(socket).request('pane.close', {pane_id: pane});
		await eventually('both events', () => (s.lines.length >= 3 ? true : undefined), {retryErrors: true});
		expect(s.lines[0]).toEqual({id: 's1', result: {type: 'subscription_started'}});
		expect(s.lines).toContainEqual({event: 'pane.agent_status_changed', data: expect.objectContaining({pane_id: pane, agent_status: 'working'})});
		expect(s.lines).toContainEqual({event: 'pane_closed', data: {type: 'pane_closed', pane_id: pane, workspace_id: expect.any(String)}});
		s.close();
		expect(fake.violations).toEqual([]);
	});

	it('fails a subscription on a missing pane with the probe id, then closes', async () => {
		const answer = JSON.parse(
			await raw(
				JSON.stringify({
					id: 'q',
					method: 'events.subscribe',
					params: {subscriptions: [{type: 'pane.created'}, {type: 'pane.agent_status_changed', pane_id: 'w99:p1'}]},
				}),
			),
		) as unknown;
		expect(answer).toEqual({id: 'q:sub:1:probe', error: {code: 'pane_not_found', message: 'pane w99:p1 not found'}});
	});

	it("pane.close takes down the pane's whole session, a HUP-ignoring child included, before answering", async () => {
		const pane = await fake.openWorkspace(dir);
		const pidFile = path.join(dir, 'stubborn.pid');
		await fake.run(pane, `sh -c 'trap "" HUP; echo $$ > ${pidFile}; while :; do sleep 1; done' &`);
		const pid = await eventually('the stubborn child', () => (fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) || undefined : undefined), {
			retryErrors: true,
		});
		const shell = fake.shellPidOf(pane) ?? -1;
		await new HerdrClient(socket, 5000).request('pane.close', {pane_id: pane});
		for (const p of [pid, shell]) expect(fs.existsSync(`/proc/${p}`) && !fs.readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ')).toBe(false);
		await expect(new HerdrClient(socket).request('pane.get', {pane_id: pane})).rejects.toMatchObject({code: 'pane_not_found'});
	});

	it('rejects a bad key before writing anything, and a bad env name', async () => {
		const pane = await fake.openWorkspace(dir);
		const client = new HerdrClient(socket);
		await expect(client.request('pane.send_keys', {pane_id: pane, keys: ['a', 'hyper+q']})).rejects.toMatchObject({code: 'invalid_key'});
		await expect(client.request('pane.split', {direction: 'right', target_pane_id: pane, env: {'A=B': '1'}})).rejects.toMatchObject({code: 'invalid_env'});
		await expect(client.request('workspace.close', {workspace_id: 'w999'})).rejects.toMatchObject({code: 'workspace_not_found'});
	});
});
