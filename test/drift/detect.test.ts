import {describe, expect, it} from 'vitest';
import {err} from '../../src/domain/result.js';
import type {Finding, FindingKind, ProcessRef} from '../../src/domain/types.js';
import {detectDrift, driftNotes, type DriftInput} from '../../src/drift/detect.js';
import {CWD, EPOCH, ID, candidates, conv, pane, proc, row, world} from './builders.js';
import {SHOWN_EXCLUSIONS} from '../../src/drift/unpinned.js';

const ofKind = (findings: readonly Finding[], kind: FindingKind) => findings.filter(f => f.kind === kind);
const kinds = (input: DriftInput) => detectDrift(input).map(f => f.kind);

interface Case {
	readonly name: string;
	readonly input: DriftInput;
}

/** For each kind: the smallest world that raises it, and the nearest worlds that must not. */
const TABLE: ReadonlyArray<{kind: FindingKind; raises: Case; not: readonly Case[]}> = [
	{
		kind: 'pane-gone',
		raises: {name: 'running row, its pane is not listed', input: world({sessions: [row(1)], panes: [pane('w1:p7', {agentArgv: ['claude']})]})},
		not: [
			{name: 'its pane is listed and runs the agent', input: world({sessions: [row(1)], panes: [pane('w1:p1', {agentArgv: ['claude']})]})},
			{name: 'the mux is unreachable', input: world({sessions: [row(1)], panes: null})},
			{name: 'the row lives in another mux', input: world({sessions: [row(1, {mux: 'tmux', paneId: '%3'})], panes: []})},
			{name: 'the row is stopped', input: world({sessions: [row(1, {status: 'stopped'})], panes: []})},
		],
	},
	{
		kind: 'agent-exited',
		raises: {name: 'pane holds only its shell', input: world({sessions: [row(1)], panes: [pane('w1:p1')]})},
		not: [
			{
				name: 'the agent process is in the pane tree',
				input: world({sessions: [row(1)], panes: [pane('w1:p1', {agentArgv: ['/usr/bin/claude', '--resume', ID.a]})]}),
			},
			{
				name: 'herdr reports the agent (no tree)',
				input: world({sessions: [row(1)], panes: [pane('w1:p1', {agent: 'claude', agentStatus: 'working', processes: []})]}),
			},
			{name: 'the pane is mam-tui itself', input: world({sessions: [row(1)], panes: [pane('w1:p1', {isSelf: true})]})},
		],
	},
	{
		kind: 'unpinned',
		raises: {
			name: 'running unpinned row with one candidate',
			input: world({sessions: [row(1)], panes: [pane('w1:p1', {agentArgv: ['claude']})], facts: {1: {candidates: candidates([conv(ID.a)])}}}),
		},
		not: [
			{
				name: 'the row is pinned',
				input: world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agentArgv: ['claude']})], facts: {1: {verify: {kind: 'yes'}}}}),
			},
			{name: 'the row is stopped', input: world({sessions: [row(1, {status: 'stopped', paneId: null})], facts: {1: {candidates: candidates([conv(ID.a)])}}})},
		],
	},
	{
		kind: 'artifact-missing',
		raises: {
			name: 'pinned stopped row, verify says no',
			input: world({sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a})], facts: {1: {verify: {kind: 'no', reason: 'no transcript'}}}}),
		},
		not: [
			{
				name: 'verify cannot tell',
				input: world({sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a})], facts: {1: {verify: {kind: 'unknown', reason: 'locked'}}}}),
			},
			{
				name: 'verify says yes',
				input: world({sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a})], facts: {1: {verify: {kind: 'yes'}}}}),
			},
			{
				name: 'the row is purged',
				input: world({sessions: [row(1, {status: 'purged', paneId: null, agentSessionId: ID.a})], facts: {1: {verify: {kind: 'no', reason: 'gone'}}}}),
			},
			{
				name: 'the agent is live in its pane (it may not have written a message yet)',
				input: world({
					sessions: [row(1, {agentSessionId: ID.a})],
					panes: [pane('w1:p1', {agentArgv: ['claude']})],
					facts: {1: {verify: {kind: 'no', reason: 'no transcript yet'}}},
				}),
			},
		],
	},
	{
		kind: 'untracked-pane',
		raises: {
			name: 'a pane runs codex and no row knows it',
			input: world({panes: [pane('w1:p4', {agent: 'codex', agentArgv: ['codex'], agentSessionId: ID.b})]}),
		},
		not: [
			{name: 'a row references the pane', input: world({sessions: [row(4, {agent: 'codex'})], panes: [pane('w1:p4', {agent: 'codex', agentArgv: ['codex']})]})},
			{name: 'the pane is mam-tui itself', input: world({panes: [pane('w1:p4', {agentArgv: ['claude'], isSelf: true})]})},
			{name: 'the pane runs only a shell', input: world({panes: [pane('w1:p4')]})},
			{name: 'the pane runs an unknown program', input: world({panes: [pane('w1:p4', {agent: 'aider', agentArgv: ['aider']})]})},
			{name: 'the mux is unreachable', input: world({panes: null, processes: [proc(5, ['codex'])]})},
		],
	},
	{
		kind: 'duplicate-pin',
		raises: {
			name: 'two rows pinned to one claude id',
			input: world({
				sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a}), row(2, {status: 'stopped', paneId: null, agentSessionId: ID.a})],
			}),
		},
		not: [
			{
				name: 'same id string, different agents',
				input: world({
					sessions: [
						row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a}),
						row(2, {agent: 'codex', status: 'stopped', paneId: null, agentSessionId: ID.a}),
					],
				}),
			},
			{
				name: 'one of them is purged',
				input: world({
					sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.a}), row(2, {status: 'purged', paneId: null, agentSessionId: ID.a})],
				}),
			},
		],
	},
	{
		kind: 'pin-changed',
		raises: {
			name: 'herdr reports another id in the pane',
			input: world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.b})]}),
		},
		not: [
			{
				name: 'herdr reports the pinned id',
				input: world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.a})]}),
			},
			{
				name: 'herdr reports no id',
				input: world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude']})]}),
			},
			{
				name: "the id is another agent's",
				input: world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agent: 'codex', agentArgv: ['claude'], agentSessionId: ID.b})]}),
			},
		],
	},
	{
		kind: 'stopped-but-live',
		raises: {
			name: 'stopped row, its pane runs the agent',
			input: world({sessions: [row(1, {status: 'stopped'})], panes: [pane('w1:p1', {agentArgv: ['claude']})]}),
		},
		not: [
			{name: 'its pane holds only a shell', input: world({sessions: [row(1, {status: 'stopped'})], panes: [pane('w1:p1')]})},
			{
				name: 'the pane runs another conversation',
				input: world({
					sessions: [row(1, {status: 'stopped', agentSessionId: ID.a})],
					panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.b})],
				}),
			},
			{
				name: 'the pane is mam-tui itself',
				input: world({sessions: [row(1, {status: 'stopped'})], panes: [pane('w1:p1', {agentArgv: ['claude'], isSelf: true})]}),
			},
			{name: 'the mux is unreachable', input: world({sessions: [row(1, {status: 'stopped'})], panes: null})},
		],
	},
	{
		kind: 'stale-process',
		raises: {
			name: 'a process the stop recorded is alive (same pid and start time)',
			input: world({
				sessions: [row(1, {status: 'stopped', paneId: null, extra: {stop: {processes: [{pid: 4242, startTime: 777, name: 'claude', argv: ['claude']}]}}})],
				processes: [proc(4242, ['claude'], {startTime: 777})],
			}),
		},
		not: [
			{
				name: 'the pid was reused (other start time)',
				input: world({
					sessions: [row(1, {status: 'stopped', paneId: null, extra: {stop: {processes: [{pid: 4242, startTime: 777}]}}})],
					processes: [proc(4242, ['claude'], {startTime: 778})],
				}),
			},
			{
				name: 'the process table is unknown',
				input: world({sessions: [row(1, {status: 'stopped', paneId: null, extra: {processes: [{pid: 4242, startTime: 777}]}})], processes: null}),
			},
			{
				name: 'the row is running',
				input: world({
					sessions: [row(1, {paneId: null, mux: 'tmux', extra: {processes: [{pid: 4242, startTime: 777}]}})],
					processes: [proc(4242, ['claude'], {startTime: 777})],
				}),
			},
		],
	},
];

