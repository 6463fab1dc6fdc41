import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {parkSessions, settleInterruptedParks, type ParkResult} from '../../src/actions/park.js';
import type {ActionDeps} from '../../src/actions/types.js';
import {claudeAdapter} from '../../src/adapters/claude.js';
import type {AgentAdapter} from '../../src/adapters/types.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import type {Pane, ProcessRef} from '../../src/domain/types.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {tmuxCan} from '../../src/mux/tmux.js';
import {parkedExtra, parkingExtra} from '../../src/registry/extra.js';
import {Registry} from '../../src/registry/registry.js';
import type {ProcessTable} from '../../src/system/processes.js';

/**
 * The park action end to end over a real registry, with claude's real captured screens and a
 * pane that obeys `/exit` (the real TUIs are in test/real/park.test.ts): the registry's
 * compare-and-set, the re-read of the screen just before typing, and no escalation.
 */
const SCREENS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/screens/claude');
const ID = '69e68769-2dbb-4664-996b-bc39e1d62900';

class Pane1 {
	screen = fs.readFileSync(path.join(SCREENS, 'idle-after-turn.txt'), 'utf8');
	typed: string[] = [];
	agentAlive = true;
	/** Obeys the exit command; false: ignores it (a park must then leave it running). */
	obeys = true;
	composer = '';
	readonly procs: ProcessRef[] = [
		{pid: 100, ppid: 1, startTime: 1000, name: 'bash', argv: ['bash']},
		{pid: 101, ppid: 100, startTime: 1100, name: 'claude', argv: ['claude']},
	];
	live(): ProcessRef[] {
		return this.procs.filter(p => p.pid === 100 || this.agentAlive);
	}
}

function muxOf(tui: Pane1, focused: string[] = []): Multiplexer & {kills: number} {
	const pane = (): Pane => ({
		id: '%1',
		mux: 'tmux',
		agentStatus: 'unknown',
		shellPid: 100,
		processes: tui.live(),
		isSelf: false,
		placement: {session: 'work', window: '2'},
	});
	const mux = {
		kind: 'tmux' as const,
		can: tmuxCan(false),
		kills: 0,
		listPanes: async () => [pane()],
		subscribe: () => () => {},
		sendText: async (_id: string, text: string) => {
			tui.typed.push(text);
			tui.composer += text;
		},
		sendKeys: async (_id: string, keys: readonly string[]) => {
			for (const k of keys) {
				tui.typed.push(k);
				if (k === 'ctrl+u') tui.composer = '';
				if (k === 'Enter' && tui.composer === '/exit' && tui.obeys) tui.agentAlive = false;
			}
		},
		readOutput: async () => tui.screen,
		openPane: async () => '%2',
		closePane: async () => {
			mux.kills++;
		},
		focusPane: async () => {},
		focusedPanes: async () => new Set(focused),
		health: () => ({kind: 'tmux' as const, ok: true, message: 'ok'}),
		dispose: async () => {},
	};
	return mux;
}

function tableOf(tui: Pane1): ProcessTable & {signals: number} {
	return {
		signals: 0,
		list: async () => tui.live(),
		get: async pid => tui.live().find(p => p.pid === pid),
		holders: async () => [],
	};
}

/** claude's adapter, with its store answered from fixture facts: the conversation, last written `idleFor` ago. */
function adapterWith(idleFor: () => number): AgentAdapter {
	return {
		...claudeAdapter,
		matchesProcess: p => p.name === 'claude',
		discover: async () => ({
			conversations: [{agent: 'claude', id: ID, cwd: '/p', createdAt: 0, updatedAt: Date.now() - idleFor(), childCount: 0, resumeState: {kind: 'yes'}}],
			problems: [],
		}),
		verify: async () => ({kind: 'yes'}),
	};
}

let dir = '';
let registry: Registry;
beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-park-'));
	registry = Registry.open(path.join(dir, 'registry.db'));
	registry.insert({name: 'api', agent: 'claude', cwd: '/p', mux: 'tmux', paneId: '%1', agentSessionId: ID, status: 'running', epoch: 0});
});
afterEach(() => {
	registry.close();
	fs.rmSync(dir, {recursive: true, force: true});
});

