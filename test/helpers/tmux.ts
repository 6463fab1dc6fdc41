import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import {execa} from 'execa';
import type {Exec} from '../../src/system/exec.js';
import {writeAgentStandIns} from '../support/agentBin.js';

/**
 * The environment for a child that must never reach the user's tmux or herdr: no TMUX /
 * TMUX_PANE (tmux would pick the surrounding server), no HERDR_* (a pane would report to the
 * user's herdr), no ENV/BASH_ENV (a shell would source the user's files).
 */
export function isolatedEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (value === undefined || key === 'TMUX' || key === 'TMUX_PANE' || key.startsWith('HERDR_') || key === 'ENV' || key === 'BASH_ENV') continue;
		env[key] = value;
	}
	return {...env, ...extra};
}

export interface TmuxRun {
	readonly exitCode: number;
	readonly stdout: string;
	readonly stderr: string;
}

/**
 * A private tmux server (`tmux -L mam-test-<random>`), never the default one: the one way the
 * tests reach tmux (the mux tests, the action and e2e harnesses, the bench).
 */
export interface PrivateTmux {
	readonly name: string;
	/**
	 * Run `tmux -L <name> -f /dev/null ...args` (argv, no shell). `path` is the client's PATH:
	 * tmux hands it to a new pane, overriding any `-e PATH=`.
	 */
	run(args: readonly string[], path?: string): Promise<TmuxRun>;
	/** Kill the server and everything in it. */
	kill(): Promise<void>;
}

/**
 * A fresh `<prefix>-<random>` server, or the one named `name` (tmux starts it on first use).
 * Its clients run with `env` in full when given (the server started by the first one keeps it
 * as every pane's environment), else with ours minus what would reach the user's tmux or herdr.
 */
export function privateTmux(
	prefix = 'mam-test',
	name = `${prefix}-${crypto.randomBytes(4).toString('hex')}`,
	env?: Readonly<Record<string, string>>,
): PrivateTmux {
	const run = async (args: readonly string[], path?: string): Promise<TmuxRun> => {
		const extra: Record<string, string> = path === undefined ? {} : {PATH: path};
		const result = await execa('tmux', ['-u', '-L', name, '-f', '/dev/null', ...args], {
			env: env ? {...env, ...extra} : isolatedEnv(extra),
			extendEnv: false,
			reject: false,
			timeout: 10_000,
		});
		return {exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr)};
	};
	return {
		name,
		run,
		async kill() {
			await run(['kill-server']);
			// tmux leaves its socket file behind; a test run should not leave hundreds in /tmp.
			const uid = process.getuid?.() ?? 0;
			fs.rmSync(path.join(process.env['TMUX_TMPDIR'] || '/tmp', `tmux-${uid}`, name), {force: true});
		},
	};
}

/** The Exec port for tests: argv only, and never the user's tmux (no TMUX/TMUX_PANE in the child). */
export const isolatedExec: Exec = async (file, args, options = {}) => {
	const result = await execa(file, [...args], {
		env: isolatedEnv(options.env ? {...options.env} : {}),
		extendEnv: false,
		reject: false,
		timeout: options.timeoutMs ?? 10_000,
		stripFinalNewline: false,
	});
	const failure = result.failed && result.exitCode === undefined ? result.shortMessage : undefined;
	return {exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr), ...(failure ? {failure} : {})};
};

/** A scratch folder with `claude` and `codex` stand-ins in `bin`, and a PATH that finds them first. */
export function paneScratch(prefix = 'mam-tmux-'): {dir: string; bin: string; path: string; dispose: () => void} {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	const bin = path.join(dir, 'bin');
	writeAgentStandIns(bin, ['claude', 'codex']);
	return {dir, bin, path: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, dispose: () => fs.rmSync(dir, {recursive: true, force: true})};
}
