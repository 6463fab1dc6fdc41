import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {afterEach, describe, expect, it} from 'vitest';
import {stopSession, type StopClock, type StopProgress} from '../../src/actions/stop.js';
import {adapterFor} from '../../src/adapters/index.js';
import type {AgentId, AgentStatus, Pane, ProcessRef} from '../../src/domain/types.js';
import type {Multiplexer} from '../../src/mux/types.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {tmuxCan} from '../../src/mux/tmux.js';

/**
 * Step 1 against a model of the real TUIs, with a clock that advances only when the stop sleeps
 * (no real time passes): the model behaves as the 252 measured trials say. An Enter within
 * 300 ms of typed text is dropped (codex, gemini); Enter over a draft sends draft + command as a
 * prompt; keys typed into an approval dialog answer it. Its screen is the real capture of the
 * state it is in, so the adapters' own readers decide.
 */
const SCREENS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/screens');

interface Proc {
	ref: ProcessRef;
	alive: boolean;
	/** Ignores SIGHUP (gemini's node wrapper); exits with its child instead. */
	ignoresHup?: boolean;
}

class FakeClock implements StopClock {
	t = 1_000_000;
	now(): number {
		return this.t;
	}
	async sleep(ms: number): Promise<void> {
		this.t += ms;
	}
}

/** One agent TUI in one pane: a shell, the agent, maybe a child. */
class FakeTui {
	readonly clock = new FakeClock();
	readonly typed: string[] = [];
	readonly prompts: string[] = [];
	readonly answered: string[] = [];
	composer: string[] = [''];
	blocked = false;
	paneOpen = true;
	lastTextAt = -Infinity;
	/** When the agent is gone after it accepted the exit command (an exit takes a moment). */
	exitAt: number | undefined;
	readonly procs = new Map<number, Proc>();

	readonly agent: AgentId;
	readonly command: string;
	readonly dropsQuickEnter: boolean;

	constructor(agent: AgentId, command: string, dropsQuickEnter: boolean) {
		this.agent = agent;
		this.command = command;
		this.dropsQuickEnter = dropsQuickEnter;
		this.add(100, 1, 'bash');
		this.add(101, 100, agent);
	}

	add(pid: number, ppid: number, name: string, ignoresHup = false): void {
		this.procs.set(pid, {ref: {pid, ppid, startTime: 5000 + pid, name, argv: [name]}, alive: true, ignoresHup});
	}

	private settle(): void {
		if (this.exitAt !== undefined && this.clock.now() >= this.exitAt) this.endAgent();
	}

	endAgent(): void {
		for (const p of this.procs.values()) if (p.ref.pid !== 100 && p.ref.ppid !== 1) p.alive = false;
	}

	live(): ProcessRef[] {
		this.settle();
		return [...this.procs.values()].filter(p => p.alive).map(p => p.ref);
	}

	screen(): string {
		const state = this.blocked ? 'blocked' : this.composer.length > 1 ? 'draft-2-lines' : this.composer[0] ? 'draft' : 'idle-after-turn';
		return fs.readFileSync(path.join(SCREENS, this.agent, `${state}.txt`), 'utf8');
	}

	key(key: string): void {
		this.typed.push(key);
		if (this.blocked) {
			this.answered.push(key);
			return;
		}
		if (key === 'ctrl+u') this.composer[this.composer.length - 1] = '';
		if (key !== 'Enter') return;
		if (this.dropsQuickEnter && this.clock.now() - this.lastTextAt < 300) return;
		const text = this.composer.join('\n');
		this.composer = [''];
		if (text === this.command) this.exitAt = this.clock.now() + 50;
		else if (text.trim() !== '') this.prompts.push(text);
	}

	text(text: string): void {
		this.typed.push(text);
		if (this.blocked) {
			this.answered.push(text);
			return;
		}
		this.composer[this.composer.length - 1] += text;
		this.lastTextAt = this.clock.now();
	}

	signal(pid: number, signal: NodeJS.Signals): void {
		const p = this.procs.get(pid);
		if (!p?.alive) return;
		if (signal === 'SIGHUP' && p.ignoresHup) return;
		p.alive = false;
		// A shell hung up passes the hangup to its own children only (not to their children).
		if (signal === 'SIGHUP' && p.ref.name === 'bash') for (const child of this.procs.values()) if (child.ref.ppid === pid) this.signal(child.ref.pid, 'SIGHUP');
		// A wrapper exits with the child it waits for.
		for (const parent of this.procs.values()) if (parent.ignoresHup && p.ref.ppid === parent.ref.pid) parent.alive = false;
	}
}

