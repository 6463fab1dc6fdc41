import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import zlib from 'node:zlib';
import {describe, expect, it} from 'vitest';
import {detectStatus, type AgentRecord, type StatusEvidence} from '../../../src/adapters/status/index.js';
import type {DetectedStatus} from '../../../src/domain/types.js';

// Every expectation here is about a real capture (test/fixtures/screens): what the real CLI drew
// in that state, the title it set and, for claude, its sessions/<pid>.json at that moment.

const SCREENS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'screens');
const AGENTS = ['claude', 'codex', 'opencode', 'gemini', 'hermes'] as const;
/** Captured in every state; grok (Grok Build 1.0.41) has no 0.25 s frame timeline. */
const CAPTURED = [...AGENTS, 'grok'] as const;
type RealAgent = (typeof CAPTURED)[number];

function read(agent: RealAgent, file: string): string | undefined {
	try {
		return fs.readFileSync(path.join(SCREENS, agent, file), 'utf8');
	} catch {
		return undefined;
	}
}

function recordOf(json: string | undefined): AgentRecord | undefined {
	if (json === undefined) return undefined;
	const value = JSON.parse(json) as {status?: string; waitingFor?: string | null};
	return value.status ? {file: 'sessions/2802.json', status: value.status, ...(value.waitingFor ? {waitingFor: value.waitingFor} : {})} : undefined;
}

function evidenceOf(agent: RealAgent, state: string): StatusEvidence {
	const screen = read(agent, `${state}.txt`);
	const title = read(agent, `${state}.title`)?.replace(/\n$/, '');
	const record = recordOf(read(agent, `${state}.session.json`));
	return {...(screen !== undefined ? {screen} : {}), ...(title ? {title} : {}), ...(record ? {record} : {})};
}

/** The true state of each capture. */
const TRUTH: Record<string, DetectedStatus> = {
	'idle-fresh': 'idle',
	'working-1': 'working',
	'working-2': 'working',
	'idle-after-turn': 'idle',
	blocked: 'blocked',
	'blocked-2': 'blocked',
	'idle-after-approval': 'idle',
	draft: 'idle',
};

