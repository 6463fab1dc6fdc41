import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import type {StandinRecord} from '../../src/demo/standin.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {parkingExtra} from '../../src/registry/extra.js';
import {Registry} from '../../src/registry/registry.js';
import {builtCli, cliEnv, runCli, type CliChild} from '../helpers/cli.js';
import {eventually} from '../helpers/poll.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {startTimeOf} from './support/agents.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from './support/tmux.js';

/**
 * Park across real processes (issue 28, "Bad input and safety"): the built `mam-tui park` against
 * a stand-in claude in a private tmux server, over a real sqlite registry. The CLI's test seam
 * (MAM_TEST_PARK_PAUSE, src/cli/parkCommand.ts) stops the park at a named step, so each point is
 * hit every time:
 * - killed (SIGKILL) at each step, the row is running with its agent alive, or parked with its
 *   agent gone, and a following `status` shows the same: never a running row whose agent exited;
 * - two processes that read the row at the same moment and go on together: one parks, the other
 *   is refused, the exit input is typed once.
 */
interface StatusRow {
	readonly name: string;
	readonly status: string;
	readonly liveStatus?: string;
	readonly parked?: {readonly freedBytes: number};
}
interface ParkJson {
	readonly results: ReadonlyArray<{readonly outcome: string; readonly check?: string; readonly why?: string}>;
}

let dir = '';
let server: TmuxServer;
let mux: Multiplexer;
let env: Record<string, string> = {};
let muxArgs: string[] = [];
const started: Array<{pid: number; startTime: number}> = [];
const children: CliChild[] = [];
let counter = 0;

beforeAll(async () => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-park-procs-')));
	for (const sub of ['home', 'project', 'state', 'release']) fs.mkdirSync(path.join(dir, sub));
	env = cliEnv(path.join(dir, 'home'), path.join(dir, 'state'));
	server = await startTmuxServer(env);
	mux = await tmuxBackend(server);
	muxArgs = ['--mux', 'tmux', '--tmux-socket', server.socket];
});

afterEach(async () => {
	for (const child of children.splice(0)) {
		child.kill('SIGKILL');
		await child;
	}
});

afterAll(async () => {
	await mux.dispose();
	await server.kill();
	for (const p of started) if (aliveWithStart(p.pid, p.startTime)) process.kill(p.pid, 'SIGKILL');
	fs.rmSync(dir, {recursive: true, force: true});
	disposeStandinScript();
});

/** An idle stand-in claude (its real screen, live record and conversation file) in a new pane, registered as running and pinned. */
async function idleAgent(): Promise<{name: string; agent: StandinRecord & {startTime: number}; paneId: string}> {
	counter += 1;
	const install = installTestStandin(path.join(dir, `bin-${counter}`), 'claude', {statusScreen: true, artifactHome: path.join(dir, 'home')});
	const paneId = await mux.openPane({argv: [install.file], cwd: path.join(dir, 'project')});
	const record = await eventually('the stand-in started', () => readStandinRecords(install.recordFile)[0]);
	const agent = {...record, startTime: startTimeOf(record.pid)};
	started.push({pid: agent.pid, startTime: agent.startTime});
	await eventually('its empty composer drawn', async () => (await mux.readOutput(paneId, 20)).includes('? for shortcuts'));
	// Idle for longer than the soak (1 s) by its conversation's last write.
	await new Promise(resolve => setTimeout(resolve, 1200));
	const name = `api-${counter}`;
	const registry = Registry.open(path.join(dir, 'state', 'registry.db'));
	try {
		registry.insert({
			name,
			agent: 'claude',
			cwd: path.join(dir, 'project'),
			mux: 'tmux',
			paneId,
			agentSessionId: record.conversationId ?? null,
			status: 'running',
			epoch: Date.now(),
		});
	} finally {
		registry.close();
	}
	return {name, agent, paneId};
}

/** `mam-tui park NAME`, stopping at `pause` (comma-separated steps) until released. */
function parkProcess(name: string, pause: string, release?: string): CliChild & {stderrText: () => string} {
	const child = builtCli(['park', name, '--soak', '1', '--grace', '5', '--json', ...muxArgs], {
		env: {...env, MAM_TEST_PARK_PAUSE: pause, ...(release ? {MAM_TEST_PARK_RELEASE: release} : {})},
		cwd: dir,
	});
	children.push(child);
	let stderr = '';
	child.stderr?.on('data', (chunk: Buffer) => {
		stderr += chunk.toString();
	});
	return Object.assign(child, {stderrText: () => stderr});
}

