import crypto from 'node:crypto';
import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {execa} from 'execa';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import {disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {agentPids, killLeftovers, startAgentInPane} from './support/agents.js';
import {fixtureRoot, installFixtureDeleteCommand, snapshotTree, writeFixtureConversation} from './support/fixtureAdapter.js';
import {startTmuxServer, tmuxBackend, type TmuxServer} from './support/tmux.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {eventually} from '../helpers/poll.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNNER = path.join(ROOT, 'test/actions/support/cliRunner.ts');

let world: TestWorld;
const children: ChildProcess[] = [];
const uuid = () => crypto.randomUUID();

afterEach(() => {
	for (const child of children.splice(0)) child.kill('SIGKILL');
	world?.dispose();
});

afterAll(() => disposeStandinScript());

function runnerEnv(w: TestWorld, extra: Record<string, string> = {}): Record<string, string> {
	return {
		PATH: `${w.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
		HOME: path.join(w.dir, 'user'),
		MAM_HOME: path.join(w.dir, 'state'),
		NO_COLOR: '1',
		...extra,
	};
}

function worldArgs(w: TestWorld): string[] {
	return ['--registry', path.join(w.dir, 'registry.db'), '--home', w.home];
}

/** `mam-tui <args>` through the runner (same commands, fixture adapter), without a terminal. */
function runner(w: TestWorld, args: readonly string[], extra: Record<string, string> = {}) {
	return execa('node', ['--import', 'tsx', RUNNER, ...args, ...worldArgs(w)], {
		cwd: ROOT,
		env: runnerEnv(w, extra),
		extendEnv: false,
		reject: false,
		stdin: 'ignore',
	});
}

interface Scene {
	readonly a: string;
	readonly b: string;
	readonly c: string;
	readonly children: readonly string[];
}

function scene(w: TestWorld, options: {deleteFails?: boolean; childCount?: number} = {}): Scene {
	installFixtureDeleteCommand(w.binDir, options.deleteFails ?? false);
	const s = {a: uuid(), b: uuid(), c: uuid(), children: Array.from({length: options.childCount ?? 1}, uuid)};
	writeFixtureConversation(w.home, {id: s.a, cwd: w.project});
	for (const child of s.children) writeFixtureConversation(w.home, {id: child, cwd: w.project, parent: s.a});
	writeFixtureConversation(w.home, {id: s.b, cwd: w.project});
	writeFixtureConversation(w.home, {id: s.c, cwd: w.project});
	w.registry.insert({name: 'alpha', agent: 'claude', cwd: w.project, agentSessionId: s.a, status: 'stopped', epoch: 0});
	w.registry.insert({name: 'beta', agent: 'claude', cwd: w.project, agentSessionId: s.b, status: 'stopped', epoch: 0});
	return s;
}

/** The other sessions' files, byte for byte (the shared index by its lines). */
function othersOf(w: TestWorld, ids: readonly string[]): Record<string, string> {
	const tree = snapshotTree(fixtureRoot(w.home));
	const index = fs
		.readFileSync(path.join(fixtureRoot(w.home), 'index.jsonl'), 'utf8')
		.split('\n')
		.filter(l => ids.some(id => l.includes(id)));
	return {...Object.fromEntries(Object.entries(tree).filter(([file]) => ids.some(id => file.includes(id)))), index: index.join('\n')};
}

describe('purge from the command line', {timeout: 60_000}, () => {
	it('--dry-run prints every path, row and child session and deletes nothing', async () => {
		world = createTestWorld('mam-cli-');
		const s = scene(world);
		const before = snapshotTree(world.home);
		const result = await runner(world, ['purge', 'alpha', '--dry-run']);
		expect(result.exitCode).toBe(0);
		for (const item of [
			`convs/${s.a}.jsonl`,
			`convs/${s.a}`,
			`store/${s.a}.row`,
			'index.jsonl: 1 lines',
			`[child session ${s.children[0]}]`,
			`child sessions: ${s.children[0]}`,
		]) {
			expect(result.stdout).toContain(item);
		}
		expect(result.stdout).toContain('registry row alpha: marked purged');
		expect(result.stdout).toContain('dry run: nothing was deleted');
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('needs --yes without a terminal (exit 2) and deletes nothing', async () => {
		world = createTestWorld('mam-cli-');
		scene(world);
		const before = snapshotTree(world.home);
		const result = await runner(world, ['purge', 'alpha']);
		expect(result.exitCode).toBe(2);
		expect(result.stderr).toContain('--yes');
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('exits 4 naming the holder while a stand-in holds the conversation', async () => {
		world = createTestWorld('mam-cli-');
		const s = scene(world);
		const install = installTestStandin(path.join(world.dir, 'standin-bin'), 'claude');
		children.push(spawn(install.file, ['--resume', s.a], {stdio: ['pipe', 'ignore', 'ignore']}));
		const record = await eventually('the stand-in', () => readStandinRecords(install.recordFile)[0]);
		const before = snapshotTree(world.home);
		const result = await runner(world, ['purge', 'alpha', '--yes']);
		expect(result.exitCode).toBe(4);
		expect(result.stderr).toContain(`pid ${record.pid} (`);
		expect(result.stderr).toContain(`claude --resume ${s.a}`);
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('exits 5 listing what is left when the agent delete command fails', async () => {
		world = createTestWorld('mam-cli-');
		const s = scene(world, {deleteFails: true});
		const result = await runner(world, ['purge', 'alpha', '--yes']);
		expect(result.exitCode).toBe(5);
		expect(result.stdout).toContain('warning: fixture-agent delete failed: exit 1');
		expect(result.stdout).toContain(`residual: 2 left`);
		expect(result.stdout).toContain(`store/${s.a}.row`);
		expect(result.stdout).toContain(`[child session ${s.children[0]}]`);
	});

	it('finishes a purge killed at random points: rerun ends with an empty residual, other sessions intact', async () => {
		world = createTestWorld('mam-cli-');
		const s = scene(world, {childCount: 8});
		const others = othersOf(world, [s.b, s.c]);
		const delays: number[] = [];
		for (let run = 0; run < 4; run++) {
			const child = runner(world, ['purge', 'alpha', '--yes'], {FIXTURE_PURGE_DELAY_MS: '100'});
			let seen = '';
			child.stdout.on('data', (chunk: Buffer) => {
				seen += chunk.toString();
			});
			await eventually('the purge to start deleting', () => seen.includes('recheck done') || child.exitCode !== null, {timeoutMs: 20_000});
			// Somewhere inside the ~2 s of deleting (18 files and folders, 100 ms apart).
			const delay = Math.floor(Math.random() * 2000);
			delays.push(delay);
			await new Promise(resolve => setTimeout(resolve, delay));
			child.kill('SIGKILL');
			await child;
			expect(othersOf(world, [s.b, s.c]), `after a kill at +${delay} ms`).toEqual(others);
		}
		const last = await runner(world, ['purge', 'alpha', '--yes']);
		expect(last.exitCode, `${last.stdout}\n${last.stderr}\nkills at ${delays.join(', ')} ms`).toBe(0);
		expect(last.stdout).toContain('residual: nothing left');
		expect(await world.adapter.residual(world.context, s.a)).toEqual([]);
		expect(othersOf(world, [s.b, s.c])).toEqual(others);
		expect(world.registry.get('alpha')?.status).toBe('purged');
		expect(world.registry.get('beta')?.status).toBe('stopped');
		const starts = world.registry.auditLog('alpha').filter(a => a.step === 'delete' && a.outcome === 'started');
		expect(starts.length).toBeGreaterThanOrEqual(2);
	});

	it('rejects a bad id with exit 2 and an unknown name with exit 3', async () => {
		world = createTestWorld('mam-cli-');
		expect((await runner(world, ['purge', '--agent', 'claude', '--id', '../../x', '--yes'])).exitCode).toBe(2);
		expect((await runner(world, ['purge', 'nobody', '--yes'])).exitCode).toBe(3);
		expect((await runner(world, ['purge', 'nobody', '--agent', 'claude'])).exitCode).toBe(2);
	});
});

describe('typed confirmation in a terminal', {timeout: 60_000}, () => {
	let server: TmuxServer;
	let sharedBin: string;

	beforeAll(async () => {
		// tmux hands a new pane the PATH of the client that asked for it, whatever -e says: the
		// fake delete command must be on this server's client PATH.
		sharedBin = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-cli-bin-')));
		installFixtureDeleteCommand(sharedBin, false);
		server = await startTmuxServer({PATH: `${sharedBin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, HOME: '/tmp'});
		// A finished purge's pane stays on screen, so its last lines can be read.
		await server.run(['set-option', '-g', 'remain-on-exit', 'on']);
	});

	afterAll(async () => {
		await server.kill();
		fs.rmSync(sharedBin, {recursive: true, force: true});
	});

	/** Run the purge in a pane (a real terminal), type `text`, and return the exit status and screen. */
	async function purgeTyping(w: TestWorld, text: string): Promise<{status: number; screen: string}> {
		const env = Object.entries(runnerEnv(w, {MAM_RUNNER_SHOW_EXIT: '1'})).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
		const paneId = (
			await server.run([
				'new-window',
				'-d',
				'-P',
				'-F',
				'#{pane_id}',
				'-c',
				ROOT,
				...env,
				'--',
				process.execPath,
				'--import',
				'tsx',
				RUNNER,
				'purge',
				'alpha',
				...worldArgs(w),
			])
		).trim();
		await eventually('the confirmation prompt', async () => (await server.run(['capture-pane', '-p', '-t', paneId])).includes('to delete all of the above'), {
			timeoutMs: 20_000,
		});
		await server.run(['send-keys', '-t', paneId, '-l', text]);
		await server.run(['send-keys', '-t', paneId, 'Enter']);
		const screen = await eventually(
			'the purge to finish',
			async () => {
				const text = await server.run(['capture-pane', '-p', '-t', paneId, '-S', '-100']);
				return /\[exit \d+\]/.test(text) ? text : undefined;
			},
			{timeoutMs: 20_000},
		);
		const status = Number(/\[exit (\d+)\]/.exec(screen)?.[1]);
		await server.run(['kill-pane', '-t', paneId]);
		return {status, screen};
	}

	it('a wrong name cancels and deletes nothing; the exact name purges', async () => {
		world = createTestWorld('mam-cli-');
		const s = scene(world);
		const before = snapshotTree(world.home);
		const wrong = await purgeTyping(world, 'alph');
		expect(wrong.screen).toContain('type "alpha" to delete all of the above');
		expect(wrong.screen).toContain('purge cancelled; nothing was deleted');
		expect(wrong.status).toBe(1);
		expect(snapshotTree(world.home)).toEqual(before);
		const right = await purgeTyping(world, 'alpha');
		expect(right.status, right.screen).toBe(0);
		expect(right.screen).toContain('residual: nothing left');
		expect(await world.adapter.residual(world.context, s.a)).toEqual([]);
	});
});

