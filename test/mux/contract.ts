import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, expect, it} from 'vitest';
import {parseStat} from '../../src/system/processes.js';
import {MuxError, type Multiplexer, type MuxEvent} from '../../src/mux/types.js';
import type {Pane} from '../../src/domain/types.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {eventually} from '../helpers/poll.js';

/** What each backend's test file provides to the shared contract. */
export interface MuxHarness {
	/** The backend under test (mam-tui runs outside every pane). */
	readonly mux: Multiplexer;
	/** A scratch folder to run panes in (realpath). */
	readonly cwd: string;
	/** PATH with the stand-in agents (`claude`, `codex`) first. */
	readonly path: string;
	/** A second backend on the same server that believes `paneId` is mam-tui's own pane (by env). */
	selfByEnv(paneId: string): Multiplexer;
	/** A second backend whose own pid is `pid` (its pane is found by process lineage, no env). */
	selfByPid(pid: number): Multiplexer;
	dispose(): Promise<void>;
}

function startTimeOf(pid: number): number | undefined {
	try {
		return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTime;
	} catch {
		return undefined;
	}
}

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
		return state !== 'Z';
	} catch {
		return false;
	}
}

/**
 * The Multiplexer contract, run against every backend (real tmux on a private server; herdr
 * through the fake server that speaks the real protocol). `setup` builds a fresh harness.
 */
