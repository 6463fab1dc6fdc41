import {memo} from '../adapters/common/refresh.js';
import type {AdapterContext, AgentAdapter, DiscoverResult} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {agentProcesses, paneAgent} from '../domain/paneAgent.js';
import type {AgentId, Pane} from '../domain/types.js';
import {processStartMs} from '../system/procTime.js';
import type {PaneEvidence} from '../drift/input.js';

/** The adapters mam-tui knows (all of them; the pane's agent is judged among every known agent). */
type Adapters = Readonly<Partial<Record<AgentId, AgentAdapter>>>;

/**
 * Which conversation one pane's agent process is on, from the agent's own evidence (its live
 * record, argv, files it holds open); when nothing names one, the conversations of its folder
 * written since it started. Never "the newest".
 */
export async function paneEvidence(pane: Pane, adapters: Adapters, ctx: AdapterContext): Promise<PaneEvidence | undefined> {
	// Which agent: the one rule (domain/paneAgent.ts); the evidence is read off its processes.
	const agent = paneAgent(pane, adapters);
	const adapter = agent === undefined ? undefined : adapters[agent];
	if (agent === undefined || !adapter) return undefined;
	const procs = agentProcesses(pane, agent, adapters);
	const root = procs[0];
	if (!root) return undefined;
	const startedAt = processStartMs(root.startTime);
	const base = {agent, ...(startedAt !== undefined ? {startedAt} : {})};
	if (!adapter.liveUses) return {...base, ids: [], seen: [`${adapter.label} keeps no evidence mam-tui can read of which conversation it is on`]};
	let uses;
	try {
		uses = await adapter.liveUses(ctx, procs);
	} catch (error) {
		return {...base, ids: [], seen: [`${adapter.label} evidence could not be read: ${messageOf(error)}`]};
	}
	const seen = uses.map(u => `pid ${u.pid}: ${u.reason}`);
	const named = [...new Set(uses.flatMap(u => (u.claim.kind === 'ids' ? u.claim.ids : [])))].filter(id => adapter.idPattern.test(id));
	const cwd = root.cwd ?? pane.foregroundCwd ?? pane.cwd;
	if (named.length > 0) return {...base, ids: await parentsOnly(adapter, ctx, named, cwd), seen};
	if (cwd === undefined || startedAt === undefined) return {...base, ids: [], seen};
	try {
		const listed = await discoverOnce(adapter, ctx, cwd);
		// Written since the process started: a conversation it created, or one it resumed and wrote to.
		const recent = listed.conversations.filter(c => c.updatedAt >= startedAt && c.parentId === undefined).map(c => c.id);
		return {...base, ids: [], recent: recent.sort(), seen: [...seen, `${recent.length} ${adapter.label} conversation(s) in ${cwd} written since the process started`]};
	} catch (error) {
		return {...base, ids: [], seen: [...seen, `${adapter.label} discovery failed: ${messageOf(error)}`]};
	}
}

/** The agent's conversations of `cwd`, asked once per refresh however many of its panes are there. */
function discoverOnce(adapter: AgentAdapter, ctx: AdapterContext, cwd: string): Promise<DiscoverResult> {
	return memo(ctx, `pane-evidence:discover:${adapter.id}\0${cwd}`, () => adapter.discover(ctx, {cwd}));
}

/** A process holding its own and a sub-agent's file names both: the sub-agent is not a candidate. */
async function parentsOnly(adapter: AgentAdapter, ctx: AdapterContext, ids: readonly string[], cwd: string | undefined): Promise<string[]> {
	if (ids.length < 2) return [...ids];
	try {
		const listed = await adapter.discover(ctx, {includeChildren: true, ...(cwd ? {cwd} : {})});
		const children = new Set(listed.conversations.filter(c => c.parentId !== undefined).map(c => c.id));
		const parents = ids.filter(id => !children.has(id));
		return parents.length > 0 ? parents.sort() : [...ids].sort();
	} catch {
		return [...ids].sort();
	}
}
