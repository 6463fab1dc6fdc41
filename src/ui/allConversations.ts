import type {AgentAdapter, AdapterContext} from '../adapters/types.js';
import type {AgentId, Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {Logger} from '../system/logger.js';

export interface AllConversationsDeps {
	readonly adapters: Readonly<Record<AgentId, AgentAdapter>>;
	readonly context: AdapterContext;
	readonly logger: Logger;
}

/**
 * Every conversation every adapter finds, in any folder (the conversations view's `A`): one
 * discovery per agent with no cwd filter, as `mam-tui conversations` does. Read once per ask (the
 * toggle, `R`), never per keystroke: the search filters what this returned. A store that cannot
 * be read gives no rows for that agent and a log line, never a crash.
 */
export async function discoverAllConversations(deps: AllConversationsDeps): Promise<Conversation[]> {
	const results = await Promise.all(
		Object.values(deps.adapters).map(async adapter => {
			try {
				return (await adapter.discover(deps.context, {})).conversations;
			} catch (error) {
				deps.logger.warn(`${adapter.id} discovery (every folder) failed: ${messageOf(error)}`);
				return [];
			}
		}),
	);
	return results.flat().sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
}
