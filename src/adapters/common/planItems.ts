import type {AgentId} from '../../domain/types.js';
import {messageOf} from '../../domain/result.js';
import type {PlanItem, PurgePlan} from '../types.js';
import {bytesOf, lstatOrUndefined, removeInsideRoot} from './rootedFs.js';

/** A `file` or `dir` plan item for `target`, or undefined when nothing is there. */
export function pathItem(target: string, sessionId: string, description: string): PlanItem | undefined {
	const stat = lstatOrUndefined(target);
	if (!stat) return undefined;
	return {kind: stat.isDirectory() ? 'dir' : 'file', path: target, bytes: bytesOf(target), sessionId, description};
}

/** Plan items for every existing path of `entries`, in order. */
export function pathItems(entries: readonly (readonly [string, string, string])[]): PlanItem[] {
	return entries.map(([target, sessionId, description]) => pathItem(target, sessionId, description)).filter((i): i is PlanItem => i !== undefined);
}

export function makePlan(agent: AgentId, id: string, descendants: readonly string[], items: readonly PlanItem[]): PurgePlan {
	return {agent, id, descendants, items, totalBytes: items.reduce((sum, item) => sum + item.bytes, 0)};
}

/**
 * Delete the `file` and `dir` items of a plan, each only when it resolves inside `root`.
 * An item already gone (the agent's own delete command took it) counts as removed. A refused or
 * failed item becomes a warning; the others still go.
 */
export function removePathItems(root: string, items: readonly PlanItem[], warnings: string[]): PlanItem[] {
	const removed: PlanItem[] = [];
	for (const item of items) {
		if (item.kind !== 'file' && item.kind !== 'dir') continue;
		try {
			removeInsideRoot(root, item.path);
			removed.push(item);
		} catch (error) {
			warnings.push(messageOf(error));
		}
	}
	return removed;
}
