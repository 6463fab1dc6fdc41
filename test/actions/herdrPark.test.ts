import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {parkSessions} from '../../src/actions/park.js';
import {wakeSessions} from '../../src/actions/wake.js';
import {claudeAdapter} from '../../src/adapters/claude.js';
import {createHerdrMux} from '../../src/mux/herdr/index.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {parkedExtra} from '../../src/registry/extra.js';
import {createProcessTable} from '../../src/system/processes.js';
import {eventually} from '../helpers/poll.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords, type StandinInstall} from '../support/standin.js';
import {killLeftovers, startTimeOf} from './support/agents.js';
import {createTestWorld, type TestWorld} from './support/world.js';

/**
 * Park and wake through the herdr backend, against the fake herdr that speaks herdr's protocol
 * (every line checked against /work/shared/herdr's schemas): a stand-in claude with its real
 * screen, live record and conversation file runs in a shell pane of its own workspace and tab.
 * The focused-pane check asks herdr which pane is focused; a wake splits a pane in the tab the
 * agent was parked from, not next to the focused one.
 */
let dir = '';
let fake: FakeHerdr;
let mux: Multiplexer;
let world: TestWorld;
let standin: StandinInstall;
/** The user's own workspace: herdr focuses it, and an unplaced new pane would go there. */
let userPane = '';

beforeAll(async () => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-park-herdr-')));
	world = createTestWorld('mam-park-herdr-world-');
	standin = installTestStandin(path.join(dir, 'bin'), 'claude', {statusScreen: true, artifactHome: world.home});
	const socket = path.join(dir, 'herdr.sock');
	fake = await startFakeHerdr({socketPath: socket, eventTickMs: 20, paneEnv: {PATH: `${standin.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`}});
	userPane = await fake.openWorkspace(dir);
	mux = createHerdrMux({socketPath: socket, env: {}, processes: createProcessTable(), backoff: {initialMs: 50, maxMs: 400}, resyncMs: 100});
});

afterEach(() => {
	expect(fake.violations).toEqual([]);
});

afterAll(async () => {
	await mux.dispose();
	await fake.stop();
	killLeftovers(
		readStandinRecords(standin.recordFile).flatMap(r => {
			try {
				return [{pid: r.pid, startTime: startTimeOf(r.pid)}];
			} catch {
				return [];
			}
		}),
	);
	world.dispose();
	fs.rmSync(dir, {recursive: true, force: true});
	disposeStandinScript();
});

function deps() {
	return world.deps(mux, {adapterFor: agent => (agent === 'claude' ? claudeAdapter : undefined)});
}

/** `claude` typed into a shell pane of a new workspace (as herdr restores agents), registered as running and pinned. */
async function agentInOwnWorkspace(name: string) {
	const before = readStandinRecords(standin.recordFile).length;
	const root = await fake.openWorkspace(world.project);
	const paneId = await fake.split(root, world.project);
	await fake.run(paneId, 'claude');
	const record = await eventually('the stand-in claude', () => readStandinRecords(standin.recordFile)[before]);
	await eventually('its empty composer', async () => (await mux.readOutput(paneId, 30)).includes('? for shortcuts'));
	fake.setAgentStatus(paneId, 'idle');
	const pane = await eventually('herdr sees the agent idle', async () => (await mux.listPanes()).find(p => p.id === paneId && p.agentStatus === 'idle'));
	world.registry.insert({
		name,
		agent: 'claude',
		cwd: world.project,
		mux: 'herdr',
		paneId,
		agentSessionId: record.conversationId ?? null,
		status: 'running',
		epoch: Date.now(),
	});
	return {paneId, record, placement: pane.placement};
}

describe('park and wake through the (fake) herdr backend', {timeout: 60_000}, () => {
	it('refuses the pane herdr has focused; parks it once focus moved; wakes it in the same workspace and tab', async () => {
		const {paneId, record, placement} = await agentInOwnWorkspace('h-park');
		expect(placement?.workspace).toBeTruthy();
		expect(placement?.tab).toBeTruthy();
		const startTime = startTimeOf(record.pid);

		await mux.focusPane(paneId);
		await eventually('herdr focused the agent', async () => (await mux.focusedPanes?.())?.has(paneId));
		const [refused] = await parkSessions(deps(), {names: ['h-park']}, {soakSeconds: 0, graceMs: 5000});
		expect(refused).toMatchObject({outcome: 'refused', check: 'focus'});
		expect(aliveWithStart(record.pid, startTime)).toBe(true);
		expect(world.registry.get('h-park')?.status).toBe('running');

		await mux.focusPane(userPane);
		await eventually('herdr focused the user pane', async () => (await mux.focusedPanes?.())?.has(userPane));
		const [parked] = await parkSessions(deps(), {names: ['h-park']}, {soakSeconds: 0, graceMs: 5000});
		expect(parked, JSON.stringify(parked)).toMatchObject({outcome: 'parked'});
		expect(aliveWithStart(record.pid, startTime)).toBe(false);
		const row = world.registry.get('h-park');
		expect(row?.status).toBe('parked');
		expect(parkedExtra.read(row?.extra ?? {})).toMatchObject({paneId, placement, argv: ['claude', '--resume', record.conversationId]});

		const [woken] = await wakeSessions(deps(), {names: ['h-park']}, {readyTimeoutMs: 20_000});
		expect(woken, JSON.stringify(woken)).toMatchObject({outcome: 'woken', verified: true});
		const newPane = woken?.outcome === 'woken' ? woken.paneId : '';
		expect(newPane).not.toBe(paneId);
		// The same workspace and tab, not the focused user's.
		expect((await mux.listPanes()).find(p => p.id === newPane)?.placement).toEqual(placement);
		const again = readStandinRecords(standin.recordFile).at(-1);
		expect(again?.argv).toEqual(['claude', '--resume', record.conversationId]);
		expect(world.registry.get('h-park')).toMatchObject({status: 'running', paneId: newPane, agentSessionId: record.conversationId});
	});
});