export function muxContract(setup: () => Promise<MuxHarness>): void {
	let h: MuxHarness;
	beforeAll(async () => {
		h = await setup();
	}, 30_000);
	afterAll(async () => {
		await h?.dispose();
	});

	async function paneWithAgent(id: string, agent: string): Promise<Pane> {
		return eventually(
			`pane ${id} running ${agent}`,
			async () => {
				const pane = (await h.mux.listPanes()).find(p => p.id === id);
				return pane?.processes.some(p => p.name === agent) ? pane : undefined;
			},
			{retryErrors: true},
		);
	}

	it('says what it can do, and has the members that need', () => {
		expect(typeof h.mux.readScreens === 'function', 'readScreens present exactly when can.readsScreens').toBe(h.mux.can.readsScreens);
		expect(h.mux.can.reportsAgentStatus && h.mux.can.readsScreens, 'a mux that reports status leaves screens to itself').toBe(false);
	});

	it('opens a pane running an argv exactly, in its cwd with its env, and lists its process', async () => {
		const tricky = `x y;$(touch ${h.cwd}/pwned) 'q' "d" #h \\ ;`;
		const id = await h.mux.openPane({argv: ['claude', '--resume', tricky], cwd: h.cwd, env: {PATH: h.path, MAM_MARK: 'contract;'}, title: 'contract'});
		const pane = await paneWithAgent(id, 'claude');
		const proc = pane.processes.find(p => p.name === 'claude');
		expect(proc?.argv.slice(-3)).toEqual(['claude', '--resume', tricky].map((a, i) => (i === 0 ? expect.stringMatching(/(^|\/)claude$/) : a)));
		expect(proc?.cwd).toBe(h.cwd);
		const environ = fs.readFileSync(`/proc/${proc?.pid}/environ`, 'utf8').split('\0');
		expect(environ).toContain('MAM_MARK=contract;');
		expect(fs.existsSync(`${h.cwd}/pwned`)).toBe(false);
		expect(pane.isSelf).toBe(false);
		await eventually('the agent detected', async () => ((await h.mux.listPanes()).find(p => p.id === id)?.agent === 'claude' ? true : undefined), {
			retryErrors: true,
		});
		expect(h.mux.health()).toMatchObject({ok: true});
		await h.mux.closePane(id);
	});

	it('runs a one-element argv whose path a shell would split or expand, as is', async () => {
		const odd = path.join(h.cwd, 'odd dir;$(x) #1');
		fs.mkdirSync(odd, {recursive: true});
		const [file] = writeAgentStandIns(odd, ['claude']);
		const id = await h.mux.openPane({argv: [file ?? ''], cwd: h.cwd, env: {PATH: h.path}});
		const pane = await paneWithAgent(id, 'claude');
		expect(pane.processes.find(p => p.name === 'claude')?.argv).toContain(file);
		await h.mux.closePane(id);
	});

	it('types text into a pane and reads it back (a trailing ; included)', async () => {
		const id = await h.mux.openPane({argv: ['codex'], cwd: h.cwd, env: {PATH: h.path}});
		await paneWithAgent(id, 'codex');
		await h.mux.sendText(id, 'hello mam;');
		await h.mux.sendKeys(id, ['Enter']);
		const out = await eventually(
			'the echo',
			async () => {
				const text = await h.mux.readOutput(id, 20);
				return text.includes('got: hello mam;') ? text : undefined;
			},
			{retryErrors: true},
		);
		expect(out.split('\n').length).toBeLessThanOrEqual(20);
		await h.mux.closePane(id);
	});

	it('rejects an unknown key before sending anything', async () => {
		const id = await h.mux.openPane({argv: ['codex'], cwd: h.cwd, env: {PATH: h.path}});
		await paneWithAgent(id, 'codex');
		await expect(h.mux.sendKeys(id, ['a', 'no-such-key'])).rejects.toMatchObject({name: 'MuxError', code: 'invalid_key'});
		await h.mux.sendText(id, 'after');
		await h.mux.sendKeys(id, ['Enter']);
		const out = await eventually(
			'the echo',
			async () => {
				const text = await h.mux.readOutput(id, 20);
				return text.includes('got: after') ? text : undefined;
			},
			{retryErrors: true},
		);
		expect(out).not.toContain('got: aafter');
		await h.mux.closePane(id);
	});

	it('closes a pane: its processes die and listeners hear pane-created and pane-closed', async () => {
		const events: MuxEvent[] = [];
		const unsubscribe = h.mux.subscribe(event => events.push(event));
		try {
			// Events report changes after the subscription took its first look; the first pane,
			// once listed, proves that look is behind us.
			const first = await h.mux.openPane({argv: ['claude'], cwd: h.cwd, env: {PATH: h.path}});
			const pane = await paneWithAgent(first, 'claude');
			const second = await h.mux.openPane({argv: ['codex'], cwd: h.cwd, env: {PATH: h.path}});
			await eventually('pane-created', () => (events.some(e => e.type === 'pane-created' && e.paneId === second) ? true : undefined), {retryErrors: true});
			await h.mux.closePane(first);
			await eventually('pane-closed', () => (events.some(e => e.type === 'pane-closed' && e.paneId === first) ? true : undefined), {retryErrors: true});
			expect((await h.mux.listPanes()).some(p => p.id === first)).toBe(false);
			await eventually('every process of the pane gone', () => (pane.processes.every(p => !isAlive(p.pid)) ? true : undefined), {retryErrors: true});
			await h.mux.closePane(second);
		} finally {
			unsubscribe();
		}
	});

	it('lists process trees with start times that match /proc', async () => {
		const id = await h.mux.openPane({argv: ['claude'], cwd: h.cwd, env: {PATH: h.path}});
		const pane = await paneWithAgent(id, 'claude');
		expect(pane.processes.length).toBeGreaterThan(0);
		expect(pane.processes[0]?.pid).toBe(pane.shellPid);
		for (const proc of pane.processes) {
			expect(proc.startTime).toBeGreaterThan(0);
			expect(proc.startTime).toBe(startTimeOf(proc.pid));
		}
		await h.mux.closePane(id);
	});

	it("refuses to type into, send keys to or close mam-tui's own pane (by env and by process lineage)", async () => {
		const id = await h.mux.openPane({argv: ['claude'], cwd: h.cwd, env: {PATH: h.path}});
		const pane = await paneWithAgent(id, 'claude');
		const agentPid = pane.processes.find(p => p.name === 'claude')?.pid ?? -1;
		for (const self of [h.selfByEnv(id), h.selfByPid(agentPid)]) {
			try {
				const listed = (await self.listPanes()).find(p => p.id === id);
				expect(listed).toMatchObject({isSelf: true});
				expect(listed?.agent).toBeUndefined();
				await expect(self.sendText(id, 'x')).rejects.toMatchObject({code: 'own_pane'});
				await expect(self.sendKeys(id, ['Enter'])).rejects.toMatchObject({code: 'own_pane'});
				await expect(self.closePane(id)).rejects.toBeInstanceOf(MuxError);
			} finally {
				await self.dispose();
			}
		}
		expect(isAlive(agentPid)).toBe(true);
		await h.mux.closePane(id);
	});

	it('rejects calls on a pane that does not exist with a readable MuxError', async () => {
		const missing = h.mux.kind === 'tmux' ? '%99999' : 'w999:p9';
		await expect(h.mux.readOutput(missing, 5)).rejects.toBeInstanceOf(MuxError);
		await expect(h.mux.closePane(missing)).rejects.toThrow(/pane|find/i);
	});

	it('refuses a bad open request before touching anything', async () => {
		await expect(h.mux.openPane({argv: [], cwd: h.cwd})).rejects.toMatchObject({code: 'invalid_argv'});
		await expect(h.mux.openPane({argv: ['claude'], cwd: 'relative/dir'})).rejects.toMatchObject({code: 'invalid_cwd'});
		await expect(h.mux.openPane({argv: ['claude'], cwd: h.cwd, env: {'A=B': 'x'}})).rejects.toMatchObject({code: 'invalid_env'});
	});
}
