import {exitCodeFor, optionalOption, requiredOption} from '../actions/cliSupport.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** `mam-tui new` over an injected actions factory. */
export function createNewCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'new',
		summary: 'start a new agent conversation in a new pane and register it (pinned once the agent writes it)',
		usage: 'mam-tui new --agent A --cwd DIR [--name N]',
		options: {agent: {type: 'string'}, cwd: {type: 'string'}, name: {type: 'string'}},
		async run(world, values) {
			const agent = requiredOption(values, 'agent', 'new');
			const cwd = requiredOption(values, 'cwd', 'new');
			const name = optionalOption(values, 'name');
			const {actions, dispose} = makeActions(world);
			try {
				const result = await actions.newSession({agent, cwd, ...(name !== undefined ? {name} : {})});
				if (!result.ok) {
					if (world.options.json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				const s = result.value;
				if (world.options.json) outJson({ok: true, session: s.name, agent: s.agent, cwd: s.cwd, mux: s.mux, paneId: s.paneId});
				else
					out(
						`started ${s.name} (${s.agent}) in ${s.mux ?? '?'} pane ${s.paneId ?? '?'} in ${s.cwd}; a running dashboard pins it once the agent writes its conversation (else \`mam-tui drift --fix\` does)`,
					);
				return EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const newCommand = createNewCommand(world => worldActions(world));
