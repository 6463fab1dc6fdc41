import {exitCodeFor, secondsOption, sessionRefFrom} from '../actions/cliSupport.js';
import {formatStopOutcome, formatStopProgress} from '../actions/format.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import type {StopProgress} from '../actions/stop.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** Ticks while a step waits ("waiting for …") are for live displays; step changes are what get printed. */
const isTick = (p: StopProgress) => p.state === 'running' && p.message.startsWith('waiting');

/** `mam-tui stop` over an injected actions factory (tests pass fixture worlds). */
export function createStopCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'stop',
		summary: 'stop a session: type its exit sequence (never over a draft or an approval), then close its pane, then SIGKILL what survives',
		usage: 'mam-tui stop NAME | --agent A --id ID [--grace S] [--kill-wait S]',
		options: {agent: {type: 'string'}, id: {type: 'string'}, grace: {type: 'string'}, 'kill-wait': {type: 'string'}},
		positionals: {min: 0, max: 1},
		async run(world, values, positionals) {
			const ref = sessionRefFrom(values, positionals, 'stop');
			const graceMs = secondsOption(values, 'grace');
			const killWaitMs = secondsOption(values, 'kill-wait');
			const json = world.options.json;
			const steps: StopProgress[] = [];
			const onProgress = (p: StopProgress) => {
				if (isTick(p)) return;
				steps.push(p);
				if (!json) out(formatStopProgress(p));
			};
			const {actions, dispose} = makeActions(world);
			try {
				const result = await actions.stop(ref, {...(graceMs ? {graceMs} : {}), ...(killWaitMs ? {killWaitMs} : {}), onProgress});
				if (!result.ok) {
					if (json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				if (json) outJson({...result.value, steps});
				else out(formatStopOutcome(result.value).join('\n'));
				return result.value.ok ? EXIT.ok : EXIT.failed;
			} finally {
				await dispose();
			}
		},
	};
}

export const stopCommand = createStopCommand(world => worldActions(world));
