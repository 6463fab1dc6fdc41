import {descendants} from '../../system/descendants.js';

/** Add `value` to the list `map` keeps under `key`, making the list on first use. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
	const list = map.get(key);
	if (list) list.push(value);
	else map.set(key, [value]);
}

/**
 * The sessions below `id` through their `parentId`, at any depth, breadth first (gemini's
 * sub-agents, grok's spawned sessions): each session object once, the root's own never.
 */
export function sessionDescendants<T extends {readonly id: string; readonly parentId?: string | undefined}>(sessions: readonly T[], id: string): T[] {
	return descendants<string, T>(id, node => sessions.filter(s => s.parentId === (typeof node === 'string' ? node : node.id) && s.id !== id));
}
