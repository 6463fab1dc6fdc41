import {exitCodeFor, sessionRefFrom} from '../actions/cliSupport.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** `mam-tui resume` over an injected actions factory. */
export function createResumeCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'resume',
		summary: 'resume a stopped session in a new pane, in its own folder (--agent/--id adopts the conversation first)',
		usage: 'mam-tui resume NAME | --agent A --id ID',
		options: {agent: {type: 'string'}, id: {type: 'string'}},
		positionals: {min: 0, max: 1},
		async run(world, values, positionals) {
			const ref = sessionRefFrom(values, positionals, 'resume');
			const {actions, dispose} = makeActions(world);
			try {
				const result = await actions.resume(ref);
				if (!result.ok) {
					if (world.options.json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				const {session, paneId, argv, cwd} = result.value;
				if (world.options.json) outJson({ok: true, session: session.name, paneId, mux: session.mux, argv, cwd});
				else out(`resumed ${session.name} in ${session.mux ?? '?'} pane ${paneId}: ${argv.join(' ')} (in ${cwd})`);
				return EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const resumeCommand = createResumeCommand(world => worldActions(world));
