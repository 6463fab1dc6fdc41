import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {stopSession, type StopProgress} from '../../src/actions/stop.js';
import type {StatusJson} from '../../src/cli/statusCommand.js';
import type {MuxHealth} from '../../src/mux/types.js';
import {createHerdrMux} from '../../src/mux/herdr/index.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer, type Action} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {startSupervisor} from '../../src/sync/supervisor.js';
import {createProcessTable} from '../../src/system/processes.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {killLeftovers, startTimeOf} from '../actions/support/agents.js';
import {createTestWorld, type TestWorld} from '../actions/support/world.js';
import {FAKE_HERDR_VERSIONS, startFakeHerdr, type FakeHerdr, type Misbehaviour} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS, type FakeProtocol} from '../support/herdrSchema.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {builtCli, cliEnv} from '../helpers/cli.js';
import {HerdrIdProxy} from './support/herdrProxy.js';
import {eventually} from '../helpers/poll.js';

let dir: string;
let socket: string;
let fake: FakeHerdr;
let firstPane: string;

/** A fake herdr of `protocol` with one workspace, for the describe block that calls this. */
function withFake(protocol: FakeProtocol): void {
	beforeAll(async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `mam-muxfaults-${protocol}-`)));
		socket = path.join(dir, 'herdr.sock');
		fake = await startFakeHerdr({socketPath: socket, protocol, eventTickMs: 20});
		firstPane = await fake.openWorkspace(dir);
	});
	afterAll(async () => {
		await fake?.stop();
		fs.rmSync(dir, {recursive: true, force: true});
	});
}

afterAll(() => {
	disposeStandinScript();
});

/** The faults of SPEC 7 a herdr can show, as the fake plays them. */
function faults(protocol: FakeProtocol): ReadonlyArray<{what: string; mode?: Misbehaviour; down?: boolean; ok: boolean; message: RegExp}> {
	const healthy = new RegExp(`herdr ${FAKE_HERDR_VERSIONS[protocol].replaceAll('.', '\\.')} \\(protocol ${protocol}\\)`);
	return [
		{what: 'healthy', ok: true, message: healthy},
		{what: 'connections refused (closed unanswered)', mode: {kind: 'refuse'}, ok: false, message: /closed the connection|herdr/},
		{what: 'garbage answers', mode: {kind: 'garbage'}, ok: false, message: /not JSON/},
		{what: 'slow answers within the timeout', mode: {kind: 'slow', delayMs: 300}, ok: true, message: healthy},
		{what: 'no answer at all', mode: {kind: 'silent', methods: ['session.snapshot']}, ok: false, message: /did not answer session\.snapshot/},
		{
			what: 'a protocol older than any known',
			mode: {kind: 'wrong-protocol', protocol: 19},
			ok: false,
			message: /protocol 19, older than any mam-tui knows.*upgrade herdr/,
		},
		{what: 'a newer, untested protocol', mode: {kind: 'wrong-protocol', protocol: 23}, ok: true, message: /untested protocol 23, treating as 22/},
		{what: 'an error code it cannot place', mode: {kind: 'error', code: 'ui_busy', methods: ['session.snapshot']}, ok: false, message: /interface is busy/},
		{what: 'socket gone', down: true, ok: false, message: /no herdr socket/},
	];
}

describe.each(FAKE_PROTOCOLS)('herdr faults (protocol %i): status keeps answering and shows the health', protocol => {
	withFake(protocol);
	let registry: string;
	beforeAll(() => {
		registry = path.join(dir, 'status.db');
		const reg = Registry.open(registry);
		reg.insert({name: 'kept', agent: 'claude', cwd: dir, mux: 'herdr', paneId: firstPane, status: 'running', epoch: 0});
		reg.close();
	});

	it.each(faults(protocol))('status --json when herdr gives $what', {timeout: 60_000}, async fault => {
		fake.misbehave(fault.mode);
		if (fault.down) await fake.stopListening();
		try {
			const env = cliEnv(path.join(dir, 'user'), path.join(dir, 'state'), {HERDR_SOCKET_PATH: socket});
			const run = await builtCli(['status', '--json', '--mux', 'herdr', '--registry', registry, '--home', path.join(dir, 'home')], {env, cwd: dir});
			expect(run.exitCode, String(run.stderr)).toBe(0);
			const body = JSON.parse(String(run.stdout)) as StatusJson;
			expect(body.mux.kind).toBe('herdr');
			expect(body.mux.ok, body.mux.message).toBe(fault.ok);
			expect(body.mux.message).toMatch(fault.message);
			expect(body.sessions.map(s => s.name)).toEqual(['kept']);
			if (fault.ok) expect(body.panes.map(p => p.id)).toContain(firstPane);
			else expect(body.panes).toEqual([]);
		} finally {
			fake.misbehave(undefined);
			if (fault.down) await fake.listen();
		}
	});
});

