import type {Actions, PurgePlanView, SessionRef} from '../actions/index.js';
import {confirmPurge, expectedConfirmation} from '../actions/purge.js';
import {refusal} from '../actions/types.js';
import type {SessionRecord} from '../domain/types.js';
import type {HostsHub} from './hub.js';

/** Where a dashboard row lives: here, on a host (with its name there), or not one row. */
type Place = {readonly kind: 'local'} | {readonly kind: 'host'; readonly host: string; readonly name: string} | {readonly kind: 'ambiguous'};

/**
 * The dashboard's actions: a row's action goes to the machine the row came from. A host's row is
 * named `host:name` here and `name` there. A name two rows share is refused rather than guessed
 * (a stop must never reach the wrong machine).
 */
export function routedActions(local: Actions, hub: HostsHub, rows: () => readonly SessionRecord[]): Actions {
	// A host's plan, relabelled `host:name` for the dialog (and the typed confirmation), and the plan as the host made it.
	const origin = new WeakMap<PurgePlanView, {readonly host: string; readonly plan: PurgePlanView}>();

	const placeOf = (ref: SessionRef): Place => {
		if (!('name' in ref)) return {kind: 'local'};
		const found = rows().filter(r => r.name === ref.name);
		if (found.length > 1) return {kind: 'ambiguous'};
		const row = found[0];
		if (row?.host === undefined) return {kind: 'local'};
		return {kind: 'host', host: row.host, name: row.name.slice(row.host.length + 1)};
	};
	const ambiguous = (ref: SessionRef) => refusal('bad-input', `more than one row is named ${JSON.stringify('name' in ref ? ref.name : ref.id)}; act on it from its own machine`);
	const hostActions = (host: string) => hub.actionsFor(host);

	return {
		...local,
		async resume(ref) {
			const place = placeOf(ref);
			if (place.kind === 'ambiguous') return ambiguous(ref);
			if (place.kind === 'local') return local.resume(ref);
			return (hostActions(place.host) ?? local).resume({name: place.name});
		},
		async stop(ref, options) {
			const place = placeOf(ref);
			if (place.kind === 'ambiguous') return ambiguous(ref);
			if (place.kind === 'local') return local.stop(ref, options);
			const remote = hostActions(place.host);
			return remote ? remote.stop({name: place.name}, options) : refusal('not-found', `no host ${place.host}`);
		},
		async purgePlan(ref) {
			const place = placeOf(ref);
			if (place.kind === 'ambiguous') return ambiguous(ref);
			if (place.kind === 'local') return local.purgePlan(ref);
			const remote = hostActions(place.host);
			if (!remote) return refusal('not-found', `no host ${place.host}`);
			const planned = await remote.purgePlan({name: place.name});
			if (!planned.ok) return planned;
			// The dialog shows, and the user types, the host with the name: `devbox:old-session`.
			const shown: PurgePlanView = {...planned.value, label: `${place.host}:${planned.value.label}`};
			origin.set(shown, {host: place.host, plan: planned.value});
			return {ok: true, value: shown};
		},
		expectedConfirmation,
		confirmPurge,
		async purge(plans, typed, options) {
			const from = plans.map(p => origin.get(p));
			if (from.every(f => f === undefined)) return local.purge(plans, typed, options);
			const hosts = new Set(from.map(f => f?.host));
			const host = from[0]?.host;
			if (hosts.size !== 1 || host === undefined) return refusal('bad-input', 'purge the sessions of one machine at a time');
			if (!confirmPurge(plans, typed)) return refusal('not-confirmed', `purge cancelled: the confirmation did not match (type ${JSON.stringify(expectedConfirmation(plans))}); nothing was deleted`);
			const remote = hostActions(host);
			if (!remote) return refusal('not-found', `no host ${host}`);
			const theirs = from.flatMap(f => (f ? [f.plan] : []));
			// Confirmed here as `host:name`; the host checks its own form of the same confirmation.
			return remote.purge(theirs, expectedConfirmation(theirs), options);
		},
	};
}