function fakeMux(tui: FakeTui, status: AgentStatus): Multiplexer {
	const pane = (): Pane => ({id: '%1', mux: 'tmux', agentStatus: status, shellPid: 100, processes: tui.live().filter(p => p.pid !== 1), isSelf: false});
	return {
		kind: 'tmux',
		can: tmuxCan(false),
		listPanes: async () => (tui.paneOpen ? [pane()] : []),
		subscribe: () => () => {},
		sendText: async (_id, text) => tui.text(text),
		sendKeys: async (_id, keys) => {
			for (const k of keys) tui.key(k);
		},
		readOutput: async () => tui.screen(),
		openPane: async () => '%2',
		// The terminal hangs up: only the session leader (the shell) is signalled.
		closePane: async () => {
			tui.paneOpen = false;
			tui.signal(100, 'SIGHUP');
		},
		focusPane: async () => {},
		health: () => ({kind: 'tmux', ok: true, message: 'fake'}),
		dispose: async () => {},
	};
}

function fakeTable(tui: FakeTui): ProcessTable {
	return {
		list: async () => tui.live(),
		get: async pid => tui.live().find(p => p.pid === pid),
		holders: async () => [],
	};
}

let world: TestWorld | undefined;
afterEach(() => world?.dispose());

async function stopIn(tui: FakeTui, status: AgentStatus = 'unknown') {
	world = createTestWorld('mam-stop-guards-');
	const deps = world.deps(fakeMux(tui, status), {adapterFor, processes: fakeTable(tui), kill: (pid, signal) => tui.signal(pid, signal), selfPid: 999_999});
	const row = world.registry.insert({name: `${tui.agent}-row`, agent: tui.agent, cwd: world.project, mux: 'tmux', paneId: '%1', status: 'running', epoch: 0});
	const events: StopProgress[] = [];
	const result = await stopSession(deps, row, {graceMs: 10_000, killWaitMs: 10_000, clock: tui.clock, onProgress: e => events.push(e)});
	if (!result.ok) throw new Error(result.error.message);
	const steps = events.filter(e => !e.message.startsWith('waiting')).map(e => `${e.step}:${e.state}`);
	const exit = events.find(e => e.step === 'exit-input' && e.state !== 'running' && !e.message.startsWith('waiting'))?.message ?? '';
	return {outcome: result.value, steps, exit, running: events.find(e => e.step === 'exit-input' && e.state === 'running')?.message ?? ''};
}

const MEASURED: ReadonlyArray<[AgentId, string, boolean]> = [
	['claude', '/exit', false],
	['codex', '/quit', true],
	['opencode', '/exit', false],
	['gemini', '/exit', true],
];

describe('step 1 on a model of the real TUIs (no real time passes)', () => {
	it.each(MEASURED)('%s idle: exits at step 1, nothing sent as a prompt', async (agent, command, drops) => {
		const tui = new FakeTui(agent, command, drops);
		const {outcome, steps, running} = await stopIn(tui);
		expect(outcome.endedBy).toBe('exit-input');
		expect(steps).toEqual(['capture:running', 'capture:done', 'exit-input:running', 'exit-input:done']);
		expect(running).toMatch(new RegExp(`typing Ctrl\\+U, 300 ms, ${command}, 500 ms, Enter into pane %1 \\(the composer is empty\\)`));
		expect(tui.prompts).toEqual([]);
		expect(outcome.survivors).toEqual([]);
	});

	it.each(MEASURED)('%s with a one-line draft: Ctrl+U drops it, the agent exits, the draft is never sent', async (agent, command, drops) => {
		const tui = new FakeTui(agent, command, drops);
		tui.composer = ['draft-123 keep me'];
		const {outcome, running} = await stopIn(tui);
		expect(outcome.endedBy).toBe('exit-input');
		expect(running).toMatch(/one-line draft: Ctrl\+U clears it first \(it is dropped, never sent\)/);
		expect(tui.prompts).toEqual([]);
	});

	it.each(MEASURED)('%s with a two-line draft: nothing is typed, the pane is closed, nothing is sent', async (agent, command, drops) => {
		const tui = new FakeTui(agent, command, drops);
		tui.composer = ['draft-123 first line', 'second line'];
		const {outcome, steps, exit} = await stopIn(tui);
		expect(tui.typed).toEqual([]);
		expect(tui.prompts).toEqual([]);
		expect(exit).toMatch(/not typing into pane %1: the composer holds a 2-line draft/);
		expect(steps).toEqual(['capture:running', 'capture:done', 'exit-input:skipped', 'close-pane:running', 'close-pane:done']);
		expect(outcome.endedBy).toBe('close-pane');
		expect(outcome.notes.join('\n')).toMatch(/nothing was typed into pane %1/);
	});

	it.each(MEASURED)('%s blocked on an approval (its screen shows the dialog): no key reaches the dialog', async (agent, command, drops) => {
		const tui = new FakeTui(agent, command, drops);
		tui.blocked = true;
		const {outcome, exit} = await stopIn(tui);
		expect(tui.answered).toEqual([]);
		expect(exit).toMatch(/waits on an approval/);
		expect(outcome.endedBy).toBe('close-pane');
	});

	it.each(MEASURED)('%s that herdr reports blocked: no key is sent, whatever the screen shows', async (agent, command, drops) => {
		const tui = new FakeTui(agent, command, drops);
		const {outcome, exit} = await stopIn(tui, 'blocked');
		expect(tui.typed).toEqual([]);
		expect(exit).toMatch(/the mux reports the agent blocked on an approval/);
		expect(outcome.endedBy).toBe('close-pane');
	});

	it('a configured exit input replaces the command in the sequence', async () => {
		const tui = new FakeTui('codex', '/exit', true);
		world = createTestWorld('mam-stop-guards-');
		const deps = world.deps(fakeMux(tui, 'unknown'), {
			adapterFor,
			processes: fakeTable(tui),
			kill: (pid, signal) => tui.signal(pid, signal),
			selfPid: 999_999,
			config: {...world.deps(undefined).config, agents: {codex: {exitInput: '/exit'}}},
		});
		const row = world.registry.insert({name: 'cfg', agent: 'codex', cwd: world.project, mux: 'tmux', paneId: '%1', status: 'running', epoch: 0});
		const result = await stopSession(deps, row, {clock: tui.clock});
		expect(result.ok && result.value.endedBy).toBe('exit-input');
		expect(tui.typed).toEqual(['ctrl+u', '/exit', 'Enter']);
	});
});

