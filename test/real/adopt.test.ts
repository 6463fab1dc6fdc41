import {describe, expect, it} from 'vitest';
import {DEFAULT_REPLY, REAL_AGENTS, type RealAgent, type RealWorld, sleep, startTui, useRealWorld, waitForConversation} from './support/harness.js';

interface StatusSession {
	readonly name: string;
	readonly agent: string;
	readonly status: string;
	readonly paneId: string | null;
	readonly agentSessionId: string | null;
	readonly epoch: string;
	readonly livePaneId?: string | null;
}

interface Status {
	readonly sessions: readonly StatusSession[];
	readonly untrackedPanes: readonly string[];
}

interface DriftJson {
	readonly findings: ReadonlyArray<{readonly kind: string; readonly paneId?: string; readonly sessionName?: string}>;
	readonly applied?: ReadonlyArray<{
		readonly status: string;
		readonly session: string | null;
		readonly fix: {readonly type: string; readonly paneId?: string; readonly agentSessionId?: string};
	}>;
}

async function status(world: RealWorld): Promise<Status> {
	const run = await world.mamTui(['status', '--json']);
	expect(run.exitCode, run.stderr).toBe(0);
	return JSON.parse(run.stdout) as Status;
}

async function drift(world: RealWorld, fix = false): Promise<DriftJson> {
	const run = await world.mamTui(['drift', '--json', ...(fix ? ['--fix'] : [])]);
	return JSON.parse(run.stdout) as DriftJson;
}

/** A real TUI started outside mam-tui, one turn answered: its pane and the conversation it wrote. */
async function liveTui(world: RealWorld, agent: RealAgent, cwd: string, words: string) {
	const tui = await startTui(world, agent, cwd);
	await tui.prompt(words);
	await tui.waitForScreen(/Hello from the stand-in model\./, 90_000);
	const id = await waitForConversation(world, agent, cwd, {containing: words});
	return {tui, id};
}

/** A new tmux server on the world's socket, set up as the harness sets up its first one. */
async function restartServer(world: RealWorld): Promise<void> {
	let last = '';
	for (let attempt = 0; attempt < 50; attempt++) {
		// The old server may still be going away: wait until nothing answers on the socket.
		if ((await world.tmux(['has-session'])).exitCode === 0) {
			await sleep(100);
			continue;
		}
		const started = await world.tmux([
			'new-session',
			'-d',
			'-s',
			'world',
			'-n',
			'keeper',
			'-x',
			'120',
			'-y',
			'36',
			'-c',
			world.dir,
			'--',
			'tail',
			'-f',
			'/dev/null',
		]);
		if (started.exitCode === 0) {
			await world.tmux(['set-option', '-g', 'default-terminal', 'tmux-256color']);
			await world.tmux(['set-option', '-g', 'default-size', '120x36']);
			return;
		}
		last = started.stderr;
		await sleep(100);
	}
	throw new Error(`the tmux server did not start again: ${last}`);
}

/**
 * Issue 17 item 2: a pane whose real agent already runs is adopted pinned to the conversation its
 * process is on (claude's live record, codex's open rollout, opencode's and gemini's project
 * folder: the only conversation written there since the process started), its epoch the
 * process's start. `adopt --id` of a conversation a live pane runs links that pane: one row.
 */
describe('real agents: adopt pins the live conversation', () => {
	const real = useRealWorld();

	it.each(REAL_AGENTS)('%s: drift --fix adopts the pane pinned to its real conversation; adopt --id links a live pane', async agent => {
		const {tui, id} = await liveTui(real.world, agent, real.world.alpha, `adopt me, ${agent}`);
		const fixed = await drift(real.world, true);
		const adopted = fixed.applied?.find(a => a.fix.type === 'adopt-pane' && a.fix.paneId === tui.paneId);
		expect(adopted, JSON.stringify(fixed)).toMatchObject({status: 'applied', fix: {agentSessionId: id}});
		const row = (await status(real.world)).sessions.find(s => s.name === adopted?.session);
		expect(row).toMatchObject({agent, status: 'running', paneId: tui.paneId, agentSessionId: id});
		// The epoch is the agent process's start, before the conversation's first turn (not the adoption).
		const created = Date.parse(
			JSON.parse((await real.world.mamTui(['conversations', '--json', '--agent', agent])).stdout).conversations.find((c: {id: string}) => c.id === id)
				.createdAt,
		);
		expect(Date.parse(row?.epoch ?? '')).toBeLessThanOrEqual(created);
		// Adopting the same conversation by id gives the same row back: one row per pane.
		const again = await real.world.mamTui(['adopt', '--json', '--agent', agent, '--id', id]);
		expect(JSON.parse(again.stdout)).toMatchObject({ok: true, created: false, session: adopted?.session});

		// A second TUI in beta, adopted by id while it runs: the row is that pane's, running.
		const other = await liveTui(real.world, agent, real.world.beta, `link me, ${agent}`);
		const linked = await real.world.mamTui(['adopt', '--json', '--agent', agent, '--id', other.id]);
		expect(linked.exitCode, linked.stderr + linked.stdout).toBe(0);
		expect(JSON.parse(linked.stdout)).toMatchObject({created: true, status: 'running', paneId: other.tui.paneId, id: other.id});
		const after = await drift(real.world);
		expect(after.findings.filter(f => f.kind === 'untracked-pane' || f.kind === 'duplicate-pin' || f.kind === 'unpinned')).toEqual([]);
		expect((await status(real.world)).sessions.filter(s => s.paneId === other.tui.paneId && s.status === 'running')).toHaveLength(1);
		await other.tui.close();
		await tui.close();
	});
});

/**
 * Issue 17 item 3: tmux numbers panes from %0 in every server. A stopped row that lived in %1,
 * then a restarted server whose new %1 runs another agent: the pane is untracked, not the old
 * row's, and status, drift and the dashboard's join say the same.
 */
describe('real agents: a restarted tmux server', () => {
	const real = useRealWorld();

	it("a new server's %1 running codex is untracked, not credited to the stopped claude row of the old %1", async () => {
		const {tui} = await liveTui(real.world, 'claude', real.world.alpha, 'before the restart');
		expect(tui.paneId).toBe('%1');
		const fixed = await drift(real.world, true);
		const name = fixed.applied?.find(a => a.fix.type === 'adopt-pane')?.session;
		expect(name).toBeTruthy();
		await tui.quit();
		await drift(real.world, true); // agent-exited: the row is stopped, its pane %1 kept
		expect((await status(real.world)).sessions.find(s => s.name === name)).toMatchObject({status: 'stopped', paneId: '%1'});

		await real.world.tmux(['kill-server']);
		await restartServer(real.world);
		const codex = await startTui(real.world, 'codex', real.world.beta);
		expect(codex.paneId).toBe('%1');
		await codex.prompt('after the restart');
		await codex.waitForScreen(/Hello from the stand-in model\./, 90_000);
		await waitForConversation(real.world, 'codex', real.world.beta, {containing: DEFAULT_REPLY});

		const now = await status(real.world);
		expect(now.untrackedPanes).toContain('%1');
		const old = now.sessions.find(s => s.name === name);
		expect(old).toMatchObject({status: 'stopped'});
		expect(old?.livePaneId ?? null).toBeNull();
		const found = await drift(real.world);
		expect(found.findings.filter(f => f.kind === 'untracked-pane').map(f => f.paneId)).toEqual(['%1']);
		expect(found.findings.filter(f => f.sessionName === name)).toEqual([]);
		await codex.close();
	});
});
