import {worldActions} from '../actions/fromWorld.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {serve} from '../remote/serve.js';
import {worldSource} from '../remote/source.js';
import type {Command} from './commands.js';
import {packageVersion} from './version.js';

/**
 * `mam-tui serve --stdio`: this machine for a mam-tui elsewhere, over the stdin and stdout ssh
 * gives it. Started by the other side's ssh; it installs, upgrades or replaces nothing.
 */
export const serveCommand: Command = {
	name: 'serve',
	summary: 'speak JSON-RPC on stdin/stdout for a mam-tui on another machine (started by its ssh; see "Many machines")',
	usage: 'mam-tui serve --stdio',
	options: {stdio: {type: 'boolean'}},
	async run(world, values) {
		if (values['stdio'] !== true) throw new CliError('serve needs --stdio (the only transport: the other side runs it through ssh)', EXIT.usage);
		const bound = worldActions(world, {}, {live: true});
		// The channel closing mid-action must not end an action half-way: SIGHUP (a hung-up
		// session) is left to the end of input, which waits for calls in flight.
		const ignoreHup = () => world.logger.info('serve: SIGHUP; finishing calls in flight');
		process.on('SIGHUP', ignoreHup);
		try {
			await serve({
				input: process.stdin,
				output: process.stdout,
				version: packageVersion(),
				actions: bound.actions,
				source: () => worldSource(world, bound.deps.mux),
				logger: world.logger,
			});
		} finally {
			process.off('SIGHUP', ignoreHup);
			await bound.dispose();
		}
		return EXIT.ok;
	},
};
