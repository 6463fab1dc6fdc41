import path from 'node:path';
import {SearchStore} from './store.js';

export {SearchStore, type IndexedConversation, type RawHit} from './store.js';
export {
	makeSnippet,
	matchExpression,
	parseSince,
	queryWords,
	searchConversations,
	syncIndex,
	usageByFolder,
	type SearchDeps,
	type SearchHit,
	type SearchOptions,
	type SyncStats,
} from './search.js';

/** The index file in mam-tui's state folder (`$MAM_HOME/search.db`). */
export function searchIndexPath(stateDir: string): string {
	return path.join(stateDir, 'search.db');
}

/** Open (or rebuild) the index in `stateDir`. */
export function openSearchStore(stateDir: string): SearchStore {
	return SearchStore.open(searchIndexPath(stateDir));
}
