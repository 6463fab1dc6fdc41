import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import type {Pane, SessionRecord} from '../../src/domain/types.js';
import {detectDrift} from '../../src/drift/detect.js';
import {applyFix} from '../../src/actions/driftFix.js';
import type {PaneEvidence} from '../../src/drift/input.js';
import {isRecordedPane} from '../../src/drift/paneJoin.js';
import {Registry} from '../../src/registry/registry.js';
import {joinSnapshot} from '../../src/sync/snapshot.js';
import {tempDir} from '../helpers/tmp.js';
import {CWD, EPOCH, ID, pane, row, world} from './builders.js';

// Issue 17 items 2 and 3: an adopted pane is pinned from the agent's own evidence, its epoch is
// the agent process's start; a row is never joined to a pane of another (or a restarted) server.

const S1 = 'tmux:/tmp/tmux-0/default:100:1764580000';
const S2 = 'tmux:/tmp/tmux-0/default:200:1764590000';
const STARTED = EPOCH - 3_600_000;

function evidence(paneId: string, over: Partial<PaneEvidence>): ReadonlyMap<string, PaneEvidence> {
	return new Map([[paneId, {agent: 'claude', startedAt: STARTED, ids: [], seen: ['pid 1011: live session record'], ...over}]]);
}

const claudeIn = (id: string, over: Partial<Pane> = {}) => pane(id, {agentArgv: ['claude'], ...over});
const codexIn = (id: string, over: Partial<Pane> = {}) => pane(id, {agentArgv: ['codex'], ...over});

describe('untracked-pane: adopt pins what the evidence names, never the newest', () => {
	it('one id named: the fix pins it, with the process start as epoch and the pane server recorded', () => {
		const p = claudeIn('w1:p1', {server: S1});
		const input = {...world({panes: [p]}), paneEvidence: evidence('w1:p1', {ids: [ID.a]})};
		const [finding] = detectDrift(input).filter(f => f.kind === 'untracked-pane');
		expect(finding?.fix).toEqual({
			type: 'adopt-pane',
			paneId: 'w1:p1',
			agent: 'claude',
			cwd: CWD,
			agentSessionId: ID.a,
			mux: 'herdr',
			epoch: STARTED,
			server: S1,
		});
	});

	it('several written since it started: the finding lists them for the user to pick, and fixes nothing', () => {
		const input = {...world({panes: [claudeIn('w1:p1')]}), paneEvidence: evidence('w1:p1', {recent: [ID.a, ID.b]})};
		const [finding] = detectDrift(input).filter(f => f.kind === 'untracked-pane');
		expect(finding?.fix).toBeUndefined();
		expect(finding?.candidates).toEqual([ID.a, ID.b]);
		expect(finding?.offer).toMatch(/mam-tui adopt --pane w1:p1 --agent claude --id/);
	});

	it('none yet: the pane is adopted unpinned, epoch at the process start, saying what it waits for', () => {
		const input = {...world({panes: [claudeIn('w1:p1')]}), paneEvidence: evidence('w1:p1', {recent: []})};
		const [finding] = detectDrift(input).filter(f => f.kind === 'untracked-pane');
		expect(finding?.message).toMatch(/pinned once Claude Code writes its conversation/);
		expect(finding?.fix).toMatchObject({type: 'adopt-pane', epoch: STARTED});
		expect(finding?.fix && 'agentSessionId' in finding.fix ? finding.fix.agentSessionId : undefined).toBeUndefined();
	});

	it('a running unpinned row is pinned from its pane evidence', () => {
		const r = row(1, {paneId: 'w1:p1'});
		const input = {...world({sessions: [r], panes: [claudeIn('w1:p1')]}), paneEvidence: evidence('w1:p1', {ids: [ID.c]})};
		const [finding] = detectDrift(input).filter(f => f.kind === 'unpinned');
		expect(finding?.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.c, named: 'process'});
	});

	it('a stopped row pinned to the id the evidence names is that pane (stopped-but-live), not an untracked pane', () => {
		const r = row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a});
		const input = {...world({sessions: [r], panes: [claudeIn('w1:p4')]}), paneEvidence: evidence('w1:p4', {ids: [ID.a]})};
		const kinds = detectDrift(input).map(f => f.kind);
		expect(kinds).toContain('stopped-but-live');
		expect(kinds).not.toContain('untracked-pane');
	});
});