describe.each(FAKE_PROTOCOLS)('herdr faults (protocol %i): the supervisor keeps running, shows health, and recovers', protocol => {
	withFake(protocol);
	let world: FixtureWorld;
	beforeAll(async () => {
		world = await (
			FIXTURE_BUILDERS.claude ??
			(() => {
				throw new Error('no claude fixture');
			})
		)();
	});
	afterAll(() => world?.cleanup());

	it('through garbage, a dropped stream, silence and a vanished socket, then healthy again with new panes seen', {timeout: 90_000}, async () => {
		const mux = createHerdrMux({
			socketPath: socket,
			env: {},
			processes: createProcessTable(),
			backoff: {initialMs: 50, maxMs: 200},
			resyncMs: 50,
			timeoutMs: 500,
		});
		const healths: MuxHealth[] = [];
		const paneLists: string[][] = [];
		let failures = 0;
		const inner = createStore(reducer, initialState());
		const store = {
			getState: inner.getState,
			subscribe: inner.subscribe,
			dispatch(action: Action) {
				if (action.type === 'live/updated') {
					if (action.mux) healths.push(action.mux);
					if (action.panes) paneLists.push(action.panes.map(p => p.id));
				}
				inner.dispatch(action);
			},
		};
		const supervisor = startSupervisor({
			store,
			mux,
			ctx: world.ctx,
			processes: createProcessTable(),
			discoverySeconds: 1,
			coalesceMs: 20,
			logger: {debug() {}, info() {}, warn: () => void (failures += 1), error: () => void (failures += 1)},
		});
		const healthy = (what: string) => eventually(what, () => healths.at(-1)?.ok === true && paneLists.at(-1)?.includes(firstPane), {timeoutMs: 20_000});
		const down = (what: string, message: RegExp) =>
			eventually(
				what,
				async () => {
					await supervisor.refresh();
					const last = healths.at(-1);
					return last && !last.ok && message.test(last.message) ? last : undefined;
				},
				{timeoutMs: 20_000},
			);
		try {
			await healthy('the first snapshot');
			fake.misbehave({kind: 'garbage'});
			await down('garbage reported', /not JSON/);
			fake.misbehave(undefined);
			await healthy('recovered from garbage');
			// Both streams up (the status one re-opens a moment after the pane set changed), so the drop cuts them.
			await eventually('both event streams open', () => mux.eventsLive() && fake.subscriberCount() === 2, {timeoutMs: 20_000});
			fake.dropSubscriptions();
			await eventually('a dropped stream reported', () => healths.some(h => !h.ok && /event stream lost/.test(h.message)), {timeoutMs: 20_000});
			await healthy('recovered from a dropped stream');
			fake.misbehave({kind: 'silent', methods: ['session.snapshot']});
			await down('silence reported', /did not answer/);
			// Every error herdr 0.8.2–0.9 can answer (and one from a later herdr) is a message, not a crash.
			for (const [code, text] of [
				['agent_blocked', /approval or question dialog/],
				['connection_local_only', /client shell/],
				['workspace_group_close_required', /worktree workspaces/],
				['ui_busy', /interface is busy/],
				['events_lost', /dropped events/],
				['a_code_from_the_future', /a_code_from_the_future/],
			] as const) {
				fake.misbehave({kind: 'error', code, methods: ['session.snapshot']});
				await down(`${code} reported`, text);
			}
			fake.misbehave({kind: 'error', code: 'events_lost', methods: ['events.subscribe']});
			fake.loseEvents();
			fake.misbehave(undefined);
			await healthy('recovered from herdr errors');
			await fake.stopListening();
			await down('a vanished socket reported', /no herdr socket|connect/);
			await fake.listen();
			await healthy('back after herdr came back');
			const added = await fake.split(firstPane, dir);
			await eventually('the new pane in a refresh', () => paneLists.at(-1)?.includes(added), {timeoutMs: 20_000});
		} finally {
			fake.misbehave(undefined);
			await supervisor.dispose();
			await mux.dispose();
		}
		// Each fault was a health message; none escaped as a failed refresh.
		expect(failures).toBe(0);
		expect(fake.violations).toEqual([]);
	});
});

