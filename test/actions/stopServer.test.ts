import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {aliveWithStart, disposeStandinScript} from '../support/standin.js';
import {agentPids, killLeftovers, startAgentInPane} from './support/agents.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from './support/tmux.js';
import {createTestWorld, type TestWorld} from './support/world.js';

// Issue 17 item 3: a pane id of another (or a restarted) tmux server is another pane; stopping a
// row recorded in one server never signals the process that now has its pane id in another.

let server: TmuxServer;
let mux: Multiplexer;
let world: TestWorld | undefined;
const cleanup: Array<{pid: number; startTime: number}> = [];

beforeAll(async () => {
	server = await startTmuxServer({PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp'});
	mux = await tmuxBackend(server);
});

afterAll(async () => {
	await mux.dispose();
	await server.kill();
	killLeftovers(cleanup);
	disposeStandinScript();
});

afterEach(() => {
	killLeftovers(cleanup);
	world?.dispose();
});

describe('stop and the pane server', {timeout: 30_000}, () => {
	it("leaves alone the agent in a same-id pane of another server", async () => {
		world = createTestWorld('mam-stop-server-');
		const agent = await startAgentInPane(world, mux);
		const pids = agentPids(agent);
		cleanup.push(...pids);
		const listed = (await mux.listPanes()).find(p => p.id === agent.paneId);
		expect(listed?.server).toMatch(/^tmux:/);
		// The row was recorded in another server (the one before a restart).
		world.registry.update(agent.session.id, {extra: {paneServer: 'tmux:/tmp/elsewhere:1:1'}});
		const result = await createActions(world.deps(mux)).stop({name: agent.session.name}, {graceMs: 1000, killWaitMs: 1000});
		expect(result.ok && result.value.endedBy).toBe('nothing-running');
		for (const p of pids) expect(aliveWithStart(p.pid, p.startTime)).toBe(true);
		expect((await mux.listPanes()).map(p => p.id)).toContain(agent.paneId);
	});
});
