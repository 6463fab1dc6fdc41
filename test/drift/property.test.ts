import path from 'node:path';
import fc from 'fast-check';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {ok} from '../../src/domain/result.js';
import type {AgentId, Conversation, Pane, ProcessRef, SessionRecord, SessionStatus} from '../../src/domain/types.js';
import {detectDrift, type DriftInput} from '../../src/drift/detect.js';
import {fixDrift, type FixRegistry} from '../../src/actions/driftFix.js';
import {collectDriftInput} from '../../src/sync/pipeline.js';
import {Registry, type SessionPatch} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';
import {CWD, EPOCH, ID, conv, fakeAdapter, fakeAdapters, fakeContext, fakeProcessTable, proc, spyExec, spyMux, type Spy} from './builders.js';

const AGENTS = ['claude', 'codex'] as const;
const PINS = [ID.a, ID.b, ID.c, ID.d] as const;
const PANES = ['w1:p1', 'w1:p2', 'w1:p3', 'w1:p4', 'w1:p5'] as const;

interface RowSpec {
	readonly agent: (typeof AGENTS)[number];
	readonly status: SessionStatus;
	readonly paneId: string | null;
	readonly pin: string | null;
	readonly mux: 'herdr' | 'tmux' | null;
	readonly epochOffset: number;
	readonly recorded: readonly number[];
}

interface PaneSpec {
	readonly id: string;
	readonly runs: 'shell' | 'claude' | 'codex' | 'vim';
	readonly herdrSaysAgent: boolean;
	readonly native: string | undefined;
	readonly argvPin: string | undefined;
	readonly isSelf: boolean;
}

interface WorldSpec {
	readonly rows: readonly RowSpec[];
	readonly panes: readonly PaneSpec[];
	readonly reachable: boolean;
	readonly conversations: readonly Conversation[];
	readonly strays: readonly ProcessRef[];
}

const pinArb = fc.option(fc.constantFrom<string>(...PINS), {nil: null});

const rowArb: fc.Arbitrary<RowSpec> = fc.record({
	agent: fc.constantFrom(...AGENTS),
	status: fc.constantFrom<SessionStatus>('running', 'running', 'stopped', 'purged'),
	paneId: fc.option(fc.constantFrom<string>(...PANES, 'w1:p9'), {nil: null}),
	pin: pinArb,
	mux: fc.constantFrom<'herdr' | 'tmux' | null>('herdr', 'herdr', null, 'tmux'),
	epochOffset: fc.integer({min: -2, max: 2}).map(n => n * 60_000),
	recorded: fc.subarray([501, 502, 503]),
});

const paneArb = (id: string): fc.Arbitrary<PaneSpec> =>
	fc.record({
		id: fc.constant(id),
		runs: fc.constantFrom<PaneSpec['runs']>('shell', 'claude', 'codex', 'vim'),
		herdrSaysAgent: fc.boolean(),
		native: fc.option(fc.constantFrom<string>(...PINS, 'not-an-id'), {nil: undefined}),
		argvPin: fc.option(fc.constantFrom<string>(...PINS), {nil: undefined}),
		isSelf: fc.constant(false), // set below: at most one self pane
	});

const convArb: fc.Arbitrary<Conversation> = fc
	.record({
		agent: fc.constantFrom<AgentId>(...AGENTS),
		id: fc.constantFrom<string>(...PINS, '../escape'),
		offset: fc.integer({min: -3, max: 3}).map(n => n * 60_000),
		child: fc.boolean(),
		elsewhere: fc.boolean(),
	})
	.map(c => conv(c.id, {agent: c.agent, createdAt: EPOCH + c.offset, ...(c.child ? {parentId: ID.d} : {}), ...(c.elsewhere ? {cwd: '/work/other'} : {})}));

const worldArb: fc.Arbitrary<WorldSpec> = fc.record({
	rows: fc.array(rowArb, {maxLength: 6}),
	panes: fc
		.tuple(fc.subarray([...PANES]), fc.integer({min: -1, max: 4}))
		.chain(([ids, self]) => fc.tuple(...ids.map(paneArb)).map(ps => ps.map((p, i) => ({...p, isSelf: i === self})))),
	reachable: fc.constantFrom(true, true, true, false),
	conversations: fc.array(convArb, {maxLength: 5}),
	strays: fc.subarray([
		proc(501, ['claude', '--resume', ID.a], {startTime: 5010}),
		proc(502, ['codex'], {startTime: 9999}),
		proc(504, ['claude', '--resume', ID.b], {startTime: 5040}),
	]),
});

