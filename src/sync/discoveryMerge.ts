// The conversations view's list: every cwd's conversations with the in-use rule applied, merged
// newest first, each once, updated in place after a few cwds changed, and unchanged
// conversations kept as the same objects.

import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import type {AgentId, Conversation} from '../domain/types.js';
import {withUseEach, type UseMemo} from './conversationUse.js';
import {type CwdFacts, inUseKey} from './discoveryResult.js';

/** The list of a cwd that could not be read (one array, so it never counts as a changed list). */
const NO_CONVERSATIONS: readonly Conversation[] = [];

/**
 * The conversation list across refreshes: each cwd's facts with the in-use rule applied (a live
 * TUI's conversations read `no: in use`), merged into one list. Only what changed is asked and
 * merged again; while nothing did, the same array comes back (the view skips its work too).
 */
export class ConversationList {
	private state: {merge?: Merge; useMemo?: UseMemo} = {};
	/** Each cwd's facts with the in-use rule applied, while its answered list stands. */
	private readonly answered = new WeakMap<CwdFacts, {readonly list: readonly Conversation[]; readonly facts: CwdFacts}>();

	private readonly adapters: Readonly<Record<AgentId, AgentAdapter>>;

	constructor(adapters: Readonly<Record<AgentId, AgentAdapter>>) {
		this.adapters = adapters;
	}

	async update(ctx: AdapterContext, facts: readonly CwdFacts[]): Promise<readonly Conversation[]> {
		return this.merged(await this.withUse(ctx, facts));
	}

	/**
	 * Only a list that changed, or all of them when the live uses did, is asked again; facts whose
	 * answers did not change stay the same objects, so the merge moves only what changed.
	 */
	private async withUse(ctx: AdapterContext, facts: readonly CwdFacts[]): Promise<readonly CwdFacts[]> {
		const lists = facts.map(f => (f.ok ? f.conversations : NO_CONVERSATIONS));
		try {
			const used = await withUseEach(ctx, lists, this.adapters, this.state.useMemo);
			if (used.memo) this.state.useMemo = used.memo;
			return facts.map((f, i) => {
				const list = used.lists[i];
				if (!f.ok || list === undefined || list === f.conversations) return f;
				const known = this.answered.get(f);
				if (known?.list === list) return known.facts;
				const answered: CwdFacts = {...f, conversations: list};
				this.answered.set(f, {list, facts: answered});
				return answered;
			});
		} catch {
			// The list still shows; purge and resume ask the rule themselves.
			return facts;
		}
	}

	/** Merging and sorting 20,000 conversations on every refresh cost more than the refresh. */
	private merged(facts: readonly CwdFacts[]): readonly Conversation[] {
		const last = this.state.merge;
		if (last && last.facts.length === facts.length && last.facts.every((f, i) => f === facts[i])) return last.conversations;
		const next = (last && mergeChanged(last, facts)) ?? mergeAll(facts);
		this.state.merge = next;
		return next.conversations;
	}
}

/** The merged conversation list and what it takes to update it in place. */
export interface Merge {
	readonly facts: readonly CwdFacts[];
	readonly conversations: readonly Conversation[];
	/** Sort rank (cwd index, then position) of every conversation listed, for ties on createdAt. */
	readonly rank: Map<Conversation, number>;
	/** How many cwd lists name each `agent\0id` (a conversation listed by two cwds is shown once). */
	readonly counts: Map<string, number>;
}

const RANK_STRIDE = 10_000_000;

const conversationsOf = (f: CwdFacts | undefined): readonly Conversation[] => (f?.ok ? f.conversations : []);

/** Newest first; equal times in cwd order, then list order (what a stable sort of the concatenation gives). */
function byNewest(rank: ReadonlyMap<Conversation, number>): (a: Conversation, b: Conversation) => number {
	return (a, b) => b.createdAt - a.createdAt || (rank.get(a) ?? 0) - (rank.get(b) ?? 0);
}

