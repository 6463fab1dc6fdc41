import {spawn, type ChildProcess} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {claudeAdapter, projectSlug} from '../../src/adapters/claude.js';
import type {DriftJson} from '../../src/cli/driftCommand.js';
import {FINDING_KINDS, type FindingKind} from '../../src/domain/types.js';
import {HerdrClient} from '../../src/mux/herdr/client.js';
import {createHerdrMux} from '../../src/mux/herdr/index.js';
import {Registry} from '../../src/registry/registry.js';
import {createProcessTable, parseStat} from '../../src/system/processes.js';
import {claudeTranscript} from '../adapters/fixtures/claude.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {runCli} from '../helpers/cli.js';
import {tempDir} from '../helpers/tmp.js';
import {eventually} from '../helpers/poll.js';

/**
 * The Done-when: a world built with the fake herdr (real panes in a private tmux) and a
 * fixture claude home, holding one of each SPEC 5 kind; `mam-tui drift --json` reports each kind
 * once, and `mam-tui drift --fix` leaves only the kinds without a safe fix.
 */
const HOUR = 3_600_000;
const NO_SAFE_FIX: readonly FindingKind[] = ['artifact-missing', 'duplicate-pin', 'stale-process', 'status-disagrees'];

let tmp: ReturnType<typeof tempDir>;
let fake: FakeHerdr;
let stray: ChildProcess;
let registryFile: string;
let env: Record<string, string>;
const uuid = () => crypto.randomUUID();
const ids = {unpinned: uuid(), dup: uuid(), oldPin: uuid(), newPin: uuid(), live: uuid(), stale: uuid(), missing: uuid(), codex: uuid()};
const panes: Record<'exited' | 'unpinned' | 'untracked' | 'pinChanged' | 'live', string> = {exited: '', unpinned: '', untracked: '', pinChanged: '', live: ''};

function cwd(name: string): string {
	const dir = path.join(tmp.dir, 'work', name);
	fs.mkdirSync(dir, {recursive: true});
	return dir;
}

/** A claude conversation on disk, in the agent's real transcript format. */
function transcript(home: string, id: string, dir: string, createdAt: number): void {
	const file = path.join(home, '.claude', 'projects', projectSlug(dir), `${id}.jsonl`);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, claudeTranscript(id, dir, createdAt, 'hello'));
}

async function drift(...args: string[]): Promise<{exitCode: number; body: DriftJson; stderr: string}> {
	const r = await runCli(['drift', '--json', '--mux', 'herdr', '--registry', registryFile, ...args], env, {timeoutMs: 60_000});
	return {exitCode: r.exitCode, body: JSON.parse(r.stdout) as DriftJson, stderr: r.stderr};
}

const kindsOf = (body: DriftJson) => body.findings.map(f => f.kind).sort();

