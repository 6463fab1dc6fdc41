// The conversations view's `/` searches the messages too: this keeps the search index in step
// with what the live refreshes find (a changed conversation is read from its cursor on) and asks
// it about the search text. The index lives in its own thread (search/worker.ts): a build of
// thousands of conversations never holds a keystroke.
import type {Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {IndexWorker} from '../search/worker.js';
import type {Action} from '../store/reducer.js';
import type {AppState} from '../store/state.js';
import type {Store} from '../store/store.js';
import type {Logger} from '../system/logger.js';

export interface TextSearchDeps {
	readonly store: Store<AppState, Action>;
	/** Starts the index thread (`$MAM_HOME/search.db`); called once, when the build starts. */
	readonly startIndex: () => IndexWorker;
	readonly logger: Logger;
}

/** How long typing must pause before the index is asked. */
const DEBOUNCE_MS = 150;
/** The dashboard's start comes first. */
const BUILD_DELAY_MS = 2000;

/** Start following the store; returns the stop. */
export function startTextSearch(deps: TextSearchDeps): () => void {
	let index: IndexWorker | undefined;
	let stopped = false;
	// The thread runs its jobs in the order they are sent (a build, a change, a query).
	const run = (what: string, job: (index: IndexWorker) => Promise<void>) => {
		if (stopped) return;
		index ??= deps.startIndex();
		job(index).catch((error: unknown) => deps.logger.warn(`search index: ${what} failed: ${messageOf(error)}`));
	};
	// The first build (or catching up after a while away) starts once the first frames are drawn.
	const build = setTimeout(() => run('build', async i => void (await i.sync())), BUILD_DELAY_MS);

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
			if (changed.length > 0) run('update', async i => void (await i.sync(changed)));
		}
		const query = state.ui.conversationFilter.trim();
		if (query === lastQuery) return;
		lastQuery = query;
		if (timer) clearTimeout(timer);
		if (query === '') return;
		timer = setTimeout(() => {
			run('query', async i => {
				let snippets = new Map<string, string>();
				try {
					const hits = await i.search(query, {noSync: true, limit: 50});
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
		void index?.close();
	};
}
