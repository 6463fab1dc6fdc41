import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {loadConfig} from '../../src/config/config.js';
import {herdrAnswers, selectMux, selectMuxFor, type MuxDeps} from '../../src/mux/select.js';
import {silentLogger} from '../../src/system/logger.js';
import {realExec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {isolatedEnv, privateTmux} from '../helpers/tmux.js';
import {eventually} from '../helpers/poll.js';
import {FAKE_PROTOCOLS} from '../support/herdrSchema.js';

let dir: string;
let fake: FakeHerdr;
let socket: string;

beforeAll(async () => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-select-')));
	socket = path.join(dir, 'herdr.sock');
	fake = await startFakeHerdr({socketPath: socket});
});

afterAll(async () => {
	await fake.stop();
	fs.rmSync(dir, {recursive: true, force: true});
});

/** Never the user's herdr (HOME and HERDR_SOCKET_PATH point into the temp dir) nor their tmux (-L). */
function deps(choice: MuxDeps['choice'], env: Record<string, string>): MuxDeps {
	// A generous probe: a loaded test machine must not turn a live herdr into "no herdr".
	return {
		choice,
		env: {HOME: dir, ...env},
		exec: realExec,
		processes: createProcessTable(),
		pollMs: 1000,
		tmux: {socketName: 'mam-test-select-none'},
		probeTimeoutMs: 3000,
	};
}

describe('the herdr shell cache of a command', {timeout: 20_000}, () => {
	it('every command saves what it learns; only status reads it back, so stop and purge always ask herdr', async () => {
		await fake.openWorkspace(dir);
		const world = {
			options: {json: false, verbose: false, mux: 'herdr' as const},
			env: {HOME: dir, HERDR_SOCKET_PATH: socket},
			exec: realExec,
			processes: createProcessTable(),
			config: loadConfig(path.join(dir, 'no-config.yaml')),
			logger: silentLogger,
			now: Date.now,
			stateDir: path.join(dir, 'state'),
		};
		const processInfoCalls = async (options?: {readShellCache: boolean}) => {
			const mux = await selectMuxFor(world, options);
			const before = fake.methods.length;
			await mux.listPanes();
			await mux.dispose();
			return fake.methods.slice(before).filter(m => m === 'pane.process_info').length;
		};
		expect(await processInfoCalls()).toBeGreaterThan(0);
		expect(fs.existsSync(path.join(dir, 'state', 'herdr-shells.json'))).toBe(true);
		expect(await processInfoCalls()).toBeGreaterThan(0);
		expect(await processInfoCalls({readShellCache: true})).toBe(0);
	});
});

describe('the tmux control client of a command', {timeout: 20_000}, () => {
	it('only a command that runs until stopped attaches, once, and not with tmux.control: false', async () => {
		const tmux = privateTmux();
		const log = path.join(dir, 'attaches.log');
		try {
			await tmux.run(['new-session', '-d', '-s', 'a', '--', 'sleep', '3600']);
			await tmux.run(['set-hook', '-g', 'client-attached', `run-shell "echo attached >> ${log}"`]);
			const attaches = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
			const world = (control: boolean) => ({
				options: {json: false, verbose: false, mux: 'tmux' as const, tmuxSocket: tmux.name},
				env: isolatedEnv({HOME: dir}),
				exec: realExec,
				processes: createProcessTable(),
				config: {...loadConfig(path.join(dir, 'no-config.yaml')), tmux: {control}},
				logger: silentLogger,
				now: Date.now,
				stateDir: path.join(dir, 'state'),
			});
			const openAndList = async (control: boolean, live: boolean) => {
				const mux = await selectMuxFor(world(control), {live});
				for (let i = 0; i < 3; i++) await mux.listPanes();
				await mux.dispose();
			};
			await openAndList(true, false);
			await openAndList(false, true);
			await openAndList(true, true);
			await eventually('the live attach written down', async () => (attaches() === 1 ? true : undefined));
			// The hook still counts: nothing attached after the one live backend.
			await tmux.run(['run-shell', `echo probe >> ${log}`]);
			expect(fs.readFileSync(log, 'utf8')).toBe('attached\nprobe\n');
		} finally {
			await tmux.kill();
		}
	});
});

describe('--mux selection', {timeout: 20_000}, () => {
	it.each(FAKE_PROTOCOLS)('auto picks herdr when its socket answers ping (protocol %i)', async protocol => {
		const other = await startFakeHerdr({socketPath: path.join(dir, `herdr-${protocol}.sock`), protocol});
		try {
			const mux = await selectMux(deps('auto', {HERDR_SOCKET_PATH: other.socketPath}));
			expect(mux.kind).toBe('herdr');
			expect((await mux.listPanes()).length).toBe(0);
			expect(mux.health()).toMatchObject({ok: true, message: expect.stringContaining(`(protocol ${protocol})`)});
			await mux.dispose();
			expect(other.violations).toEqual([]);
		} finally {
			await other.stop();
		}
	});

	it('auto picks tmux when herdr is not there, answers garbage, or never answers', async () => {
		for (const mode of [undefined, {kind: 'garbage'}, {kind: 'silent'}] as const) {
			fake.misbehave(mode);
			const env = mode ? {HERDR_SOCKET_PATH: socket} : {HERDR_SOCKET_PATH: path.join(dir, 'missing.sock')};
			const mux = await selectMux(deps('auto', env));
			expect(mux.kind).toBe('tmux');
			await mux.dispose();
		}
		fake.misbehave(undefined);
	});

	it('auto follows the default socket under $XDG_CONFIG_HOME like herdr’s CLI', async () => {
		const config = path.join(dir, 'cfg');
		fs.mkdirSync(path.join(config, 'herdr'), {recursive: true});
		const linked = path.join(config, 'herdr', 'herdr.sock');
		fs.symlinkSync(socket, linked);
		expect(await herdrAnswers(linked)).toBe(true);
		const mux = await selectMux(deps('auto', {XDG_CONFIG_HOME: config}));
		expect(mux.kind).toBe('herdr');
		await mux.dispose();
	});

	it('an explicit herdr is kept even when down; its health says why', async () => {
		const mux = await selectMux(deps('herdr', {HERDR_SOCKET_PATH: path.join(dir, 'missing.sock')}));
		expect(mux.kind).toBe('herdr');
		await expect(mux.listPanes()).rejects.toThrow(/no herdr socket/);
		expect(mux.health()).toMatchObject({ok: false});
		await mux.dispose();
	});

	it('a bad HERDR_SESSION gives a herdr backend that explains itself, and auto skips it', async () => {
		const broken = await selectMux(deps('herdr', {HERDR_SESSION: '../etc'}));
		expect(broken.health()).toMatchObject({kind: 'herdr', ok: false, message: expect.stringContaining('not a herdr session name')});
		await expect(broken.listPanes()).rejects.toThrow(/not a herdr session name/);
		expect((await selectMux(deps('auto', {HERDR_SESSION: '../etc'}))).kind).toBe('tmux');
	});

	it('an explicit tmux never pings herdr', async () => {
		const before = fake.methods.length;
		const mux = await selectMux(deps('tmux', {HERDR_SOCKET_PATH: socket}));
		expect(mux.kind).toBe('tmux');
		expect(fake.methods.length).toBe(before);
	});
});