describe('status detectors on the real captures', () => {
	for (const agent of CAPTURED) {
		for (const [state, truth] of Object.entries(TRUTH)) {
			it(`${agent} ${state} is ${truth} from all its evidence, with one line of evidence`, () => {
				const found = detectStatus(agent, evidenceOf(agent, state));
				expect(found.status).toBe(truth);
				expect(found.evidence).not.toContain('\n');
				expect(found.evidence.length).toBeGreaterThan(0);
			});
			it(`${agent} ${state} is ${truth} from the screen alone`, () => {
				const {screen} = evidenceOf(agent, state);
				expect(detectStatus(agent, {screen: screen ?? ''})).toMatchObject({status: truth, source: 'screen'});
			});
		}
	}

	it('claude: the record tells blocked although the title still reads "✳ Claude Code"', () => {
		const evidence = evidenceOf('claude', 'blocked');
		expect(evidence.title).toBe('✳ Claude Code');
		expect(detectStatus('claude', evidence)).toEqual({status: 'blocked', source: 'record', evidence: 'sessions/2802.json says "waiting" (permission prompt)'});
		// The idle title must never pass for idle: without record and screen nothing is known.
		expect(detectStatus('claude', {title: '✳ Claude Code'}).status).toBe('unknown');
	});

	it('claude: the record outranks a screen that says otherwise', () => {
		const {screen} = evidenceOf('claude', 'idle-fresh');
		expect(detectStatus('claude', {screen: screen ?? '', record: {file: 'sessions/1.json', status: 'busy'}}).status).toBe('working');
	});

	it('claude: an unknown record word falls through to the screen', () => {
		const {screen} = evidenceOf('claude', 'working-1');
		expect(detectStatus('claude', {screen: screen ?? '', record: {file: 'sessions/1.json', status: 'pondering'}})).toMatchObject({
			status: 'working',
			source: 'screen',
		});
	});

	it('claude: the tmux focus-events notice under the footer does not hide the footer', () => {
		const {screen} = evidenceOf('claude', 'working-1');
		const noticed = `${screen ?? ''}\n                  tmux focus-events off · add 'set -g focus-events on' to ~/.tmux.conf and reattach for focus tracking\n`;
		expect(detectStatus('claude', {screen: noticed}).status).toBe('working');
	});

	it('codex: its own OSC 7501 state report comes before title and screen', () => {
		const {screen, title} = evidenceOf('codex', 'idle-fresh');
		const base = {screen: screen ?? '', ...(title ? {title} : {})};
		expect(detectStatus('codex', {...base, osc: 'state=blocked:app=codex:kind=permission'})).toEqual({
			status: 'blocked',
			source: 'osc',
			evidence: 'OSC 7501 state=blocked:app=codex:kind=permission',
		});
		expect(detectStatus('codex', {...base, osc: 'state=working:app=codex'}).status).toBe('working');
		expect(detectStatus('codex', {...base, osc: 'state=done:app=codex'}).status).toBe('idle');
		expect(detectStatus('codex', {...base, osc: 'state=clear'}).status).toBe('exited');
	});

	it('codex: both Action Required titles say blocked; the thread title never says idle', () => {
		expect(detectStatus('codex', {title: '[ . ] Action Required | hi | alpha'}).status).toBe('blocked');
		expect(detectStatus('codex', {title: '[ ! ] Action Required | hi | alpha'}).status).toBe('blocked');
		expect(detectStatus('codex', {title: '⠹ hi | alpha'}).status).toBe('working');
		expect(detectStatus('codex', {title: 'hi | alpha'}).status).toBe('unknown');
	});

	it('gemini: the padded titles tell all three states', () => {
		expect(detectStatus('gemini', {title: '◇  Ready (alpha)          '}).status).toBe('idle');
		expect(detectStatus('gemini', {title: '✦  Working… (alpha)       '}).status).toBe('working');
		expect(detectStatus('gemini', {title: '✋  Action Required (alpha)'}).status).toBe('blocked');
	});

	it('a screen before the UI is drawn is unknown, not idle', () => {
		for (const agent of CAPTURED) expect(detectStatus(agent, {screen: read(agent, 'starting.txt') ?? ''}).status).toBe('unknown');
	});
});

interface Frame {
	readonly phase: string;
	readonly title: string;
	readonly record?: AgentRecord;
	readonly screen: string;
	/** The first frame of its phase (the screen may still show the last phase: a transition). */
	readonly first: boolean;
}

function frames(agent: RealAgent): Frame[] {
	const text = zlib.gunzipSync(fs.readFileSync(path.join(SCREENS, agent, 'frames.txt.gz'))).toString('utf8');
	let last = '';
	return text
		.split(/^(?==== )/m)
		.filter(Boolean)
		.map(chunk => {
			const head = chunk.slice(0, chunk.indexOf('\n'));
			const phase = /\[([a-z-]+)\]/.exec(head)?.[1] ?? '';
			const record = recordOf(/ session=(\{.*\})$/.exec(head)?.[1]);
			const first = phase !== last;
			last = phase;
			return {phase, title: /title=\[(.*?)\](?: session=|$)/.exec(head)?.[1] ?? '', screen: chunk.slice(head.length + 1), first, ...(record ? {record} : {})};
		});
}

const PHASE_TRUTH: Record<string, DetectedStatus> = {
	'idle-fresh': 'idle',
	working: 'working',
	'idle-after-turn': 'idle',
	blocked: 'blocked',
	'after-approval': 'idle',
	draft: 'idle',
};

describe('status detectors on every 0.25 s frame of a real run', () => {
	for (const agent of AGENTS) {
		it(`${agent}: the screen alone matches the phase on every frame but a phase's first`, () => {
			const wrong = frames(agent)
				.filter(f => !f.first && PHASE_TRUTH[f.phase] !== undefined)
				.map(f => ({phase: f.phase, found: detectStatus(agent, {screen: f.screen}).status}))
				.filter(f => f.found !== PHASE_TRUTH[f.phase]);
			expect(wrong).toEqual([]);
		});
		it(`${agent}: never idle while the phase is working or blocked`, () => {
			const idle = frames(agent).filter(
				f => !f.first && (f.phase === 'working' || f.phase === 'blocked') && detectStatus(agent, {screen: f.screen, title: f.title}).status === 'idle',
			);
			expect(idle.map(f => f.phase)).toEqual([]);
		});
	}

	it('claude: with its record, every frame says what the record says', () => {
		const mapped: Record<string, DetectedStatus> = {idle: 'idle', busy: 'working', waiting: 'blocked'};
		const withRecord = frames('claude').filter(f => f.record);
		expect(withRecord.length).toBeGreaterThan(100);
		for (const f of withRecord) {
			expect(detectStatus('claude', {screen: f.screen, title: f.title, ...(f.record ? {record: f.record} : {})}).status).toBe(mapped[f.record?.status ?? '']);
		}
	});
});

