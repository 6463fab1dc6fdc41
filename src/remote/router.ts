import type {Actions, ParkResult, PurgePlanView, SessionRef, WakeResult} from '../actions/index.js';
import type {TrashListing} from '../actions/trash.js';
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
export function routedActions(local: Actions, hub: HostsHub, rows: () => readonly SessionRecord[], hosts: () => readonly string[] = () => []): Actions {
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
	const ambiguous = (ref: SessionRef) =>
		refusal('bad-input', `more than one row is named ${JSON.stringify('name' in ref ? ref.name : ref.id)}; act on it from its own machine`);
	const hostActions = (host: string) => hub.actionsFor(host);
	// The trash view lists every machine's purges; a restore or an empty goes where the purge is.
	const trashHost = new Map<string, string>();

	/** Names split by machine, each host's with its own names (`devbox:api` -> `api` on devbox). */
	const byMachine = (names: readonly string[]) => {
		const local: string[] = [];
		const remote = new Map<string, string[]>();
		const refused: string[] = [];
		for (const name of names) {
			const place = placeOf({name});
			if (place.kind === 'ambiguous') refused.push(name);
			else if (place.kind === 'local') local.push(name);
			else remote.set(place.host, [...(remote.get(place.host) ?? []), place.name]);
		}
		return {local, remote, refused};
	};
	const relabel = <T extends {readonly session: string}>(host: string, results: readonly T[]): T[] =>
		results.map(r => ({...r, session: `${host}:${r.session}`}));

	return {
		...local,
		async park(selection, options) {
			if (!('names' in selection)) return local.park(selection, options);
			const {local: here, remote, refused} = byMachine(selection.names);
			const out: ParkResult[] = refused.map(session => ({
				session,
				outcome: 'refused',
				check: 'host',
				why: `more than one row is named ${JSON.stringify(session)}`,
			}));
			if (here.length > 0) out.push(...(await local.park({names: here}, options)));
			for (const [host, names] of remote) {
				const remoteActions = hostActions(host);
				if (!remoteActions) out.push(...names.map(name => ({session: `${host}:${name}`, outcome: 'refused', check: 'host', why: `no host ${host}`}) as const));
				else out.push(...relabel(host, await remoteActions.park({names}, options)));
			}
			return out;
		},
		async wake(selection, options) {
			if (!('names' in selection)) return local.wake(selection, options);
			const {local: here, remote, refused} = byMachine(selection.names);
			const out: WakeResult[] = refused.map(session => ({
				session,
				outcome: 'refused',
				kind: 'host',
				why: `more than one row is named ${JSON.stringify(session)}`,
			}));
			if (here.length > 0) out.push(...(await local.wake({names: here}, options)));
			for (const [host, names] of remote) {
				const remoteActions = hostActions(host);
				if (!remoteActions) out.push(...names.map(name => ({session: `${host}:${name}`, outcome: 'refused', kind: 'host', why: `no host ${host}`}) as const));
				else out.push(...relabel(host, await remoteActions.wake({names}, options)));
			}
			return out;
		},
		async trashList() {
			const mine = await local.trashList();
			if (!mine.ok) return mine;
			const all: TrashListing[] = [...mine.value];
			trashHost.clear();
			// Every host at once; a host that is down or refuses leaves its purges out (the status bar says why).
			const listed = await Promise.all(hosts().map(async host => ({host, result: await hostActions(host)?.trashList()})));
			for (const {host, result} of listed) {
				if (!result?.ok) continue;
				for (const entry of result.value) {
					trashHost.set(entry.purgeId, host);
					all.push({...entry, label: `${host}:${entry.label}`});
				}
			}
			return {ok: true, value: all};
		},
		async restore(purgeId) {
			const host = trashHost.get(purgeId);
			const remote = host === undefined ? undefined : hostActions(host);
			return remote ? remote.restore(purgeId) : local.restore(purgeId);
		},
		async trashEmptyOne(purgeId) {
			const host = trashHost.get(purgeId);
			const remote = host === undefined ? undefined : hostActions(host);
			return remote ? remote.trashEmptyOne(purgeId) : local.trashEmptyOne(purgeId);
		},
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
			if (!confirmPurge(plans, typed))
				return refusal(
					'not-confirmed',
					`purge cancelled: the confirmation did not match (type ${JSON.stringify(expectedConfirmation(plans))}); nothing was deleted`,
				);
			const remote = hostActions(host);
			if (!remote) return refusal('not-found', `no host ${host}`);
			const theirs = from.flatMap(f => (f ? [f.plan] : []));
			// Confirmed here as `host:name`; the host checks its own form of the same confirmation.
			const purged = await remote.purge(theirs, expectedConfirmation(theirs), options);
			// Its trash entries are on the host: `u` (restore) goes there without the trash view first.
			if (purged.ok) for (const r of purged.value) if (r.trashId) trashHost.set(r.trashId, host);
			return purged;
		},
	};
}
