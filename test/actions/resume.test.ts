import crypto from 'node:crypto';
import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import type {SessionRecord} from '../../src/domain/types.js';
import {MuxError, type Multiplexer} from '../../src/mux/types.js';
import {disposeStandinScript, installTestStandin, readStandinRecords, type StandinInstall} from '../support/standin.js';
import {killLeftovers, startTimeOf} from './support/agents.js';
import {writeFixtureConversation} from './support/fixtureAdapter.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from './support/tmux.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {eventually} from '../helpers/poll.js';

let server: TmuxServer;
let mux: Multiplexer;
let binRoot: string;
let standin: StandinInstall;
let world: TestWorld;
const children: ChildProcess[] = [];

beforeAll(async () => {
	binRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-resume-bin-')));
	// `claude` on the panes' PATH is a stand-in that records its argv and cwd.
	standin = installTestStandin(path.join(binRoot, 'bin'), 'claude');
	// tmux gives a new pane the PATH of the client that asked for it (mam-tui, here this process).
	vi.stubEnv('PATH', `${standin.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`);
	server = await startTmuxServer({PATH: process.env['PATH'] ?? '', HOME: binRoot});
	mux = await tmuxBackend(server);
});

afterAll(async () => {
	await mux.dispose();
	await server.kill();
	killLeftovers(
		readStandinRecords(standin.recordFile)
			.flatMap(r => [r.pid, ...r.childPids])
			.flatMap(pid => {
				try {
					return [{pid, startTime: startTimeOf(pid)}];
				} catch {
					return [];
				}
			}),
	);
	fs.rmSync(binRoot, {recursive: true, force: true});
	disposeStandinScript();
	vi.unstubAllEnvs();
});

afterEach(() => {
	for (const child of children.splice(0)) child.kill('SIGKILL');
	world?.dispose();
});

const uuid = () => crypto.randomUUID();

function stoppedRow(w: TestWorld, id: string | null, extra: Partial<Pick<SessionRecord, 'cwd' | 'status' | 'paneId' | 'mux'>> = {}): SessionRecord {
	return w.registry.insert({
		name: `s-${crypto.randomBytes(3).toString('hex')}`,
		agent: 'claude',
		cwd: w.project,
		agentSessionId: id,
		status: 'stopped',
		epoch: 0,
		...extra,
	});
}

async function paneIds(): Promise<string[]> {
	return (await server.panes()).map(p => p.id);
}

