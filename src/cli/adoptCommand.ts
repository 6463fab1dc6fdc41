import {exitCodeFor, optionalOption, requiredOption} from '../actions/cliSupport.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** `mam-tui adopt` over an injected actions factory. */
export function createAdoptCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'adopt',
		summary: "register a conversation (or the agent running in a pane), pinned from the agent's own evidence",
		usage: 'mam-tui adopt --agent A --id ID [--name N] | --pane P [--agent A] [--id ID] [--name N]',
		options: {agent: {type: 'string'}, id: {type: 'string'}, name: {type: 'string'}, pane: {type: 'string'}},
		async run(world, values) {
			const pane = optionalOption(values, 'pane');
			const agent = pane === undefined ? requiredOption(values, 'agent', 'adopt') : optionalOption(values, 'agent');
			const id = pane === undefined ? requiredOption(values, 'id', 'adopt') : optionalOption(values, 'id');
			const name = optionalOption(values, 'name');
			const {actions, dispose} = makeActions(world);
			try {
				const result = await actions.adopt({
					...(agent !== undefined ? {agent} : {}),
					...(id !== undefined ? {id} : {}),
					...(name !== undefined ? {name} : {}),
					...(pane !== undefined ? {pane} : {}),
				});
				if (!result.ok) {
					if (world.options.json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				const {session, created, paneId, evidence} = result.value;
				if (world.options.json) {
					outJson({
						ok: true,
						created,
						session: session.name,
						agent: session.agent,
						id: session.agentSessionId,
						cwd: session.cwd,
						status: session.status,
						paneId: session.paneId,
						epoch: new Date(session.epoch).toISOString(),
						evidence: evidence ?? [],
					});
				} else {
					const where = paneId ? `running in pane ${paneId}` : 'stopped';
					const what = session.agentSessionId
						? `${session.agent} conversation ${session.agentSessionId}`
						: `${session.agent} in pane ${paneId ?? '?'} (not pinned yet)`;
					out(
						created
							? `adopted ${what} as ${session.name} (${where}, in ${session.cwd})`
							: paneId
								? `${session.name}: linked to pane ${paneId}, running`
								: `already registered as ${session.name}`,
					);
				}
				return EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const adoptCommand = createAdoptCommand(world => worldActions(world));
