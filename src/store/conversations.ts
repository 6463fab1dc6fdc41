import type {Conversation} from '../domain/types.js';
import type {AppState} from './state.js';

type ConversationsSlice = Pick<AppState, 'conversations' | 'allConversations' | 'memo'> & {readonly textHits?: AppState['textHits']} & {
	readonly ui: Pick<AppState['ui'], 'conversationScope' | 'conversationFilter' | 'conversationsAll'>;
};

const key = (c: Conversation) => `${c.agent}:${c.id}`;

/**
 * Every folder's list, with each conversation the live snapshot also knows taken from the
 * snapshot: both lists then show one resume state for it (the snapshot's, the sessions view's),
 * however fresh the all-folders scan is.
 */
function allFolders(state: ConversationsSlice): readonly Conversation[] {
	if (!state.allConversations) return state.conversations;
	const live = new Map(state.conversations.map(c => [key(c), c]));
	const merged = state.allConversations.map(c => live.get(key(c)) ?? c);
	const seen = new Set(merged.map(key));
	return [...merged, ...state.conversations.filter(c => !seen.has(key(c)))];
}

type HitsSlice = {readonly textHits?: AppState['textHits']} & {
	readonly ui: Pick<AppState['ui'], 'conversationFilter'> & Partial<Pick<AppState['ui'], 'conversationsAll'>>;
};

/** The index's answer when it is for the current search text and the current `H` (a late answer counts for nothing). */
export function currentTextHits(state: HitsSlice): AppState['textHits'] | undefined {
	const hits = state.textHits;
	if (!hits || hits.query !== state.ui.conversationFilter.trim() || (hits.all ?? false) !== (state.ui.conversationsAll ?? false)) return null;
	return hits;
}

/** The snippet the search index found in `c`'s messages for the current search text, if any. */
export function textSnippet(state: HitsSlice, c: Conversation): string | undefined {
	return currentTextHits(state)?.snippets.get(key(c));
}

/** The text `/` searches: agent, id, cwd and the title (the summary, else the first prompt, as discovery read it). */
function haystack(c: Conversation): string {
	return `${c.agent}\n${c.id}\n${c.cwd}\n${c.title ?? ''}`.toLowerCase();
}

/**
 * The conversations view's rows: the scope (the registry's folders, or every folder), then the
 * search. Pure; remembered per input arrays (the state's memo), so a keystroke that does not
 * change them costs nothing.
 */
export function visibleConversations(state: ConversationsSlice): readonly Conversation[] {
	const {conversationScope: scope, conversationFilter: filter} = state.ui;
	const hit = state.memo?.conversations.get(state.conversations);
	const hidden = state.ui.conversationsAll;
	if (hit && hit.all === state.allConversations && hit.hits === state.textHits && hit.scope === scope && hit.filter === filter && hit.hidden === hidden)
		return hit.rows;
	const base = scope === 'all' ? allFolders(state) : state.conversations;
	const needle = filter.trim().toLowerCase();
	const found = currentTextHits(state);
	const text = found?.snippets;
	// With `H`, the sub-agent and headless conversations the index found follow the list's own.
	const rows = needle ? [...base.filter(c => haystack(c).includes(needle) || text?.has(key(c)) === true), ...(found?.hidden ?? [])] : base;
	state.memo?.conversations.set(state.conversations, {all: state.allConversations, hits: state.textHits, scope, filter, hidden, rows});
	return rows;
}
