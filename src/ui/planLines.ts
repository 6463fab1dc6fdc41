import type {PlanItem} from '../adapters/types.js';
import type {PlanLine} from '../store/state.js';

/** A plan's items as the purge dialog and the detail panel show them. */
export function planLinesOf(items: readonly PlanItem[]): PlanLine[] {
	return items.map(item => ({
		kind: item.kind,
		description: item.description,
		path: item.path,
		...(item.table ? {table: item.table} : {}),
		...(item.count === undefined ? {} : {count: item.count}),
		bytes: item.bytes,
		sessionId: item.sessionId,
	}));
}
