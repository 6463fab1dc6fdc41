import {ADAPTERS} from '../adapters/index.js';
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

function netOf(uses: readonly LiveUse[], listed: ReadonlySet<string>): Net {
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

/**
 * The listed ids some process's argv names: as a word, or as a part of one between `-`, `_`
 * or its ends (`rollout-…-<id>.jsonl`). Every agent's ids are made of letters, digits, `-` and
 * `_`. One pass over the argv words, trying at each part's start only the lengths listed ids
 * have, not a substring search of every argv per conversation.
 */
export function idsNamed(processes: readonly ProcessRef[], listed: ReadonlySet<string>): Set<string> {
	const lengths = [...new Set([...listed].map(id => id.length))];
	const found = new Set<string>();
	const isSep = (ch: string | undefined) => ch === '-' || ch === '_';
	for (const proc of processes) {
		for (const arg of proc.argv) {
			for (const word of arg.split(/[^A-Za-z0-9_-]+/)) {
				for (let start = 0; start < word.length; start = nextPart(word, start)) {
					for (const length of lengths) {
						const end = start + length;
						if (end > word.length || (end < word.length && !isSep(word[end]))) continue;
						const part = word.slice(start, end);
						if (listed.has(part)) found.add(part);
					}
				}
			}
		}
	}
	return found;
}

/** Where the part after the one starting at `start` starts (past the next `-` or `_`), or the word's end. */
function nextPart(word: string, start: number): number {
	for (let i = start; i < word.length; i++) if (word[i] === '-' || word[i] === '_') return i + 1;
	return word.length;
}

/**
 * What the in-use answers of a list were made from, kept by the caller between refreshes. The
 * live uses are read once per process listing (a refresh for a file change reuses the last
 * listing, open files included, as it reuses the panes); while the uses and the ids argv names
 * stand, a conversation (the same object: its cwd was not read again) keeps its answer, and
 * only new ones are asked.
 */
export interface UseMemo {
	readonly table: readonly ProcessRef[];
	readonly usesOf: ReadonlyMap<AgentId, readonly LiveUse[]>;
	readonly key: string;
	readonly answers: WeakMap<Conversation, Conversation>;
}

async function usesFor(ctx: AdapterContext, table: readonly ProcessRef[], agents: readonly AgentId[], adapters: Readonly<Record<AgentId, AgentAdapter>>, memo: UseMemo | undefined): Promise<ReadonlyMap<AgentId, readonly LiveUse[]>> {
	if (memo?.table === table && agents.every(a => memo.usesOf.has(a))) return memo.usesOf;
	const usesOf = new Map<AgentId, readonly LiveUse[]>();
	for (const agent of agents) usesOf.set(agent, (await adapters[agent].liveUses?.(ctx, table)) ?? []);
	return usesOf;
}

/**
 * The conversations with the in-use rule applied (README "In use"): a conversation some live
 * process is or may be on reads `no: in use by pid …`, exactly as purge and resume would refuse
 * it. The list comes back as it was (the same array) when nothing is in use.
 */
export async function withUse(
	ctx: AdapterContext,
	conversations: readonly Conversation[],
	adapters: Readonly<Record<AgentId, AgentAdapter>> = ADAPTERS,
	memo?: UseMemo,
): Promise<{readonly conversations: readonly Conversation[]; readonly memo?: UseMemo}> {
	if (conversations.length === 0) return {conversations, ...(memo ? {memo} : {})};
	const table = await ctx.processes.list();
	const listed = new Set<string>();
	const agentSet = new Set<AgentId>();
	for (const conv of conversations) {
		listed.add(conv.id);
		agentSet.add(conv.agent);
	}
	const named = idsNamed(table, listed);
	const agents = [...agentSet].sort();
	const usesOf = await usesFor(ctx, table, agents, adapters, memo);
	const nets = new Map([...usesOf].map(([agent, uses]) => [agent, netOf(uses, listed)]));
	const key = JSON.stringify([[...usesOf].map(([agent, uses]) => [agent, uses.map(u => [u.pid, u.startTime, u.claim])]), [...named].sort(), agents.map(a => nets.get(a)?.unlisted)]);
	const answers = memo?.key === key ? memo.answers : new WeakMap<Conversation, Conversation>();
	const resolve = folderResolver();
	let changed = false;
	const out: Conversation[] = [];
	for (const conv of conversations) {
		let answer = answers.get(conv);
		if (answer === undefined) {
			answer = await answerFor(ctx, conv, adapters, nets.get(conv.agent), named, resolve);
			answers.set(conv, answer);
		}
		if (answer !== conv) changed = true;
		out.push(answer);
	}
	return {conversations: changed ? out : conversations, memo: {table, usesOf, key, answers}};
}

/** `conv` itself, or a copy saying who uses it (or that nobody could tell). */
async function answerFor(
	ctx: AdapterContext,
	conv: Conversation,
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
	net: Net | undefined,
	named: ReadonlySet<string>,
	resolve: (p: string) => string,
): Promise<Conversation> {
	if (!net || !mayBeUsed(conv, net, named, resolve)) return conv;
	try {
		const holders = await adapters[conv.agent].inUse(ctx, conv.id);
		return holders.length > 0 ? {...conv, resumeState: {kind: 'no', reason: inUseText(holders)}} : conv;
	} catch (error) {
		return {...conv, resumeState: {kind: 'unknown', reason: `${adapters[conv.agent].label} could not tell who uses it: ${messageOf(error)}`}};
	}
}
