import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {agentProcesses, paneAgent, reportedId, runsAgent, treeAgent} from '../../src/domain/paneAgent.js';
import {ownPane} from '../../src/drift/paneJoin.js';
import {joinSnapshot, liveRowIds} from '../../src/sync/snapshot.js';
import {pane, proc, row, UUID} from '../sync/support.js';

// "Which agent runs this pane" is one rule; these pin its precedence, which the muxes, the join,
// drift, pane evidence, adopt and the fast status path all inherit.

const shell = proc(10, 'bash');
const claude = proc(11, 'claude', ['claude'], 10);
const codexChild = proc(12, 'codex', ['codex', 'exec', 'ls'], 11);

describe('paneAgent: the one rule', () => {
	it('the process nearest the root wins: a codex a claude spawned does not make the pane codex', () => {
		expect(treeAgent([shell, claude, codexChild], ADAPTERS)).toBe('claude');
		const p = pane('w1:p1', {processes: [shell, claude, codexChild]});
		expect(paneAgent(p, ADAPTERS)).toBe('claude');
		expect(runsAgent(p, 'claude', ADAPTERS)).toBe(true);
		expect(runsAgent(p, 'codex', ADAPTERS)).toBe(false);
	});

	it("the mux's word wins when it names a known agent; an agent we do not know falls back to the processes", () => {
		expect(paneAgent(pane('w1:p1', {agent: 'codex', processes: [shell, claude]}), ADAPTERS)).toBe('codex');
		expect(paneAgent(pane('w1:p1', {agent: 'pi', processes: [shell, claude]}), ADAPTERS)).toBe('claude');
		expect(paneAgent(pane('w1:p1', {agent: 'claude'}), {codex: ADAPTERS.codex})).toBeUndefined();
	});

	it("mam-tui's own pane runs no agent, whatever its tree holds", () => {
		expect(paneAgent(pane('w1:p1', {isSelf: true, processes: [shell, claude]}), ADAPTERS)).toBeUndefined();
	});

	it("the mux's session id counts only for the pane's own agent", () => {
		const p = pane('w1:p1', {agent: 'claude', agentSessionId: UUID(1)});
		expect(reportedId(p, 'claude')).toBe(UUID(1));
		expect(reportedId(p, 'codex')).toBeUndefined();
		expect(agentProcesses(pane('w1:p1', {processes: [shell, claude, codexChild]}), 'codex', ADAPTERS)).toEqual([codexChild]);
	});

	it('the join, the live-row check and the stopped row use the same answer', () => {
		const p = pane('w1:p1', {agentStatus: 'working', processes: [shell, claude, codexChild]});
		const codexRow = row({id: 1, name: 'x', agent: 'codex', paneId: 'w1:p1', status: 'running'});
		const stoppedCodex = row({id: 2, name: 'y', agent: 'codex', paneId: 'w1:p1', status: 'stopped'});
		expect(liveRowIds([codexRow], [p], 'herdr').has(1)).toBe(false);
		expect(ownPane(stoppedCodex, new Map([[p.id, p]]), 'herdr', ADAPTERS)).toBeUndefined();
		const snapshot = joinSnapshot({
			at: 0,
			findings: false,
			sessions: [codexRow],
			muxKind: 'herdr',
			health: null,
			panes: [p],
			discovery: {byCwd: new Map(), verify: new Map(), inUse: new Map(), conversations: []},
			processes: null,
			cwdExists: () => true,
		});
		expect(snapshot.live['x']?.liveStatus).toBe('exited');
	});
});