export function mergeAll(facts: readonly CwdFacts[]): Merge {
	const rank = new Map<Conversation, number>();
	const counts = new Map<string, number>();
	facts.forEach((f, i) =>
		conversationsOf(f).forEach((c, j) => {
			rank.set(c, i * RANK_STRIDE + j);
			const key = inUseKey(c.agent, c.id);
			counts.set(key, (counts.get(key) ?? 0) + 1);
		}),
	);
	const seen = new Set<string>();
	const conversations = [...rank.keys()].sort(byNewest(rank)).filter(c => {
		const key = inUseKey(c.agent, c.id);
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
	return {facts, conversations, rank, counts};
}

/**
 * The merge after a few cwds changed (a file-change refresh): only the conversations that are not
 * the same objects as before (see `keepUnchanged`) leave and enter the list, O(n) with no re-sort
 * of 20,000. Undefined (merge everything) when the cwd list itself changed, many changed, a
 * conversation listed twice is involved, or a changed cwd lists its kept conversations in
 * another order (their ties would then sort differently).
 */
export function mergeChanged(last: Merge, facts: readonly CwdFacts[]): Merge | undefined {
	if (last.facts.length !== facts.length) return undefined;
	const changed = facts.flatMap((f, i) => (f === last.facts[i] ? [] : [i]));
	if (changed.length > 4) return undefined;
	const diffs = changed.map(i => {
		const before = conversationsOf(last.facts[i]);
		const after = conversationsOf(facts[i]);
		const was = new Set(before);
		const is = new Set(after);
		return {
			i,
			dropped: before.filter(c => !is.has(c)),
			added: after.filter(c => !was.has(c)),
			keptBefore: before.filter(c => is.has(c)),
			keptAfter: after.filter(c => was.has(c)),
			after,
		};
	});
	if (diffs.some(d => d.keptBefore.some((c, k) => d.keptAfter[k] !== c))) return undefined;
	// Updated in place: `last` is replaced by the result (or by a full merge when this gives up).
	const {rank, counts} = last;
	const dropped = new Set<Conversation>();
	for (const d of diffs) {
		for (const c of d.dropped) {
			const key = inUseKey(c.agent, c.id);
			const left = (counts.get(key) ?? 0) - 1;
			if (left > 0) return undefined;
			counts.delete(key);
			rank.delete(c);
			dropped.add(c);
		}
	}
	const added: Conversation[] = [];
	for (const d of diffs) {
		for (const c of d.added) {
			const key = inUseKey(c.agent, c.id);
			if (counts.has(key)) return undefined;
			counts.set(key, 1);
			added.push(c);
		}
		// Positions in the cwd's list may have moved (one came or went): ranks follow, order kept.
		for (const [j, c] of d.after.entries()) rank.set(c, d.i * RANK_STRIDE + j);
	}
	const order = byNewest(rank);
	added.sort(order);
	// The list stays sorted: each added conversation goes in at the place a binary search finds,
	// not by comparing it with 20,000 others (reading createdAt off seven agents' object shapes).
	const conversations = dropped.size === 0 ? [...last.conversations] : last.conversations.filter(c => !dropped.has(c));
	let from = 0;
	for (const c of added) {
		let lo = from;
		let hi = conversations.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (order(c, conversations[mid] as Conversation) < 0) hi = mid;
			else lo = mid + 1;
		}
		conversations.splice(lo, 0, c);
		from = lo + 1;
	}
	return {facts, conversations, rank, counts};
}

/** Same fields, same values (resumeState compared by content). */
function sameConversation(a: Conversation, b: Conversation): boolean {
	const keys = Object.keys(a) as (keyof Conversation)[];
	if (keys.length !== Object.keys(b).length) return false;
	return keys.every(k => a[k] === b[k] || (k === 'resumeState' && JSON.stringify(a[k]) === JSON.stringify(b[k])));
}

/**
 * A cwd read again (one transcript grew) comes back as all-new objects: keep the old object of
 * every conversation that did not change, and the old facts when nothing did. The merge then
 * moves only what changed, drift's per-list caches stay valid, and the view sees the same
 * objects for unchanged conversations.
 */
export function keepUnchanged(old: CwdFacts | undefined, fresh: CwdFacts): CwdFacts {
	if (!old?.ok || !fresh.ok) return fresh;
	const byId = new Map<string, Conversation[]>();
	for (const c of old.conversations) {
		const same = byId.get(c.id);
		if (same) same.push(c);
		else byId.set(c.id, [c]);
	}
	let reused = 0;
	const conversations = fresh.conversations.map(c => {
		const candidates = byId.get(c.id);
		const at = candidates?.findIndex(o => sameConversation(o, c)) ?? -1;
		if (!candidates || at < 0) return c;
		// Each old object once: a list naming one conversation twice keeps two objects.
		const [kept] = candidates.splice(at, 1);
		reused += 1;
		return kept as Conversation;
	});
	const problemsSame = old.problems.length === fresh.problems.length && old.problems.every((p, i) => p === fresh.problems[i]);
	if (
		problemsSame &&
		reused === old.conversations.length &&
		conversations.length === old.conversations.length &&
		conversations.every((c, i) => c === old.conversations[i])
	)
		return old;
	return {ok: true, conversations, problems: problemsSame ? old.problems : fresh.problems};
}