function depsOf(tui: Pane1, mux: Multiplexer, idleFor = () => 600_000): ActionDeps {
	const adapter = adapterWith(idleFor);
	return {
		registry,
		mux: async () => mux,
		adapterFor: agent => (agent === 'claude' ? adapter : undefined),
		context: {home: dir, ownHome: false, env: {}, exec: () => Promise.reject(new Error('unused')), processes: tableOf(tui), now: Date.now, tmpDir: dir},
		processes: tableOf(tui),
		config: DEFAULT_CONFIG,
		now: Date.now,
		kill: () => {
			throw new Error('a park never signals');
		},
	};
}

const fast = {graceMs: 300, sleep: async () => {}};

describe('park action', () => {
	it('parks an idle agent: exit input only, row parked with what a wake needs', async () => {
		const tui = new Pane1();
		const mux = muxOf(tui);
		const [result] = await parkSessions(depsOf(tui, mux), {names: ['api']}, fast);
		expect(result).toMatchObject({outcome: 'parked'});
		expect(tui.typed).toEqual(['ctrl+u', '/exit', 'Enter']);
		const row = registry.get('api');
		expect(row?.status).toBe('parked');
		expect(row?.paneId).toBeNull();
		expect(parkedExtra.read(row?.extra ?? {})).toMatchObject({
			argv: ['claude', '--resume', ID],
			cwd: '/p',
			paneId: '%1',
			placement: {session: 'work', window: '2'},
		});
		expect(parkingExtra.read(row?.extra ?? {})).toBeUndefined();
		expect(registry.auditLog('api').some(a => a.action === 'park' && a.outcome === 'ok')).toBe(true);
	});

	it('types nothing when the screen changed between the check and the typing', async () => {
		const tui = new Pane1();
		const mux = muxOf(tui);
		const [result] = await parkSessions(
			depsOf(tui, mux),
			{names: ['api']},
			{
				...fast,
				onStep: async step => {
					if (step !== 'looked') return;
					// The user starts typing a new prompt meanwhile, the same screen otherwise.
					tui.screen = tui.screen.replace('\u276f\u00a0', '\u276f\u00a0x');
				},
			},
		);
		expect(result).toMatchObject({outcome: 'refused', check: 'composer'});
		expect(tui.typed).toEqual([]);
		expect(registry.get('api')?.status).toBe('running');
	});

	it('a screen changed in a way the checks pass still types nothing', async () => {
		const tui = new Pane1();
		const mux = muxOf(tui);
		const [result] = await parkSessions(
			depsOf(tui, mux),
			{names: ['api']},
			{
				...fast,
				onStep: async step => {
					if (step !== 'looked') return;
					tui.screen = `new output line\n${tui.screen}`;
				},
			},
		);
		expect(result).toMatchObject({outcome: 'refused', check: 'composer'});
		expect(result && 'why' in result ? result.why : '').toMatch(/changed since it was checked/);
		expect(tui.typed).toEqual([]);
	});

	it('never escalates: an agent that ignores its exit input is left running, the row untouched', async () => {
		const tui = new Pane1();
		tui.obeys = false;
		const mux = muxOf(tui);
		const [result] = await parkSessions(depsOf(tui, mux), {names: ['api']}, fast);
		expect(result).toMatchObject({outcome: 'still-running'});
		expect(mux.kills).toBe(0);
		expect(tui.agentAlive).toBe(true);
		const row = registry.get('api');
		expect(row?.status).toBe('running');
		expect(row?.paneId).toBe('%1');
		expect(parkingExtra.read(row?.extra ?? {})).toBeUndefined();
	});

	it('a refused park changes nothing but the audit log (the focused pane)', async () => {
		const tui = new Pane1();
		const before = registry.get('api');
		const [result] = await parkSessions(depsOf(tui, muxOf(tui, ['%1'])), {names: ['api']}, fast);
		expect(result).toMatchObject({outcome: 'refused', check: 'focus'});
		expect(tui.typed).toEqual([]);
		const after = registry.get('api');
		expect({...after, version: 0, updatedAt: 0}).toEqual({...before, version: 0, updatedAt: 0});
	});

	it("a live owner's claim refuses; a dead owner's or a stale one does not", async () => {
		const tui = new Pane1();
		const row = registry.get('api');
		if (!row) throw new Error('no row');
		// pid 100 runs in the fake table with start time 1000: a live owner.
		registry.update(row.id, {extra: parkingExtra.write(row.extra, {at: Date.now(), pid: 100, start: 1000})});
		const [first] = await parkSessions(depsOf(tui, muxOf(tui)), {names: ['api']}, fast);
		expect(first).toMatchObject({outcome: 'refused', check: 'registry'});
		expect(tui.typed).toEqual([]);
		// The same pid with another start time: the pid was reused, the owner is gone.
		registry.update(row.id, {extra: parkingExtra.write(row.extra, {at: Date.now(), pid: 100, start: 999})});
		const [second] = await parkSessions(depsOf(tui, muxOf(tui)), {names: ['api']}, {...fast, dryRun: true});
		expect(second).toMatchObject({outcome: 'would-park'});
		registry.update(row.id, {extra: parkingExtra.write(row.extra, {at: Date.now() - 10 * 60_000, pid: 100, start: 1000})});
		const [third] = await parkSessions(depsOf(tui, muxOf(tui)), {names: ['api']}, fast);
		expect(third).toMatchObject({outcome: 'parked'});
	});

	it('two parks at once: exactly one types the exit input', async () => {
		const tui = new Pane1();
		const mux = muxOf(tui);
		const results: ParkResult[] = (
			await Promise.all([parkSessions(depsOf(tui, mux), {names: ['api']}, fast), parkSessions(depsOf(tui, mux), {names: ['api']}, fast)])
		).flat();
		expect(results.filter(r => r.outcome === 'parked')).toHaveLength(1);
		expect(tui.typed.filter(t => t === '/exit')).toHaveLength(1);
	});

	it('--dry-run says what it would do and changes nothing', async () => {
		const tui = new Pane1();
		const [result] = await parkSessions(depsOf(tui, muxOf(tui)), {names: ['api']}, {...fast, dryRun: true});
		expect(result).toMatchObject({outcome: 'would-park', paneId: '%1'});
		expect(tui.typed).toEqual([]);
		expect(registry.get('api')?.status).toBe('running');
	});

	it('--idle-over is the soak: an agent idle for less is refused by the soak check', async () => {
		const tui = new Pane1();
		const [result] = await parkSessions(
			depsOf(tui, muxOf(tui), () => 20 * 60_000),
			{idleOverSeconds: 45 * 60},
			fast,
		);
		expect(result).toMatchObject({outcome: 'refused', check: 'soak'});
		expect(tui.typed).toEqual([]);
	});

	it('a killed park is settled by the next look: parked once its agent is gone, let go once stale, left while it may still be exiting', async () => {
		const tui = new Pane1();
		const deps = depsOf(tui, muxOf(tui));
		const row = registry.get('api');
		if (!row) throw new Error('no row');
		const record = {at: Date.now(), freedBytes: 5, idleSeconds: 60, argv: ['claude', '--resume', ID], cwd: '/p', paneId: '%1'};
		// The owner (pid 4242) is not in the table: it died. Its agent (pid 101) still runs.
		const pending = (at: number) => parkingExtra.write(row.extra, {at, pid: 4242, start: 1, pending: {record, agent: {pid: 101, startTime: 1100}}});
		registry.update(row.id, {extra: pending(Date.now())});
		expect(await settleInterruptedParks(deps)).toEqual([]);
		expect(registry.get('api')?.status).toBe('running');
		registry.update(row.id, {extra: pending(Date.now() - 10 * 60_000)});
		expect(await settleInterruptedParks(deps)).toEqual(['api']);
		expect(registry.get('api')).toMatchObject({status: 'running', paneId: '%1', extra: {}});
		// The exit input had been typed and the agent is gone: the row is what the park meant.
		registry.update(row.id, {extra: pending(Date.now())});
		tui.agentAlive = false;
		expect(await settleInterruptedParks(deps)).toEqual(['api']);
		const parked = registry.get('api');
		expect(parked).toMatchObject({status: 'parked', paneId: null});
		expect(parkedExtra.read(parked?.extra ?? {})).toEqual(record);
		expect(parkingExtra.read(parked?.extra ?? {})).toBeUndefined();
	});

	it('a claim without a pending record (killed before typing) is let go at once when its owner is dead', async () => {
		const tui = new Pane1();
		const row = registry.get('api');
		if (!row) throw new Error('no row');
		registry.update(row.id, {extra: parkingExtra.write(row.extra, {at: Date.now(), pid: 4242, start: 1})});
		expect(await settleInterruptedParks(depsOf(tui, muxOf(tui)))).toEqual(['api']);
		expect(registry.get('api')).toMatchObject({status: 'running', extra: {}});
	});
});
