import {confirmPurge, expectedConfirmation} from '../actions/purge.js';
import type {ActionResult, Actions, ParkResult, PurgePlanView, PurgeProgress, StopProgress, WakeResult} from '../actions/index.js';
import {refusal} from '../actions/types.js';
import type {FixAnswer} from '../actions/driftFix.js';
import type {AuditEntry} from '../registry/registry.js';
import {messageOf} from '../domain/result.js';
import {ChannelLost, type HostConnection} from './client.js';
import {METHOD_CAPABILITY} from './protocol.js';

/**
 * The actions of one other machine, as calls over its channel. The serve there re-checks every
 * destructive action at the moment it runs (in use, pane identity, the purge's fingerprint) and
 * writes its own audit record; this side writes one too, saying what it asked and what it knows.
 */
/** A host's actions: the dashboard's, and the fix of one of the host's findings. */
export interface HostActions extends Actions {
	/** Ask the host to fix the finding it knows by `key` (it looks the finding up again itself). */
	fixFinding(key: string): Promise<ActionResult<FixAnswer>>;
}

export function remoteActions(connection: HostConnection, audit: (entry: AuditEntry) => void = () => undefined): HostActions {
	const host = connection.host.name;

	/** A call's answer, or a refusal that says what is known when there is none. */
	async function call<T>(method: string, params: unknown, session: string | null, onProgress?: (progress: unknown) => void): Promise<ActionResult<T>> {
		const needs = METHOD_CAPABILITY[method];
		const state = connection.state();
		if (state.state !== 'up') {
			const since = new Date(state.since).toTimeString().slice(0, 8);
			return refusal('failed', `${host} is ${state.state} since ${since} (${state.message}); nothing was sent, try again when it is back`);
		}
		if (needs !== undefined && !connection.capabilities().includes(needs)) {
			return refusal(
				'unsupported',
				`${host} cannot ${needs}: its mam-tui ${connection.remoteVersion() ?? '?'} does not offer it (update it there); nothing was done`,
			);
		}
		const destructive =
			method === 'stop' ||
			method === 'park' ||
			method === 'wake' ||
			method === 'purge.confirm' ||
			method === 'trash.empty' ||
			method === 'restore' ||
			method === 'resume' ||
			method === 'drift.fix';
		if (destructive) audit({session, action: `remote:${method}`, outcome: 'started', detail: {host, params}});
		try {
			const result = await connection.call<ActionResult<T>>(method, params, onProgress);
			if (destructive)
				audit({
					session,
					action: `remote:${method}`,
					outcome: result.ok ? 'ok' : 'refused',
					detail: {host, ...(result.ok ? {} : {message: result.error.message})},
				});
			return result;
		} catch (error) {
			if (error instanceof ChannelLost) {
				const text = `the connection to ${host} was lost while ${method} ran there; whether it finished is not known here. mam-tui on ${host} finishes or refuses it on its own and records it in its audit log; look again when ${host} is back`;
				if (destructive) audit({session, action: `remote:${method}`, outcome: 'failed', detail: {host, message: text}});
				return refusal('failed', text);
			}
			if (destructive) audit({session, action: `remote:${method}`, outcome: 'failed', detail: {host, message: messageOf(error)}});
			return refusal('failed', `${host}: ${messageOf(error)}`);
		}
	}

	const nameOf = (ref: {name: string} | {agent: string; id: string}) => ('name' in ref ? ref.name : null);

	return {
		resume: ref => call('resume', {ref}, nameOf(ref)),
		stop: (ref, options = {}) =>
			call(
				'stop',
				{ref, ...(options.graceMs ? {graceMs: options.graceMs} : {}), ...(options.killWaitMs ? {killWaitMs: options.killWaitMs} : {})},
				nameOf(ref),
				progress => options.onProgress?.(progress as StopProgress),
			),
		purgePlan: ref => call<PurgePlanView>('purge.plan', {ref}, nameOf(ref)),
		expectedConfirmation,
		confirmPurge,
		async purge(plans, typed, options = {}) {
			// Checked here too, so a mistyped confirmation never leaves this machine.
			if (!confirmPurge(plans, typed))
				return refusal(
					'not-confirmed',
					`purge cancelled: the confirmation did not match (type ${JSON.stringify(expectedConfirmation(plans))}); nothing was deleted`,
				);
			const wire = plans.map(p => ({agent: p.agent, id: p.id, fingerprint: p.fingerprint}));
			return call('purge.confirm', {plans: wire, typed, hard: options.hard === true}, plans[0]?.session?.name ?? null, progress =>
				options.onProgress?.(progress as PurgeProgress),
			);
		},
		newSession: async () => refusal('unsupported', `new sessions start on this machine only; run \`mam-tui new\` on ${host}`),
		adopt: request => call('adopt', {request}, request.name ?? null),
		fixFinding: key => call<FixAnswer>('drift.fix', {key}, null),
		restore: purgeId => call('restore', {purgeId}, null),
		trashList: () => call('trash.list', {}, null),
		trashEmptyOne: purgeId => call('trash.empty', {purgeId}, null),
		async park(selection, options = {}) {
			const result = await call<readonly ParkResult[]>(
				'park',
				{
					selection,
					...(options.dryRun ? {dryRun: true} : {}),
					...(options.graceMs ? {graceMs: options.graceMs} : {}),
					...(options.soakSeconds !== undefined ? {soakSeconds: options.soakSeconds} : {}),
				},
				null,
			);
			if (result.ok) return result.value;
			const who = 'names' in selection ? selection.names : [`${host}: sessions idle over ${selection.idleOverSeconds} s`];
			return who.map(session => ({session, outcome: 'refused', check: 'host', why: result.error.message}) as const);
		},
		async wake(selection) {
			const result = await call<readonly WakeResult[]>('wake', {selection}, null);
			if (result.ok) return result.value;
			const who = 'names' in selection ? selection.names : [`${host}: every parked session`];
			return who.map(session => ({session, outcome: 'refused', kind: 'host', why: result.error.message}) as const);
		},
	};
}
