import {spawn} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {Registry} from '../../src/registry/registry.js';
import {CLI, runCli} from '../helpers/cli.js';
import {tempDir} from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
beforeEach(() => {
	tmp = tempDir();
	// TMUX_TMPDIR: `status` lists tmux panes; it must find no server there, never the user's own.
	env = {HOME: tmp.dir, MAM_HOME: path.join(tmp.dir, 'state'), TMUX_TMPDIR: tmp.dir};
});
afterEach(() => tmp.dispose());

describe('mam-tui CLI', () => {
	it('--help prints usage with every command and exits 0', async () => {
		const r = await runCli(['--help'], env);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain('Usage:');
		expect(r.stdout).toContain('mam-tui status [--json]');
		expect(r.stdout).toContain('Exit codes: 0 ok, 1 failed, 2 bad usage');
	});

	it('runs what package.json installs as the bin (the bundle), not the tsc output beside it', () => {
		const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {bin: Record<string, string>};
		const root = path.dirname(new URL('../../package.json', import.meta.url).pathname);
		expect(path.resolve(root, pkg.bin['mam-tui'] ?? '')).toBe(CLI);
		// An executable whose first line starts sh, which execs node on it (test/cli/launcher.test.ts).
		expect(fs.readFileSync(CLI, 'utf8').startsWith('#!/bin/sh\n')).toBe(true);
		expect(fs.statSync(CLI).mode & 0o111).toBe(0o111);
	});

	it('--version prints the package version', async () => {
		const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string};
		const r = await runCli(['--version'], env);
		expect(r).toMatchObject({exitCode: 0, stdout: pkg.version});
	});

	it('status --json on an empty MAM_HOME lists no sessions', async () => {
		const r = await runCli(['status', '--json'], env);
		expect(r.exitCode).toBe(0);
		// Piped: one line (indented only on a terminal).
		expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
		const body = JSON.parse(r.stdout) as {version: number; registry: string; sessions: unknown[]};
		expect(body).toMatchObject({version: 1, registry: path.join(tmp.dir, 'state', 'registry.db'), sessions: []});
	});

	it("a reader that closes early (`status --json | head`) ends the output quietly, with the command's exit code", async () => {
		const child = spawn('node', [CLI, 'status', '--json'], {env: {PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env}, stdio: ['ignore', 'pipe', 'pipe']});
		// Our end of the pipe closes before the CLI writes: its write gets EPIPE.
		child.stdout.destroy();
		let stderr = '';
		child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const code = await new Promise<number | null>(resolve => child.on('close', resolve));
		expect(stderr).toBe('');
		expect(code).toBe(0);
	});

	it('status lists registry rows, as a table and as JSON', async () => {
		const file = path.join(tmp.dir, 'custom.db');
		const registry = Registry.open(file);
		registry.insert({
			name: 'fix-login',
			agent: 'codex',
			cwd: path.join(tmp.dir, 'src', 'app'),
			status: 'stopped',
			epoch: 1,
			agentSessionId: '01a22b1d-8e49-79f2-a157-8e33808531cf',
		});
		registry.close();
		const human = await runCli(['status', '--registry', file], env);
		expect(human.exitCode).toBe(0);
		expect(human.stdout).toMatch(/fix-login\s+codex\s+stopped\s+—\s+~8e33808531cf\s+~\/src\/app/);
		const json = await runCli(['--registry', file, 'status', '--json'], env);
		const body = JSON.parse(json.stdout) as {sessions: {name: string; agent: string; status: string; agentSessionId: string}[]};
		expect(body.sessions).toEqual([
			expect.objectContaining({name: 'fix-login', agent: 'codex', status: 'stopped', agentSessionId: '01a22b1d-8e49-79f2-a157-8e33808531cf'}),
		]);
	});

	it('a large output to a reader that is slow to start arrives whole before the process exits', async () => {
		// The CLI exits at its 'exit' event (skipping Node's teardown): that must never cut output short.
		const file = path.join(tmp.dir, 'many.db');
		const registry = Registry.open(file);
		for (let i = 0; i < 3000; i++) {
			registry.insert({
				name: `session-${i}-${'x'.repeat(60)}`,
				agent: 'codex',
				cwd: path.join(tmp.dir, 'src', `app-${i}`),
				status: 'stopped',
				epoch: 1,
				agentSessionId: null,
			});
		}
		registry.close();
		const child = spawn('node', [CLI, 'status', '--json', '--registry', file], {
			env: {PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env},
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		// Nothing is read until the CLI has filled the pipe and waits on it.
		child.stdout.pause();
		await new Promise(resolve => setTimeout(resolve, 1500));
		let stdout = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stdout.resume();
		const code = await new Promise<number | string | null>(resolve => {
			const deadline = setTimeout(() => (child.kill('SIGKILL'), resolve('never finished')), 20_000);
			child.on('close', closed => (clearTimeout(deadline), resolve(closed)));
		});
		expect(code).toBe(0);
		expect(stdout.length).toBeGreaterThan(1 << 20);
		expect((JSON.parse(stdout) as {sessions: unknown[]}).sessions).toHaveLength(3000);
	});

	it.each([
		[['nonsense'], 'unknown command'],
		[['status', '--bogus'], "Unknown option '--bogus'"],
		[['--mux', 'screen', 'status'], '--mux must be herdr, tmux or auto'],
		[['status', 'extra'], 'wrong number of arguments'],
	])('bad usage %j exits 2 with a message', async (args, message) => {
		const r = await runCli(args, env);
		expect(r.exitCode).toBe(2);
		expect(r.stderr).toContain(message);
	});

	it('a registry of random bytes is reported with exit 2 and left unchanged', async () => {
		const file = path.join(tmp.dir, 'registry.db');
		const bytes = crypto.randomBytes(8192);
		fs.writeFileSync(file, bytes);
		const r = await runCli(['status', '--registry', file], env);
		expect(r.exitCode).toBe(2);
		expect(r.stderr).toContain(file);
		expect(fs.readFileSync(file).equals(bytes)).toBe(true);
		expect(fs.readdirSync(tmp.dir).sort()).toEqual(['registry.db']);
	});

	it('a bad config value exits 2 naming the key and the file', async () => {
		const config = path.join(tmp.dir, 'cfg', 'mam', 'config.yaml');
		fs.mkdirSync(path.dirname(config), {recursive: true});
		fs.writeFileSync(config, 'stop:\n  graceSeconds: -3\n');
		const r = await runCli(['status'], {...env, XDG_CONFIG_HOME: path.join(tmp.dir, 'cfg')});
		expect(r.exitCode).toBe(2);
		expect(r.stderr).toContain('stop.graceSeconds');
		expect(r.stderr).toContain(config);
	});

	it('the dashboard refuses to start without a terminal (exit 2, hint to status)', async () => {
		const r = await runCli([], env);
		expect(r.exitCode).toBe(2);
		expect(r.stderr).toContain('mam-tui status');
	});
});