describe('agents without a real capture (agy)', () => {
	const agents = ['agy'] as const;
	it('never say idle, whatever the screen', () => {
		for (const agent of agents) {
			for (const real of AGENTS) {
				for (const state of Object.keys(TRUTH)) {
					const found = detectStatus(agent, evidenceOf(real, state));
					expect(found.status).not.toBe('idle');
					expect(found.unverified).toBe(true);
				}
			}
		}
	});
	it('say blocked on a documented approval prompt and working on an interrupt hint, marked unverified', () => {
		expect(detectStatus('agy', {screen: 'Allow execution of [Shell]?\n● 1. Allow once\n'}).status).toBe('blocked');
		expect(detectStatus('agy', {screen: '⠋ Thinking (esc to interrupt)\n> \n'})).toMatchObject({
			status: 'working',
			evidence: expect.stringContaining('(unverified)'),
		});
		expect(detectStatus('agy', {screen: '> \n'}).status).toBe('unknown');
	});
});

describe('grok (Grok Build 1.0.41, captured)', () => {
	it('the title tells all three states, whatever the session is called', () => {
		expect(detectStatus('grok', {title: 'grok'})).toMatchObject({status: 'idle', source: 'title'});
		expect(detectStatus('grok', {title: 'say hello please - grok'}).status).toBe('idle');
		expect(detectStatus('grok', {title: '⠋ - Waiting for response… - say hello please - grok'}).status).toBe('working');
		expect(detectStatus('grok', {title: '⚠ Action Required - ⠦ - Write a greeting to a file… - RUN_SHELL please - grok'}).status).toBe('blocked');
		expect(detectStatus('grok', {title: 'bash'}).status).toBe('unknown');
	});
	it('every frame of its title timeline (a slow turn, 0.2 s apart) reads idle before Enter and working after', () => {
		const frames = (read('grok', 'title-timeline.txt') ?? '')
			.split('\n')
			.filter(Boolean)
			.map(line => line.split(' | ')[1] ?? '');
		expect(frames.length).toBeGreaterThan(40);
		const working = frames.findIndex(t => t.startsWith('⠋'));
		expect(working).toBeGreaterThan(0);
		for (const [i, title] of frames.entries()) expect(detectStatus('grok', {title}).status, title).toBe(i < working ? 'idle' : 'working');
	});
	it('a ghost suggestion in the composer, or a real draft, is idle on the screen too', () => {
		for (const state of ['idle-after-slow-turn', 'draft-ghost-prefix', 'draft-2-lines'])
			expect(detectStatus('grok', {screen: read('grok', `${state}.txt`) ?? ''}).status, state).toBe('idle');
	});
});

describe('on herdr', () => {
	it("herdr's status stands when the agent keeps no record", () => {
		expect(detectStatus('codex', {}, {status: 'working'})).toEqual({status: 'working', source: 'mux', evidence: 'herdr agent_status "working"'});
		expect(detectStatus('codex', {}, {status: 'done'}).status).toBe('idle');
	});
	it("the agent's own record wins when it disagrees, keeping what herdr said", () => {
		const found = detectStatus('claude', {record: {file: 'sessions/9.json', status: 'busy'}}, {status: 'idle'});
		expect(found).toEqual({
			status: 'working',
			source: 'record',
			evidence: 'sessions/9.json says "busy"',
			overrides: {status: 'idle', evidence: 'herdr agent_status "idle"'},
		});
		expect(detectStatus('claude', {record: {file: 'sessions/9.json', status: 'idle'}}, {status: 'idle'}).overrides).toBeUndefined();
	});
});
