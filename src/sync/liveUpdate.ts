import type {Finding, MuxHealth} from '../domain/types.js';
import type {Action} from '../store/reducer.js';

// What the supervisor last gave the store, so a refresh that found nothing new dispatches nothing:
// no store change, no re-render, no frame. An idle minute's listing of unchanged panes then costs
// the listing alone (the join already hands back unchanged panes, rows and lists as the same
// objects; findings and the mux health are compared by value, since they are made anew).

type LiveUpdate = Extract<Action, {type: 'live/updated'}>;
type Fields = Omit<LiveUpdate, 'type'>;

export interface Shown {
	/** The action carrying only what differs from what was shown; undefined when nothing does. Records `fields` as shown. */
	changes(fields: Fields): LiveUpdate | undefined;
}

/** The health as the dashboard shows it: `lastOkAt` moves with every listing and nobody shows it. */
function sameHealth(a: MuxHealth | null | undefined, b: MuxHealth | null): boolean {
	if (a === b) return true;
	return a !== null && a !== undefined && b !== null && a.kind === b.kind && a.ok === b.ok && a.message === b.message;
}

/** Plain data (findings: strings, numbers, arrays and objects of them) equal by value. No allocation: it runs over every finding each refresh. */
export function samePlain(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
	if (Array.isArray(a) || Array.isArray(b)) {
		if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!samePlain(a[i], b[i])) return false;
		return true;
	}
	const x = a as Record<string, unknown>;
	const y = b as Record<string, unknown>;
	let keys = 0;
	for (const key in x) {
		if (!Object.hasOwn(y, key) || !samePlain(x[key], y[key])) return false;
		keys += 1;
	}
	for (const key in y) if (Object.hasOwn(y, key)) keys -= 1;
	return keys === 0;
}

function sameFindings(a: readonly Finding[] | undefined, b: readonly Finding[]): boolean {
	return a === b || (a !== undefined && a.length === b.length && a.every((f, i) => samePlain(f, b[i])));
}

export function createShown(): Shown {
	let last: Fields = {};
	return {
		changes(fields) {
			const update: {-readonly [K in keyof Fields]: Fields[K]} = {};
			if (fields.panes !== undefined && fields.panes !== last.panes) update.panes = fields.panes;
			if (fields.live !== undefined && fields.live !== last.live) update.live = fields.live;
			if (fields.conversations !== undefined && fields.conversations !== last.conversations) update.conversations = fields.conversations;
			if (fields.findings !== undefined && !sameFindings(last.findings, fields.findings)) update.findings = fields.findings;
			if (fields.mux !== undefined && !sameHealth(last.mux, fields.mux)) update.mux = fields.mux;
			last = {...last, ...update};
			return Object.keys(update).length === 0 ? undefined : {type: 'live/updated', ...update};
		},
	};
}
