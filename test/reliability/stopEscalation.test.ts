import {spawn, type ChildProcess} from 'node:child_process';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {stopSession, type StopOutcome} from '../../src/actions/stop.js';
import type {StandinOptions} from '../../src/demo/standin.js';
import type {ProcessRef} from '../../src/domain/types.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {agentPids, killLeftovers, startAgentInPane, startTimeOf, type StartedAgent} from '../actions/support/agents.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from '../actions/support/tmux.js';
import {createTestWorld, type TestWorld} from '../actions/support/world.js';
import {aliveWithStart, disposeStandinScript} from '../support/standin.js';
import {budgetMs, trials} from './support/soak.js';

/** A stand-in's behaviour, drawn at random: obeying, deaf to /exit, deaf to signals, forking, slow to exit. */
interface Behaviour {
	readonly options: Partial<StandinOptions>;
	readonly graceMs: number;
	readonly killWaitMs: number;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

function randomBehaviour(): Behaviour {
	const kind = pick(['obeys', 'ignores-exit', 'ignores-signals', 'deaf', 'slow-exit', 'forks'] as const);
	const options: Partial<StandinOptions> = {
		ignoreExit: kind === 'ignores-exit' || kind === 'deaf',
		ignoreSignals: kind === 'ignores-signals' || kind === 'deaf',
		exitDelayMs: kind === 'slow-exit' ? between(200, 1500) : 0,
		children: kind === 'forks' ? between(1, 2) : between(0, 1),
		orphan: kind === 'forks' || kind === 'deaf' ? Math.random() < 0.7 : Math.random() < 0.15,
	};
	return {options, graceMs: between(300, 1000), killWaitMs: between(300, 1000)};
}

let server: TmuxServer;
let mux: Multiplexer;
let world: TestWorld;
/** An unrelated process in its own pane of the same server: never signalled, never typed into. */
let bystanderPane: {id: string; pid: number; startTime: number};
/** An unrelated process outside tmux whose pid a stopped row records with another start time (pid reuse). */
let decoy: ChildProcess;
let decoyRef: {pid: number; startTime: number};
const everyPid: Array<{pid: number; startTime: number}> = [];

beforeAll(async () => {
	server = await startTmuxServer({PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp'});
	mux = await tmuxBackend(server);
	world = createTestWorld('mam-rel-stop-');
	const id = (await server.run(['new-window', '-d', '-P', '-F', '#{pane_id} #{pane_pid}', 'sleep', '100000'])).trim().split(' ');
	const pid = Number(id[1]);
	bystanderPane = {id: id[0] ?? '', pid, startTime: startTimeOf(pid)};
	decoy = spawn('sleep', ['100000'], {stdio: 'ignore'});
	decoyRef = {pid: decoy.pid ?? -1, startTime: startTimeOf(decoy.pid ?? -1)};
});

afterAll(async () => {
	await mux?.dispose();
	await server?.kill();
	killLeftovers(everyPid);
	decoy?.kill('SIGKILL');
	world?.dispose();
	disposeStandinScript();
});

interface Trial {
	readonly agent: StartedAgent;
	readonly behaviour: Behaviour;
	/** The stand-in, its children and its orphan, with start times, taken while alive. */
	readonly pids: ReadonlyArray<{pid: number; startTime: number}>;
}

let counter = 0;

async function startTrial(): Promise<Trial> {
	const behaviour = randomBehaviour();
	counter += 1;
	const agent = await startAgentInPane(world, mux, behaviour.options, `rel-${counter}`);
	const pids = agentPids(agent);
	everyPid.push(...pids);
	// A leftover from an earlier stop whose pid now belongs to the decoy (another start time).
	const recycled: ProcessRef = {pid: decoyRef.pid, ppid: 1, startTime: decoyRef.startTime + 7, name: 'claude', argv: ['claude']};
	world.registry.update(agent.session.id, {extra: {stop: {at: Date.now() - 60_000, endedBy: 'sigkill', processes: [recycled], survivors: [recycled.pid]}}});
	return {agent, behaviour, pids};
}

function describeTrial(t: Trial, outcome: StopOutcome | undefined): string {
	return `${t.agent.session.name} ${JSON.stringify(t.behaviour)} → ${outcome ? `${outcome.endedBy}, survivors ${outcome.survivors.map(p => p.pid).join(',') || 'none'}` : 'refused'}`;
}

describe('stop escalation, many randomized stand-ins at once (SPEC 6.2)', () => {
	const total = trials(50, 300);
	const batch = 10;
	const tally = new Map<string, number>();

	it(
		`${total} stops, ${batch} at a time: zero survivors, and only the captured processes are ever signalled`,
		{timeout: budgetMs(240_000, 1_800_000)},
		async () => {
			const signalled: number[] = [];
			const kill = (pid: number, signal: NodeJS.Signals) => {
				signalled.push(pid);
				process.kill(pid, signal);
			};
			const deps = world.deps(mux, {kill});
			for (let done = 0; done < total; done += batch) {
				const size = Math.min(batch, total - done);
				const started = await Promise.all(Array.from({length: size}, () => startTrial()));
				const results = await Promise.all(
					started.map(t =>
						stopSession(deps, world.registry.getById(t.agent.session.id) ?? t.agent.session, {
							graceMs: t.behaviour.graceMs,
							killWaitMs: t.behaviour.killWaitMs,
						}),
					),
				);
				const allowed = new Set(started.flatMap(t => t.pids.map(p => p.pid)));
				for (const [i, t] of started.entries()) {
					const result = results[i];
					const outcome = result?.ok ? result.value : undefined;
					const label = describeTrial(t, outcome);
					expect(outcome, label).toBeDefined();
					expect(outcome?.survivors, label).toEqual([]);
					for (const p of t.pids) expect(aliveWithStart(p.pid, p.startTime), `${label}: pid ${p.pid}`).toBe(false);
					expect(world.registry.getById(t.agent.session.id)?.status, label).toBe('stopped');
					if (outcome) tally.set(outcome.endedBy, (tally.get(outcome.endedBy) ?? 0) + 1);
				}
				for (const pid of signalled) expect(allowed.has(pid) || started.length === 0, `signalled pid ${pid}, not of the batch`).toBe(true);
				signalled.length = 0;
				expect(aliveWithStart(decoyRef.pid, decoyRef.startTime), 'the decoy with the recycled pid').toBe(true);
				expect(aliveWithStart(bystanderPane.pid, bystanderPane.startTime), 'the bystander pane').toBe(true);
				expect((await server.panes()).some(p => p.id === bystanderPane.id && p.pid === bystanderPane.pid)).toBe(true);
			}
			expect(await mux.readOutput(bystanderPane.id, 50)).not.toMatch(/\/exit/);
			console.info(`stop escalation: ${total} stops ended by ${JSON.stringify(Object.fromEntries(tally))}`);
			// The draw must have exercised every step, or the trial count proves little.
			expect([...tally.keys()].sort()).toEqual(expect.arrayContaining(['close-pane', 'exit-input', 'sigkill']));
		},
	);
});
