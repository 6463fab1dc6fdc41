import {ADAPTERS} from '../adapters/index.js';
import {argvNames, argvNamesIn, type ArgvNames} from '../adapters/common/inUse.js';
import {folderResolver, trimSlash, type LiveUse} from '../adapters/common/liveEvidence.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, Conversation, ProcessRef} from '../domain/types.js';
import {inUseText} from '../domain/resumability.js';

export {inUseText};

/** One agent's live uses, shaped for the wide net of `mayBeUsed`. */
interface Net {
	readonly any: boolean;
	readonly ids: ReadonlySet<string>;
	/** Some claimed id is not listed (a sub-agent): every listed parent is a candidate. */
	readonly unlisted: boolean;
	/** Project claims' folders, as written and resolved. */
	readonly folders: ReadonlySet<string>;
}

function netOf(uses: readonly LiveUse[], listed: ReadonlyMap<string, number>): Net {
	const ids = new Set<string>();
	const folders = new Set<string>();
	let any = false;
	for (const {claim} of uses) {
		if (claim.kind === 'any') any = true;
		else if (claim.kind === 'ids') for (const id of claim.ids) ids.add(id);
		else folders.add(trimSlash(claim.cwd)).add(claim.folder);
	}
	return {any, ids, unlisted: [...ids].some(id => !listed.has(id)), folders};
}

/** Is `folder` one of `folders`, inside one, or above one? */
function inTree(folders: ReadonlySet<string>, folder: string): boolean {
	if (folder === '/') return folders.size > 0;
	for (let at = folder; ; at = at.slice(0, Math.max(1, at.lastIndexOf('/')))) {
		if (folders.has(at)) return true;
		if (at === '/' || !at.includes('/')) break;
	}
	for (const f of folders) if (f.startsWith(`${folder}/`)) return true;
	return false;
}

/**
 * Could `conv` be in use, by the claims alone? Only those are asked `inUse` (the rule itself):
 * 20,000 conversations cannot each be asked. A claim on an id not listed (a sub-agent) makes
 * every listed parent a candidate; an argv naming the id (any process) makes it one too; a
 * project claim makes every conversation of its folder tree one (as written and resolved).
 */
function mayBeUsed(conv: Conversation, net: Net, named: ReadonlySet<string>, resolve: (p: string) => string): boolean {
	if (net.any || named.has(conv.id) || net.ids.has(conv.id) || (conv.childCount > 0 && net.unlisted)) return true;
	return net.folders.size > 0 && (inTree(net.folders, trimSlash(conv.cwd)) || inTree(net.folders, resolve(conv.cwd)));
}

/** The listed ids some process's argv names (`argvNames`, the rule argvUsers asks). */
export function idsNamed(processes: readonly ProcessRef[], listed: ReadonlySet<string>): Set<string> {
	const longest = Math.max(0, ...[...listed].map(id => id.length));
	return new Set([...argvNames(processes, longest).byPart.keys()].filter(part => listed.has(part)));
}

type List = readonly Conversation[];

/**
 * The ids and agents of the lists asked about, kept up to date list by list: a refresh after one
 * file change replaces one list of hundreds, so only that list's ids leave and enter.
 */
interface Listed {
	lists: readonly List[];
	readonly ids: Map<string, number>;
	readonly agents: Map<AgentId, number>;
	/** At least the length of the longest id listed (what argv parts can be ids). */
	longest: number;
}

function count<K>(map: Map<K, number>, key: K, by: number): void {
	const n = (map.get(key) ?? 0) + by;
	if (n > 0) map.set(key, n);
	else map.delete(key);
}

function tally(listed: Listed, list: List, by: 1 | -1): void {
	for (const conv of list) {
		count(listed.ids, conv.id, by);
		count(listed.agents, conv.agent, by);
		if (by > 0 && conv.id.length > listed.longest) listed.longest = conv.id.length;
	}
}

