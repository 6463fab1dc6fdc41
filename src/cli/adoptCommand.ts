import {exitCodeFor, optionalOption, requiredOption} from '../actions/cliSupport.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** `mam-tui adopt` over an injected actions factory. */
export function createAdoptCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'adopt',
		summary: 'register a conversation found on disk as a stopped session',
		usage: 'mam-tui adopt --agent A --id ID [--name N]',
		options: {agent: {type: 'string'}, id: {type: 'string'}, name: {type: 'string'}},
		async run(world, values) {
			const agent = requiredOption(values, 'agent', 'adopt');
			const id = requiredOption(values, 'id', 'adopt');
			const name = optionalOption(values, 'name');
			const {actions, dispose} = makeActions(world);
			try {
				const result = await actions.adopt({agent, id, ...(name !== undefined ? {name} : {})});
				if (!result.ok) {
					if (world.options.json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				const {session, created} = result.value;
				if (world.options.json) outJson({ok: true, created, session: session.name, agent: session.agent, id: session.agentSessionId, cwd: session.cwd});
				else out(created ? `adopted ${session.agent} conversation ${session.agentSessionId ?? ''} as ${session.name} (stopped, in ${session.cwd})` : `already registered as ${session.name}`);
				return EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const adoptCommand = createAdoptCommand(world => worldActions(world));
