import {describe, expect, it} from 'vitest';
import {judgePark, RESIDENT_START_TICKS, workingProcesses, type ParkCheck, type ParkFacts} from '../../src/actions/parkChecks.js';
import type {ProcessRef} from '../../src/domain/types.js';

/** Facts every check passes: an idle agent, long enough, empty composer, no tool, not in front of the user, pinned. */
const OK: ParkFacts = {
	name: 'api',
	status: 'running',
	pane: {id: '%3', isSelf: false},
	focused: new Set(['%1']),
	detection: {status: 'idle', source: 'record', evidence: 'sessions/42.json says "idle"'},
	idleSeconds: 3000,
	soakSeconds: 60,
	composer: {kind: 'empty'},
	muxBlocked: false,
	work: [],
	pin: '69e68769-2dbb-4664-996b-bc39e1d62900',
	onDisk: {ok: true},
	canResume: true,
};

const proc = (pid: number, ppid: number, name: string, startTime: number, argv: string[] = [name]): ProcessRef => ({pid, ppid, name, startTime, argv});

// One case per check: the facts that check alone must refuse. Every other check passes, so a case
// fails when its check is taken out of judgePark (verified by removing each one in turn).
const CASES: ReadonlyArray<readonly [string, Partial<ParkFacts>, ParkCheck, RegExp]> = [
	['a stopped row', {status: 'stopped'}, 'registry', /stopped, not running/],
	['another mam-tui parking it', {claimedBy: 4242}, 'registry', /pid 4242/],
	['no pane', {pane: {missing: 'pane %3 is gone'}}, 'pane', /gone/],
	["mam-tui's own pane", {pane: {id: '%3', isSelf: true}}, 'pane', /mam-tui runs in/],
	['the focused pane', {focused: new Set(['%3'])}, 'focus', /looking at/],
	['no way to tell the focus', {focused: undefined}, 'focus', /cannot tell/],
	['a working agent', {detection: {status: 'working', source: 'title', evidence: 'title ✳'}}, 'idle', /working/],
	['a blocked agent', {detection: {status: 'blocked', source: 'record', evidence: 'waiting'}}, 'idle', /blocked/],
	['an unknown status', {detection: undefined}, 'idle', /unknown/],
	['idle for too short (a flicker, a sub-agent just ended)', {idleSeconds: 12}, 'soak', /12 s only/],
	['idle time unknown', {idleSeconds: undefined}, 'soak', /cannot tell how long/],
	['a draft', {composer: {kind: 'draft', lines: 1}}, 'composer', /1-line draft/],
	['a dialog on screen', {composer: {kind: 'blocked', prompt: 'Do you want to proceed?'}}, 'composer', /approval dialog/],
	['herdr says blocked', {muxBlocked: true}, 'composer', /blocked on an approval/],
	['a screen not recognised', {composer: {kind: 'unknown', reason: 'no Codex composer on screen'}}, 'composer', /cannot be ruled out/],
	['no screen reader', {composer: undefined}, 'composer', /nothing can read/],
	['a running tool', {work: [proc(90, 42, 'bash', 900, ['bash', '-c', 'sleep 40'])]}, 'work', /pid 90 \(bash -c sleep 40\)/],
	['no pin', {pin: null}, 'pinned', /no conversation is pinned/],
	['not on disk', {onDisk: {ok: false, why: 'no transcript'}}, 'pinned', /does not verify on disk: no transcript/],
	['no resume command', {canResume: false}, 'resume', /no known resume/],
];

describe('park checks', () => {
	it('pass when every fact is good', () => {
		expect(judgePark(OK)).toBeUndefined();
	});

	it.each(CASES)('refuse %s, naming the check', (_what, change, check, why) => {
		const refused = judgePark({...OK, ...change});
		expect(refused?.check).toBe(check);
		expect(refused?.why).toMatch(why);
	});
});

describe('work in the process tree', () => {
	const agent = proc(42, 10, 'claude', 1000);
	const rules = {residentChildren: ['app-server'], isAgent: (p: ProcessRef) => p.name === 'claude' || p.name === 'gemini'};

	it('counts a tool, a background shell and a sub-agent started after the agent', () => {
		const tree = [
			agent,
			proc(50, 42, 'bash', 1000 + RESIDENT_START_TICKS + 100, ['bash', '-c', 'npm test']),
			proc(51, 50, 'node', 1000 + RESIDENT_START_TICKS + 101),
		];
		expect(workingProcesses(tree, agent, rules).map(p => p.pid)).toEqual([50]);
	});

	it('does not count resident helpers: an MCP server started with the agent, and what it runs; a named resident', () => {
		const tree = [
			agent,
			proc(60, 42, 'node', 1100, ['node', 'mcp-server.js']),
			proc(61, 60, 'python3', 900_000),
			proc(70, 42, 'codex', 900_000, ['codex', 'app-server']),
		];
		expect(workingProcesses(tree, agent, rules)).toEqual([]);
	});

	it('a shell started with the agent is still work (a tool shell, not a helper)', () => {
		const tree = [agent, proc(80, 42, 'bash', 1001)];
		expect(workingProcesses(tree, agent, rules).map(p => p.pid)).toEqual([80]);
	});

	it("looks through the agent's own wrapper: gemini's child node runs the tool", () => {
		const wrapper = proc(42, 10, 'gemini', 1000);
		const tree = [wrapper, proc(43, 42, 'gemini', 1002), proc(90, 43, 'bash', 50_000)];
		expect(workingProcesses(tree, wrapper, rules).map(p => p.pid)).toEqual([90]);
	});
});
