// Which hermes sessions belong to a conversation (delegates and continuations), its cwd and
// whether it can be resumed.

import type {Conversation, ResumeState} from '../../domain/types.js';
import {descendants} from '../../system/descendants.js';
import {type SessionRow, type StoreData, type StoreView, viewOf} from './store.js';

const RESET_END_REASONS: ReadonlySet<string> = new Set(['session_reset', 'session_switch', 'idle', 'daily', 'suspended', 'resume_pending_expired']);

/**
 * How a child relates to its parent (hermes_state_common lineage predicates): a delegate run or a
 * compression continuation belongs to the parent's conversation; a /branch, reset or tool child is
 * a conversation of its own. A child whose parent row is gone (a purge cut short) and that carries
 * no independence marker is treated as part of the vanished conversation.
 */
function childKind(view: StoreView, row: SessionRow): 'root' | 'delegate' | 'continuation' | 'independent' {
	const parentId = row.parentId;
	if (!parentId) return 'root';
	if (row.markers.branched === parentId || row.markers.reset === parentId || row.source === 'tool') return 'independent';
	if (row.markers.delegate === parentId || row.source === 'subagent') return 'delegate';
	const parent = view.row(parentId);
	if (!parent) return 'continuation';
	if (parent.endReason === 'compression') return 'continuation';
	if (parent.endReason === 'branched') return 'independent';
	if (parent.endReason && RESET_END_REASONS.has(parent.endReason) && row.sessionKey && row.sessionKey === parent.sessionKey) return 'independent';
	// Any other child with a parent link is a sub-agent run (hermes `_ephemeral_child_sql`).
	return 'delegate';
}

export function belongsToParent(view: StoreView, row: SessionRow): boolean {
	const kind = childKind(view, row);
	return kind === 'delegate' || kind === 'continuation';
}

/** Children that are part of `id`'s conversation. */
function ownChildren(view: StoreView, id: string): SessionRow[] {
	return view.children(id).filter(row => belongsToParent(view, row));
}

/** Every descendant of `id` in this store (delegates and continuations, at any depth). */
export function descendantsIn(view: StoreView, id: string): string[] {
	return descendants(id, x => ownChildren(view, x).map(r => r.id));
}

/** A session's cwd, or the nearest ancestor's when it recorded none. */
export function cwdOf(view: StoreView, id: string): string | undefined {
	const seen = new Set<string>();
	let row = view.row(id);
	while (row && !seen.has(row.id)) {
		if (row.cwd) return row.cwd;
		seen.add(row.id);
		row = row.parentId ? view.row(row.parentId) : undefined;
	}
	return undefined;
}

/** The continuation chain of a session (its compression tail), for messages and activity. */
export function continuationChain(view: StoreView, id: string): string[] {
	return [
		id,
		...descendantsIn(view, id).filter(x => {
			const row = view.row(x);
			return row !== undefined && childKind(view, row) === 'continuation';
		}),
	];
}

export function resumeStateOf(view: StoreView, id: string): ResumeState {
	const count = continuationChain(view, id).reduce((n, x) => n + view.messages(x), 0);
	return count > 0 ? {kind: 'yes'} : {kind: 'no', reason: 'the session holds no messages'};
}

export function toConversation(data: StoreData, row: SessionRow): Conversation {
	const view = viewOf(data);
	const chain = continuationChain(view, row.id);
	const updatedAt = Math.max(
		row.startedAt,
		...chain.flatMap(x => {
			const r = data.rows.get(x);
			return [r?.lastActivityAt ?? 0, r?.endedAt ?? 0, data.lastMessageAt.get(x) ?? 0];
		}),
	);
	const parentId = row.parentId && belongsToParent(view, row) ? row.parentId : undefined;
	return {
		agent: 'hermes',
		id: row.id,
		cwd: cwdOf(view, row.id) ?? '',
		createdAt: row.startedAt,
		updatedAt,
		...(parentId ? {parentId} : {}),
		...(row.title ? {title: row.title} : {}),
		childCount: ownChildren(view, row.id).length,
		resumeState: resumeStateOf(view, row.id),
	};
}
