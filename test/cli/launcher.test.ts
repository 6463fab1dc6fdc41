import fs from 'node:fs';
import path from 'node:path';
import {execa} from 'execa';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {restoreLauncherEnv} from '../../src/cli/launcher.js';
import {CLI} from '../helpers/cli.js';
import {tempDir} from '../helpers/tmp.js';

// The installed bin is a two-line sh launcher in front of the bundle (src/cli/launcher.ts): node
// starts with NODE_EXTRA_CA_CERTS empty, and the user's value is put back for child processes.

let tmp: ReturnType<typeof tempDir>;
let base: Record<string, string>;
beforeEach(() => {
	tmp = tempDir();
	base = {PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: tmp.dir, MAM_HOME: path.join(tmp.dir, 'state'), TMUX_TMPDIR: tmp.dir, NO_COLOR: '1'};
});
afterEach(() => tmp.dispose());

/** Run the bin file itself, as a shell does (its first line names /bin/sh). */
const runBin = (args: readonly string[], env: Record<string, string>) => execa(CLI, [...args], {env, extendEnv: false, reject: false, input: ''});

/**
 * A `tmux` first on PATH that records what it inherits, then fails: `status --mux tmux` starts it,
 * so it shows the environment of every process mam-tui starts.
 */
function envProbe(): {path: string; seen: () => string; parent: () => string} {
	const dir = path.join(tmp.dir, 'probe');
	const out = path.join(tmp.dir, 'probe.out');
	fs.mkdirSync(dir);
	fs.writeFileSync(
		path.join(dir, 'tmux'),
		`#!/bin/sh\nprintf '%s|%s' "\${NODE_EXTRA_CA_CERTS-unset}" "\${MAM_TUI_NODE_EXTRA_CA_CERTS-unset}" > '${out}'\ntr '\\0' ' ' < /proc/$PPID/cmdline > '${out}.parent'\nexit 1\n`,
		{mode: 0o755},
	);
	return {path: `${dir}:${base['PATH']}`, seen: () => fs.readFileSync(out, 'utf8'), parent: () => fs.readFileSync(`${out}.parent`, 'utf8')};
}

describe('the bin launcher', () => {
	it('keeps the heap tight with a V8 flag this Node knows (an unknown one is ignored, with a complaint on stdout)', async () => {
		const launcher = new URL('../../src/cli/launcher.ts', import.meta.url).href;
		const r = await execa('node', ['--import', 'tsx', '--input-type=module', '-e', `(await import(${JSON.stringify(launcher)})).keepHeapTight()`], {
			reject: false,
		});
		expect({exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr}).toEqual({exitCode: 0, stdout: '', stderr: ''});
	});

	it('starts node without loading NODE_EXTRA_CA_CERTS (Node 20 reads it at start-up)', async () => {
		const env = {...base, NODE_EXTRA_CA_CERTS: path.join(tmp.dir, 'missing-ca.pem')};
		// node warns at start-up when the file cannot be loaded: the warning shows it read the variable.
		const direct = await execa('node', [CLI, '--version'], {env, extendEnv: false, reject: false});
		expect(direct.stderr).toContain('Ignoring extra certs');
		const bin = await runBin(['--version'], env);
		expect(bin.stderr).toBe('');
		expect(bin.exitCode).toBe(0);
		expect(bin.stdout).toBe(direct.stdout);
	});

	it("gives the processes it starts the user's NODE_EXTRA_CA_CERTS back, and nothing of its own", async () => {
		const probe = envProbe();
		const env = {...base, PATH: probe.path, NODE_EXTRA_CA_CERTS: '/etc/corp ca/bundle.pem'};
		await runBin(['status', '--json', '--mux', 'tmux', '--tmux-socket', 'mam-launcher-probe'], env);
		expect(probe.seen()).toBe('/etc/corp ca/bundle.pem|unset');
	});

	it('starts node with an 8 MB young generation (the peak RSS of the first refresh)', async () => {
		const probe = envProbe();
		await runBin(['status', '--json', '--mux', 'tmux', '--tmux-socket', 'mam-launcher-probe'], {...base, PATH: probe.path});
		expect(probe.parent()).toMatch(/^node --max-semi-space-size=8 \S*cli\.js status /);
	});

	it('leaves NODE_EXTRA_CA_CERTS unset for its children when the user had none, whatever else is set', async () => {
		const probe = envProbe();
		const env = {...base, PATH: probe.path, MAM_TUI_NODE_EXTRA_CA_CERTS: '/stale/ca.pem'};
		await runBin(['status', '--json', '--mux', 'tmux', '--tmux-socket', 'mam-launcher-probe'], env);
		expect(probe.seen()).toBe('unset|unset');
	});

	it('runs through a link named mam-tui on PATH, as npm installs the bin', async () => {
		const bin = path.join(tmp.dir, 'bin');
		fs.mkdirSync(bin);
		fs.symlinkSync(CLI, path.join(bin, 'mam-tui'));
		const run = await execa('mam-tui', ['--version'], {env: {...base, PATH: `${bin}:${base['PATH']}`}, extendEnv: false, reject: false});
		expect(run.stderr).toBe('');
		expect(run.stdout).toMatch(/^\d+\.\d+\.\d+$/);
	});

	it("passes arguments through unchanged and returns the command's exit code", async () => {
		const registry = path.join(tmp.dir, 'a dir $HOME "q" \'s\'', 'registry.db');
		const ok = await runBin(['status', '--json', '--mux', 'tmux', '--tmux-socket', 'mam-launcher-none', '--registry', registry], base);
		expect((JSON.parse(ok.stdout) as {registry: string}).registry).toBe(registry);
		const bad = await runBin(['no-such-command'], base);
		expect(bad.exitCode).toBe(2);
	});
});

describe('restoreLauncherEnv', () => {
	it('moves the saved value back and removes the saved copy', () => {
		const env: NodeJS.ProcessEnv = {NODE_EXTRA_CA_CERTS: '', MAM_TUI_NODE_EXTRA_CA_CERTS: '/ca.pem'};
		restoreLauncherEnv(env);
		expect(env).toEqual({NODE_EXTRA_CA_CERTS: '/ca.pem'});
	});

	it('changes nothing when the launcher saved nothing', () => {
		const env: NodeJS.ProcessEnv = {NODE_EXTRA_CA_CERTS: '/mine.pem'};
		restoreLauncherEnv(env);
		expect(env).toEqual({NODE_EXTRA_CA_CERTS: '/mine.pem'});
	});
});
