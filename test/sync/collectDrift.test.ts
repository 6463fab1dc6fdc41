import fs from 'node:fs';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import type {DiscoverQuery} from '../../src/adapters/types.js';
import {collectDriftInput} from '../../src/sync/pipeline.js';
import {detectDrift} from '../../src/drift/detect.js';
import {tempDir} from '../helpers/tmp.js';
import {EPOCH, ID, conv, fakeAdapter, fakeAdapters, fakeContext, fakeProcessTable, pane, proc, row, spyExec, spyMux, type Spy} from '../drift/builders.js';

let tmp: ReturnType<typeof tempDir>;
let spy: Spy;
beforeEach(() => {
	tmp = tempDir('mam-drift-collect-');
	spy = {calls: []};
});
afterEach(() => tmp.dispose());

const ctx = () =>
	fakeContext(
		fakeProcessTable(() => [proc(7, ['claude'])]),
		spyExec(spy),
	);

describe('collectDriftInput', () => {
	it('runs one discover per (agent, cwd) pair, of every age (as the dashboard does), parents only', async () => {
		const counts = {discover: [] as DiscoverQuery[], verify: [] as string[]};
		const claude = fakeAdapter('claude', {discover: () => ({conversations: [conv(ID.a)], problems: []})}, counts);
		const rows = [
			row(1, {cwd: tmp.dir, epoch: EPOCH + 5}),
			row(2, {cwd: tmp.dir, epoch: EPOCH}),
			row(3, {cwd: tmp.dir, epoch: EPOCH + 9}),
			row(4, {cwd: '/elsewhere'}),
			row(5, {cwd: tmp.dir, agentSessionId: ID.b}),
			row(6, {cwd: tmp.dir, status: 'stopped'}),
		];
		const input = await collectDriftInput({
			registry: {list: () => rows},
			mux: spyMux(() => [], spy),
			ctx: ctx(),
			adapters: fakeAdapters({claude}),
		});
		expect(counts.discover).toHaveLength(2);
		// No `since`: the engine applies each row's epoch itself and says what it left out.
		expect(counts.discover).toContainEqual({cwd: tmp.dir, includeChildren: false});
		expect(counts.discover).toContainEqual({cwd: '/elsewhere', includeChildren: false});
		for (const id of [1, 2, 3, 4]) expect(input.facts.get(id)?.candidates?.ok).toBe(true);
		expect(input.facts.get(5)?.candidates).toBeUndefined();
		expect(input.facts.get(6)?.candidates).toBeUndefined();
		expect(counts.verify).toEqual([ID.b]);
		expect(input.facts.get(5)?.verify).toEqual({kind: 'yes'});
		expect(input.processes).toEqual([proc(7, ['claude'])]);
		expect(input.panes).toEqual([]);
		expect(spy.calls).toEqual([]);
	});

	it('each row still filters by its own epoch after the shared discover', async () => {
		const claude = fakeAdapter('claude', {discover: () => ({conversations: [conv(ID.a, {cwd: tmp.dir, createdAt: EPOCH + 60_000})], problems: []})});
		const rows = [row(1, {cwd: tmp.dir, paneId: null}), row(2, {cwd: tmp.dir, paneId: null, epoch: EPOCH + 120_000})];
		const input = await collectDriftInput({registry: {list: () => rows}, mux: null, ctx: ctx(), adapters: fakeAdapters({claude})});
		const found = detectDrift(input);
		// Row 2 started after the conversation, so it does not contest it: row 1 gets the pin.
		expect(found.find(f => f.sessionId === 1)?.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
		expect(found.find(f => f.sessionId === 2)?.message).toMatch(/no conversation yet/);
	});

	it('turns adapter errors into per-row unknown facts, never a crash', async () => {
		const claude = fakeAdapter('claude', {
			discover: () => {
				throw new Error('database is locked');
			},
			verify: () => Promise.reject(new Error('EACCES')),
		});
		const rows = [row(1, {cwd: tmp.dir}), row(2, {cwd: tmp.dir, agentSessionId: ID.a, status: 'stopped'})];
		const input = await collectDriftInput({registry: {list: () => rows}, mux: null, ctx: ctx(), adapters: fakeAdapters({claude})});
		expect(input.facts.get(1)?.candidates).toEqual({ok: false, error: 'Claude Code discovery failed: database is locked'});
		expect(input.facts.get(2)?.verify).toEqual({kind: 'unknown', reason: 'Claude Code: EACCES'});
		const found = detectDrift(input);
		expect(found.find(f => f.sessionId === 1)?.message).toContain('database is locked');
		expect(found.filter(f => f.kind === 'artifact-missing')).toEqual([]);
	});

	it('a mux that fails to list gives panes null with the reason; no mux at all says why', async () => {
		const failing = await collectDriftInput({
			registry: {list: () => []},
			mux: spyMux(() => new Error('herdr socket /run/h.sock: connection refused'), spy),
			ctx: ctx(),
		});
		expect(failing.panes).toBeNull();
		expect(failing.mux).toBe('herdr');
		expect(failing.muxProblem).toContain('connection refused');
		const none = await collectDriftInput({registry: {list: () => []}, mux: null, muxProblem: 'tmux not installed', ctx: ctx()});
		expect(none).toMatchObject({panes: null, mux: null, muxProblem: 'tmux not installed'});
	});

	it('an unreadable process table is null (stale-process is then not judged)', async () => {
		const broken = {...fakeProcessTable(() => []), list: () => Promise.reject(new Error('/proc not mounted'))};
		const input = await collectDriftInput({registry: {list: () => []}, mux: null, ctx: fakeContext(broken, spyExec(spy))});
		expect(input.processes).toBeNull();
	});

	it("records the realpath of a symlinked cwd so the adapter's realpath cwd still matches", async () => {
		const real = path.join(tmp.dir, 'real');
		fs.mkdirSync(real);
		fs.symlinkSync(real, path.join(tmp.dir, 'link'));
		const claude = fakeAdapter('claude', {discover: () => ({conversations: [conv(ID.a, {cwd: real})], problems: []})});
		const rows = [row(1, {cwd: path.join(tmp.dir, 'link'), paneId: null})];
		const input = await collectDriftInput({registry: {list: () => rows}, mux: null, ctx: ctx(), adapters: fakeAdapters({claude})});
		expect(input.facts.get(1)?.realCwd).toBe(real);
		expect(detectDrift(input)[0]?.fix).toEqual({type: 'pin', sessionId: 1, agentSessionId: ID.a});
	});

	it('lists panes once and passes them through', async () => {
		let listed = 0;
		const panes = [pane('w1:p1', {agentArgv: ['claude']})];
		const input = await collectDriftInput({
			registry: {list: () => [row(1, {agentSessionId: ID.a})]},
			mux: spyMux(() => {
				listed++;
				return panes;
			}, spy),
			ctx: ctx(),
		});
		expect(listed).toBe(1);
		// Passed through with the status detection added (herdr's word here: no claude record).
		expect(input.panes).toEqual([{...panes[0], detection: expect.objectContaining({source: 'mux'})}]);
	});
});
