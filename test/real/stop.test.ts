import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from 'vitest';
import {adapterFor} from '../../src/adapters/index.js';
import {Registry} from '../../src/registry/registry.js';
import {
	conversationsOnDisk,
	DEFAULT_REPLY,
	processTable,
	READY,
	REAL_AGENTS,
	RUN_SHELL,
	shellQuote,
	startTui,
	type Model,
	type RealAgent,
	type RealWorld,
	type Tui,
} from './support/harness.js';
import {ask, HELLO, isAlive, registerPane, turn, useRealWorldOutside} from './support/turn.js';

/**
 * `mam-tui stop` against the four real TUIs (issue 17 item 4, issue 19 item 6). Per agent:
 * - idle, and right after a turn, the stop ends at step 1 (the exit sequence), in at least 9 of
 *   10 stops (`MAM_REAL_TRIALS` sets the trials per situation; 1 in CI, so it must pass);
 *   after a turn the reply is on disk and the real CLI resumes the conversation;
 * - a one-line draft (left in the resumed session) is cleared by the sequence and never
 *   reaches the model;
 * - a two-line draft: nothing is typed (Ctrl+U clears one line only), the pane is closed, and
 *   the draft never reaches the model;
 * - blocked on an approval: nothing is typed (it would answer the dialog), the command is
 *   never run;
 * and every time, no process of the pane's agent tree survives.
 */
// One each in CI: a real TUI takes seconds to start (opencode here up to ~20 s), and the whole
// real suite must stay within minutes; raise it to measure the 9-of-10 target.
const TRIALS = Math.max(1, Number(process.env['MAM_REAL_TRIALS'] ?? 1));
const NEEDED = Math.ceil(0.9 * TRIALS);

/** What the approval dialog shows (screens/README.md). */
const APPROVAL: Readonly<Record<RealAgent, RegExp>> = {
	claude: /Do you want to proceed\?/,
	codex: /Press enter to confirm or esc to cancel/,
	opencode: /Permission required/,
	gemini: /Allow execution of/,
	grok: /Yes, proceed/,
	hermes: /Dangerous Command/,
};

interface StopJson {
	readonly endedBy: string;
	readonly ok: boolean;
	readonly survivors: readonly unknown[];
	readonly notes: readonly string[];
	readonly steps: ReadonlyArray<{readonly step: string; readonly state: string; readonly elapsedMs: number; readonly message: string}>;
}

interface Trial {
	readonly agent: RealAgent;
	readonly situation: string;
	readonly endedBy: string;
	/** From the start of step 1 to the agent's exit (the exit sequence's pauses included). */
	readonly stepMs: number;
}

const trials: Trial[] = [];
let counter = 0;

/** The pane's agent tree: every process under the shell, and anything else in its session. */
function agentTree(tui: Tui): number[] {
	const sid = processTable().find(p => p.pid === tui.shellPid)?.sid;
	const inSession = sid === undefined ? [] : processTable().filter(p => p.sid === sid);
	return [...new Set([...tui.processTree(), ...inSession].map(p => p.pid))].filter(pid => pid !== tui.shellPid);
}

/** `mam-tui stop NAME --json`, then: nothing of the tree it had before is alive. */
async function stop(world: RealWorld, tui: Tui, name: string, situation: string): Promise<StopJson> {
	const tree = agentTree(tui);
	expect(tree.length, `${tui.agent}: an agent runs in ${tui.paneId}`).toBeGreaterThan(0);
	const run = await world.mamTui(['stop', name, '--json'], {timeoutMs: 60_000});
	expect(run.stderr).toBe('');
	const result = JSON.parse(run.stdout) as StopJson;
	const left = processTable().filter(p => tree.includes(p.pid) && isAlive(p.pid));
	expect(left, `${tui.agent} ${situation}: survivors of ${tree.join(',')}; the stop said ${run.stdout}`).toEqual([]);
	expect(result.survivors).toEqual([]);
	expect(result.ok).toBe(true);
	const exit = result.steps.find(s => s.step === 'exit-input' && (s.state === 'done' || s.state === 'failed'));
	trials.push({agent: tui.agent, situation, endedBy: result.endedBy, stepMs: exit?.elapsedMs ?? Number.NaN});
	// A stop that did not end at step 1 says why in its steps; without them a CI failure is mute.
	if (result.endedBy !== 'exit-input')
		console.log(
			`${tui.agent} ${situation}: ended by ${result.endedBy}\n${result.steps.map(s => `  ${s.step} ${s.state} ${s.elapsedMs} ms: ${s.message}`).join('\n')}\n${result.notes.join('\n')}`,
		);
	return result;
}

