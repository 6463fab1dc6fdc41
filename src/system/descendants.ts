/**
 * Everything below `root`, breadth first, each node once: conversations' sub-agents and
 * continuations at any depth, a process's subtree. `childrenOf` gives a node's children in
 * order; a cycle (a store naming a conversation its own ancestor) or a node reached twice
 * stops there, and the root itself is never part of the answer. Nodes are compared with `===`
 * (ids as strings, or the objects themselves).
 */
export function descendants<R, T>(root: R | T, childrenOf: (node: R | T) => Iterable<T>): T[] {
	const out: T[] = [];
	const seen = new Set<R | T>([root]);
	for (let i = -1; i < out.length; i++) {
		const node = i < 0 ? root : (out[i] as T);
		for (const child of childrenOf(node)) {
			if (seen.has(child)) continue;
			seen.add(child);
			out.push(child);
		}
	}
	return out;
}

/** `childrenOf` for `descendants` from child → parent links, in the links' order. */
export function childrenFrom<K>(parents: Iterable<readonly [K, K]>): (node: K) => readonly K[] {
	const children = new Map<K, K[]>();
	for (const [child, parent] of parents) {
		const same = children.get(parent);
		if (same) same.push(child);
		else children.set(parent, [child]);
	}
	return node => children.get(node) ?? [];
}