function buildPane(spec: PaneSpec, n: number): Pane {
	const shell = proc(2000 + n * 10, ['bash'], {cwd: CWD});
	const agentArgv = spec.runs === 'shell' ? undefined : [spec.runs, ...(spec.argvPin ? ['--resume', spec.argvPin] : [])];
	const child = agentArgv ? [proc(2001 + n * 10, agentArgv, {ppid: shell.pid, cwd: CWD})] : [];
	return {
		id: spec.id,
		mux: 'herdr',
		cwd: CWD,
		agentStatus: 'idle',
		...(spec.herdrSaysAgent && spec.runs !== 'shell' ? {agent: spec.runs} : {}),
		...(spec.native && spec.runs !== 'shell' ? {agentSessionId: spec.native} : {}),
		shellPid: shell.pid,
		processes: [shell, ...child],
		isSelf: spec.isSelf,
	};
}

function buildRows(spec: WorldSpec): SessionRecord[] {
	return spec.rows.map((r, i) => ({
		id: i + 1,
		name: `r${i + 1}`,
		agent: r.agent,
		cwd: CWD,
		mux: r.mux,
		paneId: r.paneId,
		agentSessionId: r.pin,
		status: r.status,
		epoch: EPOCH + r.epochOffset,
		createdAt: EPOCH,
		updatedAt: EPOCH,
		version: 1,
		extra: r.recorded.length > 0 ? {stop: {processes: r.recorded.map(pid => ({pid, startTime: pid * 10}))}} : {},
	}));
}

function buildInput(spec: WorldSpec): DriftInput {
	const panes = spec.panes.map(buildPane);
	const sessions = buildRows(spec);
	const facts = new Map(
		sessions.map(s => [
			s.id,
			{candidates: ok({conversations: spec.conversations.filter(c => c.agent === s.agent), problems: []}), verify: {kind: 'yes' as const}},
		]),
	);
	return {
		sessions,
		mux: 'herdr',
		panes: spec.reachable ? panes : null,
		facts,
		processes: [...panes.flatMap(p => p.processes), ...spec.strays],
	};
}

function shuffle<T>(items: readonly T[], seed: number): T[] {
	const out = [...items];
	let s = seed || 1;
	for (let i = out.length - 1; i > 0; i--) {
		s = (s * 1103515245 + 12345) % 2147483648;
		const j = s % (i + 1);
		[out[i], out[j]] = [out[j] as T, out[i] as T];
	}
	return out;
}

describe('detectDrift over random worlds', () => {
	it('is deterministic, whatever the input order', () => {
		fc.assert(
			fc.property(worldArb, fc.integer({min: 1, max: 1_000_000}), (spec, seed) => {
				const input = buildInput(spec);
				const once = detectDrift(input);
				expect(detectDrift(input)).toEqual(once);
				const shuffled = {...input, sessions: shuffle(input.sessions, seed), panes: input.panes && shuffle(input.panes, seed + 1)};
				expect(detectDrift(shuffled)).toEqual(once);
			}),
			{numRuns: 300},
		);
	});

	it('every running row whose pane is gone yields pane-gone', () => {
		fc.assert(
			fc.property(worldArb, spec => {
				const input = buildInput(spec);
				const found = detectDrift(input);
				const paneIds = new Set((input.panes ?? []).map(p => p.id));
				for (const row of input.sessions) {
					const gone =
						row.status === 'running' && input.panes !== null && (row.mux === null || row.mux === 'herdr') && (row.paneId === null || !paneIds.has(row.paneId));
					const raised = found.some(f => f.kind === 'pane-gone' && f.sessionId === row.id);
					expect(raised).toBe(gone);
				}
			}),
			{numRuns: 300},
		);
	});

	it('gives at most one fix per row, never one about the self pane, and only valid, unclaimed pins', () => {
		fc.assert(
			fc.property(worldArb, spec => {
				const input = buildInput(spec);
				const found = detectDrift(input);
				const fixed = found.filter(f => f.fix && f.sessionId !== undefined).map(f => f.sessionId);
				expect(new Set(fixed).size).toBe(fixed.length);
				const self = new Set((input.panes ?? []).filter(p => p.isSelf).map(p => p.id));
				expect(found.filter(f => f.paneId !== undefined && self.has(f.paneId))).toEqual([]);
				for (const f of found) {
					const pin = f.fix?.type === 'pin' ? f.fix.agentSessionId : f.fix?.type === 'repin' ? f.fix.to : undefined;
					if (pin === undefined) continue;
					expect(PINS).toContain(pin);
					const row = input.sessions.find(s => s.id === f.sessionId) as SessionRecord;
					expect(input.sessions.filter(s => s.id !== row.id && s.status !== 'purged' && s.agent === row.agent && s.agentSessionId === pin)).toEqual([]);
				}
			}),
			{numRuns: 300},
		);
	});
});

