import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import type {Finding, FindingKind, Pane} from '../../src/domain/types.js';
import {detectDrift, type SessionFacts} from '../../src/drift/detect.js';
import {applyFix, applyFixes, fixDrift} from '../../src/actions/driftFix.js';
import {collectDriftInput} from '../../src/sync/pipeline.js';
import type {DriftInput} from '../../src/drift/input.js';
import {Registry, type NewSession} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';
import {CWD, EPOCH, ID, candidates, conv, fakeContext, fakeProcessTable, pane, spyExec, spyMux, type Spy} from './builders.js';

const NOW = EPOCH + 3_600_000;
let tmp: ReturnType<typeof tempDir>;
let registry: Registry;
let clock: number;

beforeEach(() => {
	tmp = tempDir('mam-drift-fix-');
	clock = NOW;
	registry = Registry.open(path.join(tmp.dir, 'registry.db'), () => clock++);
});
afterEach(() => {
	registry.close();
	tmp.dispose();
});

function add(name: string, over: Partial<NewSession> = {}): number {
	return registry.insert({name, agent: 'claude', cwd: CWD, mux: 'herdr', paneId: 'w1:p1', status: 'running', epoch: EPOCH, ...over}).id;
}

function input(panes: readonly Pane[] | null, facts: Record<number, SessionFacts> = {}): DriftInput {
	return {
		sessions: registry.list(),
		mux: 'herdr',
		panes,
		facts: new Map(Object.entries(facts).map(([k, v]) => [Number(k), v])),
		processes: (panes ?? []).flatMap(p => p.processes),
	};
}

function findingOf(kind: FindingKind, panes: readonly Pane[] | null, facts: Record<number, SessionFacts> = {}): Finding {
	const found = detectDrift(input(panes, facts)).filter(f => f.kind === kind);
	expect(found).toHaveLength(1);
	return found[0] as Finding;
}

/** Fix everything fixable, then prove a second pass changes nothing: no row write, no audit record. */
function fixThenRerun(panes: readonly Pane[] | null, facts: Record<number, SessionFacts> = {}) {
	const outcomes = applyFixes(registry, detectDrift(input(panes, facts)), {now: () => NOW});
	const rowsAfter = registry.list();
	const auditAfter = registry.auditLog();
	const again = applyFixes(registry, detectDrift(input(panes, facts)), {now: () => NOW});
	expect(again).toEqual([]);
	expect(registry.list()).toEqual(rowsAfter);
	expect(registry.auditLog()).toEqual(auditAfter);
	return outcomes;
}

function lastAudit() {
	return registry.auditLog().at(-1);
}

describe('fixes on a real registry, each audited, each idempotent', () => {
	it('pane-gone: marked stopped, pane forgotten, old and new values audited', () => {
		const id = add('api');
		const outcomes = fixThenRerun([]);
		expect(outcomes.map(o => o.status)).toEqual(['applied']);
		expect(registry.getById(id)).toMatchObject({status: 'stopped', paneId: null, version: 2});
		expect(lastAudit()).toMatchObject({
			session: 'api',
			action: 'drift-fix',
			step: 'mark-stopped',
			outcome: 'ok',
			detail: {kind: 'pane-gone', old: {status: 'running', paneId: 'w1:p1'}, new: {status: 'stopped', paneId: null}},
		});
		expect((lastAudit()?.detail['evidence'] as string[]).join('\n')).toContain('no pane w1:p1');
	});

	it('agent-exited: marked stopped, the pane kept for a later resume', () => {
		const id = add('api', {agentSessionId: ID.a});
		fixThenRerun([pane('w1:p1')], {[id]: {verify: {kind: 'yes'}}});
		expect(registry.getById(id)).toMatchObject({status: 'stopped', paneId: 'w1:p1'});
		expect(lastAudit()).toMatchObject({step: 'mark-stopped', detail: {kind: 'agent-exited', old: {status: 'running'}, new: {status: 'stopped'}}});
	});

	it('unpinned with one candidate: pinned', () => {
		const id = add('api');
		fixThenRerun([pane('w1:p1', {agentArgv: ['claude']})], {[id]: {candidates: candidates([conv(ID.a)])}});
		expect(registry.getById(id)?.agentSessionId).toBe(ID.a);
		expect(lastAudit()).toMatchObject({step: 'pin', detail: {kind: 'unpinned', old: {agentSessionId: null}, new: {agentSessionId: ID.a}}});
	});

	it('pin-changed: re-pinned, the old id kept in the audit log', () => {
		const id = add('api', {agentSessionId: ID.a});
		fixThenRerun([pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.b})]);
		expect(registry.getById(id)?.agentSessionId).toBe(ID.b);
		expect(lastAudit()).toMatchObject({step: 'repin', detail: {kind: 'pin-changed', old: {agentSessionId: ID.a}, new: {agentSessionId: ID.b}}});
	});

	it('stopped-but-live: marked running in the pane', () => {
		const id = add('api', {status: 'stopped', paneId: null, mux: null, agentSessionId: ID.a});
		fixThenRerun([pane('w1:p6', {agentArgv: ['claude', '--resume', ID.a]})]);
		expect(registry.getById(id)).toMatchObject({status: 'running', paneId: 'w1:p6', mux: 'herdr'});
		expect(lastAudit()).toMatchObject({
			step: 'mark-running',
			detail: {old: {status: 'stopped', paneId: null, mux: null}, new: {status: 'running', paneId: 'w1:p6', mux: 'herdr'}},
		});
	});

	it('untracked-pane: adopted as a new row named agent + cwd basename, pinned from the native id', () => {
		add('codex-api', {agent: 'codex', status: 'stopped', paneId: null});
		fixThenRerun([pane('w1:p4', {agent: 'codex', agentArgv: ['codex'], agentSessionId: ID.c})]);
		const adopted = registry.get('codex-api-2');
		expect(adopted).toMatchObject({agent: 'codex', cwd: CWD, mux: 'herdr', paneId: 'w1:p4', agentSessionId: ID.c, status: 'running', epoch: NOW});
		expect(lastAudit()).toMatchObject({
			session: 'codex-api-2',
			step: 'adopt-pane',
			outcome: 'ok',
			detail: {kind: 'untracked-pane', old: null, new: {paneId: 'w1:p4'}},
		});
	});

	it('findings without a fix change nothing', () => {
		add('a', {status: 'stopped', paneId: null, agentSessionId: ID.a});
		add('b', {status: 'stopped', paneId: null, agentSessionId: ID.a});
		const before = registry.list();
		expect(fixThenRerun([])).toEqual([]);
		expect(registry.list()).toEqual(before);
		expect(registry.auditLog()).toEqual([]);
	});
});

