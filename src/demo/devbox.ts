import fs from 'node:fs';
import path from 'node:path';
import {adapterFor} from '../adapters/index.js';
import type {AdapterContext} from '../adapters/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {createTmuxMux} from '../mux/tmux.js';
import {Registry, type NewSession} from '../registry/registry.js';
import type {ProcessTable} from '../system/processes.js';
import {installStandin} from './installStandin.js';
import {PROJECTS, writeSampleData} from './sampleData.js';
import {sandboxExec, type Sandbox} from './sandbox.js';

// The demo's second machine, `devbox` (README "Many machines"): a second sandbox beside the first,
// reached through a stand-in `ssh` first on the dashboard's PATH. The dashboard runs its real
// hosts code: it starts `ssh … -- devbox '<command> serve --stdio'`, the stand-in hands that
// command line to /bin/sh as a remote login shell would, in devbox's environment, and the
// mam-tui there serves devbox's registry and tmux server over the channel.

/** The host's name in config.yaml, the HOST column and the status bar. */
export const DEVBOX = 'devbox';

/** Where devbox lives inside the sandbox: its own home, registry, stand-ins and tmux server. */
export interface Devbox {
	readonly home: string;
	readonly state: string;
	readonly bin: string;
	readonly work: string;
	/** devbox's tmux server (`tmux -S`). */
	readonly socket: string;
	/** The environment of everything that runs "on" devbox. */
	readonly env: Readonly<Record<string, string>>;
}

/** A word for /bin/sh, single-quoted. */
const shellWord = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

export function devboxOf(sandbox: Sandbox): Devbox {
	const base = path.join(sandbox.base, DEVBOX);
	const home = path.join(base, 'home');
	const dirs = {home, state: path.join(base, 'state'), bin: path.join(base, 'bin'), work: path.join(home, 'src'), socket: path.join(base, 'tmux.sock')};
	return {
		...dirs,
		env: {...sandbox.env, HOME: home, MAM_HOME: dirs.state, PATH: [dirs.bin, sandbox.env['PATH'] ?? '/usr/bin:/bin'].join(path.delimiter)},
	};
}

/**
 * Before the dashboard's world is built (it reads config.yaml once): name devbox in config.yaml,
 * with the mam-tui that runs this demo as its command, and install the stand-in `ssh`.
 * `mamTui` is the argv that runs this mam-tui (node and the CLI script).
 */
export function prepareDevbox(sandbox: Sandbox, mamTui: readonly string[]): Devbox {
	const devbox = devboxOf(sandbox);
	for (const dir of [devbox.home, devbox.state, devbox.bin, devbox.work]) fs.mkdirSync(dir, {recursive: true});
	const command = [...mamTui, '--mux', 'tmux', '--tmux-path', devbox.socket];
	const config = path.join(sandbox.home, '.config', 'mam', 'config.yaml');
	fs.appendFileSync(config, `hosts:\n  - name: ${DEVBOX}\n    ssh: ${DEVBOX}\n    command: ${JSON.stringify(command)}\n`);
	const env = Object.entries(devbox.env).map(([key, value]) => `${key}=${shellWord(value)}`);
	const ssh = [
		'#!/bin/sh',
		`# mam-tui demo: "ssh ${DEVBOX}" runs its last argument, the remote command line, in a login`,
		'# shell of the second sandbox, as sshd would on a real host (generated).',
		'for remote; do :; done',
		`exec env -i ${env.join(' ')} /bin/sh -c "$remote"`,
		'',
	].join('\n');
	fs.writeFileSync(path.join(sandbox.bin, 'ssh'), ssh, {mode: 0o755});
	return devbox;
}

/**
 * devbox's world: sample conversations of its own, a tmux server with a working claude and an
 * idle codex stand-in, and its registry (those two running, a gemini session stopped).
 */
export async function buildDevbox(devbox: Devbox, deps: {readonly processes: ProcessTable; readonly ctx: AdapterContext}): Promise<void> {
	const {ids} = writeSampleData(devbox.home, devbox.work);
	installStandin({binDir: devbox.bin, name: 'claude', options: {statusScreen: true, artifactHome: devbox.home, startState: 'working'}});
	installStandin({binDir: devbox.bin, name: 'codex', options: {statusScreen: true, artifactHome: devbox.home, startState: 'idle'}});
	const exec = sandboxExec(devbox.env);
	const tmuxArgs = ['-u', '-S', devbox.socket, '-f', '/dev/null', 'new-session', '-d', '-s', DEVBOX, '-n', 'shell', '-x', '160', '-y', '48', '-c', devbox.work];
	const started = await exec('tmux', tmuxArgs);
	if (started.failure || started.exitCode !== 0)
		throw new CliError(`could not start the demo's second tmux server: ${started.failure ?? started.stderr.trim()}`, EXIT.failed);
	const mux = createTmuxMux({server: {socketPath: devbox.socket}, exec, processes: deps.processes, env: devbox.env, pollMs: 1000});
	const cwd = (project: string) => path.join(devbox.work, project);
	const resume = (agent: 'claude' | 'codex', id: string) => adapterFor(agent)?.resume(deps.ctx, id).argv ?? [agent];
	let panes: {claude: string; codex: string};
	try {
		panes = {
			claude: await mux.openPane({argv: resume('claude', ids.claudeLive), cwd: cwd(PROJECTS.claude), title: 'api-fix'}),
			codex: await mux.openPane({argv: resume('codex', ids.codexLive), cwd: cwd(PROJECTS.codex), title: 'orders-pagination'}),
		};
	} finally {
		await mux.dispose();
	}
	const now = Date.now();
	const HOUR = 3_600_000;
	const rows: NewSession[] = [
		{
			name: 'api-fix',
			agent: 'claude',
			cwd: cwd(PROJECTS.claude),
			mux: 'tmux',
			paneId: panes.claude,
			agentSessionId: ids.claudeLive,
			status: 'running',
			epoch: now - HOUR,
		},
		{
			name: 'orders-pagination',
			agent: 'codex',
			cwd: cwd(PROJECTS.codex),
			mux: 'tmux',
			paneId: panes.codex,
			agentSessionId: ids.codexLive,
			status: 'running',
			epoch: now - HOUR,
		},
		{name: 'changelog', agent: 'gemini', cwd: cwd(PROJECTS.gemini), mux: 'tmux', agentSessionId: ids.geminiShared, status: 'stopped', epoch: now - 5 * HOUR},
	];
	const registry = Registry.open(path.join(devbox.state, 'registry.db'));
	try {
		for (const row of rows) registry.insert(row);
	} finally {
		registry.close();
	}
}