describe('Done-when: one of each kind with the fake herdr and a fixture home', {timeout: 120_000}, () => {
	beforeAll(async () => {
		tmp = tempDir('mam-drift-e2e-');
		const home = path.join(tmp.dir, 'home');
		const bin = path.join(tmp.dir, 'bin');
		writeAgentStandIns(bin, ['claude', 'codex']);
		const socket = path.join(tmp.dir, 'herdr.sock');
		fake = await startFakeHerdr({socketPath: socket, paneEnv: {PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`}});
		env = {HOME: home, MAM_HOME: path.join(tmp.dir, 'state'), HERDR_SOCKET_PATH: socket};

		panes.exited = await fake.openWorkspace(cwd('exited'));
		panes.unpinned = await fake.split(panes.exited, cwd('unpinned'));
		panes.untracked = await fake.split(panes.exited, cwd('untracked'));
		panes.pinChanged = await fake.split(panes.exited, cwd('pin-changed'));
		panes.live = await fake.split(panes.exited, cwd('live'));
		await fake.run(panes.unpinned, 'claude');
		await fake.run(panes.untracked, 'codex');
		await fake.run(panes.pinChanged, 'claude');
		await fake.run(panes.live, 'claude');
		const mux = createHerdrMux({socketPath: socket, env: {}, processes: createProcessTable()});
		try {
			await eventually('herdr to detect the four agents', async () => (await mux.listPanes()).filter(p => p.agent !== undefined).length === 4, {
				timeoutMs: 20_000,
			});
			// claude's own live record says busy where herdr says idle: status-disagrees.
			fake.setAgentStatus(panes.unpinned, 'idle');
			const proc = (await mux.listPanes()).find(p => p.id === panes.unpinned)?.processes.find(p => claudeAdapter.matchesProcess(p));
			if (!proc) throw new Error('no claude process in the unpinned pane');
			fs.mkdirSync(path.join(home, '.claude', 'sessions'), {recursive: true});
			fs.writeFileSync(
				path.join(home, '.claude', 'sessions', `${proc.pid}.json`),
				JSON.stringify({pid: proc.pid, sessionId: ids.unpinned, procStart: String(proc.startTime), status: 'busy'}),
			);
		} finally {
			await mux.dispose();
		}
		const client = new HerdrClient(socket, 5000);
		await client.request('pane.report_agent_session', {pane_id: panes.pinChanged, source: 'herdr:claude', agent: 'claude', agent_session_id: ids.newPin});
		await client.request('pane.report_agent_session', {pane_id: panes.untracked, source: 'herdr:codex', agent: 'codex', agent_session_id: ids.codex});

		// A survivor of an earlier stop: alive, in no pane, recorded on the row with its start time.
		stray = spawn('sleep', ['600'], {stdio: 'ignore'});
		const strayPid = stray.pid as number;
		const startTime = parseStat(fs.readFileSync(`/proc/${strayPid}/stat`, 'utf8'))?.startTime as number;

		const now = Date.now();
		const epoch = now - 2 * HOUR;
		transcript(home, ids.unpinned, cwd('unpinned'), now - HOUR);
		transcript(home, ids.dup, cwd('dup'), now - HOUR);
		transcript(home, ids.oldPin, cwd('pin-changed'), now - HOUR);
		transcript(home, ids.live, cwd('live'), now - HOUR);
		transcript(home, ids.stale, cwd('stale'), now - HOUR);

		registryFile = path.join(tmp.dir, 'registry.db');
		const registry = Registry.open(registryFile);
		const row = (name: string, over: Partial<Parameters<Registry['insert']>[0]>) =>
			registry.insert({name, agent: 'claude', cwd: cwd(name), mux: 'herdr', status: 'running', epoch, ...over});
		row('gone', {paneId: 'w9:p9'});
		row('exited', {paneId: panes.exited});
		row('unpinned', {paneId: panes.unpinned});
		row('missing', {status: 'stopped', agentSessionId: ids.missing});
		row('dup-a', {cwd: cwd('dup'), status: 'stopped', agentSessionId: ids.dup});
		row('dup-b', {cwd: cwd('dup'), status: 'stopped', agentSessionId: ids.dup});
		row('pin-changed', {paneId: panes.pinChanged, agentSessionId: ids.oldPin});
		row('live', {paneId: panes.live, status: 'stopped', agentSessionId: ids.live});
		row('stale', {
			status: 'stopped',
			agentSessionId: ids.stale,
			extra: {stop: {processes: [{pid: strayPid, startTime, name: 'sleep', argv: ['sleep', '600']}]}},
		});
		registry.close();
	}, 120_000);

	afterAll(async () => {
		stray?.kill('SIGKILL');
		const violations = [...(fake?.violations ?? [])];
		await fake?.stop();
		tmp?.dispose();
		expect(violations).toEqual([]);
	});

	it('drift --json reports each kind exactly once; drift --fix leaves only the kinds without a safe fix', async () => {
		const before = await drift();
		expect(before.stderr).toBe('');
		expect(before.body.mux).toEqual({kind: 'herdr', reachable: true});
		expect(kindsOf(before.body)).toEqual([...FINDING_KINDS].sort());
		const by = (kind: FindingKind) => before.body.findings.find(f => f.kind === kind);
		expect(by('pane-gone')?.sessionName).toBe('gone');
		expect(by('agent-exited')?.sessionName).toBe('exited');
		expect(by('unpinned')?.fix).toMatchObject({type: 'pin', agentSessionId: ids.unpinned});
		expect(by('artifact-missing')?.sessionName).toBe('missing');
		expect(by('untracked-pane')?.fix).toMatchObject({type: 'adopt-pane', paneId: panes.untracked, agent: 'codex', agentSessionId: ids.codex});
		expect(by('duplicate-pin')?.message).toMatch(/dup-a, dup-b/);
		expect(by('pin-changed')?.fix).toMatchObject({type: 'repin', from: ids.oldPin, to: ids.newPin});
		expect(by('stopped-but-live')?.fix).toMatchObject({type: 'mark-running', paneId: panes.live});
		expect(by('stale-process')?.offer).toContain(`pid ${stray.pid}`);
		expect(by('status-disagrees')).toMatchObject({level: 'info', paneId: panes.unpinned, sessionName: 'unpinned'});
		expect(by('status-disagrees')?.evidence).toEqual([expect.stringMatching(/sessions\/\d+\.json says "busy"/), 'herdr agent_status "idle"']);
		expect(before.exitCode).toBe(1);

		const fixed = await runCli(['drift', '--fix', '--mux', 'herdr', '--registry', registryFile], env, {timeoutMs: 60_000});
		expect(fixed.stderr).toBe('');
		for (const kind of ['pane-gone', 'agent-exited', 'unpinned', 'untracked-pane', 'pin-changed', 'stopped-but-live']) {
			expect(fixed.stdout).toContain(`fixed ${kind}:`);
		}
		expect(fixed.exitCode).toBe(1);

		const after = await drift();
		expect(kindsOf(after.body)).toEqual([...NO_SAFE_FIX].sort());
		expect(after.body.findings.every(f => f.fix === undefined)).toBe(true);

		const registry = Registry.open(registryFile);
		try {
			expect(registry.get('gone')).toMatchObject({status: 'stopped', paneId: null});
			expect(registry.get('exited')).toMatchObject({status: 'stopped', paneId: panes.exited});
			expect(registry.get('unpinned')?.agentSessionId).toBe(ids.unpinned);
			expect(registry.get('pin-changed')?.agentSessionId).toBe(ids.newPin);
			expect(registry.get('live')).toMatchObject({status: 'running', paneId: panes.live});
			expect(registry.get('codex-untracked')).toMatchObject({agent: 'codex', status: 'running', paneId: panes.untracked, agentSessionId: ids.codex});
			expect(registry.list()).toHaveLength(10);
			const repin = registry.auditLog('pin-changed').find(a => a.step === 'repin');
			expect(repin?.detail).toMatchObject({old: {agentSessionId: ids.oldPin}, new: {agentSessionId: ids.newPin}});
		} finally {
			registry.close();
		}
		// Nothing was stopped or killed: every pane still runs, and the stray survivor is still alive.
		expect(fake.paneIds()).toHaveLength(5);
		expect(fs.existsSync(`/proc/${stray.pid}`)).toBe(true);
	});
});
