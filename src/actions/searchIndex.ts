import fs from 'node:fs';
import {openSearchStore, searchIndexPath} from '../search/index.js';
import type {SearchIndexPort} from './types.js';

/** The index in `stateDir`, opened for each use and closed after (purges are rare; the dashboard may hold it too). */
export function searchIndexPort(stateDir: string): SearchIndexPort {
	return {
		forget(agent, ids) {
			// No index yet: nothing to erase, and a purge does not create one.
			if (!fs.existsSync(searchIndexPath(stateDir))) return;
			const store = openSearchStore(stateDir);
			try {
				store.forget(agent, ids);
			} finally {
				store.close();
			}
		},
	};
}
