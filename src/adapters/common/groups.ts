import {descendants} from '../../system/descendants.js';

/** Add `value` to the list `map` keeps under `key`, making the list on first use. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
	const list = map.get(key);
	if (list) list.push(value);
	else map.set(key, [value]);
}

/** A session as the family rules see it: its id and its parent's. */
type Linked = {readonly id: string; readonly parentId?: string | undefined};

/** Sessions by their id and by their parent's, each list in the sessions' order. */
export interface SessionTree<T> {
	readonly byId: ReadonlyMap<string, readonly T[]>;
	readonly byParent: ReadonlyMap<string, readonly T[]>;
}

export function sessionTree<T extends Linked>(sessions: readonly T[]): SessionTree<T> {
	const byId = new Map<string, T[]>();
	const byParent = new Map<string, T[]>();
	for (const s of sessions) {
		pushTo(byId, s.id, s);
		if (s.parentId !== undefined) pushTo(byParent, s.parentId, s);
	}
	return {byId, byParent};
}

/**
 * The sessions below `id` through their `parentId`, at any depth, breadth first (gemini's
 * sub-agents, grok's spawned sessions): each session object once, the root's own never. `tree`
 * is `sessionTree(sessions)`, passed by a caller that asks about many ids of one list.
 */
export function sessionDescendants<T extends Linked>(sessions: readonly T[], id: string, tree: SessionTree<T> = sessionTree(sessions)): T[] {
	return descendants<string, T>(id, node => (tree.byParent.get(typeof node === 'string' ? node : node.id) ?? []).filter(s => s.id !== id));
}
