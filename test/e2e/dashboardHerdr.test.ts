import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {Registry} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {FAKE_PROTOCOLS} from '../support/herdrSchema.js';
import {CLI, E2eTmux, type Screen} from './support/tmuxScreen.js';

/**
 * The built dashboard beside a fake herdr of each protocol (herdr 0.8 and 0.9): it shows the
 * panes' agents and follows herdr's events — a status change, and a pane opened while it runs —
 * with every line either way inside that protocol's schema.
 */
describe.each(FAKE_PROTOCOLS)('the built dashboard beside herdr protocol %i', {timeout: 90_000}, protocol => {
	let tmp: ReturnType<typeof tempDir>;
	let fake: FakeHerdr;
	let tmux: E2eTmux;
	let screen: Screen;
	let work: string;
	let first: string;

	/** The session table's row for `name`, from the name to the end of the line. */
	const row = (name: string) => (s: string) => s.split('\n').find(line => new RegExp(`^[> ][ *][ !]${name}\\s`).test(line)) ?? '';

	beforeAll(async () => {
		tmp = tempDir(`mam-e2e-herdr-${protocol}-`);
		const home = path.join(tmp.dir, 'home');
		const state = path.join(tmp.dir, 'state');
		const bin = path.join(tmp.dir, 'bin');
		work = path.join(home, 'work');
		fs.mkdirSync(work, {recursive: true});
		writeAgentStandIns(bin, ['claude', 'codex']);
		const pathEnv = `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
		fake = await startFakeHerdr({socketPath: path.join(tmp.dir, 'herdr.sock'), protocol, eventTickMs: 20, paneEnv: {PATH: pathEnv}});
		first = await fake.openWorkspace(work);
		await fake.run(first, 'claude');
		const registry = Registry.open(path.join(state, 'registry.db'));
		registry.insert({name: 'watched', agent: 'claude', cwd: work, mux: 'herdr', paneId: first, status: 'running', epoch: Date.now()});
		// The pane this row names opens only once the dashboard runs.
		registry.insert({name: 'latecomer', agent: 'codex', cwd: work, mux: 'herdr', paneId: 'w1:p2', status: 'running', epoch: Date.now()});
		registry.close();
		const sock = path.join(tmp.dir, 'sock');
		fs.mkdirSync(sock);
		tmux = new E2eTmux({PATH: pathEnv, HOME: home, MAM_HOME: state, TMUX_TMPDIR: sock, LANG: 'C.UTF-8', NO_COLOR: '1', HERDR_SOCKET_PATH: fake.socketPath});
		await tmux.start();
		const dash = await tmux.openWindow('dashboard', [process.execPath, CLI, '--mux', 'herdr'], {cwd: tmp.dir});
		screen = tmux.screen(dash);
	}, 90_000);

	afterAll(async () => {
		await tmux?.kill();
		await fake?.stop();
		tmp?.dispose();
	});

	it("shows herdr's agent status, and follows a status change and a pane opened later", async () => {
		await screen.waitFor(s => /herdr ok/.test(s) && /\bidle\b/.test(row('watched')(s)), 'the watched session idle in its herdr pane');
		fake.setAgentStatus(first, 'blocked');
		await screen.waitFor(s => /\bblocked\b/.test(row('watched')(s)), 'the status change shown');
		const late = await fake.split(first, work);
		expect(late).toBe('w1:p2');
		await fake.run(late, 'codex');
		await screen.waitFor(s => /\bidle\b/.test(row('latecomer')(s)), 'the pane opened later, with its agent');
		fake.setAgentStatus(late, 'working');
		await screen.waitFor(s => /\bworking\b/.test(row('latecomer')(s)), "the later pane's status change shown");
		expect(await screen.text()).toMatch(/herdr ok/);
		await screen.press('q');
		expect(await tmux.waitExit(screen.paneId)).toBe(0);
		expect(fake.violations).toEqual([]);
	});
});