describe('leaving no process of the agent tree', () => {
	it("gemini's wrapper, which ignores the hangup, and its child end at close-pane, not SIGKILL", async () => {
		const tui = new FakeTui('gemini', '/exit', true);
		tui.procs.get(101)!.ignoresHup = true;
		tui.add(102, 101, 'node');
		tui.composer = ['first line', 'second line'];
		const {outcome} = await stopIn(tui);
		expect(outcome.endedBy).toBe('close-pane');
		expect(tui.live()).toEqual([]);
	});

	it('a helper the agent started after step 0 and left behind is found and SIGKILLed', async () => {
		const tui = new FakeTui('codex', '/quit', true);
		const exitAt = () => tui.exitAt;
		// codex starts a `git` once typing begins; it outlives codex (reparented to init).
		const text = tui.text.bind(tui);
		tui.text = (t: string) => {
			if (!tui.procs.has(150)) tui.add(150, 101, 'git');
			text(t);
		};
		const endAgent = tui.endAgent.bind(tui);
		tui.endAgent = () => {
			const git = tui.procs.get(150);
			if (git) git.ref = {...git.ref, ppid: 1};
			endAgent();
		};
		const {outcome, steps} = await stopIn(tui);
		expect(exitAt()).toBeDefined();
		expect(outcome.endedBy).toBe('exit-input');
		expect(steps.slice(-2)).toEqual(['sigkill:running', 'sigkill:done']);
		expect(outcome.notes.join('\n')).toMatch(/left pid 150 \(git\) running; SIGKILLed/);
		expect(outcome.captured.map(p => p.pid)).toContain(150);
		expect(tui.live().map(p => p.pid)).toEqual([100]);
	});
});

describe('the escalation end to end on the model, one row per way a stop ends (no tmux, no real time)', () => {
	type Setup = (tui: FakeTui) => void;
	const TABLE: ReadonlyArray<[string, Setup, string, readonly string[]]> = [
		['an idle agent obeys the exit input', () => {}, 'exit-input', ['capture:done', 'exit-input:done']],
		[
			'a two-line draft: nothing typed, the hangup ends it',
			tui => (tui.composer = ['first line', 'second line']),
			'close-pane',
			['capture:done', 'exit-input:skipped', 'close-pane:done'],
		],
		[
			'a two-line draft and an agent that ignores the hangup: SIGKILL',
			tui => {
				tui.composer = ['first line', 'second line'];
				tui.procs.get(101)!.ignoresHup = true;
			},
			'sigkill',
			['capture:done', 'exit-input:skipped', 'close-pane:failed', 'sigkill:done'],
		],
		[
			'only a shell in the pane: nothing to stop, nothing typed',
			tui => (tui.procs.get(101)!.alive = false),
			'nothing-running',
			['capture:done', 'exit-input:skipped'],
		],
	];

	it.each(TABLE)('%s', async (_what, setup, endedBy, steps) => {
		const tui = new FakeTui('claude', '/exit', false);
		setup(tui);
		const result = await stopIn(tui);
		expect(result.outcome.endedBy).toBe(endedBy);
		expect(result.steps.filter(s => !s.endsWith(':running'))).toEqual(steps);
		expect(result.outcome.survivors).toEqual([]);
		expect(tui.prompts).toEqual([]);
		// Whatever the way, nothing of the agent is left (the pane's shell stays only while the pane does).
		expect(tui.live().filter(p => p.pid !== 100)).toEqual([]);
	});
});
