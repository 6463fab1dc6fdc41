import {parseArgs} from 'node:util';
import {CliError, EXIT, type ExitCode} from '../domain/exitCodes.js';
import {ConfigError} from '../config/config.js';
import {RegistryError} from '../registry/db.js';
import {messageOf} from '../domain/result.js';
import {isMuxChoice, MUX_CHOICES} from '../domain/types.js';
import type {Command, OptionSpec, ParsedValues} from './commands.js';
import {errOut, out} from './output.js';
import {statusCommand} from './statusCommand.js';
import {driftCommand} from './driftCommand.js';
import {createAdoptCommand} from './adoptCommand.js';
import {newCommand} from './newCommand.js';
import {createPurgeCommand} from './purgeCommand.js';
import {createRestoreCommand, createTrashCommand} from './trashCommand.js';
import {createResumeCommand} from './resumeCommand.js';
import {createStopCommand} from './stopCommand.js';
import {createParkCommand, createWakeCommand} from './parkCommand.js';
import {chosenHost, hostAwareActions} from './hostActions.js';
import {conversationsCommand} from './conversationsCommand.js';
import {searchCommand} from './searchCommand.js';
import {usageCommand} from './usageCommand.js';
import {demoCommand} from './demoCommand.js';
import {serveCommand} from './serveCommand.js';
import {loadDashboard} from './loadDashboard.js';
import {packageVersion} from './version.js';
import {createWorld, type GlobalOptions, type World} from '../world/world.js';

const GLOBAL_OPTIONS = {
	mux: {type: 'string'},
	'tmux-socket': {type: 'string'},
	'tmux-path': {type: 'string'},
	registry: {type: 'string'},
	home: {type: 'string'},
	host: {type: 'string'},
	json: {type: 'boolean'},
	verbose: {type: 'boolean'},
	help: {type: 'boolean', short: 'h'},
	version: {type: 'boolean'},
} as const satisfies OptionSpec;

/** Subcommands that really work. Later capabilities add theirs here. Those over `hostAwareActions` also run on a `--host`. */
export const COMMANDS: readonly Command[] = [
	statusCommand,
	driftCommand,
	createResumeCommand(hostAwareActions),
	createStopCommand(hostAwareActions),
	createParkCommand(hostAwareActions),
	createWakeCommand(hostAwareActions),
	createPurgeCommand(hostAwareActions),
	createTrashCommand(hostAwareActions),
	createRestoreCommand(hostAwareActions),
	newCommand,
	createAdoptCommand(hostAwareActions),
	conversationsCommand,
	searchCommand,
	usageCommand,
	demoCommand,
	serveCommand,
];

/** Commands that can run on another host (`--host NAME`); the others say so (exit 2). */
const HOST_COMMANDS: ReadonlySet<string> = new Set(['status', 'resume', 'stop', 'park', 'wake', 'purge', 'trash', 'restore', 'adopt']);

const dashboardCommand: Command = {
	name: 'dashboard',
	summary: 'the interactive dashboard (the default)',
	usage: `mam-tui [--mux ${MUX_CHOICES.join('|')}] [--registry PATH] [--home DIR]`,
	options: {},
	async run(world) {
		// Imported lazily: the scriptable commands never pay for loading React and Ink.
		const {runDashboard} = await loadDashboard();
		return runDashboard(world);
	},
};

export function usage(): string {
	const width = Math.max(...COMMANDS.map(c => c.usage.length));
	return [
		'mam-tui — watch and steer many coding-agent sessions in herdr or tmux panes',
		'',
		'Usage:',
		`  ${dashboardCommand.usage}`,
		...COMMANDS.map(c => `  ${c.usage.padEnd(width)}  ${c.summary}`),
		'',
		'Options:',
		`  --mux ${MUX_CHOICES.join('|')}   multiplexer backend (default auto: herdr when its socket answers, else tmux)`,
		'  --tmux-socket NAME      the tmux server `tmux -L NAME` uses (default: your own)',
		'  --tmux-path PATH        the tmux server socket `tmux -S PATH` uses',
		'  --registry PATH         registry database (default $MAM_HOME/registry.db, $XDG_STATE_HOME/mam, ~/.local/state/mam)',
		'  --home DIR              whose agent data to read (default $HOME_DIR, else $HOME)',
		'  --host NAME             run on that host from config.yaml hosts: (over ssh; see "Many machines")',
		'  --json                  machine-readable output',
		'  --verbose               debug-level log file',
		'  -h, --help, --version',
		'',
		'Exit codes: 0 ok, 1 failed, 2 bad usage or input, 3 not found, 4 in use, 5 purge left residual artifacts.',
	].join('\n');
}

/** Global options that take a value: skipped (with their value) when looking for the subcommand. */
const VALUE_OPTIONS: ReadonlySet<string> = new Set(['--mux', '--tmux-socket', '--tmux-path', '--registry', '--home', '--host']);

