import crypto from 'node:crypto';
import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {realExec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {aliveWithStart, disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {startTimeOf} from './support/agents.js';
import {eventually} from '../helpers/poll.js';

let dir: string;
const running: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
	for (const child of running.splice(0)) child.kill('SIGKILL');
	if (dir) fs.rmSync(dir, {recursive: true, force: true});
});

afterAll(() => disposeStandinScript());

function scratch(): string {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-standin-')));
	fs.mkdirSync(path.join(dir, 'project'));
	return dir;
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
	return new Promise(resolve => {
		if (child.exitCode !== null) resolve(child.exitCode);
		else child.once('exit', code => resolve(code));
	});
}

function context(home: string): AdapterContext {
	return {home, ownHome: false, env: {}, exec: realExec, processes: createProcessTable(), now: Date.now, tmpDir: os.tmpdir()};
}

describe('the stand-in agent', {timeout: 30_000}, () => {
	it('records argv and cwd, echoes input and exits cleanly on its exit input', async () => {
		const d = scratch();
		const install = installTestStandin(path.join(d, 'bin'), 'codex', {exitInputs: ['/quit']});
		const child = spawn(install.file, ['resume', 'abc'], {cwd: path.join(d, 'project')});
		running.push(child);
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => {
			output += chunk.toString();
		});
		const record = await eventually('the record', () => readStandinRecords(install.recordFile)[0]);
		expect(record).toMatchObject({agent: 'codex', argv: ['codex', 'resume', 'abc'], cwd: path.join(d, 'project'), pid: child.pid});
		child.stdin.write('hello\n');
		await eventually('the echo', () => output.includes('you said "hello"'));
		child.stdin.write('/exit\n');
		child.stdin.write('/quit\n');
		expect(await exited(child)).toBe(0);
	});

	it('ignores its exit input and SIGTERM when told to, and takes its time to exit when told to', async () => {
		const d = scratch();
		const stubborn = installTestStandin(path.join(d, 'bin1'), 'claude', {ignoreExit: true, ignoreSignals: true});
		const child = spawn(stubborn.file, [], {cwd: d});
		running.push(child);
		const record = await eventually('the record', () => readStandinRecords(stubborn.recordFile)[0]);
		const startTime = startTimeOf(record.pid);
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => {
			output += chunk.toString();
		});
		child.stdin.write('/exit\n');
		await eventually('the exit input to be ignored', () => output.includes('ignores /exit'));
		child.kill('SIGTERM');
		await eventually('SIGTERM to be ignored', () => output.includes('ignores SIGTERM'));
		child.kill('SIGHUP');
		await eventually('SIGHUP to be ignored', () => output.includes('ignores SIGHUP'));
		// Its input going away (a closed pane) does not end it either.
		child.stdin.end();
		await eventually('the end of its input', () => output.includes('keeps running without input'));
		expect(aliveWithStart(record.pid, startTime)).toBe(true);

		const slow = installTestStandin(path.join(d, 'bin2'), 'claude', {exitDelayMs: 300});
		const second = spawn(slow.file, [], {cwd: d});
		running.push(second);
		await eventually('the slow one', () => readStandinRecords(slow.recordFile)[0]);
		let said = '';
		second.stdout.on('data', (chunk: Buffer) => {
			said += chunk.toString();
		});
		second.stdin.write('/exit\n');
		await eventually('the slow exit to begin', () => said.includes('saving the conversation'));
		expect(second.exitCode).toBeNull();
		expect(await exited(second)).toBe(0);
	});

	it('starts children, one of them in its own session, and ends them on a clean exit', async () => {
		const d = scratch();
		const install = installTestStandin(path.join(d, 'bin'), 'claude', {children: 1, orphan: true});
		const child = spawn(install.file, [], {cwd: d});
		running.push(child);
		const record = await eventually('the record', () => readStandinRecords(install.recordFile)[0]);
		expect(record.childPids).toHaveLength(2);
		const [plain, orphan] = record.childPids.map(pid => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []);
		// fields[3] is the session id: the plain child shares the stand-in's, the orphan has its own.
		expect(plain?.[3]).toBe(fs.readFileSync(`/proc/${record.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[3]);
		expect(orphan?.[3]).toBe(String(record.childPids[1]));
		const refs = record.childPids.map(pid => ({pid, startTime: startTimeOf(pid)}));
		child.stdin.write('/exit\n');
		expect(await exited(child)).toBe(0);
		await eventually('the children to end', () => refs.every(r => !aliveWithStart(r.pid, r.startTime)));
	});

	it('writes a claude conversation the real claude adapter verifies and sees in use', async () => {
		const d = scratch();
		const id = crypto.randomUUID();
		const install = installTestStandin(path.join(d, 'bin'), 'claude', {artifactHome: path.join(d, 'home')});
		const child = spawn(install.file, ['--resume', id], {cwd: path.join(d, 'project')});
		running.push(child);
		const record = await eventually('the record', () => readStandinRecords(install.recordFile)[0]);
		const ctx = context(path.join(d, 'home'));
		expect(await ADAPTERS.claude.verify(ctx, id, path.join(d, 'project'))).toEqual({kind: 'yes'});
		const holders = await ADAPTERS.claude.inUse(ctx, id);
		expect(holders.map(h => h.pid)).toContain(record.pid);
		expect(fs.existsSync(path.join(d, 'home', '.claude', 'sessions', `${record.pid}.json`))).toBe(true);
		child.stdin.write('/exit\n');
		await exited(child);
		expect(fs.existsSync(path.join(d, 'home', '.claude', 'sessions', `${record.pid}.json`))).toBe(false);
	});

	it('keeps a codex rollout open, as codex does', async () => {
		const d = scratch();
		const id = crypto.randomUUID();
		const install = installTestStandin(path.join(d, 'bin'), 'codex', {artifactHome: path.join(d, 'home')});
		const child = spawn(install.file, ['resume', id], {cwd: path.join(d, 'project')});
		running.push(child);
		const record = await eventually('the record', () => readStandinRecords(install.recordFile)[0]);
		expect(record.artifact).toMatch(new RegExp(`/\\.codex/sessions/\\d{4}/\\d{2}/\\d{2}/rollout-[0-9T-]+-${id}\\.jsonl$`));
		const first = JSON.parse(fs.readFileSync(record.artifact ?? '', 'utf8').split('\n')[0] ?? '') as {type: string; payload: {id: string; cwd: string}};
		expect(first).toMatchObject({type: 'session_meta', payload: {id, cwd: path.join(d, 'project')}});
		const holders = await createProcessTable().holders([record.artifact ?? '']);
		expect(holders.map(h => h.pid)).toEqual([record.pid]);
	});
});