describe('detectDrift: one table row per SPEC 5 kind', () => {
	for (const {kind, raises, not} of TABLE) {
		describe(kind, () => {
			it(`raises it once: ${raises.name}`, () => {
				const found = ofKind(detectDrift(raises.input), kind);
				expect(found).toHaveLength(1);
				const finding = found[0] as Finding;
				expect(finding.message.length).toBeGreaterThan(10);
				expect(finding.message).not.toContain('\n');
				expect(finding.evidence.length).toBeGreaterThan(0);
			});
			for (const near of not) {
				it(`does not raise it: ${near.name}`, () => {
					expect(kinds(near.input)).not.toContain(kind);
				});
			}
		});
	}
});

describe('fixes and offers per kind', () => {
	const only = (input: DriftInput, kind: FindingKind) => {
		const found = ofKind(detectDrift(input), kind);
		expect(found).toHaveLength(1);
		return found[0] as Finding;
	};
	const input = (kind: FindingKind) => (TABLE.find(t => t.kind === kind) as (typeof TABLE)[number]).raises.input;

	it('pane-gone marks stopped and forgets the pane; agent-exited marks stopped and keeps it', () => {
		expect(only(input('pane-gone'), 'pane-gone').fix).toEqual({type: 'mark-stopped', sessionId: 1, clearPane: true});
		expect(only(input('agent-exited'), 'agent-exited').fix).toEqual({type: 'mark-stopped', sessionId: 1});
	});

	it('artifact-missing and stale-process only offer, never fix', () => {
		const missing = only(input('artifact-missing'), 'artifact-missing');
		expect(missing.fix).toBeUndefined();
		expect(missing.offer).toMatch(/forget the row/);
		const stale = only(input('stale-process'), 'stale-process');
		expect(stale.fix).toBeUndefined();
		expect(stale.offer).toMatch(/stop escalation.*4242/);
		expect(stale.evidence.join('\n')).toContain('start 777');
	});

	it('untracked-pane adopts, pinned from the native id', () => {
		expect(only(input('untracked-pane'), 'untracked-pane').fix).toEqual({
			type: 'adopt-pane',
			paneId: 'w1:p4',
			agent: 'codex',
			cwd: CWD,
			agentSessionId: ID.b,
			mux: 'herdr',
		});
	});

	it('duplicate-pin names every row and has no fix', () => {
		const dup = only(input('duplicate-pin'), 'duplicate-pin');
		expect(dup.fix).toBeUndefined();
		expect(dup.message).toContain('s1');
		expect(dup.message).toContain('s2');
	});

	it('pin-changed re-pins, keeping the old id in the fix', () => {
		expect(only(input('pin-changed'), 'pin-changed').fix).toEqual({type: 'repin', sessionId: 1, from: ID.a, to: ID.b});
	});

	it('pin-changed does not re-pin onto an id another row holds', () => {
		const taken = world({
			sessions: [row(1, {agentSessionId: ID.a}), row(2, {status: 'stopped', paneId: null, agentSessionId: ID.b})],
			panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.b})],
		});
		const finding = only(taken, 'pin-changed');
		expect(finding.fix).toBeUndefined();
		expect(finding.evidence.join('\n')).toContain('already pinned by s2');
	});

	it('pin-changed does not re-pin onto an invalid id', () => {
		const odd = world({sessions: [row(1, {agentSessionId: ID.a})], panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: '../x'})]});
		expect(only(odd, 'pin-changed').fix).toBeUndefined();
	});

	it('stopped-but-live marks running in the pane', () => {
		expect(only(input('stopped-but-live'), 'stopped-but-live').fix).toEqual({type: 'mark-running', sessionId: 1, paneId: 'w1:p1', mux: 'herdr'});
	});

	it('stopped-but-live follows the pin into another pane, which is then not untracked', () => {
		const moved = world({
			sessions: [row(1, {status: 'stopped', paneId: 'w1:p1', agentSessionId: ID.a})],
			panes: [pane('w1:p5', {agentArgv: ['claude', '--resume', ID.a]})],
		});
		expect(kinds(moved)).toEqual(['stopped-but-live']);
		expect(only(moved, 'stopped-but-live').paneId).toBe('w1:p5');
	});

	it('every finding carries the row version its fix was made against', () => {
		const changed = world({sessions: [row(1, {version: 7})], panes: []});
		expect(only(changed, 'pane-gone').sessionVersion).toBe(7);
	});
});

