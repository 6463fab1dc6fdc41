import {assertValidId, InvalidIdError, type AgentAdapter} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {SessionRecord} from '../domain/types.js';
import {refusal, type ActionDeps, type ActionResult, type SessionRef} from './types.js';

/** The adapter for `agent`, or a refusal naming the unknown agent. */
export function adapterOf(deps: ActionDeps, agent: string): ActionResult<AgentAdapter> {
	const adapter = deps.adapterFor(agent);
	return adapter ? {ok: true, value: adapter} : refusal('unknown-agent', `unknown agent ${JSON.stringify(agent)}`);
}

/** Validate `id` against the adapter's pattern before it reaches a path, SQL or argv. */
export function validId(adapter: AgentAdapter, id: string): ActionResult<string> {
	try {
		assertValidId(adapter, id);
		return {ok: true, value: id};
	} catch (error) {
		if (error instanceof InvalidIdError) return refusal('bad-input', error.message);
		throw error;
	}
}

/**
 * The registry row `ref` names. By id, the row pinned to that conversation (a purged row only
 * when no live one exists); undefined when none is.
 */
export function findSession(deps: ActionDeps, ref: SessionRef): ActionResult<SessionRecord | undefined> {
	if ('name' in ref) return {ok: true, value: deps.registry.get(ref.name)};
	const adapter = adapterOf(deps, ref.agent);
	if (!adapter.ok) return adapter;
	const id = validId(adapter.value, ref.id);
	if (!id.ok) return id;
	const rows = deps.registry.findByPin(adapter.value.id, id.value);
	return {ok: true, value: rows.find(r => r.status !== 'purged') ?? rows[0]};
}

/** Like findSession, but a missing row is a `not-found` refusal. */
export function requireSession(deps: ActionDeps, ref: SessionRef): ActionResult<SessionRecord> {
	const found = findSession(deps, ref);
	if (!found.ok) return found;
	if (found.value) return {ok: true, value: found.value};
	return 'name' in ref
		? refusal('not-found', `no session named ${JSON.stringify(ref.name)}`)
		: refusal('not-found', `no session is pinned to ${ref.agent} conversation ${ref.id}`);
}

/** The adapter's argv plus the config's extraArgs for that agent. */
export function withExtraArgs(deps: ActionDeps, adapter: AgentAdapter, argv: readonly string[]): string[] {
	return [...argv, ...(deps.config.agents[adapter.id]?.extraArgs ?? [])];
}

/** Audit without ever failing the action: a full disk must not turn a done stop into an error. */
export function audit(deps: ActionDeps, entry: Parameters<ActionDeps['registry']['audit']>[0]): void {
	try {
		deps.registry.audit(entry);
	} catch (error) {
		deps.logger?.error(`audit write failed: ${messageOf(error)}`, entry);
	}
}