/** The shell's command line that resumes `id` (the adapter's own argv), typed into the pane. */
function resumeLine(agent: RealAgent, world: RealWorld, id: string): string {
	const adapter = adapterFor(agent);
	if (!adapter) throw new Error(`no adapter for ${agent}`);
	const ctx = {
		home: world.home,
		ownHome: false,
		env: world.env,
		exec: () => Promise.reject(new Error('unused')),
		processes: {list: async () => [], get: async () => undefined, holders: async () => []},
		now: Date.now,
		tmpDir: world.tmpdir,
	};
	return adapter.resume(ctx, id).argv.map(shellQuote).join(' ');
}

function sentToModel(model: Model, needle: string): boolean {
	return model.requests().some(r => r.raw.includes(needle));
}

describe.each(REAL_AGENTS)('real agents: stop %s', agent => {
	// Outside both projects: opencode asks before a shell command runs there.
	const real = useRealWorldOutside();

	it(
		`ends at step 1 when idle and right after a turn (${TRIALS} stops each); the reply is on disk, the CLI resumes it, and a one-line draft is never sent`,
		{timeout: 120_000 + TRIALS * 150_000},
		async () => {
			const ended = {idle: 0, afterTurn: 0};
			for (let i = 0; i < TRIALS; i++) {
				const idle = await startTui(real.world, agent, real.world.alpha);
				await new Promise(resolve => setTimeout(resolve, 1500));
				if ((await stop(real.world, idle, registerPane(real.world, idle, 'stop'), 'idle')).endedBy === 'exit-input') ended.idle++;
				await idle.close();

				const prompt = `stop trial ${i} for ${agent}: say hello`;
				const {tui: busy, id} = await turn(real.world, agent, prompt);
				await new Promise(resolve => setTimeout(resolve, 1000));
				const result = await stop(real.world, busy, registerPane(real.world, busy, 'stop', id), 'after a turn');
				// Flushed: the turn's reply is in the agent's own store once it is stopped.
				expect(conversationsOnDisk(real.world, agent, real.world.alpha).find(c => c.id === id)?.text).toContain(DEFAULT_REPLY);
				if (result.endedBy === 'exit-input') ended.afterTurn++;
				if (i === 0 && result.endedBy === 'exit-input') await resumeWithDraft(busy, id, prompt);
				await busy.close();
			}
			expect(ended.idle, `${agent} idle: step-1 exits of ${TRIALS}`).toBeGreaterThanOrEqual(NEEDED);
			expect(ended.afterTurn, `${agent} after a turn: step-1 exits of ${TRIALS}`).toBeGreaterThanOrEqual(NEEDED);
		},
	);

	/**
	 * In the pane the stop left open: the real CLI resumes the conversation (so it was flushed),
	 * then a one-line draft is left in its composer; the stop clears it and still ends at step 1.
	 */
	async function resumeWithDraft(tui: Tui, id: string, prompt: string): Promise<void> {
		// The exited TUI's last screen stays in the pane: clear it, so only the resumed one can match.
		await tui.prompt('clear');
		await tui.waitForScreen(/^mam-real\$\s*$/m, 10_000);
		await tui.typeText(resumeLine(agent, real.world, id));
		await tui.sendKeys('Enter');
		await tui.waitForScreen(READY[agent], 60_000);
		await tui.waitForScreen(new RegExp(prompt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 60_000);
		await tui.waitForScreen(HELLO, 30_000);
		// A resumed TUI draws its history before it takes keys (gemini dropped keys typed at once).
		await new Promise(resolve => setTimeout(resolve, 2000));
		const draft = `draft-${agent}-${Date.now()} keep me`;
		await tui.typeText(draft);
		await tui.waitForScreen(new RegExp(draft), 10_000);
		const result = await stop(real.world, tui, registerPane(real.world, tui, 'stop', id), 'resumed, one-line draft');
		expect(result.endedBy).toBe('exit-input');
		expect(result.steps.find(s => s.step === 'exit-input' && s.state === 'running')?.message).toMatch(/one-line draft: Ctrl\+U clears it first/);
		await new Promise(resolve => setTimeout(resolve, 1000));
		expect(sentToModel(real.model, draft)).toBe(false);
	}

	it('types nothing over a two-line draft: the pane is closed and the draft never reaches the model', async () => {
		const tui = await startTui(real.world, agent, real.world.alpha);
		const marker = `two-line-${agent}-${Date.now()}`;
		await real.world.tmux(['set-buffer', '-b', 'draft', `${marker} first line\nsecond line`]);
		await real.world.tmux(['paste-buffer', '-p', '-d', '-b', 'draft', '-t', tui.paneId]);
		await tui.waitForScreen(/second line/, 10_000);
		const result = await stop(real.world, tui, registerPane(real.world, tui, 'stop'), 'two-line draft');
		expect(result.steps.find(s => s.step === 'exit-input')).toMatchObject({state: 'skipped'});
		// Either fail-safe reason will do: the draft seen as two lines, or (while the TUI is still
		// redrawing the paste) no composer recognised at all. What matters is that nothing is typed.
		expect(result.steps.find(s => s.step === 'exit-input')?.message).toMatch(/2-line draft|cannot be ruled out/);
		expect(['close-pane', 'sigkill']).toContain(result.endedBy);
		await new Promise(resolve => setTimeout(resolve, 1000));
		expect(sentToModel(real.model, marker)).toBe(false);
	});

	it('types nothing into an approval dialog: the command never runs', async () => {
		const tui = await startTui(real.world, agent, real.world.alpha);
		await ask(tui, `please ${RUN_SHELL} now`, APPROVAL[agent]);
		const result = await stop(real.world, tui, registerPane(real.world, tui, 'stop'), 'blocked');
		expect(result.steps.find(s => s.step === 'exit-input')).toMatchObject({state: 'skipped'});
		expect(result.steps.find(s => s.step === 'exit-input')?.message).toMatch(/approval/);
		expect(['close-pane', 'sigkill']).toContain(result.endedBy);
		await new Promise(resolve => setTimeout(resolve, 1000));
		expect(fs.existsSync(path.join(real.world.alpha, 'hello-from-tool.txt'))).toBe(false);
		expect(fs.existsSync(path.join(real.outside, 'hello-from-tool.txt'))).toBe(false);
	});

	// As `mam-tui resume` opens it: gemini's node wrapper is the pane's own process, no shell
	// around it. Closing the pane hangs up only the wrapper, which ignores SIGHUP and keeps its
	// child (REAL.md surprise 6); the stop's hangup to each captured process ends both.
	it.runIf(agent === 'gemini')("gemini as the pane's own process: closing the pane ends the wrapper and its child", async () => {
		const opened = await real.world.tmux([
			'new-window',
			'-d',
			'-P',
			'-F',
			'#{pane_id} #{pane_pid}',
			'-n',
			'gemini-root',
			'-c',
			real.world.alpha,
			'--',
			real.world.clis.gemini,
		]);
		const [paneId = '', pid = ''] = opened.stdout.trim().split(' ');
		const wrapper = Number(pid);
		const screen = async () => (await real.world.tmux(['capture-pane', '-p', '-t', paneId])).stdout;
		const until = async (re: RegExp) => {
			for (const deadline = Date.now() + 60_000; !re.test(await screen());) {
				if (Date.now() > deadline) throw new Error(`gemini in ${paneId} never showed ${re}:\n${await screen()}`);
				await new Promise(resolve => setTimeout(resolve, 200));
			}
		};
		await until(READY.gemini);
		const tree = [
			wrapper,
			...processTable()
				.filter(p => p.ppid === wrapper)
				.map(p => p.pid),
		];
		expect(tree.length, 'the wrapper and its child').toBe(2);
		await real.world.tmux(['set-buffer', '-b', 'draft', 'wrapper case first line\nsecond line']);
		await real.world.tmux(['paste-buffer', '-p', '-d', '-b', 'draft', '-t', paneId]);
		await until(/second line/);
		const name = `gemini-root-${++counter}`;
		const registry = Registry.open(real.world.registry);
		registry.insert({name, agent: 'gemini', cwd: real.world.alpha, mux: 'tmux', paneId, status: 'running', epoch: Date.now() - 60_000});
		registry.close();
		const run = await real.world.mamTui(['stop', name, '--json'], {timeoutMs: 60_000});
		const result = JSON.parse(run.stdout) as StopJson;
		expect(result.endedBy, run.stdout).toBe('close-pane');
		expect(processTable().filter(p => tree.includes(p.pid) && isAlive(p.pid))).toEqual([]);
	});

	afterAll(() => {
		const mine = trials.filter(t => t.agent === agent);
		const rows = [...new Set(mine.map(t => t.situation))].map(situation => {
			const some = mine.filter(t => t.situation === situation);
			const times = some
				.map(t => t.stepMs)
				.filter(Number.isFinite)
				.sort((a, b) => a - b);
			return `${agent} | ${situation} | ${some.filter(t => t.endedBy === 'exit-input').length}/${some.length} at step 1 | ended by ${[...new Set(some.map(t => t.endedBy))].join(', ')} | step 1 ${times[0] ?? '-'}–${times.at(-1) ?? '-'} ms`;
		});
		console.info(`stop on real ${agent}:\n${rows.join('\n')}`);
	});
});