describe('unpinned: the SPEC 5 candidate rules', () => {
	const live = [pane('w1:p1', {agentArgv: ['claude']})];
	const unpinned = (conversations: Parameters<typeof candidates>[0], extra: {sessions?: ReturnType<typeof row>[]; problems?: string[]} = {}) =>
		detectDrift(
			world({
				sessions: [row(1), ...(extra.sessions ?? [])],
				panes: live,
				facts: {1: {candidates: candidates(conversations, extra.problems)}},
			}),
		).find(f => f.kind === 'unpinned' && f.sessionId === 1) as Finding;

	it('exactly one candidate: pin it', () => {
		const f = unpinned([conv(ID.a)]);
		expect(f.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
		expect(f.candidates).toEqual([ID.a]);
	});

	it('a newer child session in the same cwd is not a candidate', () => {
		const f = unpinned([conv(ID.a), conv(ID.b, {parentId: ID.a, createdAt: EPOCH + 300_000})]);
		expect(f.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
		expect(f.evidence.join('\n')).toContain(`${ID.b}: a child of ${ID.a}`);
	});

	it('an older session, from before the epoch, is not a candidate', () => {
		const f = unpinned([conv(ID.a, {createdAt: EPOCH - 1})]);
		expect(f.fix).toBeUndefined();
		expect(f.level).toBe('info');
		expect(f.message).toMatch(/no conversation yet/);
	});

	it('a conversation of another cwd is not a candidate', () => {
		const f = unpinned([conv(ID.a, {cwd: '/work/other'})]);
		expect(f.fix).toBeUndefined();
		expect(f.message).toMatch(/no conversation yet/);
	});

	it("the realpath of the row's cwd counts as the same cwd", () => {
		const f = detectDrift(
			world({
				sessions: [row(1, {cwd: '/link/api'})],
				panes: live,
				facts: {1: {realCwd: CWD, candidates: candidates([conv(ID.a)])}},
			}),
		).find(x => x.kind === 'unpinned');
		expect(f?.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
	});

	it("a sibling row's claimed id is not a candidate", () => {
		const f = unpinned([conv(ID.a)], {sessions: [row(2, {status: 'stopped', paneId: null, agentSessionId: ID.a})]});
		expect(f.fix).toBeUndefined();
		expect(f.evidence.join('\n')).toContain(`${ID.a}: already pinned by s2`);
	});

	it("the evidence names other rows' pins and the first few left out, then counts the rest", () => {
		const older = Array.from({length: SHOWN_EXCLUSIONS + 5}, (_, i) =>
			conv(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, {createdAt: EPOCH - 1000 - i}),
		);
		const f = unpinned([...older, conv(ID.a)], {sessions: [row(2, {status: 'stopped', paneId: null, agentSessionId: ID.a})]});
		const lines = f.evidence.filter(line => line.startsWith('not a candidate: '));
		expect(lines[0]).toBe(`not a candidate: ${ID.a}: already pinned by s2`);
		expect(lines.filter(line => line.includes('before the session started'))).toHaveLength(SHOWN_EXCLUSIONS);
		expect(lines.at(-1)).toBe('not a candidate: 5 more conversation(s), not listed');
		expect(lines).toHaveLength(SHOWN_EXCLUSIONS + 2);
	});

	it("another agent's pin of the same id string does not claim it", () => {
		const f = unpinned([conv(ID.a)], {sessions: [row(2, {agent: 'codex', status: 'stopped', paneId: null, agentSessionId: ID.a})]});
		expect(f.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
	});

	it('a second candidate makes it an ambiguity: listed, never guessed', () => {
		const f = unpinned([conv(ID.b, {createdAt: EPOCH + 200_000}), conv(ID.a)]);
		expect(f.fix).toBeUndefined();
		expect(f.candidates).toEqual([ID.a, ID.b]);
		expect(f.message).toMatch(/2 conversations could be s1's/);
	});

	it('none: information, "no conversation yet"', () => {
		const f = unpinned([]);
		expect(f.level).toBe('info');
		expect(f.fix).toBeUndefined();
	});

	it('one candidate wanted by two unpinned rows is not pinned to either', () => {
		const found = detectDrift(
			world({
				sessions: [row(1), row(2)],
				panes: [pane('w1:p1', {agentArgv: ['claude']}), pane('w1:p2', {agentArgv: ['claude']})],
				facts: {1: {candidates: candidates([conv(ID.a)])}, 2: {candidates: candidates([conv(ID.a)])}},
			}),
		);
		const unp = ofKind(found, 'unpinned');
		expect(unp).toHaveLength(2);
		for (const f of unp) {
			expect(f.fix).toBeUndefined();
			expect(f.candidates).toEqual([ID.a]);
		}
	});

	it('a store that could not be read blocks the automatic pin', () => {
		const f = unpinned([conv(ID.a)], {problems: ['/h/.claude/x.jsonl: permission denied']});
		expect(f.fix).toBeUndefined();
		expect(f.candidates).toEqual([ID.a]);
		expect(f.evidence.join('\n')).toContain('permission denied');
	});

	it('an invalid id from the adapter is never pinned', () => {
		const f = unpinned([conv('../../etc/passwd')]);
		expect(f.fix).toBeUndefined();
	});

	it('an adapter error is an unknown, not a crash and not a pin', () => {
		const found = detectDrift(world({sessions: [row(1)], panes: live, facts: {1: {candidates: err('database is locked')}}}));
		const f = ofKind(found, 'unpinned')[0] as Finding;
		expect(f.fix).toBeUndefined();
		expect(f.level).toBeUndefined();
		expect(f.message).toContain('database is locked');
	});

	it("the mux's native id pins without a disk candidate", () => {
		const f = detectDrift(
			world({
				sessions: [row(1)],
				panes: [pane('w1:p1', {agent: 'claude', agentArgv: ['claude'], agentSessionId: ID.c})],
				facts: {1: {candidates: candidates([])}},
			}),
		).find(x => x.kind === 'unpinned');
		expect(f?.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.c, named: 'mux'});
	});

	it('unpinned is judged even when the mux is unreachable (it is not pane-based)', () => {
		const found = detectDrift(world({sessions: [row(1)], panes: null, facts: {1: {candidates: candidates([conv(ID.a)])}}}));
		expect(found.map(f => f.kind)).toEqual(['unpinned']);
	});
});

describe('the engine as a whole', () => {
	const busy = world({
		sessions: [
			row(3, {agentSessionId: ID.a}),
			row(1),
			row(2, {status: 'stopped', agentSessionId: ID.b, paneId: 'w1:p9'}),
			row(4, {status: 'stopped', paneId: null, agentSessionId: ID.b}),
		],
		panes: [pane('w1:p9', {agentArgv: ['claude']}), pane('w1:p8', {agentArgv: ['codex']}), pane('w1:p1')],
		facts: {1: {candidates: candidates([conv(ID.c)])}},
	});

	it('is deterministic and independent of input order', () => {
		const once = detectDrift(busy);
		expect(detectDrift(busy)).toEqual(once);
		const reversed = {...busy, sessions: [...busy.sessions].reverse(), panes: [...(busy.panes ?? [])].reverse()};
		expect(detectDrift(reversed)).toEqual(once);
		expect(once.map(f => [f.sessionId ?? f.paneId, f.kind])).toEqual([
			[1, 'agent-exited'],
			[2, 'duplicate-pin'],
			[2, 'stopped-but-live'],
			[3, 'pane-gone'],
			['w1:p8', 'untracked-pane'],
		]);
	});

	it("never raises a finding about mam-tui's own pane", () => {
		const self = pane('w1:p1', {agentArgv: ['claude'], isSelf: true, agentSessionId: ID.d, agent: 'claude'});
		const found = detectDrift(
			world({
				sessions: [
					row(1, {agentSessionId: ID.a}),
					row(2, {status: 'stopped', paneId: 'w1:p1'}),
					row(3, {status: 'stopped', paneId: null, agentSessionId: ID.d}),
				],
				panes: [self],
			}),
		);
		expect(found.filter(f => f.paneId === 'w1:p1')).toEqual([]);
		expect(found.filter(f => f.sessionId === 1)).toEqual([]);
	});

	it('a mux that cannot be reached raises no pane-based kind and says so in a note', () => {
		const input = {...busy, panes: null, muxProblem: 'connect ENOENT /run/herdr.sock'};
		const pane_based: FindingKind[] = ['pane-gone', 'agent-exited', 'untracked-pane', 'pin-changed', 'stopped-but-live'];
		expect(detectDrift(input).filter(f => pane_based.includes(f.kind))).toEqual([]);
		expect(driftNotes(input).join('\n')).toMatch(/herdr unreachable \(connect ENOENT .*\): pane-gone, agent-exited/);
	});

	it('gives at most one fix per row, so fixes never race each other', () => {
		const found = detectDrift(
			world({
				sessions: [row(1, {paneId: 'w1:p9'})],
				panes: [],
				facts: {1: {candidates: candidates([conv(ID.a)]), verify: {kind: 'no', reason: 'x'}}},
			}),
		);
		expect(found.filter(f => f.fix).length).toBe(1);
	});

	it('rows of an agent this build does not know are skipped, not a crash', () => {
		const odd = {...row(1), agent: 'cursor' as never};
		expect(() => detectDrift(world({sessions: [odd], panes: []}))).not.toThrow();
		expect(detectDrift(world({sessions: [odd], panes: []}))).toEqual([]);
	});

	it('a malformed extra is ignored', () => {
		const weird = row(1, {status: 'stopped', paneId: null, extra: {stop: {processes: [null, 3, {pid: 'x'}, {pid: 5, startTime: 50}]}, processes: 'no'}});
		const found = detectDrift(world({sessions: [weird], processes: [proc(5, ['sleep'], {startTime: 50})]}));
		expect(found.map(f => f.kind)).toEqual(['stale-process']);
	});

	it('a process in a live pane is live, not stale', () => {
		const p = pane('w1:p2', {agentArgv: ['claude', '--resume', ID.a]});
		const found = detectDrift(
			world({
				sessions: [row(1, {status: 'stopped', paneId: null, agentSessionId: ID.b}), row(2, {agentSessionId: ID.a})],
				panes: [p],
				processes: [...p.processes, proc(99, ['claude', '--resume', ID.b])],
			}),
		);
		expect(found.map(f => [f.kind, f.sessionId])).toEqual([['stale-process', 1]]);
		expect(found[0]?.evidence.join('\n')).toContain('pid 99');
	});

	it("the recorded shell of the session's still-open pane is not stale (resume may reuse that pane)", () => {
		const open = pane('w1:p1');
		const shell = open.processes[0] as ProcessRef;
		const stray = proc(77, ['claude'], {startTime: 770});
		const recorded = [shell, stray].map(p => ({pid: p.pid, startTime: p.startTime}));
		const found = detectDrift(
			world({
				sessions: [row(1, {status: 'stopped', extra: {stop: {processes: recorded}}})],
				panes: [open],
				processes: [...open.processes, stray],
			}),
		);
		expect(found.map(f => f.kind)).toEqual(['stale-process']);
		expect(found[0]?.offer).toBe('stop escalation: SIGKILL pid 77 (only if pid and start time still match)');
	});
});
