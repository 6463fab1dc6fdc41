import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {afterEach, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import type {Pane} from '../../src/domain/types.js';
import type {PaneScreen} from '../../src/mux/types.js';
import {createAttention} from '../../src/sync/attention.js';
import {createStatusProbe} from '../../src/sync/liveStatus.js';
import {joinSnapshot} from '../../src/sync/snapshot.js';
import {paneAgent} from '../../src/domain/paneAgent.js';
import type {SessionLive} from '../../src/store/state.js';
import type {Exec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {pane, proc, row} from './support.js';
import {HERDR_CAN} from '../../src/mux/herdr/index.js';
import {tmuxCan} from '../../src/mux/tmux.js';

const SCREENS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'screens');
const screen = (agent: string, state: string) => fs.readFileSync(path.join(SCREENS, agent, `${state}.txt`), 'utf8');

let dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs) fs.rmSync(dir, {recursive: true, force: true});
	dirs = [];
});

function ctxWithHome(): AdapterContext {
	const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-live-'));
	dirs.push(home);
	return {
		home,
		ownHome: false,
		env: {},
		exec: async () => ({exitCode: 0, stdout: '', stderr: ''}),
		processes: createProcessTable(),
		now: Date.now,
		tmpDir: home,
	};
}

/** A mux whose screens are what the test says, counting the reads it was asked for. */
function screensMux(screens: Record<string, PaneScreen>) {
	const asked: string[][] = [];
	return {
		asked,
		can: tmuxCan(true),
		readScreens: async (ids: readonly string[]) => {
			asked.push([...ids]);
			return new Map(ids.flatMap(id => (screens[id] ? [[id, screens[id]] as const] : [])));
		},
	};
}

const tmuxPane = (id: string, agent: string, extra: Partial<Pane> = {}): Pane =>
	pane(id, {mux: 'tmux', agentStatus: 'unknown', processes: [proc(10, 'sh'), proc(11, agent, [agent], 10)], ...extra});

describe('the status probe', () => {
	const agentOf = (p: Pane) => paneAgent(p, ADAPTERS);

	it("puts each tmux agent pane's detection on it, from its screen and title; other panes pass untouched", async () => {
		const mux = screensMux({'%1': {text: screen('codex', 'working-1')}, '%2': {text: screen('opencode', 'blocked')}, '%3': {text: 'just a shell $ '}});
		const probe = createStatusProbe({ctx: ctxWithHome(), mux, agentOf});
		const shell = pane('%3', {mux: 'tmux', agentStatus: 'unknown', processes: [proc(30, 'sh')]});
		const out = await probe.detect([tmuxPane('%1', 'codex'), tmuxPane('%2', 'opencode'), shell]);
		expect(out?.[0]).toMatchObject({agentStatus: 'working', detection: {status: 'working', source: 'screen'}});
		expect(out?.[1]).toMatchObject({agentStatus: 'blocked', detection: {status: 'blocked', evidence: expect.stringContaining('Permission required')}});
		expect(out?.[2]).toBe(shell);
		// Only agent panes' screens are asked for.
		expect(mux.asked).toEqual([['%1', '%2']]);
	});

	it('hands back the very same array when nothing changed (drift keeps its work)', async () => {
		const mux = screensMux({'%1': {text: screen('gemini', 'idle-fresh')}});
		const probe = createStatusProbe({ctx: ctxWithHome(), mux, agentOf});
		const panes = [tmuxPane('%1', 'gemini')];
		const first = await probe.detect(panes);
		expect(await probe.detect(panes)).toBe(first);
	});

	it("uses codex's state report when the mux saw one", async () => {
		const mux = screensMux({'%1': {text: screen('codex', 'idle-fresh'), osc: 'state=blocked:app=codex:kind=permission'}});
		const out = await createStatusProbe({ctx: ctxWithHome(), mux, agentOf}).detect([tmuxPane('%1', 'codex')]);
		expect(out?.[0]?.detection).toMatchObject({status: 'blocked', source: 'osc'});
	});

	it("on herdr: herdr's status stays; claude's record (pid and start time matching) overrides it", async () => {
		const ctx = ctxWithHome();
		const claude = proc(11, 'claude', ['claude'], 10);
		fs.mkdirSync(path.join(ctx.home, '.claude', 'sessions'), {recursive: true});
		fs.writeFileSync(
			path.join(ctx.home, '.claude', 'sessions', '11.json'),
			JSON.stringify({pid: 11, sessionId: 's', procStart: String(claude.startTime), status: 'busy'}),
		);
		const herdrPane = pane('w1:p1', {agent: 'claude', agentStatus: 'idle', processes: [proc(10, 'sh'), claude]});
		const codexPane = pane('w1:p2', {agent: 'codex', agentStatus: 'done', processes: [proc(20, 'sh'), proc(21, 'codex', ['codex'], 20)]});
		const out = await createStatusProbe({ctx, mux: {can: HERDR_CAN}, agentOf}).detect([herdrPane, codexPane]);
		expect(out?.[0]).toMatchObject({agentStatus: 'idle', detection: {status: 'working', source: 'record', overrides: {status: 'idle'}}});
		expect(out?.[1]?.detection).toMatchObject({source: 'mux'});
		const live = joinSnapshot({
			at: 1,
			sessions: [row({name: 'c', paneId: 'w1:p1'}), row({name: 'x', agent: 'codex', paneId: 'w1:p2'})],
			muxKind: 'herdr',
			health: null,
			panes: out ?? null,
			discovery: {byCwd: new Map(), verify: new Map(), inUse: new Map(), conversations: []},
			processes: [],
			cwdExists: () => true,
		});
		// The agent's word is shown; herdr's own `done` stays herdr's word where herdr is the source.
		expect(live.live['c']?.liveStatus).toBe('working');
		expect(live.live['x']?.liveStatus).toBe('done');
		expect(live.findings.filter(f => f.kind === 'status-disagrees')).toEqual([
			expect.objectContaining({level: 'info', paneId: 'w1:p1', sessionName: 'c', evidence: ['sessions/11.json says "busy"', 'herdr agent_status "idle"']}),
		]);
	});

	it('never fails the listing when the screens cannot be read', async () => {
		const mux = {can: tmuxCan(true), readScreens: async () => Promise.reject(new Error('tmux gone'))};
		const out = await createStatusProbe({ctx: ctxWithHome(), mux, agentOf}).detect([tmuxPane('%1', 'codex')]);
		expect(out?.[0]?.detection?.status).toBe('unknown');
	});
});