describe('a fix never overwrites a concurrent change', () => {
	it('refuses when the row changed since detection (compare-and-set), and audits the refusal', () => {
		const id = add('api');
		const finding = findingOf('pane-gone', []);
		// Another mam-tui touches the row meanwhile; the row is still running, so only the version tells.
		registry.update(id, {extra: {note: 'other process'}});
		const outcome = applyFix(registry, finding);
		expect(outcome?.status).toBe('refused');
		expect(outcome?.message).toMatch(/changed by another mam-tui process/);
		expect(registry.getById(id)).toMatchObject({status: 'running', paneId: 'w1:p1', extra: {note: 'other process'}});
		expect(lastAudit()).toMatchObject({session: 'api', step: 'mark-stopped', outcome: 'refused'});
	});

	it('refuses a fix whose precondition no longer holds (even without a version)', () => {
		const id = add('api');
		const {sessionVersion: _drop, ...finding} = findingOf('pane-gone', []);
		registry.update(id, {status: 'stopped'});
		expect(applyFix(registry, finding)?.status).toBe('refused');
		expect(registry.getById(id)?.paneId).toBe('w1:p1');
	});

	it('refuses to pin an id another row pinned meanwhile', () => {
		const id = add('api');
		const finding = findingOf('unpinned', [pane('w1:p1', {agentArgv: ['claude']})], {[id]: {candidates: candidates([conv(ID.a)])}});
		add('other', {status: 'stopped', paneId: null, agentSessionId: ID.a});
		const outcome = applyFix(registry, finding);
		expect(outcome).toMatchObject({status: 'refused', message: `${ID.a} is already pinned by other`});
		expect(registry.getById(id)?.agentSessionId).toBeNull();
	});

	it('refuses a pin that is not a valid id for the agent, whatever the finding says', () => {
		const id = add('api');
		const forged: Finding = {kind: 'unpinned', sessionId: id, message: 'x', evidence: [], fix: {type: 'pin', sessionId: id, agentSessionId: '../../x'}};
		expect(applyFix(registry, forged)?.status).toBe('refused');
		expect(registry.getById(id)?.agentSessionId).toBeNull();
	});

	it('refuses to adopt a pane a row took meanwhile', () => {
		const finding = findingOf('untracked-pane', [pane('w1:p4', {agent: 'codex', agentArgv: ['codex']})]);
		add('taken', {agent: 'codex', paneId: 'w1:p4'});
		expect(applyFix(registry, finding)?.status).toBe('refused');
		expect(registry.list().map(r => r.name)).toEqual(['taken']);
	});
});

describe('fixDrift: detect → fix → look again', () => {
	it('a session whose pane is gone but which lives on in another pane ends up running there, in two rounds', async () => {
		const spy: Spy = {calls: []};
		const id = add('api', {agentSessionId: ID.a, paneId: 'w1:p1'});
		const panes = [pane('w1:p9', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.a})];
		const sources = {
			registry,
			mux: spyMux(() => panes, spy),
			ctx: fakeContext(
				fakeProcessTable(() => panes.flatMap(p => p.processes)),
				spyExec(spy),
			),
		};
		const run = await fixDrift(registry, () => collectDriftInput(sources), {now: () => NOW});
		expect(run.outcomes.map(o => [o.finding.kind, o.status])).toEqual([
			['pane-gone', 'applied'],
			['stopped-but-live', 'applied'],
		]);
		expect(registry.getById(id)).toMatchObject({status: 'running', paneId: 'w1:p9', agentSessionId: ID.a});
		expect(run.findings.filter(f => f.fix)).toEqual([]);
		expect(spy.calls).toEqual([]);
	});
});