/** Until the park says it stopped at `step`; a park that ended instead fails with what it said. */
async function pausedAt(park: ReturnType<typeof parkProcess>, step: string): Promise<void> {
	await eventually(`the park paused at ${step}`, () => {
		if (park.stderrText().includes(`park paused at ${step}`)) return true;
		if (park.exitCode !== undefined && park.exitCode !== null) throw new Error(`the park ended before ${step}: ${park.stderrText()}`);
		return false;
	});
}

function rowOf(name: string) {
	const registry = Registry.open(path.join(dir, 'state', 'registry.db'));
	try {
		return registry.get(name);
	} finally {
		registry.close();
	}
}

async function statusOf(name: string): Promise<StatusRow | undefined> {
	const run = await runCli(['status', '--json', ...muxArgs], env);
	expect(run.exitCode, run.stderr).toBe(0);
	return (JSON.parse(run.stdout) as {sessions: StatusRow[]}).sessions.find(s => s.name === name);
}

describe('park across real processes', {timeout: 60_000}, () => {
	// Before the exit input is typed the agent must stay; from then on it goes and the row is parked.
	const cases = [
		['claimed', 'running'],
		['looked', 'running'],
		['checked', 'running'],
		['pending', 'running'],
		['typed', 'parked'],
		['exited', 'parked'],
		['recorded', 'parked'],
	] as const;

	it.each(cases)('killed at %s: the row is %s, and status shows it so', async (step, expected) => {
		const {name, agent, paneId} = await idleAgent();
		const screen = await mux.readOutput(paneId, 20);
		const park = parkProcess(name, step);
		await pausedAt(park, step);
		park.kill('SIGKILL');
		await park;
		if (expected === 'parked') await eventually('the agent exited on its exit input', () => !aliveWithStart(agent.pid, agent.startTime));
		const shown = await statusOf(name);
		const row = rowOf(name);
		const agentAlive = aliveWithStart(agent.pid, agent.startTime);
		// The rule itself, whatever the step: running with its agent, or parked without it.
		expect({status: row?.status, agentAlive}, JSON.stringify(shown)).toSatisfy(
			(r: {status?: string; agentAlive: boolean}) => (r.status === 'running' && r.agentAlive) || (r.status === 'parked' && !r.agentAlive),
		);
		expect(row?.status).toBe(expected);
		if (expected === 'running') {
			expect(shown).toMatchObject({status: 'running', liveStatus: 'idle'});
			// Nothing typed: the stand-in's screen is as it was.
			expect(await mux.readOutput(paneId, 20)).toBe(screen);
			const after = await runCli(['park', name, '--soak', '1', '--grace', '5', '--json', ...muxArgs], env);
			// The dead park's claim does not hold: a new park goes through.
			expect((JSON.parse(after.stdout) as ParkJson).results[0], after.stderr).toMatchObject({outcome: 'parked'});
		} else {
			expect(shown).toMatchObject({status: 'parked', parked: {}});
			expect(shown?.parked?.freedBytes).toBeGreaterThan(0);
			expect(parkingExtra.read(row?.extra ?? {})).toBeUndefined();
		}
	});

	it('two processes that read the row together: one parks, the other is refused, the exit input is typed once', async () => {
		const {name} = await idleAgent();
		const release = fs.mkdtempSync(path.join(dir, 'release', 'race-'));
		const a = parkProcess(name, 'read,checked', release);
		const b = parkProcess(name, 'read,checked', release);
		await pausedAt(a, 'read');
		await pausedAt(b, 'read');
		fs.writeFileSync(path.join(release, 'read'), '');
		// Each either reaches the last check or has given up; neither types before both are there.
		const settled = (p: typeof a) => p.stderrText().includes('paused at checked') || p.exitCode !== undefined;
		await eventually('both past the claim', () => settled(a) && settled(b));
		fs.writeFileSync(path.join(release, 'checked'), '');
		const runs = await Promise.all([a, b]);
		const results = runs.map(r => (JSON.parse(String(r.stdout)) as ParkJson).results[0]);
		expect(
			results.filter(r => r?.outcome === 'parked'),
			JSON.stringify(results),
		).toHaveLength(1);
		expect(results.find(r => r?.outcome !== 'parked')).toMatchObject({outcome: 'refused', check: 'changed'});
		const registry = Registry.open(path.join(dir, 'state', 'registry.db'));
		try {
			expect(registry.auditLog(name).filter(e => e.action === 'park' && e.step === 'exit-input' && e.outcome === 'started')).toHaveLength(1);
		} finally {
			registry.close();
		}
	});
});
