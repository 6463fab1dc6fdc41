import fs from 'node:fs';
import path from 'node:path';
import {createWorld, type World} from '../world/world.js';
import {CliError, EXIT, type ExitCode} from '../domain/exitCodes.js';
import {reapOnce, reapSandbox} from './reaper.js';
import {createSandbox, removeSandboxDirs, type Sandbox} from './sandbox.js';
import {buildDevbox, prepareDevbox, type Devbox} from './devbox.js';
import {buildScenario} from './scenario.js';

/** What the demo prints and how it opens the dashboard (the composition root's runDashboard). */
export interface DemoDeps {
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly out: (line: string) => void;
	readonly err: (line: string) => void;
	readonly runDashboard: (world: World, options: {readonly signal?: AbortSignal}) => Promise<ExitCode>;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type DemoSignal = (typeof SIGNALS)[number];

/** The dashboard's world: the sandbox's env, and every program (tmux, the agents' own commands) run with it. */
function demoWorld(sandbox: Sandbox): World {
	const world = createWorld({mux: 'tmux', tmuxSocket: sandbox.tmuxName, json: false, verbose: false}, sandbox.env);
	return {...world, exec: sandbox.exec, adapterContext: () => ({...world.adapterContext(), exec: sandbox.exec})};
}

/** Where tmux keeps the server's socket (`tmux -L NAME`), to remove one a killed server left behind. */
function tmuxSocketFile(sandbox: Sandbox): string {
	const dir = sandbox.env['TMUX_TMPDIR'] || '/tmp';
	return path.join(dir, `tmux-${process.getuid?.() ?? 0}`, sandbox.tmuxName);
}

/**
 * Tear the sandbox down: the tmux server (its panes get SIGHUP), then every process that still
 * carries the sandbox marker (stand-ins that ignore SIGHUP, strays), then the folders.
 */
async function teardown(sandbox: Sandbox, devbox: Devbox | undefined, deps: DemoDeps): Promise<void> {
	// Already gone (the user killed it) is fine: the reaper below ends whatever is left either way.
	await sandbox.exec('tmux', ['-u', '-L', sandbox.tmuxName, 'kill-server'], {timeoutMs: 5000});
	if (devbox) await sandbox.exec('tmux', ['-u', '-S', devbox.socket, 'kill-server'], {timeoutMs: 5000});
	const survivors = await reapSandbox(sandbox.base);
	// tmux 3.3 leaves the socket file of a killed server behind; the server is gone by now.
	fs.rmSync(tmuxSocketFile(sandbox), {force: true});
	removeSandboxDirs(sandbox);
	if (survivors.length > 0) deps.err(`mam-tui demo: could not end pid ${survivors.join(', ')}`);
	deps.out(`mam-tui demo: cleaned up — tmux server ${sandbox.tmuxName} stopped, every stand-in ended, ${sandbox.base} removed`);
}

/**
 * `mam-tui demo` (SPEC 3): build a private sandbox with sample data and stand-in agents, open the
 * dashboard on it, and remove everything when the dashboard ends — by q or ctrl+c, or by
 * SIGINT/SIGTERM/SIGHUP. Nothing outside the sandbox is read or written.
 */
export async function runDemo(deps: DemoDeps): Promise<ExitCode> {
	if (!process.stdin.isTTY || !process.stdout.isTTY) {
		throw new CliError('the demo opens the dashboard and needs a terminal (run it in one, or inside tmux)', EXIT.usage);
	}
	const sandbox = createSandbox(deps.env);
	const stop = new AbortController();
	let signalled: DemoSignal | undefined;
	let tornDown = false;
	// Last resort (an uncaught error, process.exit elsewhere): synchronous, so no tmux call.
	const onExit = () => {
		if (tornDown) return;
		reapOnce(sandbox.base);
		fs.rmSync(tmuxSocketFile(sandbox), {force: true});
		removeSandboxDirs(sandbox);
	};
	const onSignal = (signal: DemoSignal) => {
		signalled ??= signal;
		// The terminal may be gone (SIGHUP): a failed write must not crash the cleanup.
		process.stdout.on('error', () => {});
		process.stderr.on('error', () => {});
		stop.abort();
	};
	process.on('exit', onExit);
	for (const signal of SIGNALS) process.on(signal, onSignal);
	let world: World | undefined;
	let devbox: Devbox | undefined;
	// The dashboard starts `ssh` for its hosts with this process's PATH: the sandbox's stand-in
	// `ssh` (devbox.ts) goes first, for as long as the dashboard runs.
	const userPath = process.env['PATH'];
	try {
		const self = process.argv[1];
		if (self !== undefined) {
			devbox = prepareDevbox(sandbox, [process.execPath, self]);
			process.env['PATH'] = [sandbox.bin, userPath ?? '/usr/bin:/bin'].join(path.delimiter);
		}
		world = demoWorld(sandbox);
		await buildScenario(sandbox, {processes: world.processes, ctx: world.adapterContext()});
		if (devbox) await buildDevbox(devbox, {processes: world.processes, ctx: world.adapterContext()});
		deps.out(`mam-tui demo: watch the agents with \`tmux -L ${sandbox.tmuxName} attach\` (sandbox ${sandbox.base}; q quits and removes it all)`);
		if (!stop.signal.aborted) await deps.runDashboard(world, {signal: stop.signal});
	} finally {
		world?.close();
		if (userPath === undefined) delete process.env['PATH'];
		else process.env['PATH'] = userPath;
		try {
			await teardown(sandbox, devbox, deps);
		} finally {
			tornDown = true;
			for (const signal of SIGNALS) process.off(signal, onSignal);
			process.off('exit', onExit);
		}
	}
	if (signalled) {
		deps.err(`mam-tui demo: ended by ${signalled}`);
		return EXIT.failed;
	}
	return EXIT.ok;
}