describe('attention: a session turning blocked calls the user', () => {
	const live = (status: SessionLive['liveStatus']): SessionLive => ({liveStatus: status, resumeState: {kind: 'yes'}});

	function harness(notify: 'bell' | 'desktop' | 'off', exec: Exec = async () => ({exitCode: 0, stdout: '', stderr: ''})) {
		const calls = {bells: 0, notes: [] as string[], execs: [] as (readonly string[])[]};
		const attention = createAttention({
			notify,
			bell: () => calls.bells++,
			note: text => calls.notes.push(text),
			exec: async (file, args, options) => {
				calls.execs.push([file, ...args]);
				return exec(file, args, options);
			},
		});
		return {attention, calls};
	}

	it('rings once per transition, not for what was already blocked when the dashboard opened', () => {
		const {attention, calls} = harness('bell');
		attention.observe({a: live('blocked'), b: live('working')});
		expect(calls.bells).toBe(0);
		attention.observe({a: live('blocked'), b: live('blocked')});
		expect(calls.bells).toBe(1);
		attention.observe({a: live('blocked'), b: live('blocked')});
		expect(calls.bells).toBe(1);
		attention.observe({a: live('idle'), b: live('blocked')});
		attention.observe({a: live('blocked'), b: live('blocked')});
		expect(calls.bells).toBe(2);
		expect(calls.execs).toEqual([]);
	});

	it('with notify: desktop also runs notify-send (argv); without it a one-line note once, never an error', async () => {
		const missing: Exec = async () => ({exitCode: undefined, stdout: '', stderr: '', failure: 'spawn notify-send ENOENT'});
		const {attention, calls} = harness('desktop', missing);
		attention.observe({a: live('idle')});
		attention.observe({a: live('blocked')});
		await new Promise(resolve => setImmediate(resolve));
		expect(calls.execs).toEqual([['notify-send', '--app-name=mam-tui', '--', 'mam-tui: a needs you', '']]);
		expect(calls.notes).toEqual([expect.stringContaining('notify-send not found')]);
		attention.observe({a: live('idle')});
		attention.observe({a: live('blocked')});
		await new Promise(resolve => setImmediate(resolve));
		expect(calls.bells).toBe(2);
		expect(calls.execs).toHaveLength(1);
		expect(calls.notes).toHaveLength(1);
	});

	it('rings for an agent pane outside the registry that turns blocked, and names it', async () => {
		const {attention, calls} = harness('desktop');
		const gemini = (agentStatus: Pane['agentStatus']) => pane('%7', {mux: 'tmux', agent: 'gemini', agentStatus});
		attention.observe({}, [gemini('working')]);
		attention.observe({}, [gemini('blocked')]);
		await new Promise(resolve => setImmediate(resolve));
		expect(calls.bells).toBe(1);
		expect(calls.execs[0]).toContain('mam-tui: pane %7 (gemini) needs you');
	});

	it('with notify: off stays silent', () => {
		const {attention, calls} = harness('off');
		attention.observe({a: live('idle')});
		attention.observe({a: live('blocked')});
		expect(calls.bells).toBe(0);
	});
});