describe('fixDrift over random worlds: only registry writes, never a stop, kill or delete', () => {
	let tmp: ReturnType<typeof tempDir>;
	let n = 0;
	beforeAll(() => {
		tmp = tempDir('mam-drift-prop-');
	});
	afterAll(() => tmp.dispose());

	/** A FixRegistry over the real one that records any row that disappears or gets purged. */
	function watched(registry: Registry, problems: string[]): FixRegistry {
		let seen = new Map(registry.list().map(r => [r.id, r.status]));
		const check = (when: string) => {
			const now = new Map(registry.list().map(r => [r.id, r.status]));
			for (const [id, status] of seen) {
				if (!now.has(id)) problems.push(`${when}: row ${id} disappeared`);
				else if (now.get(id) === 'purged' && status !== 'purged') problems.push(`${when}: row ${id} was purged`);
			}
			seen = now;
		};
		return {
			getById: id => registry.getById(id),
			list: () => registry.list(),
			findByPin: (agent, id) => registry.findByPin(agent, id),
			update: (id: number, patch: SessionPatch, expectVersion?: number) => {
				if (patch.status === 'purged') problems.push(`update set row ${id} purged`);
				return registry.update(id, patch, expectVersion);
			},
			insert: session => registry.insert(session),
			uniqueName: base => registry.uniqueName(base),
			audit: entry => {
				registry.audit(entry);
				check(`audit ${entry.step ?? entry.action}`);
			},
			transaction: fn => {
				const result = registry.transaction(fn);
				check('transaction');
				return result;
			},
		};
	}

	it('leaves the mux and exec untouched, never drops a row, and a second run changes nothing', async () => {
		await fc.assert(
			fc.asyncProperty(worldArb, async spec => {
				const registry = Registry.open(path.join(tmp.dir, `r${n++}.db`), () => EPOCH);
				try {
					for (const r of buildRows(spec)) {
						registry.insert({
							name: r.name,
							agent: r.agent,
							cwd: r.cwd,
							mux: r.mux,
							paneId: r.paneId,
							agentSessionId: r.agentSessionId,
							status: r.status,
							epoch: r.epoch,
							extra: {...r.extra},
						});
					}
					const spy: Spy = {calls: []};
					const panes = spec.panes.map(buildPane);
					const processes = [...panes.flatMap(p => p.processes), ...spec.strays];
					const adapters = fakeAdapters(
						Object.fromEntries(
							AGENTS.map(a => [a, fakeAdapter(a, {discover: () => ({conversations: spec.conversations.filter(c => c.agent === a), problems: []})})]),
						),
					);
					const sources = {
						mux: spyMux(() => (spec.reachable ? panes : new Error('herdr down')), spy),
						ctx: fakeContext(
							fakeProcessTable(() => processes),
							spyExec(spy),
						),
						adapters,
					};
					const problems: string[] = [];
					const before = registry.list().length;
					await fixDrift(watched(registry, problems), () => collectDriftInput({...sources, registry}), {now: () => EPOCH});
					expect(problems).toEqual([]);
					expect(spy.calls).toEqual([]);
					expect(registry.list().length).toBeGreaterThanOrEqual(before);
					const rows = registry.list();
					const audit = registry.auditLog(undefined, 10_000).length;
					const second = await fixDrift(watched(registry, problems), () => collectDriftInput({...sources, registry}), {now: () => EPOCH});
					expect(second.outcomes).toEqual([]);
					expect(registry.list()).toEqual(rows);
					expect(registry.auditLog(undefined, 10_000).length).toBe(audit);
				} finally {
					registry.close();
				}
			}),
			{numRuns: 100},
		);
	});
});
