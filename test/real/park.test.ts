import fs from 'node:fs';
import path from 'node:path';
import {execa} from 'execa';
import {afterAll, describe, expect, it} from 'vitest';
import {adapterFor} from '../../src/adapters/index.js';
import {Registry} from '../../src/registry/registry.js';
import {parkedExtra} from '../../src/registry/extra.js';
import {
	attachTui,
	DEFAULT_REPLY,
	processTable,
	REAL_AGENTS,
	RUN_SHELL,
	sleep,
	startTui,
	waitForConversation,
	type RealAgent,
	type RealWorld,
	type Tui,
} from './support/harness.js';
import {isAlive, registerPane, turn, useRealWorldOutside} from './support/turn.js';

/**
 * `mam-tui park` and `mam-tui wake` against every real TUI (issue 28). Per agent: parked after a
 * turn at step 1 with memory freed, woken in the same tmux session on the same conversation with
 * the earlier reply on screen; and refused (nothing typed, the agent left running) while it is
 * blocked on an approval, holds a draft, runs a shell command, or is the pane a client shows.
 * What is agent-specific comes from the adapters (their screen readers); the figures go to the
 * report printed after each agent.
 */

/** What a parked agent's test soaks: long enough to be a soak, short enough for the suite. */
const SOAK_S = 3;

interface ParkJson {
	readonly results: ReadonlyArray<{
		readonly session: string;
		readonly outcome: string;
		readonly check?: string;
		readonly why?: string;
		readonly parked?: {readonly freedBytes: number; readonly idleSeconds: number};
	}>;
}
interface WakeJson {
	readonly results: ReadonlyArray<{
		readonly session: string;
		readonly outcome: string;
		readonly paneId?: string;
		readonly readyMs?: number | null;
		readonly verified?: boolean;
		readonly why?: string;
		readonly notes?: readonly string[];
	}>;
}

const figures: string[] = [];

function adapterOf(agent: RealAgent) {
	const adapter = adapterFor(agent);
	if (!adapter) throw new Error(`no adapter for ${agent}`);
	return adapter;
}

function rowOf(world: RealWorld, name: string) {
	const registry = Registry.open(world.registry);
	try {
		return registry.get(name);
	} finally {
		registry.close();
	}
}

async function park(world: RealWorld, name: string): Promise<ParkJson['results'][number]> {
	const run = await world.mamTui(['park', name, '--soak', String(SOAK_S), '--json'], {timeoutMs: 60_000});
	const body = JSON.parse(run.stdout) as ParkJson;
	const result = body.results[0];
	if (!result) throw new Error(`park printed no result: ${run.stdout} ${run.stderr}`);
	return result;
}

/** Poll the screen until the adapter's own reader says `kind` (the adapter's knowledge, not the test's). */
async function untilComposer(tui: Tui, kind: string, timeoutMs = 60_000): Promise<void> {
	const read = adapterOf(tui.agent).exitInput.readScreen;
	if (!read) throw new Error(`${tui.agent}: no screen reader`);
	for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
		const screen = await tui.screen();
		if (read(screen).kind === kind) return;
		if (Date.now() > deadline) throw new Error(`${tui.agent}: composer never ${kind}:\n${screen}`);
	}
}

/** A turn, its conversation id, and the soak waited out. */
async function afterTurn(world: RealWorld, agent: RealAgent, what: string): Promise<{tui: Tui; id: string; prompt: string}> {
	const prompt = `park ${what} for ${agent}: say hello`;
	const {tui, id} = await turn(world, agent, prompt);
	await untilComposer(tui, 'empty');
	await sleep((SOAK_S + 1) * 1000);
	return {tui, id, prompt};
}

