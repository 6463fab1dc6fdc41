import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {createTmuxMux} from '../../src/mux/tmux.js';
import {createStatusProbe} from '../../src/sync/liveStatus.js';
import {paneAgent} from '../../src/domain/paneAgent.js';
import {realExec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {REAL_AGENTS, type RealAgent, RUN_SHELL, sleep, SLOW_REPLY, startTui, type Tui, useRealWorld} from './support/harness.js';

interface LiveStatus {
	readonly status: string;
	readonly source: string;
	readonly evidence: string;
}

interface StatusBody {
	readonly panes: readonly {readonly id: string; readonly liveStatus: LiveStatus | null}[];
	readonly attention: readonly {readonly paneId: string}[];
}

type State = 'idle' | 'working' | 'blocked';

/** What `mam-tui status --json` said about each agent's pane in each true state (the issue's closing table). */
const seen: Record<string, Partial<Record<State, LiveStatus | undefined>>> = {};

/**
 * Each real TUI in a pane of a private tmux server: idle once it takes input, working while the
 * stand-in model delays its reply (SLOW_REPLY), blocked while a shell command waits for approval
 * (RUN_SHELL). The built mam-tui, pointed at that server, must say so in `status --json`, with
 * its evidence, and list the blocked pane under `attention`.
 */
describe('real agents: live status through mam-tui status --json', () => {
	const real = useRealWorld({model: {slowMs: 15_000}});

	// What the dashboard keeps open: one control client, attached before any agent starts (codex's
	// OSC 7501 reports reach only it). One for all the agents, as one dashboard: tmux < 3.7 can
	// crash when a notification meets a control client half-way through attaching (tmux PR 4980).
	// Six of them, and every `status --json` attaching too while the agents' windows opened, did
	// crash this test's server once.
	let mux: ReturnType<typeof createTmuxMux>;
	let probe: ReturnType<typeof createStatusProbe>;

	beforeAll(async () => {
		// opencode asks only for a directory outside its project.
		real.model.configure({shellWorkdir: real.world.beta});
		const processes = createProcessTable();
		mux = createTmuxMux({server: {socketPath: real.world.tmuxPath}, exec: realExec, processes, env: real.world.env, pollMs: 1000, control: true});
		probe = createStatusProbe({
			ctx: {home: real.world.home, ownHome: true, env: real.world.env, exec: realExec, processes, now: Date.now, tmpDir: real.world.tmpdir},
			mux,
			agentOf: p => paneAgent(p, ADAPTERS),
		});
		await mux.listPanes();
	});

	afterAll(async () => {
		await mux.dispose();
	});

	afterAll(() => {
		process.stderr.write(
			`\nagent × true state → what status --json said\n${Object.entries(seen)
				.map(([agent, states]) =>
					(['idle', 'working', 'blocked'] as const)
						.map(s => `${agent.padEnd(9)} ${s.padEnd(8)} → ${states[s] ? `${states[s].status} (${states[s].source}: ${states[s].evidence})` : 'never seen'}`)
						.join('\n'),
				)
				.join('\n')}\n`,
		);
	});

	async function liveStatusOf(tui: Tui): Promise<{pane: LiveStatus | undefined; attention: boolean}> {
		const run = await real.world.mamTui(['status', '--json']);
		if (run.exitCode !== 0) throw new Error(`status --json exited ${run.exitCode}: ${run.stderr}`);
		const body = JSON.parse(run.stdout) as StatusBody;
		return {pane: body.panes.find(p => p.id === tui.paneId)?.liveStatus ?? undefined, attention: body.attention.some(a => a.paneId === tui.paneId)};
	}

	/** Ask until the status is `want` (the state may take a moment to reach the screen); the last answer either way. */
	async function until(agent: RealAgent, tui: Tui, want: State, timeoutMs: number): Promise<{pane: LiveStatus | undefined; attention: boolean}> {
		const end = Date.now() + timeoutMs;
		for (;;) {
			const found = await liveStatusOf(tui);
			if (found.pane?.status === want || Date.now() > end) {
				(seen[agent] ??= {})[want] = found.pane;
				return found;
			}
			await sleep(500);
		}
	}

	it.concurrent.each(REAL_AGENTS)('%s: idle, then working, then blocked', async agent => {
		const tui = await startTui(real.world, agent, real.world.alpha);
		try {
			expect((await until(agent, tui, 'idle', 30_000)).pane?.status).toBe('idle');
			await tui.prompt(`${SLOW_REPLY} please say hi`);
			expect((await until(agent, tui, 'working', 30_000)).pane?.status).toBe('working');
			await tui.waitForScreen(/Hello from the stand-in model\./, 120_000);
			await tui.prompt(`${RUN_SHELL} please`);
			const blocked = await until(agent, tui, 'blocked', 90_000);
			expect(blocked.pane?.status).toBe('blocked');
			expect(blocked.attention).toBe(true);
			const live = (await probe.detect(await mux.listPanes()))?.find(p => p.id === tui.paneId)?.detection;
			process.stderr.write(`${agent} blocked, through the long-lived control client: ${live?.status} (${live?.source}: ${live?.evidence})\n`);
			expect(live?.status).toBe('blocked');
			if (agent === 'codex') expect(live?.source).toBe('osc');
		} finally {
			await tui.close();
		}
	});
});
