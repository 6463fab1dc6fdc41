import fs from 'node:fs';
import type {Conversation} from '../domain/types.js';
import {openSearchStore, searchIndexPath, syncIndex} from '../search/index.js';
import type {SearchIndexPort} from './types.js';

/** `id` and every conversation below it (children of children too), as discovery lists them. */
function familyOf(conversations: readonly Conversation[], id: string): Conversation[] {
	const ids = new Set([id]);
	const family: Conversation[] = [];
	// Parents are listed in any order: go round until no new child joins.
	for (let grew = true; grew;) {
		grew = false;
		for (const c of conversations) {
			if (family.includes(c) || !(ids.has(c.id) || (c.parentId !== undefined && ids.has(c.parentId)))) continue;
			ids.add(c.id);
			family.push(c);
			grew = true;
		}
	}
	return family;
}

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
		async indexAgain(adapter, context, id) {
			// No index yet: its first build reads the conversation with all the others.
			if (!fs.existsSync(searchIndexPath(stateDir))) return;
			const found = await adapter.discover(context, {includeChildren: true, factsOnly: true});
			const family = familyOf(found.conversations, id);
			if (family.length === 0) return;
			const store = openSearchStore(stateDir);
			try {
				await syncIndex({context, adapters: [adapter], store}, family);
			} finally {
				store.close();
			}
		},
	};
}
