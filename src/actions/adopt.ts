import type {SessionRecord} from '../domain/types.js';
import {pickName} from './newSession.js';
import {adapterOf, audit, validId} from './session.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';

export interface AdoptRequest {
	readonly agent: string;
	readonly id: string;
	readonly name?: string;
}

export interface AdoptOutcome {
	readonly session: SessionRecord;
	/** False when a row was already pinned to the conversation (it is returned as it is). */
	readonly created: boolean;
}

/**
 * Register a conversation found on disk as a stopped session: verified first, cwd and epoch taken
 * from discovery. Adopting an already registered conversation returns its row.
 */
export async function adoptConversation(deps: ActionDeps, request: AdoptRequest): Promise<ActionResult<AdoptOutcome>> {
	const adapter = adapterOf(deps, request.agent);
	if (!adapter.ok) return adapter;
	const id = validId(adapter.value, request.id);
	if (!id.ok) return id;
	const existing = deps.registry.findByPin(adapter.value.id, id.value).find(r => r.status !== 'purged');
	if (existing) return {ok: true, value: {session: existing, created: false}};
	const state = await adapter.value.verify(deps.context, id.value);
	if (state.kind === 'no') return refusal('not-found', `${adapter.value.label} conversation ${id.value} was not found: ${state.reason}`);
	if (state.kind === 'unknown') return refusal('not-resumable', `${adapter.value.label} conversation ${id.value} cannot be checked: ${state.reason}`);
	const found = await adapter.value.discover(deps.context, {includeChildren: true});
	const conversation = found.conversations.find(c => c.id === id.value);
	if (!conversation) {
		return refusal('not-found', `${adapter.value.label} conversation ${id.value} verifies but discovery does not list it, so its folder is unknown`);
	}
	const name = pickName(deps, adapter.value.id, conversation.cwd, request.name);
	if (!name.ok) return name;
	const session = deps.registry.insert({
		name: name.value,
		agent: adapter.value.id,
		cwd: conversation.cwd,
		agentSessionId: id.value,
		status: 'stopped',
		epoch: conversation.createdAt,
	});
	audit(deps, {session: session.name, action: 'adopt', outcome: 'ok', detail: {agent: adapter.value.id, id: id.value, cwd: conversation.cwd}});
	return {ok: true, value: {session, created: true}};
}
