import type {Pane, ProcessRef} from '../domain/types.js';

// A listing that finds a pane as it was hands back last listing's object (and the whole array when
// no pane changed). Everything after the mux keys its work on these objects — the status probe,
// the join's "unchanged row keeps its live object", drift, the dashboard's memoised rows — so an
// idle minute's listing of 500 unchanged panes then costs no re-derivation and no frame.

/**
 * The same process for a pane's tree: pid and start time (a reused pid differs), and what a
 * listing reads of it (name, parent, argv). The cwd is read lazily and never compared: an agent
 * keeps the folder it started in, and reading it here would cost a readlink per process.
 */
function sameProcess(a: ProcessRef, b: ProcessRef): boolean {
	if (a === b) return true;
	if (a.pid !== b.pid || a.startTime !== b.startTime || a.ppid !== b.ppid || a.name !== b.name || a.argv.length !== b.argv.length) return false;
	return a.argv.every((arg, i) => arg === b.argv[i]);
}

/** Two process lists (a pane's tree, a whole table) equal process by process, by `sameProcess`. */
export function sameTree(a: readonly ProcessRef[], b: readonly ProcessRef[]): boolean {
	return a === b || (a.length === b.length && a.every((proc, i) => sameProcess(proc, b[i] as ProcessRef)));
}

function shallowEqual(a: object, b: object): boolean {
	const ka = Object.keys(a);
	if (ka.length !== Object.keys(b).length) return false;
	return ka.every(key => Object.hasOwn(b, key) && (a as Record<string, unknown>)[key] === (b as Record<string, unknown>)[key]);
}

/**
 * Equal panes: every field the same, the process tree by `sameProcess`, plain-object fields
 * (placement) field by field. A field added to `Pane` later is compared by identity: at worst
 * a pane is taken as changed, never the other way.
 */
export function samePane(a: Pane, b: Pane): boolean {
	if (a === b) return true;
	const keys = Object.keys(a) as (keyof Pane)[];
	if (keys.length !== Object.keys(b).length) return false;
	for (const key of keys) {
		if (!Object.hasOwn(b, key)) return false;
		const x = a[key];
		const y = b[key];
		if (x === y) continue;
		if (key === 'processes') {
			if (!sameTree(a.processes, b.processes)) return false;
			continue;
		}
		if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || Array.isArray(x) || Array.isArray(y) || !shallowEqual(x, y)) return false;
	}
	return true;
}

/** What a mux keeps between listings: each pane by id, and the last array. */
export interface PaneKeeper {
	/** `panes` with every pane equal to last listing's replaced by that object; the last array itself when all are. */
	keep(panes: readonly Pane[]): readonly Pane[];
}

export function createPaneKeeper(): PaneKeeper {
	let last: readonly Pane[] = [];
	let byId = new Map<string, Pane>();
	return {
		keep(panes) {
			const kept = panes.map(pane => {
				const before = byId.get(pane.id);
				return before && samePane(before, pane) ? before : pane;
			});
			if (kept.length === last.length && kept.every((pane, i) => pane === last[i])) return last;
			last = kept;
			byId = new Map(kept.map(pane => [pane.id, pane]));
			return kept;
		},
	};
}
