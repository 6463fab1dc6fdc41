import {ADAPTERS} from '../adapters/index.js';
import {folderResolver, sameResolvedTree, type LiveUse} from '../adapters/common/liveEvidence.js';
import type {AdapterContext, AgentAdapter, InUseHolder} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, Conversation, ResumeState} from '../domain/types.js';

/** `in use by pid N (command: reason)`: the one wording of the sessions and conversations views. */
export function inUseText(holders: readonly Pick<InUseHolder, 'pid' | 'command' | 'reason'>[]): string {
	const first = holders[0];
	if (!first) return '';
	const more = holders.length > 1 ? ` and ${holders.length - 1} more` : '';
	return `in use by pid ${first.pid} (${first.command.slice(0, 60)}: ${first.reason})${more}`;
}

/**
 * Could `conv` be in use, by the claims alone? Only those are asked `inUse` (the rule itself):
 * 20,000 conversations cannot each be asked. A claim on an id not listed (a sub-agent) makes
 * every listed parent a candidate; an argv naming the id (any process) makes it one too.
 */
function mayBeUsed(conv: Conversation, uses: readonly LiveUse[], listed: ReadonlySet<string>, argvText: string, resolve: (p: string) => string): boolean {
	if (argvText.includes(conv.id)) return true;
	return uses.some(use => {
		const claim = use.claim;
		if (claim.kind === 'any') return true;
		// A wide net (the folders as written, and resolved): the rule itself decides after.
		if (claim.kind === 'project') return sameResolvedTree(claim.cwd, conv.cwd) || sameResolvedTree(claim.folder, resolve(conv.cwd));
		return claim.ids.includes(conv.id) || (conv.childCount > 0 && claim.ids.some(id => !listed.has(id)));
	});
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
): Promise<readonly Conversation[]> {
	if (conversations.length === 0) return conversations;
	const all = await ctx.processes.list();
	const argvText = all.map(p => p.argv.join('\0')).join('\0');
	const agents = [...new Set(conversations.map(c => c.agent))];
	const usesOf = new Map<AgentId, readonly LiveUse[]>();
	for (const agent of agents) usesOf.set(agent, (await adapters[agent].liveUses?.(ctx, all)) ?? []);
	const listed = new Set(conversations.map(c => c.id));
	const states = new Map<Conversation, ResumeState>();
	const resolve = folderResolver();
	for (const conv of conversations) {
		if (!mayBeUsed(conv, usesOf.get(conv.agent) ?? [], listed, argvText, resolve)) continue;
		try {
			const holders = await adapters[conv.agent].inUse(ctx, conv.id);
			if (holders.length > 0) states.set(conv, {kind: 'no', reason: inUseText(holders)});
		} catch (error) {
			states.set(conv, {kind: 'unknown', reason: `${adapters[conv.agent].label} could not tell who uses it: ${messageOf(error)}`});
		}
	}
	if (states.size === 0) return conversations;
	return conversations.map(c => {
		const state = states.get(c);
		return state ? {...c, resumeState: state} : c;
	});
}