/** `last` (or nothing) brought up to `lists` in place: each list that is not the one at its place before leaves and enters. */
function listedOf(lists: readonly List[], last: Listed | undefined): Listed {
	const listed = last ?? {lists: [], ids: new Map(), agents: new Map(), longest: 0};
	for (let i = 0; i < Math.max(lists.length, listed.lists.length); i++) {
		const before = listed.lists[i];
		const after = lists[i];
		if (before === after) continue;
		if (before) tally(listed, before, -1);
		if (after) tally(listed, after, 1);
	}
	listed.lists = lists;
	return listed;
}

/** The argv parts of one process listing, and those of them that are listed ids. */
interface Named {
	readonly table: readonly ProcessRef[];
	/** The longest id the parts were made for. */
	readonly longest: number;
	readonly parts: ArgvNames;
	readonly ids: ReadonlySet<string>;
}

function namedOf(ctx: AdapterContext, table: readonly ProcessRef[], listed: Listed, last: Named | undefined): Named {
	// The parts made for this table serve while no longer id is listed than they were made for.
	const kept = last?.table === table && last.longest >= listed.longest ? last : undefined;
	const longest = kept ? kept.longest : listed.longest;
	const parts = kept ? kept.parts : argvNamesIn(ctx, table, longest);
	const ids = new Set<string>();
	for (const part of parts.byPart.keys()) if (listed.ids.has(part)) ids.add(part);
	return {table, longest, parts, ids};
}

/** One agent's in-use answers, and what they were made from (its live uses, the ids argv names). */
interface AgentAnswers {
	readonly key: string;
	readonly answers: WeakMap<Conversation, Conversation>;
}

/** A list answered, with the key each of its agents' answers were made under. */
interface AnsweredList {
	readonly keys: ReadonlyMap<AgentId, string>;
	readonly list: List;
}

/**
 * What the in-use answers were made from, kept by the caller between refreshes: while an agent's
 * live uses (made once per process listing, see `Refresh.perListing`) and the ids argv names
 * stand, a list of its conversations (the same array) keeps its answered list and a conversation
 * (the same object: its cwd was not read again) its answer; only new ones are asked. Kept per
 * agent: a claude starting or ending asks claude's conversations again, not codex's.
 */
export interface UseMemo {
	readonly byAgent: ReadonlyMap<AgentId, AgentAnswers>;
	readonly lists: WeakMap<List, AnsweredList>;
	readonly listed: Listed;
	readonly named: Named;
}

async function usesFor(
	ctx: AdapterContext,
	agents: readonly AgentId[],
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
): Promise<ReadonlyMap<AgentId, readonly LiveUse[]>> {
	const usesOf = new Map<AgentId, readonly LiveUse[]>();
	for (const agent of agents) usesOf.set(agent, (await adapters[agent].liveUses?.(ctx)) ?? []);
	return usesOf;
}

/**
 * The conversations with the in-use rule applied (README "In use"): a conversation some live
 * process is or may be on reads `no: in use by pid …`, exactly as purge and resume would refuse
 * it. The list comes back as it was (the same array) when nothing in it is in use.
 */
export async function withUse(
	ctx: AdapterContext,
	conversations: List,
	adapters: Readonly<Record<AgentId, AgentAdapter>> = ADAPTERS,
	memo?: UseMemo,
): Promise<{readonly conversations: List; readonly memo?: UseMemo}> {
	const used = await withUseEach(ctx, [conversations], adapters, memo);
	return {conversations: used.lists[0] ?? conversations, ...(used.memo ? {memo: used.memo} : {})};
}

/**
 * `withUse` over several lists at once (the discovery cache's, one per agent and cwd), each
 * answered as a part of their union; an unchanged list costs nothing.
 */
