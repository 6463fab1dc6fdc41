import type {AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {agentProcesses, paneAgent, reportedId} from '../domain/paneAgent.js';
import {AGENT_IDS, type AgentId, type Pane, type SessionRecord} from '../domain/types.js';
import {paneEvidence} from '../sync/paneEvidence.js';
import type {PaneEvidence} from '../drift/input.js';
import type {Multiplexer} from '../mux/types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import {adoptedByExtra, withPaneServer} from '../registry/extra.js';
import {pickName} from './newSession.js';
import {adapterOf, audit, validId} from './session.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';

export interface AdoptRequest {
	readonly agent?: string;
	readonly id?: string;
	readonly name?: string;
	/** Adopt the agent running in this pane, pinned to the conversation its process is on. */
	readonly pane?: string;
}

export interface AdoptOutcome {
	readonly session: SessionRecord;
	/** False when a row was already pinned to the conversation (it is returned as it is, or linked to its live pane). */
	readonly created: boolean;
	/** The live pane the row was linked to, when the conversation runs in one. */
	readonly paneId?: string;
	/** What the agent's evidence said, one line each. */
	readonly evidence?: readonly string[];
}

/** The panes and the process table at one moment, or undefined when there is no mux to ask. */
async function livePanes(deps: ActionDeps): Promise<{mux: Multiplexer; panes: readonly Pane[]} | undefined> {
	let mux: Multiplexer;
	try {
		mux = await deps.mux();
	} catch {
		return undefined; // no mux: the conversation is adopted stopped, as before
	}
	try {
		return {mux, panes: await mux.listPanes()};
	} catch (error) {
		deps.logger?.warn(`adopt: could not list panes: ${messageOf(error)}`);
		return undefined;
	}
}

/** Every agent this build knows: which agent runs a pane is judged among all of them (domain/paneAgent.ts). */
function knownAdapters(deps: ActionDeps): Partial<Record<AgentId, AgentAdapter>> {
	const known: Partial<Record<AgentId, AgentAdapter>> = {};
	for (const id of AGENT_IDS) {
		const adapter = deps.adapterFor(id);
		if (adapter) known[id] = adapter;
	}
	return known;
}

/** The running row that already owns `pane`, if any: two rows never claim one pane. */
function ownerOf(deps: ActionDeps, mux: Multiplexer, pane: Pane): SessionRecord | undefined {
	return deps.registry.list().find(r => r.status === 'running' && isRecordedPane(r, pane, mux.kind));
}

/**
 * The live pane (not mam-tui's own) whose agent process is on `id`: the mux or the agent's
 * evidence names it; else the one pane whose agent, keeping no such evidence, runs in the
 * conversation's folder and wrote `id` since it started (two such panes: neither).
 */
async function paneRunning(
	deps: ActionDeps,
	adapter: AgentAdapter,
	panes: readonly Pane[],
	id: string,
): Promise<{pane: Pane; evidence: PaneEvidence} | undefined> {
	const recent: {pane: Pane; evidence: PaneEvidence}[] = [];
	const agents = knownAdapters(deps);
	for (const pane of panes) {
		if (paneAgent(pane, agents) !== adapter.id) continue;
		const evidence = await paneEvidence(pane, agents, deps.context);
		if (reportedId(pane, adapter.id) === id) {
			return {pane, evidence: evidence ?? {agent: adapter.id, ids: [id], seen: [`the mux reports ${id} in pane ${pane.id}`]}};
		}
		if (evidence?.agent !== adapter.id) continue;
		if (evidence.ids.length === 1 && evidence.ids[0] === id) return {pane, evidence};
		if (evidence.ids.length === 0 && evidence.recent?.includes(id)) recent.push({pane, evidence});
	}
	return recent.length === 1 ? recent[0] : undefined;
}

/** Link `row` to the live `pane` it runs in: running, with the pane's backend and server. */
function linkRow(deps: ActionDeps, mux: Multiplexer, row: SessionRecord, pane: Pane): SessionRecord {
	return deps.registry.transaction(() => {
		const current = deps.registry.getById(row.id) ?? row;
		return deps.registry.update(
			row.id,
			{status: 'running', paneId: pane.id, mux: mux.kind, extra: withPaneServer(current.extra, pane.server)},
			current.version,
		);
	});
}

/**
 * Register a conversation found on disk: verified first, cwd taken from discovery. When a live
 * pane's agent process is on it (the agent's own evidence, never "newest"), the row is that
 * pane's — running, its epoch the process's start; else it is stopped. Adopting an already
 * registered conversation returns its row (linked to the pane it now runs in, if it is stopped).
 */
export async function adoptConversation(deps: ActionDeps, request: AdoptRequest): Promise<ActionResult<AdoptOutcome>> {
	if (request.pane !== undefined) return adoptPane(deps, request.pane, request);
	const adapter = adapterOf(deps, request.agent ?? '');
	if (!adapter.ok) return adapter;
	const id = validId(adapter.value, request.id ?? '');
	if (!id.ok) return id;
	const existing = deps.registry.findByPin(adapter.value.id, id.value).find(r => r.status !== 'purged');
	const live = await livePanes(deps);
	const running = live ? await paneRunning(deps, adapter.value, live.panes, id.value) : undefined;
	if (existing) {
		if (existing.status !== 'stopped' || !live || !running) return {ok: true, value: {session: existing, created: false}};
		const owner = ownerOf(deps, live.mux, running.pane);
		if (owner) return refusal('in-use', `conversation ${id.value} runs in pane ${running.pane.id}, which is already ${owner.name}'s`);
		const linked = linkRow(deps, live.mux, existing, running.pane);
		audit(deps, {
			session: linked.name,
			action: 'adopt',
			outcome: 'ok',
			detail: {agent: adapter.value.id, id: id.value, paneId: running.pane.id, evidence: running.evidence.seen},
		});
		return {ok: true, value: {session: linked, created: false, paneId: running.pane.id, evidence: running.evidence.seen}};
	}
	const state = await adapter.value.verify(deps.context, id.value);
	if (state.kind === 'no') return refusal('not-found', `${adapter.value.label} conversation ${id.value} was not found: ${state.reason}`);
	if (state.kind === 'unknown') return refusal('not-resumable', `${adapter.value.label} conversation ${id.value} cannot be checked: ${state.reason}`);
	const found = await adapter.value.discover(deps.context, {includeChildren: true});
	const conversation = found.conversations.find(c => c.id === id.value);
	if (!conversation) {
		return refusal('not-found', `${adapter.value.label} conversation ${id.value} verifies but discovery does not list it, so its folder is unknown`);
	}
	if (live && running) {
		const owner = ownerOf(deps, live.mux, running.pane);
		if (owner) return refusal('in-use', `conversation ${id.value} runs in pane ${running.pane.id}, which is already ${owner.name}'s`);
	}
	const name = pickName(deps, adapter.value.id, conversation.cwd, request.name);
	if (!name.ok) return name;
	const session = deps.registry.insert({
		name: name.value,
		agent: adapter.value.id,
		cwd: conversation.cwd,
		agentSessionId: id.value,
		...(live && running
			? {
					status: 'running' as const,
					mux: live.mux.kind,
					paneId: running.pane.id,
					epoch: running.evidence.startedAt ?? conversation.createdAt,
					extra: withPaneServer(adoptedByExtra.write({}, 'adopt'), running.pane.server),
				}
			: {status: 'stopped' as const, epoch: conversation.createdAt}),
	});
	const where = running ? {paneId: running.pane.id, evidence: running.evidence.seen} : {};
	audit(deps, {session: session.name, action: 'adopt', outcome: 'ok', detail: {agent: adapter.value.id, id: id.value, cwd: conversation.cwd, ...where}});
	return {ok: true, value: {session, created: true, ...where}};
}

/**
 * `adopt --pane P [--id ID]`: a row for the agent running in pane P, pinned to the conversation
 * its process is on. Several candidates and no `--id`: refused, listing them (the user picks).
 */
async function adoptPane(deps: ActionDeps, paneId: string, request: AdoptRequest): Promise<ActionResult<AdoptOutcome>> {
	const live = await livePanes(deps);
	if (!live) return refusal('failed', `cannot list the multiplexer's panes to find pane ${paneId}`);
	const pane = live.panes.find(p => p.id === paneId);
	if (!pane) return refusal('not-found', `no pane ${paneId} in ${live.mux.kind}`);
	if (pane.isSelf) return refusal('self-pane', `pane ${paneId} is mam-tui's own pane`);
	const adapters = request.agent ? deps.adapterFor(request.agent) : undefined;
	if (request.agent && !adapters) return refusal('unknown-agent', `unknown agent ${JSON.stringify(request.agent)}`);
	const agents = knownAdapters(deps);
	const runs = paneAgent(pane, agents);
	const adapter = adapters ?? (runs === undefined ? undefined : agents[runs]);
	if (!adapter) return refusal('not-found', `pane ${paneId} runs no agent mam-tui knows`);
	const evidence = runs === adapter.id ? await paneEvidence(pane, agents, deps.context) : undefined;
	if (!evidence) return refusal('not-found', `pane ${paneId} does not run ${adapter.label}`);
	const owner = ownerOf(deps, live.mux, pane);
	if (owner) return refusal('in-use', `pane ${paneId} is already ${owner.name}'s`);
	const pool = evidence.ids.length > 0 ? evidence.ids : (evidence.recent ?? []);
	let id = request.id;
	if (id === undefined) {
		if (pool.length > 1) return refusal('bad-input', `pane ${paneId}'s ${adapter.label} could be on ${pool.join(', ')}; pick one with --id`);
		id = pool[0];
	}
	const checked = id === undefined ? undefined : validId(adapter, id);
	if (checked && !checked.ok) return checked;
	const pin = checked?.value;
	const claimed = pin ? deps.registry.findByPin(adapter.id, pin).find(r => r.status !== 'purged') : undefined;
	if (claimed) {
		if (claimed.status !== 'stopped') return refusal('in-use', `conversation ${pin} is already ${claimed.name}'s (${claimed.status})`);
		const linked = linkRow(deps, live.mux, claimed, pane);
		audit(deps, {session: linked.name, action: 'adopt', outcome: 'ok', detail: {agent: adapter.id, id: pin, paneId, evidence: evidence.seen}});
		return {ok: true, value: {session: linked, created: false, paneId, evidence: evidence.seen}};
	}
	const cwd = agentProcesses(pane, adapter.id, agents)[0]?.cwd ?? pane.foregroundCwd ?? pane.cwd;
	if (!cwd) return refusal('failed', `pane ${paneId} has no known folder`);
	const name = pickName(deps, adapter.id, cwd, request.name);
	if (!name.ok) return name;
	const session = deps.registry.insert({
		name: name.value,
		agent: adapter.id,
		cwd,
		agentSessionId: pin ?? null,
		status: 'running',
		mux: live.mux.kind,
		paneId,
		epoch: evidence.startedAt ?? deps.now(),
		extra: withPaneServer(adoptedByExtra.write({}, 'adopt'), pane.server),
	});
	audit(deps, {session: session.name, action: 'adopt', outcome: 'ok', detail: {agent: adapter.id, id: pin ?? null, cwd, paneId, evidence: evidence.seen}});
	return {ok: true, value: {session, created: true, paneId, evidence: evidence.seen}};
}
