// The conversations view's `/` searches the messages too: this keeps the search index in step
// with what the live refreshes find (a changed conversation is read from its cursor on) and asks
// it about the search text, off the keystroke's path (a short debounce, work in small chunks).
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import type {Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {searchConversations, syncIndex, type SearchStore} from '../search/index.js';
import type {Action} from '../store/reducer.js';
import type {AppState} from '../store/state.js';
import type {Store} from '../store/store.js';
import type {Logger} from '../system/logger.js';

export interface TextSearchDeps {
	readonly store: Store<AppState, Action>;
	/** Opens the index (`$MAM_HOME/search.db`); called once, in the background. */
	readonly openIndex: () => SearchStore;
	readonly adapters: readonly AgentAdapter[];
	readonly context: AdapterContext;
	readonly logger: Logger;
}

/** How long typing must pause before the index is asked. */
const DEBOUNCE_MS = 150;
/** Conversations per step of the background build: a step stays far below a frame's budget. */
const UI_CHUNK = 10;
/** The dashboard's start comes first. */
const BUILD_DELAY_MS = 2000;

/** Start following the store; returns the stop. */
export function startTextSearch(deps: TextSearchDeps): () => void {
	let index: SearchStore | undefined;
	let stopped = false;
	// One index job at a time (a build, a change, a query), in order.
	let queue: Promise<void> = Promise.resolve();
	const run = (what: string, job: (store: SearchStore) => Promise<void>) => {
		queue = queue.then(async () => {
			if (stopped) return;
			try {
				index ??= deps.openIndex();
				await job(index);
			} catch (error) {
				deps.logger.warn(`search index: ${what} failed: ${messageOf(error)}`);
			}
		});
	};
	const searchDeps = (store: SearchStore) => ({context: deps.context, adapters: deps.adapters, store, chunk: UI_CHUNK, warn: (line: string) => deps.logger.debug(line)});
	// The first build (or catching up after a while away) runs in the background, in small steps,
	// once the first frames are drawn.
	const build = setTimeout(() => {
		run('build', async store => {
			await syncIndex(searchDeps(store));
		});
	}, BUILD_DELAY_MS);

	const seen = new Map<string, number>();
	let lastList: readonly Conversation[] | undefined;
	let lastQuery = '';
	let timer: NodeJS.Timeout | undefined;

	const onChange = () => {
		const state = deps.store.getState();
		if (state.conversations !== lastList) {
			lastList = state.conversations;
			const changed = state.conversations.filter(c => seen.get(`${c.agent}:${c.id}`) !== c.updatedAt);
			for (const c of changed) seen.set(`${c.agent}:${c.id}`, c.updatedAt);
			if (changed.length > 0) run('update', async store => void (await syncIndex(searchDeps(store), changed)));
		}
		const query = state.ui.conversationFilter.trim();
		if (query === lastQuery) return;
		lastQuery = query;
		if (timer) clearTimeout(timer);
		if (query === '') return;
		timer = setTimeout(() => {
			run('query', async store => {
				let snippets = new Map<string, string>();
				try {
					const hits = await searchConversations(searchDeps(store), query, {noSync: true, limit: 50});
					snippets = new Map(hits.map(h => [`${h.agent}:${h.id}`, h.snippet]));
				} catch {
					// Not a query the index takes (no word in it): title search alone.
				}
				if (!stopped) deps.store.dispatch({type: 'conversations/textHits', query, snippets});
			});
		}, DEBOUNCE_MS);
	};
	const unsubscribe = deps.store.subscribe(onChange);
	return () => {
		stopped = true;
		clearTimeout(build);
		unsubscribe();
		if (timer) clearTimeout(timer);
		void queue.then(() => index?.close());
	};
}
