import {describe, expect, it, vi} from 'vitest';
import type {ParkResult, ParkSelection} from '../../src/actions/park.js';
import {DEFAULT_CONFIG, parseConfig} from '../../src/config/config.js';
import type {SessionRecord} from '../../src/domain/types.js';
import type {SessionLive} from '../../src/store/state.js';
import {autoParkRound, newMemory, RETRY_AFTER_MS, sampleCandidates, startAutoPark} from '../../src/ui/autoPark.js';

const row = (name: string, agent: SessionRecord['agent'] = 'claude', status: SessionRecord['status'] = 'running'): SessionRecord => ({
	id: name.length,
	name,
	agent,
	cwd: '/p',
	mux: 'tmux',
	paneId: '%1',
	agentSessionId: null,
	status,
	epoch: 0,
	createdAt: 0,
	updatedAt: 0,
	version: 1,
	extra: {},
});
const live = (status: SessionLive['liveStatus']) => ({liveStatus: status}) as SessionLive;
const config = {...DEFAULT_CONFIG.park, agents: ['claude' as const], idleMinutes: 45, maxPerMinute: 2};
const MIN = 60_000;

describe('auto-park sampling', () => {
	it('a row becomes due after idleMinutes of idle samples; working once starts it over; other agents and stopped rows never', () => {
		const memory = newMemory();
		const state = (s: SessionLive['liveStatus']) => ({
			sessions: [row('a'), row('b', 'codex'), row('c', 'claude', 'stopped')],
			live: {a: live(s), b: live('idle'), c: live('idle')},
		});
		expect(sampleCandidates(state('idle'), config, memory, 0)).toEqual([]);
		expect(sampleCandidates(state('idle'), config, memory, 44 * MIN)).toEqual([]);
		expect(sampleCandidates(state('working'), config, memory, 45 * MIN)).toEqual([]);
		expect(sampleCandidates(state('idle'), config, memory, 46 * MIN)).toEqual([]);
		expect(sampleCandidates(state('idle'), config, memory, 91 * MIN)).toEqual(['a']);
	});

	it('parks at most maxPerMinute a round, oldest idle first; a refused row waits before it is tried again; each outcome is a message', async () => {
		const memory = newMemory();
		const sessions = ['a', 'b', 'c', 'd'].map(n => row(n));
		const liveAll = Object.fromEntries(sessions.map(s => [s.name, live('idle')]));
		let now = 0;
		const park = vi.fn(async (selection: ParkSelection): Promise<ParkResult[]> =>
			('names' in selection ? selection.names : []).map(name =>
				name === 'b'
					? {session: name, outcome: 'refused', check: 'composer', why: 'the composer holds a 1-line draft'}
					: {session: name, outcome: 'parked', parked: {at: now, freedBytes: 812 * 1048576, idleSeconds: 3120, argv: ['claude'], cwd: '/p'}, notes: []},
			),
		);
		const notify = vi.fn();
		const deps = {config, getState: () => ({sessions, live: liveAll}), park, notify, now: () => now};
		sampleCandidates(deps.getState(), config, memory, 0);
		now = 50 * MIN;
		const first = await autoParkRound(deps, memory);
		expect(first.map(r => `${r.session}:${r.outcome}`)).toEqual(['a:parked', 'b:refused', 'c:parked']);
		expect(park).toHaveBeenCalledWith({names: ['a']}, {soakSeconds: 45 * 60});
		expect(notify).toHaveBeenCalledWith('ok', 'parked a: idle 52 min, freed 812 MB');
		expect(notify).toHaveBeenCalledWith('info', expect.stringMatching(/auto-park left b running \(composer\)/));
		// b was refused: not before RETRY_AFTER_MS (and its idle time counts from the next sample).
		expect(sampleCandidates(deps.getState(), config, memory, now + 1)).not.toContain('b');
		expect(RETRY_AFTER_MS).toBeGreaterThan(MIN);
	});

	it('off by default: no timer, no park', async () => {
		vi.useFakeTimers();
		try {
			const park = vi.fn();
			const auto = startAutoPark({
				config: DEFAULT_CONFIG.park,
				getState: () => ({sessions: [row('a')], live: {a: live('idle')}}),
				park,
				notify: vi.fn(),
				now: () => 0,
			});
			expect(vi.getTimerCount()).toBe(0);
			await vi.advanceTimersByTimeAsync(120 * MIN);
			expect(park).not.toHaveBeenCalled();
			await auto.dispose();
		} finally {
			vi.useRealTimers();
		}
	});
});

describe('park config', () => {
	it('parses park: and names the key of a bad value', () => {
		expect(parseConfig({park: {agents: ['claude', 'codex'], idleMinutes: 30, maxPerMinute: 1}}, 'c.yaml').park).toEqual({
			agents: ['claude', 'codex'],
			idleMinutes: 30,
			maxPerMinute: 1,
			soakSeconds: 60,
		});
		expect(DEFAULT_CONFIG.park.agents).toEqual([]);
		expect(() => parseConfig({park: {agents: ['clod']}}, 'c.yaml')).toThrow(/c\.yaml: park\.agents/);
		expect(() => parseConfig({park: {maxPerMinute: 1.5}}, 'c.yaml')).toThrow(/park\.maxPerMinute must be a whole number/);
		expect(() => parseConfig({park: {idleMinutes: 0}}, 'c.yaml')).toThrow(/park\.idleMinutes/);
		expect(() => parseConfig({park: {often: 1}}, 'c.yaml')).toThrow(/unknown key park\.often/);
	});
});
