import fs from 'node:fs';
import path from 'node:path';
import {optionalOption, secondsOption} from '../actions/cliSupport.js';
import {formatBytes} from '../actions/format.js';
import {worldActions, type ActionsFactory} from '../actions/fromWorld.js';
import type {ParkResult, ParkSelection, ParkStep} from '../actions/park.js';
import type {WakeResult} from '../actions/wake.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {errOut, out, outJson} from './output.js';
import {parseDuration} from './trashCommand.js';

/** One line per park: `api-fix: parked (idle 52 min, freed 812 MB)` or which check refused. */
export function formatParkResult(result: ParkResult): string {
	switch (result.outcome) {
		case 'parked':
			return `${result.session}: parked (idle ${Math.round(result.parked.idleSeconds / 60)} min, freed ${formatBytes(result.parked.freedBytes)})${result.notes.map(n => `\n  note: ${n}`).join('')}`;
		case 'would-park':
			return `${result.session}: would park pane ${result.paneId} (idle ${Math.round(result.idleSeconds / 60)} min, ${formatBytes(result.memoryBytes)} in use)`;
		case 'refused':
			return `${result.session}: not parked — ${result.check}: ${result.why}`;
		case 'still-running':
			return `${result.session}: not parked — ${result.why}`;
	}
}

export function formatWakeResult(result: WakeResult): string {
	if (result.outcome === 'refused') return `${result.session}: not woken — ${result.why}`;
	const ready = result.readyMs === null ? 'not ready yet' : `ready in ${(result.readyMs / 1000).toFixed(1)} s`;
	return `${result.session}: woken in pane ${result.paneId}, ${ready}${result.verified ? ', on its conversation' : ''}${result.notes.map(n => `\n  note: ${n}`).join('')}`;
}

function parkSelection(values: Readonly<Record<string, unknown>>, positionals: readonly string[]): ParkSelection {
	const idleOver = optionalOption(values as Record<string, string>, 'idle-over');
	if (idleOver !== undefined && positionals.length > 0) throw new CliError('park: give session NAMEs or --idle-over, not both', EXIT.usage);
	if (idleOver !== undefined) return {idleOverSeconds: parseDuration(idleOver) / 1000};
	if (positionals.length === 0) throw new CliError('park: which sessions? give NAMEs or --idle-over 45m', EXIT.usage);
	return {names: positionals};
}

/**
 * A test seam, off unless set: `MAM_TEST_PARK_PAUSE=claimed,typed` makes this process stop at
 * those steps of the park (PARK_STEPS), say so on stderr, and go on only once the file
 * `$MAM_TEST_PARK_RELEASE/<step>` exists (never, without it). Tests kill it there, or let two
 * processes race from the same point (test/actions/parkProcesses.test.ts).
 */
export function pauseHook(env: Readonly<Record<string, string | undefined>>): ((step: ParkStep) => Promise<void>) | undefined {
	const steps = (env['MAM_TEST_PARK_PAUSE'] ?? '').split(',').filter(Boolean);
	if (steps.length === 0) return undefined;
	const release = env['MAM_TEST_PARK_RELEASE'];
	return async step => {
		if (!steps.includes(step)) return;
		errOut(`park paused at ${step}`);
		while (!(release && fs.existsSync(path.join(release, step)))) await new Promise(resolve => setTimeout(resolve, 50));
	};
}

/** `mam-tui park NAME… | --idle-over 45m [--dry-run] [--soak S] [--grace S]`. */
export function createParkCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'park',
		summary: 'stop idle agents with their exit input to free their memory; each stays one wake from where it was',
		usage: 'mam-tui park NAME... | --idle-over 45m [--dry-run] [--soak S] [--grace S]',
		options: {'idle-over': {type: 'string'}, 'dry-run': {type: 'boolean'}, soak: {type: 'string'}, grace: {type: 'string'}},
		positionals: {min: 0, max: 1000},
		async run(world, values, positionals) {
			const selection = parkSelection(values, positionals);
			const soakMs = secondsOption(values, 'soak');
			const graceMs = secondsOption(values, 'grace');
			// Through the actions, not parkSessions: with --host they are that host's (its checks run there).
			const {actions, dispose} = makeActions(world);
			const onStep = pauseHook(world.env);
			try {
				const results = await actions.park(selection, {
					...(onStep ? {onStep} : {}),
					dryRun: values['dry-run'] === true,
					...(soakMs !== undefined ? {soakSeconds: soakMs / 1000} : {}),
					...(graceMs !== undefined ? {graceMs} : {}),
				});
				if (world.options.json) outJson({version: 1, results});
				else if (results.length === 0) out('nothing to park');
				else for (const r of results) (r.outcome === 'parked' || r.outcome === 'would-park' ? out : errOut)(formatParkResult(r));
				const failed = results.some(r => r.outcome === 'refused' || r.outcome === 'still-running');
				if ('names' in selection && results.some(r => r.outcome === 'refused' && r.check === 'not-found')) return EXIT.notFound;
				return failed && 'names' in selection ? EXIT.failed : EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

/** `mam-tui wake NAME… | --all [--cwd DIR]`. */
export function createWakeCommand(makeActions: ActionsFactory): Command {
	return {
		name: 'wake',
		summary: 'reopen parked sessions where they were, on their own conversation, and say when each was ready',
		usage: 'mam-tui wake NAME... | --all [--cwd DIR]',
		options: {all: {type: 'boolean'}, cwd: {type: 'string'}},
		positionals: {min: 0, max: 1000},
		async run(world, values, positionals) {
			const all = values['all'] === true;
			const cwd = optionalOption(values, 'cwd');
			if (all && positionals.length > 0) throw new CliError('wake: give session NAMEs or --all, not both', EXIT.usage);
			if (!all && positionals.length === 0) throw new CliError('wake: which sessions? give NAMEs or --all', EXIT.usage);
			if (cwd !== undefined && !all) throw new CliError('wake: --cwd goes with --all', EXIT.usage);
			const {actions, dispose} = makeActions(world);
			try {
				const results = await actions.wake(all ? {all: true, ...(cwd !== undefined ? {cwd: path.resolve(cwd)} : {})} : {names: positionals});
				if (world.options.json) outJson({version: 1, results});
				else if (results.length === 0) out('nothing is parked');
				else for (const r of results) (r.outcome === 'woken' ? out : errOut)(formatWakeResult(r));
				if (results.some(r => r.outcome === 'refused' && r.kind === 'not-found')) return EXIT.notFound;
				return results.some(r => r.outcome === 'refused') ? EXIT.failed : EXIT.ok;
			} finally {
				await dispose();
			}
		},
	};
}

export const parkCommand = createParkCommand(world => worldActions(world));
export const wakeCommand = createWakeCommand(world => worldActions(world));