describe('resume', {timeout: 30_000}, () => {
	it('runs the exact resume argv (plus config extraArgs) in the session cwd and records the pane', async () => {
		world = createTestWorld('mam-resume-');
		const id = uuid();
		writeFixtureConversation(world.home, {id, cwd: world.project});
		const row = stoppedRow(world, id);
		const config = {...DEFAULT_CONFIG, agents: {claude: {extraArgs: ['--model', 'sonnet']}}};
		const before = readStandinRecords(standin.recordFile).length;
		const result = await createActions(world.deps(mux, {config})).resume({name: row.name});
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		const record = await eventually('the resumed stand-in', () => readStandinRecords(standin.recordFile)[before]);
		expect(record.argv).toEqual(['claude', '--resume', id, '--model', 'sonnet']);
		expect(record.cwd).toBe(world.project);
		const updated = world.registry.get(row.name);
		expect(updated).toMatchObject({status: 'running', paneId: result.value.paneId, mux: 'tmux', agentSessionId: id});
		expect((await server.panes()).map(p => p.id)).toContain(result.value.paneId);
		expect(world.registry.auditLog(row.name).map(a => `${a.step ?? '-'}:${a.outcome}`)).toEqual(['open-pane:started', '-:ok']);
	});

	it('adopts an unregistered conversation given by --agent/--id, then resumes it', async () => {
		world = createTestWorld('mam-resume-');
		const id = uuid();
		writeFixtureConversation(world.home, {id, cwd: world.project});
		const result = await createActions(world.deps(mux)).resume({agent: 'claude', id});
		expect(result.ok).toBe(true);
		const rows = world.registry.findByPin('claude', id);
		expect(rows).toHaveLength(1);
		expect(rows[0]).toMatchObject({status: 'running', cwd: world.project});
	});

	const refusals: Array<{what: string; kind: string; reason: RegExp; setup: (w: TestWorld) => Promise<SessionRecord> | SessionRecord}> = [
		{what: 'unpinned', kind: 'unpinned', reason: /no conversation id pinned/, setup: w => stoppedRow(w, null)},
		{
			what: 'purged',
			kind: 'purged',
			reason: /was purged/,
			setup: w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: w.project});
				return stoppedRow(w, id, {status: 'purged'});
			},
		},
		{
			what: 'verify is false (and a newer conversation in the same folder is never used instead)',
			kind: 'not-resumable',
			reason: /cannot be resumed: no transcript/,
			setup: w => {
				writeFixtureConversation(w.home, {id: uuid(), cwd: w.project, createdAt: Date.now() + 1000});
				return stoppedRow(w, uuid());
			},
		},
		{
			what: 'the conversation holds no message',
			kind: 'not-resumable',
			reason: /holds no message/,
			setup: w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: w.project, messages: 0});
				return stoppedRow(w, id);
			},
		},
		{
			what: 'the cwd is gone',
			kind: 'cwd-missing',
			reason: /does not exist any more/,
			setup: w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: path.join(w.dir, 'gone')});
				return stoppedRow(w, id, {cwd: path.join(w.dir, 'gone')});
			},
		},
		{
			what: 'another process uses the conversation',
			kind: 'in-use',
			reason: /is in use: pid \d+ \(.*\): argv names the id/,
			setup: async w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: w.project});
				const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '--resume', id], {stdio: 'ignore'});
				children.push(holder);
				await eventually('the holder to start', async () => (await w.context.processes.get(holder.pid ?? -1))?.argv.includes(id));
				return stoppedRow(w, id);
			},
		},
		{
			what: 'the session is live in its pane',
			kind: 'live',
			reason: /is live in pane %\d+/,
			setup: async w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: w.project});
				const first = stoppedRow(w, id);
				const resumed = await createActions(w.deps(mux)).resume({name: first.name});
				if (!resumed.ok) throw new Error(resumed.error.message);
				return w.registry.get(first.name) ?? first;
			},
		},
		{
			what: 'another row runs the conversation in a live pane',
			kind: 'in-use',
			reason: /is live in session .* \(pane %\d+\)/,
			setup: async w => {
				const id = uuid();
				writeFixtureConversation(w.home, {id, cwd: w.project});
				const first = stoppedRow(w, id);
				const resumed = await createActions(w.deps(mux)).resume({name: first.name});
				if (!resumed.ok) throw new Error(resumed.error.message);
				return stoppedRow(w, id);
			},
		},
	];

	for (const c of refusals) {
		it(`refuses when ${c.what}, says why, and keeps the row as it was`, async () => {
			world = createTestWorld('mam-resume-');
			const row = await c.setup(world);
			const panes = await paneIds();
			const result = await createActions(world.deps(mux)).resume({name: row.name});
			expect(result.ok).toBe(false);
			if (result.ok) return;
			expect(result.error.kind).toBe(c.kind);
			expect(result.error.message).toMatch(c.reason);
			// No pane was opened (others may come and go).
			expect((await paneIds()).filter(id => !panes.includes(id))).toEqual([]);
			const after = world.registry.get(row.name);
			expect(after).toMatchObject({agentSessionId: row.agentSessionId, status: row.status, paneId: row.paneId});
			expect(world.registry.auditLog(row.name).at(-1)).toMatchObject({action: 'resume', outcome: 'refused'});
		});
	}

	it('keeps the pinned id when opening the pane fails', async () => {
		world = createTestWorld('mam-resume-');
		const id = uuid();
		writeFixtureConversation(world.home, {id, cwd: world.project});
		const row = stoppedRow(world, id);
		const broken: Multiplexer = {
			...mux,
			kind: 'tmux',
			listPanes: () => mux.listPanes(),
			openPane: async () => {
				throw new MuxError('tmux could not open a window: no space for new pane');
			},
		};
		const result = await createActions(world.deps(broken)).resume({name: row.name});
		expect(!result.ok && result.error.message).toMatch(/no space for new pane/);
		expect(world.registry.get(row.name)).toMatchObject({agentSessionId: id, status: 'stopped', paneId: null});
	});

	it('rejects an id that does not match the agent pattern before anything runs', async () => {
		world = createTestWorld('mam-resume-');
		const result = await createActions(world.deps(mux)).resume({agent: 'claude', id: '../../etc/passwd'});
		expect(!result.ok && result.error.kind).toBe('bad-input');
		const unknown = await createActions(world.deps(mux)).resume({agent: 'nosuch', id: 'x'});
		expect(!unknown.ok && unknown.error.kind).toBe('unknown-agent');
	});
});
