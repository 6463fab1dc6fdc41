import type {AdapterContext, AgentAdapter, PurgeOutcome, PurgePlan} from '../../src/adapters/types.js';

/** Plan, then purge exactly that plan: what `purgeConfirmed` does after the user confirmed. */
export async function purgeNow(adapter: AgentAdapter, ctx: AdapterContext, id: string): Promise<PurgeOutcome> {
	return adapter.purge(ctx, await adapter.artifacts(ctx, id));
}

/** An empty plan naming `id`: how a purge is handed an id nobody planned (hostile-input tests). */
export function planNaming(adapter: Pick<AgentAdapter, 'id'>, id: string): PurgePlan {
	return {agent: adapter.id, id, descendants: [], items: [], totalBytes: 0};
}