export async function withUseEach(
	ctx: AdapterContext,
	lists: readonly List[],
	adapters: Readonly<Record<AgentId, AgentAdapter>> = ADAPTERS,
	memo?: UseMemo,
): Promise<{readonly lists: readonly List[]; readonly memo?: UseMemo}> {
	if (lists.every(list => list.length === 0)) return {lists, ...(memo ? {memo} : {})};
	const table = await ctx.processes.list();
	const listed = listedOf(lists, memo?.listed);
	const named = namedOf(ctx, table, listed, memo?.named);
	const agents = [...listed.agents.keys()].sort();
	const usesOf = await usesFor(ctx, agents, adapters);
	const nets = new Map([...usesOf].map(([agent, uses]) => [agent, netOf(uses, listed.ids)]));
	const namedKey = JSON.stringify([...named.ids].sort());
	const byAgent = new Map<AgentId, AgentAnswers>();
	for (const [agent, uses] of usesOf) {
		const key = JSON.stringify([uses.map(u => [u.pid, u.startTime, u.claim]), namedKey, nets.get(agent)?.unlisted]);
		const kept = memo?.byAgent.get(agent);
		byAgent.set(agent, kept?.key === key ? kept : {key, answers: new WeakMap()});
	}
	const answeredLists = memo?.lists ?? new WeakMap<List, AnsweredList>();
	const resolve = folderResolver();
	const rule: Rule = {nets, named: named.ids, resolve, byAgent, texts: new Map()};
	const out: List[] = [];
	for (const list of lists) {
		let answered = answeredLists.get(list);
		if (answered === undefined || moved(answered, byAgent)) {
			answered = await answerList(ctx, list, adapters, rule);
			answeredLists.set(list, answered);
		}
		out.push(answered.list);
	}
	return {lists: out, memo: {byAgent, lists: answeredLists, listed, named}};
}

/** Were some of `answered`'s agents' answers made under another key than now? */
function moved(answered: AnsweredList, byAgent: ReadonlyMap<AgentId, AgentAnswers>): boolean {
	for (const [agent, key] of answered.keys) if (byAgent.get(agent)?.key !== key) return true;
	return false;
}

interface Rule {
	readonly nets: ReadonlyMap<AgentId, Net>;
	readonly named: ReadonlySet<string>;
	readonly resolve: (p: string) => string;
	readonly byAgent: Map<AgentId, AgentAnswers>;
	/** Each in-use text once: thousands of a folder's conversations share one holder's. */
	readonly texts: Map<string, string>;
}

/** `agent`'s answers (every listed agent has some; one that is not is answered afresh, fail safe). */
function answersOf(rule: Rule, agent: AgentId): AgentAnswers {
	let answers = rule.byAgent.get(agent);
	if (!answers) rule.byAgent.set(agent, (answers = {key: '', answers: new WeakMap()}));
	return answers;
}

/** One list answered (the same array when nothing in it is in use), with its agents' keys. */
async function answerList(ctx: AdapterContext, list: List, adapters: Readonly<Record<AgentId, AgentAdapter>>, rule: Rule): Promise<AnsweredList> {
	let changed = false;
	const out: Conversation[] = [];
	const keys = new Map<AgentId, string>();
	for (const conv of list) {
		const {key, answers} = answersOf(rule, conv.agent);
		keys.set(conv.agent, key);
		let answer = answers.get(conv);
		if (answer === undefined) {
			// Most of 20,000 conversations are no candidate: answered without a promise each.
			const net = rule.nets.get(conv.agent);
			answer = net && mayBeUsed(conv, net, rule.named, rule.resolve) ? await usedAnswer(ctx, conv, adapters, rule.texts) : conv;
			answers.set(conv, answer);
		}
		if (answer !== conv) changed = true;
		out.push(answer);
	}
	return {keys, list: changed ? out : list};
}

/** A candidate `conv` itself, or a copy saying who uses it (or that nobody could tell). */
async function usedAnswer(
	ctx: AdapterContext,
	conv: Conversation,
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
	texts: Map<string, string>,
): Promise<Conversation> {
	try {
		const holders = await adapters[conv.agent].inUse(ctx, conv.id);
		return holders.length > 0 ? {...conv, resumeState: {kind: 'no', reason: once(texts, inUseText(holders))}} : conv;
	} catch (error) {
		return {...conv, resumeState: {kind: 'unknown', reason: `${adapters[conv.agent].label} could not tell who uses it: ${messageOf(error)}`}};
	}
}

/** `text`, or the equal string `texts` already holds: one copy however many conversations show it. */
function once(texts: Map<string, string>, text: string): string {
	const kept = texts.get(text);
	if (kept !== undefined) return kept;
	texts.set(text, text);
	return text;
}
