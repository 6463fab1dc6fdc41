// Runs one of the action commands exactly as `mam-tui` would (same Command objects, same World),
// but with the fixture adapter: `node --import tsx cliRunner.ts <command> [args…]`. Used to kill a
// purge half-way, to put a failing delete command on PATH, and to confirm in a real terminal.
import {parseArgs} from 'node:util';
import {worldActions} from '../../../src/actions/fromWorld.js';
import type {Command, ParsedValues} from '../../../src/cli/commands.js';
import {createPurgeCommand} from '../../../src/cli/purgeCommand.js';
import {createAdoptCommand} from '../../../src/cli/adoptCommand.js';
import {createResumeCommand} from '../../../src/cli/resumeCommand.js';
import {createStopCommand} from '../../../src/cli/stopCommand.js';
import {createNewCommand} from '../../../src/cli/newCommand.js';
import {createWorld} from '../../../src/world/world.js';
import {CliError, EXIT} from '../../../src/domain/exitCodes.js';
import {messageOf} from '../../../src/domain/result.js';
import {createFixtureAdapter} from './fixtureAdapter.js';

const fixture = createFixtureAdapter();
const factory = (world: Parameters<typeof worldActions>[0]) => worldActions(world, {adapterFor: agent => (agent === 'claude' ? fixture : undefined)});
const commands: readonly Command[] = [
	createPurgeCommand(factory),
	createAdoptCommand(factory),
	createResumeCommand(factory),
	createStopCommand(factory),
	createNewCommand(factory),
];

async function run(argv: readonly string[]): Promise<number> {
	const [name, ...rest] = argv;
	const command = commands.find(c => c.name === name);
	if (!command) {
		process.stderr.write(`cliRunner: unknown command ${String(name)}\n`);
		return EXIT.usage;
	}
	let parsed: {values: unknown; positionals: string[]};
	try {
		parsed = parseArgs({
			args: [...rest],
			options: {
				...command.options,
				registry: {type: 'string'},
				home: {type: 'string'},
				json: {type: 'boolean'},
				mux: {type: 'string'},
				'tmux-socket': {type: 'string'},
			},
			allowPositionals: true,
			strict: true,
		});
	} catch (error) {
		process.stderr.write(`mam-tui: ${messageOf(error)}\n`);
		return EXIT.usage;
	}
	const values = parsed.values as ParsedValues;
	const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
	const mux = str('mux');
	const world = createWorld(
		{
			...(str('registry') ? {registry: str('registry')} : {}),
			...(str('home') ? {home: str('home')} : {}),
			...(mux === 'tmux' || mux === 'herdr' ? {mux} : {}),
			...(str('tmux-socket') ? {tmuxSocket: str('tmux-socket')} : {}),
			json: values['json'] === true,
			verbose: false,
		},
		process.env,
	);
	try {
		return await command.run(world, values, parsed.positionals);
	} catch (error) {
		process.stderr.write(`mam-tui: ${messageOf(error)}\n`);
		return error instanceof CliError ? error.code : EXIT.failed;
	} finally {
		world.close();
	}
}

const code = await run(process.argv.slice(2));
// In a tmux pane the exit status is not always readable (tmux 3.3 leaves pane_dead_status empty): say it.
if (process.env['MAM_RUNNER_SHOW_EXIT'] === '1') process.stdout.write(`[exit ${code}]\n`);
process.exitCode = code;