describe('pane identity includes the server: one join for status, drift and the dashboard', () => {
	const stoppedOn1 = (over: Partial<SessionRecord> = {}) =>
		row(1, {status: 'stopped', mux: 'tmux', paneId: '%1', agentSessionId: ID.a, extra: {paneServer: S1}, ...over});

	it("a pane of another server with the same id is not the row's", () => {
		expect(isRecordedPane(stoppedOn1(), {id: '%1', server: S2}, 'tmux')).toBe(false);
		expect(isRecordedPane(stoppedOn1(), {id: '%1', server: S1}, 'tmux')).toBe(true);
		expect(isRecordedPane(stoppedOn1({extra: {}}), {id: '%1', server: S2}, 'tmux')).toBe(true);
	});

	for (const [label, r] of [
		['recorded on the old server', stoppedOn1()],
		['made before servers were recorded', stoppedOn1({extra: {}})],
	] as const) {
		it(`restarted server, the new %1 runs codex: untracked in drift and in the snapshot, no pane for the stopped claude row (${label})`, () => {
			const p = codexIn('%1', {mux: 'tmux', server: S2});
			const findings = detectDrift(world({sessions: [r], panes: [p], mux: 'tmux'}));
			expect(findings.filter(f => f.kind === 'untracked-pane').map(f => f.paneId)).toEqual(['%1']);
			const snap = joinSnapshot({
				at: 1,
				sessions: [r],
				muxKind: 'tmux',
				health: {kind: 'tmux', ok: true, message: 'ok'},
				panes: [p],
				discovery: {byCwd: new Map(), verify: new Map(), inUse: new Map(), conversations: []},
				processes: p.processes,
				cwdExists: () => true,
			});
			expect(snap.untracked.map(u => u.id)).toEqual(['%1']);
			expect(snap.live[r.name]?.pane).toBeUndefined();
			expect(snap.live[r.name]?.liveStatus).toBe('stopped');
			expect(snap.findings.filter(f => f.kind === 'untracked-pane').map(f => f.paneId)).toEqual(['%1']);
		});
	}

	it('a running row is not joined to a same-id pane of a restarted server: its pane is gone', () => {
		const r = row(1, {mux: 'tmux', paneId: '%1', agentSessionId: ID.a, extra: {paneServer: S1}});
		const findings = detectDrift(world({sessions: [r], panes: [claudeIn('%1', {mux: 'tmux', server: S2})], mux: 'tmux'}));
		expect(findings.map(f => f.kind)).toEqual(expect.arrayContaining(['pane-gone', 'untracked-pane']));
	});
});

describe('applying adopt-pane', () => {
	let tmp: ReturnType<typeof tempDir>;
	let registry: Registry;
	beforeEach(() => {
		tmp = tempDir('mam-adopt-');
		registry = Registry.open(path.join(tmp.dir, 'registry.db'), () => EPOCH);
	});
	afterEach(() => {
		registry.close();
		tmp.dispose();
	});

	it("records the pane's server and the process start as epoch; two rows never claim one pane", () => {
		const fix = {type: 'adopt-pane', paneId: '%1', agent: 'claude', cwd: CWD, agentSessionId: ID.a, mux: 'tmux', epoch: STARTED, server: S1} as const;
		const outcome = applyFix(registry, {kind: 'untracked-pane', paneId: '%1', message: 'm', evidence: [], fix}, {now: () => EPOCH});
		expect(outcome?.status).toBe('applied');
		const [adopted] = registry.list();
		expect(adopted).toMatchObject({epoch: STARTED, paneId: '%1', status: 'running', agentSessionId: ID.a, extra: {paneServer: S1}});
		const again = applyFix(
			registry,
			{kind: 'untracked-pane', paneId: '%1', message: 'm', evidence: [], fix: {...fix, agent: 'codex', agentSessionId: ID.b}},
			{now: () => EPOCH},
		);
		expect(again?.status).toBe('refused');
		// The same id in a restarted server is another pane: it may be adopted.
		const other = applyFix(
			registry,
			{kind: 'untracked-pane', paneId: '%1', message: 'm', evidence: [], fix: {...fix, agent: 'codex', agentSessionId: ID.b, server: S2}},
			{now: () => EPOCH},
		);
		expect(other?.status).toBe('applied');
	});
});