describe.each(REAL_AGENTS)('real agents: park %s', agent => {
	const real = useRealWorldOutside();

	it('parks after a turn at step 1, frees memory, and wakes on the same conversation in the same session', {timeout: 240_000}, async () => {
		const {tui, id, prompt} = await afterTurn(real.world, agent, 'and wake');
		const name = registerPane(real.world, tui, 'park', id);
		const pid = tui.agentPid();
		const result = await park(real.world, name);
		expect(result, JSON.stringify(result)).toMatchObject({outcome: 'parked'});
		expect(result.parked?.freedBytes).toBeGreaterThan(0);
		expect(isAlive(pid), 'the agent exited').toBe(false);
		const row = rowOf(real.world, name);
		expect(row?.status).toBe('parked');
		const place = row ? parkedExtra.read(row.extra)?.placement?.session : undefined;
		expect(place).toBeTruthy();

		const status = JSON.parse((await real.world.mamTui(['status', '--json'])).stdout) as {
			sessions: Array<{name: string; status: string; parked?: {freedBytes: number}}>;
		};
		expect(status.sessions.find(s => s.name === name)).toMatchObject({status: 'parked', parked: {freedBytes: result.parked?.freedBytes}});

		const run = await real.world.mamTui(['wake', name, '--json'], {timeoutMs: 120_000});
		const woke = (JSON.parse(run.stdout) as WakeJson).results[0];
		expect(woke, run.stdout).toMatchObject({outcome: 'woken', verified: true});
		expect(woke?.readyMs).toBeGreaterThan(0);
		const paneId = woke?.paneId ?? '';
		const session = (await real.world.tmux(['display-message', '-p', '-t', paneId, '#{session_name}'])).stdout.trim();
		expect(session).toBe(place);
		const again = await attachTui(real.world, agent, paneId);
		await again.waitForScreen(new RegExp(prompt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 60_000);
		await again.waitForScreen(new RegExp(DEFAULT_REPLY.replace('.', '\\.')), 30_000);
		const after = rowOf(real.world, name);
		expect(after).toMatchObject({status: 'running', agentSessionId: id, paneId});
		figures.push(
			`${agent} | ${((result.parked?.freedBytes ?? 0) / 1048576).toFixed(0)} MB freed | idle ${result.parked?.idleSeconds} s | wake ready in ${((woke?.readyMs ?? 0) / 1000).toFixed(1)} s`,
		);
		await again.close();
		await tui.close();
	});

	it('refuses while blocked on an approval: nothing typed, the command never ran', {timeout: 180_000}, async () => {
		const tui = await startTui(real.world, agent, real.world.alpha);
		await tui.prompt(`please ${RUN_SHELL} now`);
		await untilComposer(tui, 'blocked');
		const id = await waitForConversation(real.world, agent, real.world.alpha, {containing: RUN_SHELL, timeoutMs: 30_000}).catch(() => undefined);
		await sleep((SOAK_S + 1) * 1000);
		const pid = tui.agentPid();
		const result = await park(real.world, registerPane(real.world, tui, 'park', id));
		expect(result).toMatchObject({outcome: 'refused'});
		expect(['idle', 'composer']).toContain(result.check);
		expect(isAlive(pid)).toBe(true);
		await sleep(1000);
		expect(fs.existsSync(path.join(real.world.alpha, 'hello-from-tool.txt'))).toBe(false);
		expect(fs.existsSync(path.join(real.outside, 'hello-from-tool.txt'))).toBe(false);
		await tui.close();
	});

	it('refuses over a draft: nothing typed, the draft never reaches the model', {timeout: 180_000}, async () => {
		const {tui, id} = await afterTurn(real.world, agent, 'a draft');
		const draft = `draft-${agent}-${Date.now()} keep me`;
		await tui.typeText(draft);
		await tui.waitForScreen(new RegExp(draft), 10_000);
		await sleep((SOAK_S + 1) * 1000);
		const pid = tui.agentPid();
		const result = await park(real.world, registerPane(real.world, tui, 'park', id));
		expect(result).toMatchObject({outcome: 'refused', check: 'composer'});
		expect(result.why).toMatch(/draft/);
		expect(isAlive(pid)).toBe(true);
		await tui.waitForScreen(new RegExp(draft), 5000);
		expect(real.model.requests().some(r => r.raw.includes(draft))).toBe(false);
		await tui.close();
	});

	it('refuses while a shell command runs', {timeout: 180_000}, async () => {
		const marker = `park-shell-${agent}-${Date.now()}`;
		real.model.configure({shellWorkdir: real.outside, shellCommand: `sleep 40; echo ${marker} > ${marker}.txt`});
		const tui = await startTui(real.world, agent, real.world.alpha);
		await tui.prompt(`please ${RUN_SHELL} now`);
		const sleeping = async () => processTable().some(p => p.args.includes(marker));
		const read = adapterOf(agent).exitInput.readScreen;
		let approved = false;
		for (const deadline = Date.now() + 60_000; !(await sleeping()); await sleep(250)) {
			if (Date.now() > deadline) throw new Error(`${agent}: the command never started:\n${await tui.screen()}`);
			// hermes runs a command it does not think dangerous without asking; the others ask.
			if (approved || read?.(await tui.screen()).kind !== 'blocked') continue;
			// Approve once: each dialog has "allow once" first, but Grok Build's first choice is
			// "always approve", which would stay on for every later grok of this world.
			await tui.sendKeys(...(agent === 'grok' ? ['Down', 'Enter'] : ['Enter']));
			approved = true;
		}
		const id = await waitForConversation(real.world, agent, real.world.alpha, {containing: RUN_SHELL, timeoutMs: 30_000}).catch(() => undefined);
		await sleep((SOAK_S + 1) * 1000);
		const pid = tui.agentPid();
		const result = await park(real.world, registerPane(real.world, tui, 'park', id));
		expect(result).toMatchObject({outcome: 'refused'});
		expect(['idle', 'work', 'composer', 'soak']).toContain(result.check);
		expect(isAlive(pid)).toBe(true);
		expect(await sleeping()).toBe(true);
		real.model.configure({shellWorkdir: real.outside});
		await tui.close();
	});

	it('refuses the pane an attached client shows', {timeout: 180_000}, async () => {
		const {tui, id} = await afterTurn(real.world, agent, 'in front of the user');
		await real.world.tmux(['select-window', '-t', tui.paneId]);
		const session = (await real.world.tmux(['display-message', '-p', '-t', tui.paneId, '#{session_name}'])).stdout.trim();
		// A real client in a pty, as a person's terminal would be.
		const client = execa('script', ['-qfc', `tmux -S ${real.world.tmuxPath} attach -t ${session}`, '/dev/null'], {
			reject: false,
			stdin: 'pipe',
			env: real.world.env,
		});
		try {
			for (const deadline = Date.now() + 10_000; !(await real.world.tmux(['list-clients', '-F', '#{pane_id}'])).stdout.includes(tui.paneId); await sleep(200)) {
				if (Date.now() > deadline) throw new Error('the client never attached');
			}
			const pid = tui.agentPid();
			const result = await park(real.world, registerPane(real.world, tui, 'park', id));
			expect(result).toMatchObject({outcome: 'refused', check: 'focus'});
			expect(isAlive(pid)).toBe(true);
		} finally {
			await real.world.tmux(['detach-client', '-s', session]);
			client.kill();
			await client;
		}
		await tui.close();
	});

	afterAll(() => {
		console.info(`park on real ${agent}:\n${figures.filter(f => f.startsWith(`${agent} `)).join('\n')}`);
	});
});
