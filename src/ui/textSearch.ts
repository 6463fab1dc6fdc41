// The conversations view's `/` searches the messages too: this keeps the search index in step
// with what the live refreshes find (a changed conversation is read from its cursor on) and asks
// it about the search text. The index lives in its own thread (search/worker.ts): a build of
// thousands of conversations never holds a keystroke.
import type {Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {SearchHit} from '../search/search.js';
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

/** A sub-agent or headless run the index found, as a row of the conversations view. */
function hiddenRow(hit: SearchHit): Conversation {
	return {
		agent: hit.agent,
		id: hit.id,
		cwd: hit.cwd,
		createdAt: hit.updatedAt,
		updatedAt: hit.updatedAt,
		...(hit.parentId ? {parentId: hit.parentId} : {}),
		...(hit.title ? {title: hit.title} : {}),
		childCount: 0,
		resumeState: {kind: 'unknown', reason: hit.parentId ? `sub-agent of ${hit.parentId}` : 'headless run'},
	};
}

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
	// The tokens column and the folder sums come from the index: read again after each change.
	const readUsage = async (i: IndexWorker) => {
		const usage = await i.usage();
		if (!stopped) deps.store.dispatch({type: 'conversations/usage', usage});
	};
	const seen = new Map<string, number>();
	let lastList: readonly Conversation[] | undefined;
	let lastQuery = '';
	let lastAll = false;
	let timer: NodeJS.Timeout | undefined;

	// The thread, its build and its memory (about 100 MB for a large history) are paid by a
	// dashboard that shows conversations, from the first time it does: a dashboard kept on the
	// sessions list stays idle. The first build reads every conversation, so changes before it
	// need no update of their own.
	let started = false;
	const startBuild = (list: readonly Conversation[]) => {
		started = true;
		lastList = list;
		for (const c of list) seen.set(`${c.agent}:${c.id}`, c.updatedAt);
		run('build', async i => {
			await i.sync();
			await readUsage(i);
		});
	};

	const onChange = () => {
		const state = deps.store.getState();
		if (!started) {
			if (state.ui.mode !== 'conversations') return;
			startBuild(state.conversations);
		}
		if (state.conversations !== lastList) {
			lastList = state.conversations;
			const changed = state.conversations.filter(c => seen.get(`${c.agent}:${c.id}`) !== c.updatedAt);
			for (const c of changed) seen.set(`${c.agent}:${c.id}`, c.updatedAt);
			if (changed.length > 0)
				run('update', async i => {
					if ((await i.sync(changed)).read > 0) await readUsage(i);
				});
		}
		const query = state.ui.conversationFilter.trim();
		const all = state.ui.conversationsAll;
		if (query === lastQuery && all === lastAll) return;
		lastQuery = query;
		lastAll = all;
		if (timer) clearTimeout(timer);
		if (query === '') return;
		timer = setTimeout(() => {
			run('query', async i => {
				let hits: SearchHit[] = [];
				try {
					hits = await i.search(query, {noSync: true, limit: 50, ...(all ? {all: true} : {})});
				} catch {
					// Not a query the index takes (no word in it): title search alone.
				}
				if (stopped) return;
				const snippets = new Map(hits.map(h => [`${h.agent}:${h.id}`, h.snippet]));
				const listed = new Set(deps.store.getState().conversations.map(c => `${c.agent}:${c.id}`));
				const hidden = all ? hits.filter(h => (h.parentId !== undefined || h.headless === true) && !listed.has(`${h.agent}:${h.id}`)).map(hiddenRow) : [];
				deps.store.dispatch({type: 'conversations/textHits', query, snippets, ...(all ? {all, hidden} : {})});
			});
		}, DEBOUNCE_MS);
	};
	const unsubscribe = deps.store.subscribe(onChange);
	return () => {
		stopped = true;
		unsubscribe();
		if (timer) clearTimeout(timer);
		void index?.close();
	};
}
