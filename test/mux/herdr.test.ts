import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {herdrErrorMessage, resolveHerdrSocket} from '../../src/mux/herdr/client.js';
import {createHerdrMux, type HerdrMuxOptions} from '../../src/mux/herdr/index.js';
import {fileShellCache} from '../../src/mux/herdr/shellCache.js';
import type {MuxEvent} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {FAKE_HERDR_VERSIONS, startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS} from '../support/herdrSchema.js';
import {muxContract} from './contract.js';
import {eventually} from '../helpers/poll.js';

function scratch(): {dir: string; path: string; socket: string; dispose: () => void} {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-herdr-')));
	const bin = path.join(dir, 'bin');
	writeAgentStandIns(bin, ['claude', 'codex']);
	return {
		dir,
		path: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
		socket: path.join(dir, 'herdr.sock'),
		dispose: () => fs.rmSync(dir, {recursive: true, force: true}),
	};
}

function muxOptions(socketPath: string, extra: Partial<HerdrMuxOptions> = {}): HerdrMuxOptions {
	return {socketPath, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 400}, resyncMs: 100, ...extra};
}

describe.each(FAKE_PROTOCOLS)('herdr backend: the mux contract against the fake herdr (protocol %i)', {timeout: 30_000}, protocol => {
	let fake: FakeHerdr | undefined;
	muxContract(async () => {
		const s = scratch();
		fake = await startFakeHerdr({socketPath: s.socket, protocol, eventTickMs: 20});
		// mam-tui needs a pane to split from; a workspace with a plain shell plays the user's pane.
		await fake.openWorkspace(s.dir);
		const socket = s.socket;
		return {
			mux: createHerdrMux(muxOptions(socket)),
			cwd: s.dir,
			path: s.path,
			selfByEnv: paneId => createHerdrMux(muxOptions(socket, {env: {HERDR_PANE_ID: paneId, HERDR_SOCKET_PATH: socket}})),
			selfByPid: pid => createHerdrMux(muxOptions(socket, {selfPid: pid})),
			async dispose() {
				const seen = fake?.violations ?? [];
				await fake?.stop();
				s.dispose();
				expect(seen).toEqual([]);
			},
		};
	});
	afterEach(() => {
		// Every request mam-tui sent and every line the fake answered conformed to herdr's schema.
		expect(fake?.violations).toEqual([]);
	});
});