function splitCommand(argv: readonly string[]): {name: string | undefined; rest: string[]} {
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] ?? '';
		if (arg === '--') break;
		if (VALUE_OPTIONS.has(arg)) {
			i++;
			continue;
		}
		if (!arg.startsWith('-')) return {name: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)]};
	}
	return {name: undefined, rest: [...argv]};
}

/** `--tmux-socket NAME` (-L) or `--tmux-path PATH` (-S), not both. */
function tmuxServerOptions(socket: string | undefined, socketPath: string | undefined): Pick<GlobalOptions, 'tmuxSocket' | 'tmuxPath'> {
	if (socket !== undefined && socketPath !== undefined) throw new CliError('give --tmux-socket or --tmux-path, not both', EXIT.usage);
	if (socket !== undefined && !/^[A-Za-z0-9._-]{1,100}$/.test(socket)) {
		throw new CliError(`--tmux-socket needs a plain name (letters, digits, . _ -), got ${JSON.stringify(socket)}`, EXIT.usage);
	}
	if (socketPath !== undefined && (socketPath.length === 0 || socketPath.includes('\0'))) throw new CliError('--tmux-path needs a path', EXIT.usage);
	return {...(socket ? {tmuxSocket: socket} : {}), ...(socketPath ? {tmuxPath: socketPath} : {})};
}

function globalOptions(values: ParsedValues): GlobalOptions {
	const mux = values['mux'];
	if (mux !== undefined && !isMuxChoice(mux)) {
		throw new CliError(`--mux must be ${MUX_CHOICES.slice(0, -1).join(', ')} or ${MUX_CHOICES.at(-1)} (got ${JSON.stringify(mux)})`, EXIT.usage);
	}
	const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
	for (const key of ['registry', 'home']) {
		const value = str(key);
		if (value !== undefined && (value.length === 0 || value.includes('\0'))) {
			throw new CliError(`--${key} needs a path`, EXIT.usage);
		}
	}
	const registry = str('registry');
	const home = str('home');
	const host = str('host');
	const tmux = tmuxServerOptions(str('tmux-socket'), str('tmux-path'));
	return {
		...(mux ? {mux} : {}),
		...tmux,
		...(registry ? {registry} : {}),
		...(home ? {home} : {}),
		...(host !== undefined ? {host} : {}),
		json: values['json'] === true,
		verbose: values['verbose'] === true,
	};
}

/** Run the CLI; returns the exit code. Never throws: every failure becomes a message and a code. */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<ExitCode> {
	const {name, rest} = splitCommand(argv);
	const command = name === undefined ? dashboardCommand : COMMANDS.find(c => c.name === name);
	if (!command) {
		errOut(`mam-tui: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
		return EXIT.usage;
	}
	let parsed: {values: ParsedValues; positionals: string[]};
	try {
		parsed = parseArgs({
			args: rest,
			options: {...GLOBAL_OPTIONS, ...command.options},
			allowPositionals: true,
			strict: true,
		}) as {values: ParsedValues; positionals: string[]};
	} catch (error) {
		errOut(`mam-tui: ${messageOf(error)}\n\n${usage()}`);
		return EXIT.usage;
	}
	if (parsed.values['version']) {
		out(packageVersion());
		return EXIT.ok;
	}
	if (parsed.values['help']) {
		out(name === undefined ? usage() : `Usage: ${command.usage}\n\n${command.summary}`);
		return EXIT.ok;
	}
	const allowed = command.positionals ?? {min: 0, max: 0};
	if (parsed.positionals.length < allowed.min || parsed.positionals.length > allowed.max) {
		errOut(`mam-tui: wrong number of arguments\nUsage: ${command.usage}`);
		return EXIT.usage;
	}
	let world: World | undefined;
	try {
		world = createWorld(globalOptions(parsed.values), env);
		if (chosenHost(world) && !HOST_COMMANDS.has(command.name)) {
			throw new CliError(
				`${command.name} runs on this machine only; on ${world.options.host ?? '?'} run it there (HOST commands: ${[...HOST_COMMANDS].join(', ')})`,
				EXIT.usage,
			);
		}
		return await command.run(world, parsed.values, parsed.positionals);
	} catch (error) {
		return reportError(error, world);
	} finally {
		world?.close();
	}
}

function reportError(error: unknown, world: World | undefined): ExitCode {
	if (error instanceof CliError) {
		errOut(`mam-tui: ${error.message}`);
		return error.code;
	}
	if (error instanceof RegistryError || error instanceof ConfigError) {
		errOut(`mam-tui: ${error.message}`);
		return EXIT.usage;
	}
	world?.logger.error('command failed', error);
	errOut(`mam-tui: ${messageOf(error)}`);
	return EXIT.failed;
}