describe('stop, new, adopt and resume from the command line', {timeout: 60_000}, () => {
	let server: TmuxServer;
	const leftovers: Array<{pid: number; startTime: number}> = [];

	beforeAll(async () => {
		server = await startTmuxServer({PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/tmp'});
	});

	afterAll(async () => {
		await server.kill();
		killLeftovers(leftovers);
	});

	it('stop prints each step as it happens and which step ended it', async () => {
		world = createTestWorld('mam-cli-');
		const mux = await tmuxBackend(server);
		const agent = await startAgentInPane(world, mux, {ignoreExit: true, ignoreSignals: true, orphan: true}, 'stubborn');
		await mux.dispose();
		const pids = agentPids(agent);
		leftovers.push(...pids);
		const result = await runner(world, ['stop', 'stubborn', '--mux', 'tmux', '--tmux-socket', server.socket, '--grace', '1', '--kill-wait', '1']);
		expect(result.exitCode, result.stderr).toBe(0);
		const lines = result.stdout.split('\n');
		expect(lines.filter(l => l.startsWith('step ')).map(l => l.split(/\s+/).slice(0, 4).join(' '))).toEqual([
			'step 0 capture running',
			'step 0 capture done',
			'step 1 exit-input running',
			'step 1 exit-input failed',
			'step 2 close-pane running',
			'step 2 close-pane failed',
			'step 3 sigkill running',
			'step 3 sigkill done',
		]);
		expect(result.stdout).toContain('stubborn: stopped at step 3 (sigkill)');
		expect(result.stdout).toContain('no process of the session is left');
		const table = await world.context.processes.list();
		for (const p of pids) expect(table.some(t => t.pid === p.pid && t.startTime === p.startTime)).toBe(false);
	});

	it('exit codes: unknown session 3, bad id 2, bad --grace 2', async () => {
		world = createTestWorld('mam-cli-');
		expect((await runner(world, ['stop', 'nobody'])).exitCode).toBe(3);
		expect((await runner(world, ['stop', '--agent', 'claude', '--id', 'not-a-uuid'])).exitCode).toBe(2);
		expect((await runner(world, ['stop', 'x', '--grace', '-1'])).exitCode).toBe(2);
		expect((await runner(world, ['resume', '--agent', 'claude', '--id', '$(rm -rf ~)'])).exitCode).toBe(2);
		expect((await runner(world, ['adopt', '--agent', 'claude', '--id', 'x/../y'])).exitCode).toBe(2);
	});

	it('adopt registers a verified conversation as stopped with its cwd from discovery; unknown ids exit 3', async () => {
		world = createTestWorld('mam-cli-');
		const id = uuid();
		writeFixtureConversation(world.home, {id, cwd: world.project, createdAt: 1_700_000_000_000});
		const result = await runner(world, ['adopt', '--agent', 'claude', '--id', id, '--name', 'adopted']);
		expect(result.exitCode, result.stderr).toBe(0);
		expect(world.registry.get('adopted')).toMatchObject({status: 'stopped', agentSessionId: id, cwd: world.project, epoch: 1_700_000_000_000, paneId: null});
		expect((await runner(world, ['adopt', '--agent', 'claude', '--id', id])).stdout).toContain('already registered as adopted');
		expect((await runner(world, ['adopt', '--agent', 'claude', '--id', uuid()])).exitCode).toBe(3);
	});

	it('new opens the spawn argv in a pane and registers an unpinned running row with epoch now', async () => {
		world = createTestWorld('mam-cli-');
		const install = installTestStandin(world.binDir, 'claude');
		const before = Date.now();
		const result = await runner(world, [
			'new',
			'--agent',
			'claude',
			'--cwd',
			world.project,
			'--name',
			'fresh',
			'--mux',
			'tmux',
			'--tmux-socket',
			server.socket,
		]);
		expect(result.exitCode, result.stderr).toBe(0);
		const row = world.registry.get('fresh');
		expect(row).toMatchObject({status: 'running', agentSessionId: null, mux: 'tmux', cwd: world.project});
		expect(row?.epoch).toBeGreaterThanOrEqual(before);
		const record = await eventually('the new agent', () => readStandinRecords(install.recordFile)[0]);
		leftovers.push(...[record.pid].map(pid => ({pid, startTime: Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19])})));
		expect(record.argv).toEqual(['claude']);
		expect(record.cwd).toBe(world.project);
		expect((await server.panes()).map(p => p.id)).toContain(row?.paneId);
		expect(
			(await runner(world, ['new', '--agent', 'claude', '--cwd', world.project, '--name', 'fresh', '--mux', 'tmux', '--tmux-socket', server.socket])).exitCode,
		).toBe(2);
		expect(
			(await runner(world, ['new', '--agent', 'claude', '--cwd', path.join(world.dir, 'nope'), '--mux', 'tmux', '--tmux-socket', server.socket])).exitCode,
		).toBe(2);
		expect((await runner(world, ['new', '--agent', 'nosuch', '--cwd', world.project])).exitCode).toBe(2);
	});
});
