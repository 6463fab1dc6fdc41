import type {AgentId} from '../../domain/types.js';
import type {PlanItem, PurgePlan} from '../types.js';
import {diskSize, lstatOrUndefined, removeInsideRoots, rootContaining} from './paths.js';

/** A `file` item for `p` when it exists (a symlink counts as the link itself). */
export function fileItem(p: string, sessionId: string, description: string): PlanItem | undefined {
	const st = lstatOrUndefined(p);
	if (!st || st.isDirectory()) return undefined;
	return {kind: 'file', path: p, bytes: st.size, sessionId, description};
}

/**
 * A `dir` item for `p` when it exists. A symlink in the place of a folder becomes a `file` item:
 * purge unlinks the link and never walks where it points. `counted` bytes are already planned as
 * their own items (files inside the folder) and are not counted twice.
 */
export function dirItem(p: string, sessionId: string, description: string, counted = 0): PlanItem | undefined {
	const st = lstatOrUndefined(p);
	if (!st) return undefined;
	if (!st.isDirectory()) return {kind: 'file', path: p, bytes: st.size, sessionId, description: `${description} (link)`};
	return {kind: 'dir', path: p, bytes: Math.max(0, diskSize(p) - counted), sessionId, description};
}

/**
 * The plan from its items. With `roots`, a file or folder that does not really lie inside one of
 * them (a symlinked folder on its way points elsewhere) is left out: purge would refuse it anyway,
 * and the residual scan reports it.
 */
export function makePlan(
	agent: AgentId,
	id: string,
	descendants: readonly string[],
	items: readonly (PlanItem | undefined)[],
	roots?: readonly string[],
): PurgePlan {
	const kept = items
		.filter((i): i is PlanItem => i !== undefined)
		.filter(i => roots === undefined || (i.kind !== 'file' && i.kind !== 'dir') || rootContaining(i.path, roots) !== undefined);
	return {agent, id, descendants, items: kept, totalBytes: kept.reduce((sum, i) => sum + i.bytes, 0)};
}

/** Delete the `file` and `dir` items (files first, then folders deepest first), each only inside `roots`. */
export function removePaths(items: readonly PlanItem[], roots: readonly string[]): {removed: PlanItem[]; warnings: string[]} {
	const removed: PlanItem[] = [];
	const warnings: string[] = [];
	const paths = items
		.filter(i => i.kind === 'file' || i.kind === 'dir')
		.sort((a, b) => (a.kind === b.kind ? b.path.length - a.path.length : a.kind === 'file' ? -1 : 1));
	for (const item of paths) {
		const problem = removeInsideRoots(item.path, roots);
		if (problem === undefined) removed.push(item);
		else warnings.push(problem);
	}
	return {removed, warnings};
}
