import {exitCodeFor, sessionRefsFrom} from '../actions/cliSupport.js';
import {formatPlan, formatPurgeResult} from '../actions/format.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import type {PurgePlanView, PurgeProgress} from '../actions/purge.js';
import {describeHolders} from '../actions/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';

/** How the command talks to the person at the terminal (injected so tests can stand in). */
export interface ConfirmIo {
	/** True when stdin is a terminal someone can type into. */
	isTerminal(): boolean;
	/** Show `prompt` and read one line ('' on end of input). */
	ask(prompt: string): Promise<string>;
}

export const terminalIo: ConfirmIo = {
	isTerminal: () => process.stdin.isTTY === true,
	ask: prompt =>
		new Promise(resolve => {
			// Loaded when a purge asks, not at start: importing node:readline cost every command about 3 ms.
			const readline = process.getBuiltinModule('node:readline');
			const rl = readline.createInterface({input: process.stdin, output: process.stdout, terminal: true});
			let answered = false;
			rl.question(prompt, answer => {
				answered = true;
				rl.close();
				resolve(answer);
			});
			rl.on('close', () => {
				if (!answered) resolve('');
			});
		}),
};

function planJson(view: PurgePlanView): Record<string, unknown> {
	return {label: view.label, session: view.session?.name ?? null, ...view.plan};
}

/** `mam-tui purge` over an injected actions factory and terminal. */
export function createPurgeCommand(makeActions: ActionsFactory, io: ConfirmIo = terminalIo): Command {
	return {
		name: 'purge',
		summary:
			"delete sessions' conversation data after a typed confirmation, keeping a copy in the trash for restore (--hard: no copy; --dry-run shows the plan only)",
		usage: 'mam-tui purge NAME... | --agent A --id ID [--dry-run] [--hard] [--yes]',
		options: {agent: {type: 'string'}, id: {type: 'string'}, 'dry-run': {type: 'boolean'}, yes: {type: 'boolean'}, hard: {type: 'boolean'}},
		positionals: {min: 0, max: 1000},
		async run(world, values, positionals) {
			const refs = sessionRefsFrom(values, positionals, 'purge', true);
			const dryRun = values['dry-run'] === true;
			const yes = values['yes'] === true;
			const hard = values['hard'] === true;
			const json = world.options.json;
			if (!dryRun && !yes && (json || !io.isTerminal())) {
				throw new CliError('purge needs a terminal to confirm, or --yes (or --dry-run to see the plan)', EXIT.usage);
			}
			const {actions, dispose} = makeActions(world);
			try {
				const views: PurgePlanView[] = [];
				for (const ref of refs) {
					const plan = await actions.purgePlan(ref);
					if (!plan.ok) {
						const holders = plan.error.holders ? `\nheld by: ${describeHolders(plan.error.holders)}` : '';
						if (json) outJson({ok: false, refused: plan.error.kind, message: plan.error.message, holders: plan.error.holders ?? []});
						else errOut(`mam-tui: ${plan.error.message}${plan.error.kind === 'in-use' ? holders : ''}`);
						return exitCodeFor(plan.error);
					}
					views.push(plan.value);
				}
				if (!json) out(views.flatMap(formatPlan).join('\n'));
				if (dryRun) {
					if (json) outJson({ok: true, dryRun: true, plans: views.map(planJson)});
					else out('dry run: nothing was deleted');
					return EXIT.ok;
				}
				const expected = actions.expectedConfirmation(views);
				const what = hard ? 'delete all of the above for good, with no copy in the trash' : 'delete all of the above (kept in the trash for restore)';
				const typed = yes ? expected : await io.ask(`type ${JSON.stringify(expected)} to ${what} (anything else cancels): `);
				if (!actions.confirmPurge(views, typed)) {
					errOut('purge cancelled; nothing was deleted');
					return EXIT.failed;
				}
				const onProgress = (p: PurgeProgress) => {
					if (!json && p.state !== 'running') out(`${p.label}: ${p.step} ${p.state} — ${p.message}`);
				};
				const result = await actions.purge(views, typed, {onProgress, hard});
				if (!result.ok) {
					if (json) outJson({ok: false, refused: result.error.kind, message: result.error.message});
					else errOut(`mam-tui: ${result.error.message}`);
					return exitCodeFor(result.error);
				}
				const residual = result.value.some(r => r.residual.length > 0);
				if (json) outJson({ok: !residual, results: result.value});
				else out(result.value.flatMap(formatPurgeResult).join('\n'));
				return residual ? EXIT.residual : EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const purgeCommand = createPurgeCommand(world => worldActions(world));
