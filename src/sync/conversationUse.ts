import {ADAPTERS} from '../adapters/index.js';
import {sameFolder, type LiveUse} from '../adapters/common/liveEvidence.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, Conversation, ResumeState} from '../domain/types.js';
import {inUseText} from '../domain/resumability.js';

export {inUseText};

/**
 * Could `conv` be in use, by the claims alone? Only those are asked `inUse` (the rule itself):
 * 20,000 conversations cannot each be asked. A claim on an id not listed (a sub-agent) makes
 * every listed parent a candidate; an argv naming the id (any process) makes it one too.
 */
function mayBeUsed(conv: Conversation, uses: readonly LiveUse[], listed: ReadonlySet<string>, argvText: string): boolean {
	if (argvText.includes(conv.id)) return true;
	return uses.some(use => {
		const claim = use.claim;
		if (claim.kind === 'any') return true;
		if (claim.kind === 'project') return sameFolder(claim.cwd, conv.cwd) || claim.cwd.startsWith(`${conv.cwd}/`) || conv.cwd.startsWith(`${claim.cwd}/`);
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
	for (const conv of conversations) {
		if (!mayBeUsed(conv, usesOf.get(conv.agent) ?? [], listed, argvText)) continue;
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
