import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {execa} from 'execa';

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

/** A private tmux server (`tmux -L mam-test-<random>`), never the default one. */
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

/** A fresh `<prefix>-<random>` server, or the one named `name` (tmux starts it on first use). */
export function privateTmux(prefix = 'mam-test', name = `${prefix}-${crypto.randomBytes(4).toString('hex')}`): PrivateTmux {
	const run = async (args: readonly string[], path?: string): Promise<TmuxRun> => {
		const result = await execa('tmux', ['-u', '-L', name, '-f', '/dev/null', ...args], {
			env: isolatedEnv(path === undefined ? {} : {PATH: path}),
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