describe.each(FAKE_PROTOCOLS)('herdr backend specifics (protocol %i)', {timeout: 30_000}, protocol => {
	let s: ReturnType<typeof scratch>;
	let fake: FakeHerdr;
	beforeAll(async () => {
		s = scratch();
		fake = await startFakeHerdr({socketPath: s.socket, protocol, eventTickMs: 20});
	});
	afterEach(() => {
		expect(fake.violations).toEqual([]);
	});
	afterAll(async () => {
		await fake.stop();
		s.dispose();
	});

	it('says which herdr and protocol it talks to', async () => {
		const mux = createHerdrMux(muxOptions(s.socket));
		await mux.listPanes();
		expect(mux.health()).toEqual({
			kind: 'herdr',
			ok: true,
			message: `herdr ${FAKE_HERDR_VERSIONS[protocol]} (protocol ${protocol}) at ${s.socket}`,
			lastOkAt: expect.any(Number),
		});
		await mux.dispose();
	});

	it('a listing is one round: a snapshot, process_info only for terminals not seen before', async () => {
		const a = await fake.openWorkspace(s.dir, {PATH: s.path});
		const b = await fake.split(a, s.dir, {PATH: s.path});
		const mux = createHerdrMux(muxOptions(s.socket));
		const before = fake.methods.length;
		const first = await mux.listPanes();
		const firstCalls = fake.methods.slice(before);
		expect(firstCalls.filter(m => m === 'session.snapshot')).toHaveLength(1);
		expect(firstCalls.filter(m => m === 'pane.process_info')).toHaveLength(first.length);
		expect(first.map(p => p.id)).toEqual(expect.arrayContaining([a, b]));
		expect(first.find(p => p.id === a)?.shellPid).toBe(fake.shellPidOf(a));
		const again = fake.methods.length;
		await mux.listPanes();
		expect(fake.methods.slice(again)).toEqual(['session.snapshot']);
		await mux.dispose();
	});

	it('a cold status trusts the shells an earlier process saved, once /proc confirms them; other users of the cache ask herdr', async () => {
		const a = await fake.openWorkspace(s.dir, {PATH: s.path});
		const b = await fake.split(a, s.dir, {PATH: s.path});
		const shellCache = fileShellCache(path.join(s.dir, `shells-${a}.json`));
		const first = createHerdrMux(muxOptions(s.socket, {shellCache}));
		const listed = await first.listPanes();
		await first.dispose();
		const processInfoCalls = async (mux: ReturnType<typeof createHerdrMux>) => {
			const before = fake.methods.length;
			const panes = await mux.listPanes();
			await mux.dispose();
			return {calls: fake.methods.slice(before).filter(m => m === 'pane.process_info').length, panes};
		};
		const cold = await processInfoCalls(createHerdrMux(muxOptions(s.socket, {shellCache, readShellCache: true})));
		expect(cold.calls).toBe(0);
		expect(cold.panes.find(p => p.id === b)?.shellPid).toBe(fake.shellPidOf(b));
		expect(cold.panes.map(p => [p.id, p.shellPid])).toEqual(listed.map(p => [p.id, p.shellPid]));
		// A stop or a purge (no readShellCache) always asks herdr which process a pane runs.
		expect((await processInfoCalls(createHerdrMux(muxOptions(s.socket, {shellCache})))).calls).toBe(listed.length);
	});

	it('the shell cache is written only when the shells changed', async () => {
		const a = await fake.openWorkspace(s.dir, {PATH: s.path});
		const file = fileShellCache(path.join(s.dir, `shells-${a}.json`));
		let saves = 0;
		const shellCache = {load: file.load, save: (socket: string, shells: Parameters<typeof file.save>[1]) => (saves++, file.save(socket, shells))};
		const first = createHerdrMux(muxOptions(s.socket, {shellCache}));
		await first.listPanes();
		await first.listPanes();
		await first.dispose();
		expect(saves).toBe(1);
		// A cold status that finds every remembered shell alive writes nothing, however often it lists.
		const cold = createHerdrMux(muxOptions(s.socket, {shellCache, readShellCache: true}));
		await cold.listPanes();
		await cold.listPanes();
		expect(saves).toBe(1);
		// A new pane's shell is saved, once.
		const b = await fake.split(a, s.dir, {PATH: s.path});
		await cold.listPanes();
		await cold.listPanes();
		await cold.dispose();
		expect(saves).toBe(2);
		expect(file.load(s.socket).map(x => x.pid)).toContain(fake.shellPidOf(b));
	});

	it('a remembered shell whose process or parent is not the same one any more is asked about again', async () => {
		const a = await fake.openWorkspace(s.dir, {PATH: s.path});
		const shellCache = fileShellCache(path.join(s.dir, `shells-${a}.json`));
		const first = createHerdrMux(muxOptions(s.socket, {shellCache}));
		await first.listPanes();
		await first.dispose();
		const saved = shellCache.load(s.socket);
		const mine = saved.find(x => x.pid === fake.shellPidOf(a));
		expect(mine).toBeDefined();
		for (const wrong of [{startTime: (mine?.startTime ?? 0) + 1}, {parentStartTime: (mine?.parentStartTime ?? 0) + 1}, {ppid: 1}, {pid: process.pid}]) {
			shellCache.save(
				s.socket,
				saved.map(x => (x === mine ? {...x, ...wrong} : x)),
			);
			const mux = createHerdrMux(muxOptions(s.socket, {shellCache, readShellCache: true}));
			const before = fake.methods.length;
			const pane = (await mux.listPanes()).find(p => p.id === a);
			await mux.dispose();
			expect(fake.methods.slice(before)).toContain('pane.process_info');
			expect(pane?.shellPid).toBe(fake.shellPidOf(a));
		}
		// A file that is not a cache at all is ignored, and replaced by the next save.
		const file = path.join(s.dir, `shells-${a}.json`);
		for (const junk of ['not json', '{"version":1,"sockets":{"x":[{"pid":"1; rm -rf ~"}]}}', '[]', '{"version":99}']) {
			fs.writeFileSync(file, junk);
			const mux = createHerdrMux(muxOptions(s.socket, {shellCache, readShellCache: true}));
			expect((await mux.listPanes()).find(p => p.id === a)?.shellPid).toBe(fake.shellPidOf(a));
			await mux.dispose();
			expect(shellCache.load(s.socket).some(x => x.pid === fake.shellPidOf(a))).toBe(true);
		}
	});

	it('shows the agent herdr detects, its status changes as events, and its native session id', async () => {
		const pane = await fake.openWorkspace(s.dir, {PATH: s.path});
		const mux = createHerdrMux(muxOptions(s.socket));
		const events: MuxEvent[] = [];
		const stop = mux.subscribe(e => events.push(e));
		try {
			await eventually('events live', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
			await fake.run(pane, 'claude');
			// Wait for the event before listing: a listing that already shows the agent makes the event old news.
			await eventually(
				'agent-detected event',
				() => (events.some(e => e.type === 'agent-detected' && e.paneId === pane && e.agent === 'claude') ? true : undefined),
				{retryErrors: true},
			);
			expect((await mux.listPanes()).find(p => p.id === pane)?.agent).toBe('claude');
			fake.setAgentStatus(pane, 'blocked');
			await eventually('status event', () => (events.some(e => e.type === 'agent-status' && e.paneId === pane && e.status === 'blocked') ? true : undefined), {
				retryErrors: true,
			});
			const listed = (await mux.listPanes()).find(p => p.id === pane);
			expect(listed).toMatchObject({agent: 'claude', agentStatus: 'blocked'});
		} finally {
			stop();
			await mux.dispose();
		}
	});

	it('trusts HERDR_PANE_ID only when it was issued by the server it talks to', async () => {
		const pane = await fake.openWorkspace(s.dir);
		const foreign = createHerdrMux(muxOptions(s.socket, {env: {HERDR_PANE_ID: pane, HERDR_SOCKET_PATH: path.join(s.dir, 'other-herdr.sock')}}));
		expect((await foreign.listPanes()).find(p => p.id === pane)?.isSelf).toBe(false);
		const own = createHerdrMux(muxOptions(s.socket, {env: {HERDR_PANE_ID: pane, HERDR_SOCKET_PATH: s.socket}}));
		expect((await own.listPanes()).find(p => p.id === pane)?.isSelf).toBe(true);
		await foreign.dispose();
		await own.dispose();
	});

	it('takes agent_session ids from official integrations only', async () => {
		const pane = await fake.openWorkspace(s.dir, {PATH: s.path});
		const id = '0b4a1c2e-3f4d-4e5f-8a9b-0c1d2e3f4a5b';
		const {HerdrClient} = await import('../../src/mux/herdr/client.js');
		const client = new HerdrClient(s.socket);
		await client.request('pane.report_agent_session', {pane_id: pane, source: 'custom:thing', agent: 'claude', agent_session_id: 'not-stored'});
		const mux = createHerdrMux(muxOptions(s.socket));
		expect((await mux.listPanes()).find(p => p.id === pane)?.agentSessionId).toBeUndefined();
		await client.request('pane.report_agent_session', {pane_id: pane, source: 'herdr:claude', agent: 'claude', agent_session_id: id, seq: 1});
		expect((await mux.listPanes()).find(p => p.id === pane)?.agentSessionId).toBe(id);
		await mux.dispose();
	});

	it('opens a pane by splitting and typing the quoted argv; a pane exited by its shell is pane-exited', async () => {
		const mux = createHerdrMux(muxOptions(s.socket));
		const events: MuxEvent[] = [];
		const stop = mux.subscribe(e => events.push(e));
		try {
			await eventually('events live', () => (mux.eventsLive() ? true : undefined), {retryErrors: true});
			const before = fake.methods.length;
			const id = await mux.openPane({argv: ['sh', '-c', 'exit 0'], cwd: s.dir, env: {PATH: s.path}});
			expect(fake.methods.slice(before)).toEqual(expect.arrayContaining(['pane.split', 'pane.send_input']));
			// `sh -c 'exit 0'` ends; the pane's own shell stays, so type `exit` into it.
			await eventually('listed', async () => ((await mux.listPanes()).some(p => p.id === id) ? true : undefined), {retryErrors: true});
			await fake.run(id, 'exit');
			await eventually('pane-exited', () => (events.some(e => e.type === 'pane-exited' && e.paneId === id) ? true : undefined), {retryErrors: true});
			expect(events.some(e => e.type === 'pane-closed' && e.paneId === id)).toBe(false);
			await expect(mux.readOutput(id, 5)).rejects.toMatchObject({code: 'pane_not_found'});
		} finally {
			stop();
			await mux.dispose();
		}
	});

	it('without any pane to split from, opens a new workspace', async () => {
		const empty = scratch();
		const lone = await startFakeHerdr({socketPath: empty.socket, protocol, eventTickMs: 20});
		try {
			const mux = createHerdrMux(muxOptions(empty.socket));
			const id = await mux.openPane({argv: ['codex'], cwd: empty.dir, env: {PATH: empty.path}, title: 'solo'});
			expect(lone.methods).toContain('workspace.create');
			await eventually(
				'codex running',
				async () => ((await mux.listPanes()).find(p => p.id === id)?.processes.some(p => p.name === 'codex') ? true : undefined),
				{retryErrors: true},
			);
			await mux.dispose();
			expect(lone.violations).toEqual([]);
		} finally {
			await lone.stop();
			empty.dispose();
		}
	});
});

describe('herdr socket resolution (PROTOCOL 1.1) and error messages', () => {
	const home = '/home/u';
	it('follows herdr’s CLI order: HERDR_SOCKET_PATH, HERDR_SESSION, default', () => {
		expect(resolveHerdrSocket({}, home)).toBe('/home/u/.config/herdr/herdr.sock');
		expect(resolveHerdrSocket({XDG_CONFIG_HOME: '/x'}, home)).toBe('/x/herdr/herdr.sock');
		expect(resolveHerdrSocket({HERDR_SESSION: 'work'}, home)).toBe('/home/u/.config/herdr/sessions/work/herdr.sock');
		expect(resolveHerdrSocket({HERDR_SESSION: 'default'}, home)).toBe('/home/u/.config/herdr/herdr.sock');
		expect(resolveHerdrSocket({HERDR_SOCKET_PATH: '/run/h.sock', HERDR_SESSION: 'work'}, home)).toBe('/run/h.sock');
		expect(resolveHerdrSocket({HERDR_SOCKET_PATH: '/run/h.sock'}, home, 'named')).toBe('/home/u/.config/herdr/sessions/named/herdr.sock');
	});

	it.each(['..', '.', 'a/b', '', 'x'.repeat(65), 'white space'])('refuses the session name %j', name => {
		expect(() => resolveHerdrSocket({}, home, name)).toThrow(/not a herdr session name/);
	});

	it('maps every documented error code to a readable line', () => {
		expect(herdrErrorMessage('pane_not_found', 'pane w1:p9 not found', 'pane.close')).toBe(
			'herdr pane.close: that pane no longer exists — herdr: pane w1:p9 not found',
		);
		expect(herdrErrorMessage('brand_new_code', 'details', 'x')).toContain('brand_new_code');
		// PROTOCOL 6, pane/agent core and agent codes: each has its own sentence.
		const documented = [
			'pane_not_found',
			'workspace_not_found',
			'tab_not_found',
			'invalid_request',
			'invalid_key',
			'invalid_env',
			'invalid_agent',
			'invalid_params',
			'pane_send_failed',
			'pane_split_failed',
			'pane_layout_unavailable',
			'confirmation_required',
			'internal_error',
			'server_unavailable',
			'timeout',
			'not_implemented',
			'unsupported_in_app_mode',
			'agent_not_found',
			'agent_target_ambiguous',
			'invalid_agent_name',
			'agent_name_taken',
			'unsupported_agent_kind',
			'invalid_agent_argument',
			'invalid_agent_timeout',
			'agent_pane_not_found',
			'agent_pane_busy',
			'agent_pane_unavailable',
			'agent_start_input_failed',
			'agent_launch_pending',
			'agent_not_ready',
			'agent_not_running',
			'agent_not_idle',
			'agent_prompt_stalled',
			'empty_agent_prompt',
			'agent_prompt_failed',
			'agent_send_keys_failed',
			'invalid_regex',
			'unsupported_event_wait_match',
			'server_not_running',
			'protocol_mismatch',
			// herdr 0.8.2–0.9 (PROTOCOL 14).
			'agent_blocked',
			'connection_local_only',
			'workspace_group_close_required',
			'ui_busy',
			'events_lost',
		];
		for (const code of documented) {
			expect(herdrErrorMessage(code, '', 'm')).not.toMatch(/refused it/);
		}
	});
});