describe('herdr: a pane id reused by a new pane between the snapshot and the action', () => {
	withFake(22);
	let tw: TestWorld;
	let proxy: HerdrIdProxy;
	const leftovers: Array<{pid: number; startTime: number}> = [];
	let counter = 0;

	beforeAll(async () => {
		tw = createTestWorld('mam-rel-reuse-');
		proxy = new HerdrIdProxy(path.join(dir, 'proxy.sock'), socket);
		await proxy.start();
	});
	afterAll(async () => {
		await proxy?.stop();
		killLeftovers(leftovers);
		tw?.dispose();
	});

	/** A stand-in claude in a new pane of the fake herdr; resolves with its pane and record. */
	async function agentPane(options: Parameters<typeof installTestStandin>[2]) {
		counter += 1;
		const install = installTestStandin(path.join(tw.dir, `bin-${counter}`), 'claude', options);
		const pane = await fake.split(firstPane, tw.project);
		await fake.run(pane, install.file);
		const record = await eventually(`the stand-in in ${pane}`, () => readStandinRecords(install.recordFile)[0]);
		await eventually('its prompt', async () => (await fake.tmux.run(['capture-pane', '-p', '-t', await tmuxTarget(pane)])).stdout.includes('to quit'));
		const pids = [record.pid, ...record.childPids].map(pid => ({pid, startTime: startTimeOf(pid)}));
		leftovers.push(...pids);
		return {pane, record, pids};
	}

	/** The tmux pane behind a fake herdr pane (for reading what was typed into it). */
	async function tmuxTarget(pane: string): Promise<string> {
		const shell = fake.shellPidOf(pane);
		const list = await fake.tmux.run(['list-panes', '-a', '-F', '#{pane_id} #{pane_pid}']);
		const line = list.stdout.split('\n').find(l => l.endsWith(` ${shell}`));
		return line?.split(' ')[0] ?? '';
	}

	it.each(['after the capture, before the exit input', 'during the grace wait, before the pane is closed'] as const)(
		'%s: nothing is typed into or closed on the new pane; the old agent is still ended',
		{timeout: 60_000},
		async when => {
			const old = await agentPane({ignoreExit: true, ignoreSignals: true, children: 1});
			const newcomer = await agentPane({});
			const session = tw.registry.insert({
				name: `reuse-${counter}`,
				agent: 'claude',
				cwd: tw.project,
				mux: 'herdr',
				paneId: old.pane,
				status: 'running',
				epoch: Date.now(),
			});
			const mux = createHerdrMux({socketPath: proxy.socketPath, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 200}});
			const signalled: number[] = [];
			const deps = tw.deps(mux, {kill: (pid, signal) => (signalled.push(pid), process.kill(pid, signal))});
			const reuse = () => proxy.reuse(old.pane, newcomer.pane);
			const onProgress = (p: StopProgress) => {
				if (when.startsWith('after the capture') && p.step === 'capture' && p.state === 'done') reuse();
			};
			// Once the exit input went in (its Enter answered), the agent ignores it: the wait runs.
			if (when.startsWith('during the grace')) proxy.afterAnswer = method => method === 'pane.send_keys' && reuse();
			try {
				const result = await stopSession(deps, session, {graceMs: 600, killWaitMs: 600, onProgress});
				expect(result.ok).toBe(true);
				if (!result.ok) return;
				expect(result.value.paneClosed).toBe(false);
				expect(result.value.notes.join('\n')).toMatch(/now runs another process/);
				if (when.startsWith('during the grace')) expect(fake.methods).toContain('pane.send_keys');
				// The new pane: still there, its agent alive, nothing typed into it, none of its pids signalled.
				expect(fake.paneIds()).toContain(newcomer.pane);
				for (const p of newcomer.pids) expect(aliveWithStart(p.pid, p.startTime), `newcomer pid ${p.pid}`).toBe(true);
				for (const p of newcomer.pids) expect(signalled).not.toContain(p.pid);
				const screen = (await fake.tmux.run(['capture-pane', '-p', '-t', await tmuxTarget(newcomer.pane)])).stdout;
				expect(screen).not.toMatch(/^> \/exit|^bye/m);
				// The old agent (same pid and start time as captured) is ended all the same.
				expect(result.value.survivors).toEqual([]);
				for (const p of old.pids) expect(aliveWithStart(p.pid, p.startTime), `old pid ${p.pid}`).toBe(false);
			} finally {
				await mux.dispose();
				proxy.reset();
			}
		},
	);
});
