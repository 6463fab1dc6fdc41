import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {execa} from 'execa';

/** The built CLI as users run it (package.json bin; npm test builds first): tests run it as a child process. */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/bin/cli.js');

export interface CliRun {
	readonly exitCode: number;
	readonly stdout: string;
	readonly stderr: string;
}

/**
 * A private tmux socket folder for every CLI this test process starts: `--mux auto` falls back to
 * tmux, and it must never reach the user's default server.
 */
const tmuxTmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-cli-tmux-'));
process.on('exit', () => fs.rmSync(tmuxTmpdir, {recursive: true, force: true}));

/**
 * Run `mam-tui ...args` with a clean env plus `env`; never inherits the user's MAM_HOME, HOME,
 * herdr socket or tmux server.
 */
export async function runCli(args: readonly string[], env: Record<string, string>, options: {input?: string; timeoutMs?: number} = {}): Promise<CliRun> {
	// A test that names its private server (--tmux-socket/--tmux-path) keeps tmux's socket folder;
	// any other run gets an empty one, so `--mux auto` finds no default server to fall back to.
	const namesServer = args.some(a => a === '--tmux-socket' || a === '--tmux-path' || a.startsWith('--tmux-'));
	const base: Record<string, string> = {PATH: process.env['PATH'] ?? '/usr/bin:/bin', NO_COLOR: '1', ...(namesServer ? {} : {TMUX_TMPDIR: tmuxTmpdir})};
	// The bin file itself, as a shell starts it: its sh launcher, then node (src/cli/launcher.ts).
	const result = await execa(CLI, [...args], {
		env: {...base, ...env},
		extendEnv: false,
		reject: false,
		input: options.input ?? '',
		timeout: options.timeoutMs ?? 30_000,
	});
	return {exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr)};
}
