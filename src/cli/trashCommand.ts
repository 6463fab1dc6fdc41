import {formatBytes} from '../actions/format.js';
import {worldActions, type ActionsFactory, type WorldActions} from '../actions/fromWorld.js';
import type {TrashListing} from '../actions/trash.js';
import {trashEmpty, trashList} from '../actions/trashActions.js';
import {PURGE_ID} from '../actions/trashStore.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';
import {terminalIo, type ConfirmIo} from './purgeCommand.js';

const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = {s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000} as const;

/** `7d`, `12h`, `30m`, `45s` in milliseconds; a usage error otherwise. */
export function parseDuration(text: string): number {
	const m = DURATION.exec(text);
	if (!m?.[1] || !m[2]) throw new CliError(`--older-than wants a duration like 7d, 12h or 30m (got ${JSON.stringify(text)})`, EXIT.usage);
	return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

function age(ms: number): string {
	if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m`;
	if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)}h`;
	return `${Math.floor(ms / 86_400_000)}d`;
}

function listingLine(t: TrashListing): string {
	const state = t.state === 'done' ? '' : `  (${t.state})`;
	return `${t.purgeId}  ${t.agent.padEnd(8)} ${age(t.ageMs).padStart(4)} ${formatBytes(t.bytes).padStart(8)}  ${t.label}${t.label === t.conversation ? '' : ` (${t.conversation})`}${state}`;
}

async function withActions<T>(makeActions: ActionsFactory, world: Parameters<ActionsFactory>[0], fn: (w: WorldActions) => Promise<T>): Promise<T> {
	const w = makeActions(world);
	try {
		return await fn(w);
	} finally {
		await w.dispose();
	}
}

/** `mam-tui trash [--json]` and `mam-tui trash empty [--older-than 7d] [--yes]`. */
export function createTrashCommand(makeActions: ActionsFactory, io: ConfirmIo = terminalIo): Command {
	return {
		name: 'trash',
		summary: 'list purges that can be restored; `trash empty` deletes them for good',
		usage: 'mam-tui trash [--json] | mam-tui trash empty [--older-than 7d] [--yes]',
		options: {'older-than': {type: 'string'}, yes: {type: 'boolean'}},
		positionals: {min: 0, max: 1},
		async run(world, values, positionals) {
			const json = world.options.json;
			const sub = positionals[0];
			if (sub !== undefined && sub !== 'empty') throw new CliError(`unknown trash command ${JSON.stringify(sub)} (did you mean: trash empty)`, EXIT.usage);
			if (sub === 'empty' && world.options.host !== undefined && world.options.host !== 'local') {
				throw new CliError('trash empty runs on the machine itself: run `mam-tui trash empty` there (or empty one purge from the dashboard)', EXIT.usage);
			}
			return withActions(makeActions, world, async ({deps, actions}) => {
				if (sub === undefined) {
					const listed = await actions.trashList();
					if (!listed.ok) throw new CliError(listed.error.message, EXIT.failed);
					if (json) outJson({ok: true, purges: listed.value});
					else if (listed.value.length === 0) out('the trash is empty');
					else
						out(
							[
								`${'PURGE ID'.padEnd(31)}  AGENT     AGE     SIZE  CONVERSATION`,
								...listed.value.map(listingLine),
								'restore one with: mam-tui restore PURGE_ID',
							].join('\n'),
						);
					return EXIT.ok;
				}
				const olderThan = typeof values['older-than'] === 'string' ? parseDuration(values['older-than']) : undefined;
				if (values['yes'] !== true) {
					if (json || !io.isTerminal()) throw new CliError('trash empty deletes for good: it needs a terminal to confirm, or --yes', EXIT.usage);
					const listed = await trashList(deps);
					const n = listed.ok ? listed.value.filter(t => t.state === 'done' && (olderThan === undefined || t.ageMs >= olderThan)).length : 0;
					const expected = `empty ${n}`;
					const typed = await io.ask(
						`${n} purge(s) will be deleted for good and cannot be restored. Type ${JSON.stringify(expected)} to go on (anything else cancels): `,
					);
					if (typed !== expected) {
						errOut('trash empty cancelled; nothing was deleted');
						return EXIT.failed;
					}
				}
				const emptied = await trashEmpty(deps, olderThan);
				if (!emptied.ok) throw new CliError(emptied.error.message, EXIT.failed);
				if (json) outJson({ok: true, emptied: emptied.value});
				else out(emptied.value.length === 0 ? 'nothing to empty' : `deleted for good: ${emptied.value.join(', ')}`);
				return EXIT.ok;
			});
		},
	};
}

/** `mam-tui restore PURGE_ID`: put a purge back, then check that the conversation resumes. */
export function createRestoreCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'restore',
		summary: 'put a purged conversation back from the trash (see mam-tui trash)',
		usage: 'mam-tui restore PURGE_ID',
		options: {},
		positionals: {min: 1, max: 1},
		async run(world, _values, positionals) {
			const purgeId = positionals[0] ?? '';
			if (!PURGE_ID.test(purgeId)) throw new CliError(`not a purge id: ${JSON.stringify(purgeId)} (mam-tui trash lists them)`, EXIT.usage);
			return withActions(makeActions, world, async ({actions}) => {
				const restored = await actions.restore(purgeId);
				if (!restored.ok) {
					if (world.options.json) outJson({ok: false, message: restored.error.message});
					else errOut(`mam-tui: ${restored.error.message}`);
					return EXIT.failed;
				}
				const r = restored.value;
				const resumable = r.resume.kind === 'yes';
				if (world.options.json) outJson({ok: resumable, restored: r});
				else {
					out(`${r.label}: restored ${r.files} file(s), ${r.rows} row(s), ${r.edits} rewritten file(s) from ${r.purgeId}`);
					for (const note of r.notes) out(`  note: ${note}`);
					out(
						resumable
							? `  ${r.agent} can resume ${r.conversation} again`
							: `  warning: ${r.agent} may not resume it: ${r.resume.kind}${'reason' in r.resume ? ` (${r.resume.reason})` : ''}`,
					);
				}
				return resumable ? EXIT.ok : EXIT.failed;
			});
		},
	};
}

export const trashCommand = createTrashCommand(world => worldActions(world));
export const restoreCommand = createRestoreCommand(world => worldActions(world));
