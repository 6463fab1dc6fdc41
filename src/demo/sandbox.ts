import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {execa} from 'execa';
import type {Exec} from '../system/exec.js';

/**
 * The private world `mam-tui demo` runs in: a temp folder holding a home for the agents' data,
 * a state folder for the registry, a bin folder of stand-in agents and the projects they work
 * in; a private tmux server; and an environment that names only these.
 */
export interface Sandbox {
	/** The temp folder everything lives in (a realpath); removed on exit. */
	readonly base: string;
	/** HOME of the agents, the panes and the dashboard. */
	readonly home: string;
	/** MAM_HOME: the registry and the log. */
	readonly state: string;
	/** The stand-in agents; first on the panes' PATH. */
	readonly bin: string;
	/** The project folders sessions run in (`~/src`, so the dashboard shows them short). */
	readonly work: string;
	/** `mam-demo-<pid>`: the tmux server (`tmux -L <name>`). */
	readonly tmuxName: string;
	/** The environment of everything started in the sandbox (and of the dashboard's world). */
	readonly env: Readonly<Record<string, string>>;
	/** Runs a program with exactly `env` (plus the caller's overrides), never the caller's own environment. */
	readonly exec: Exec;
}

/** The variable every process started in the sandbox carries: how cleanup finds them all, and only them. */
export const SANDBOX_MARKER = 'MAM_DEMO_SANDBOX';

/**
 * Variables worth keeping from the user's environment. Everything else is dropped: an inherited
 * XDG_DATA_HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, HERMES_HOME… would point the agents (and the
 * adapters, which follow such overrides for the caller's own home) at the user's real data, and
 * TMUX/HERDR_* would point the panes at the user's multiplexer.
 */
const KEPT = [
	'PATH',
	'LANG',
	'LANGUAGE',
	'LC_ALL',
	'LC_CTYPE',
	'LC_MESSAGES',
	'TERM',
	'COLORTERM',
	'NO_COLOR',
	'USER',
	'LOGNAME',
	'TZ',
	'TMUX_TMPDIR',
	'TMPDIR',
];

/** The sandbox environment: a few harmless variables of the user's, then ours. */
export function sandboxEnv(from: Readonly<Record<string, string | undefined>>, dirs: Pick<Sandbox, 'base' | 'home' | 'state' | 'bin'>): Record<string, string> {
	const env: Record<string, string> = {};
	for (const key of KEPT) {
		const value = from[key];
		if (value !== undefined && value !== '') env[key] = value;
	}
	return {
		...env,
		PATH: [dirs.bin, env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(path.delimiter),
		HOME: dirs.home,
		MAM_HOME: dirs.state,
		// A plain shell for the panes that hold one: it reads no rc file from the user's real home.
		SHELL: '/bin/sh',
		[SANDBOX_MARKER]: dirs.base,
	};
}

/** An Exec whose child sees `env` and nothing of the caller's environment. */
export function sandboxExec(env: Readonly<Record<string, string>>): Exec {
	return async (file, args, options = {}) => {
		const result = await execa(file, [...args], {
			cwd: options.cwd,
			env: {...env, ...options.env},
			extendEnv: false,
			timeout: options.timeoutMs ?? 15_000,
			input: options.input,
			reject: false,
			stripFinalNewline: false,
			shell: false,
		});
		const failure = result.failed && result.exitCode === undefined ? result.shortMessage : undefined;
		return {
			exitCode: result.exitCode,
			stdout: typeof result.stdout === 'string' ? result.stdout : '',
			stderr: typeof result.stderr === 'string' ? result.stderr : '',
			...(failure ? {failure} : {}),
		};
	};
}

/** Shorter stop steps than the defaults (10 s / 3 s), so an escalation is quick to watch. */
const DEMO_CONFIG = `# mam-tui demo: shorter waits so a stop escalation is quick to watch
stop:
  graceSeconds: 4
  killWaitSeconds: 2
refresh:
  discoverySeconds: 3
  pollMs: 1000
`;

/** Make the temp folders (under the user's TMPDIR) and the environment. */
export function createSandbox(from: Readonly<Record<string, string | undefined>>, pid = process.pid): Sandbox {
	const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-demo-')));
	const home = path.join(base, 'home');
	const dirs = {base, home, state: path.join(base, 'state'), bin: path.join(base, 'bin'), work: path.join(home, 'src')};
	for (const dir of [dirs.home, dirs.state, dirs.bin, dirs.work]) fs.mkdirSync(dir, {recursive: true});
	// Written before any World is built: the dashboard reads its config once, at start.
	const config = path.join(home, '.config', 'mam', 'config.yaml');
	fs.mkdirSync(path.dirname(config), {recursive: true});
	fs.writeFileSync(config, DEMO_CONFIG);
	const env = sandboxEnv(from, dirs);
	return {...dirs, tmuxName: `mam-demo-${pid}`, env, exec: sandboxExec(env)};
}

/** Remove the sandbox's folders. Safe to call twice. */
export function removeSandboxDirs(sandbox: Pick<Sandbox, 'base'>): void {
	fs.rmSync(sandbox.base, {recursive: true, force: true});
}
