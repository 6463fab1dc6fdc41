import type {AgentAdapter, PlanItem, PurgePlan} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, SessionRecord} from '../domain/types.js';
import {purgeExtra, type PurgeMark} from '../registry/extra.js';
import {adapterOf, audit, findSession, validId} from './session.js';
import {captureToTrash, finishTrash, unfinishedEntry, type OpenEntry} from './trash.js';
import {expireTrash, selfWriter, writerAlive} from './trashActions.js';
import {describeHolders, refusal, type ActionDeps, type ActionResult, type SessionRef} from './types.js';

/** What one purge will delete, as shown to the user before they confirm. */
export interface PurgePlanView {
	readonly agent: AgentId;
	readonly id: string;
	/** What the user types to confirm: the session's name, or the id when no row is registered. */
	readonly label: string;
	/** The registry row, when the conversation is registered. */
	readonly session?: SessionRecord;
	readonly plan: PurgePlan;
	/** Identity of the plan: the same artifacts resolve to the same fingerprint. */
	readonly fingerprint: string;
}

export type PurgeStep = 'recheck' | 'delete' | 'residual';

/** One live update of a purge. */
export interface PurgeProgress {
	readonly label: string;
	readonly step: PurgeStep;
	readonly state: 'running' | 'done' | 'failed';
	readonly message: string;
}

export interface PurgeResult {
	readonly label: string;
	readonly agent: AgentId;
	readonly id: string;
	readonly removed: readonly PlanItem[];
	readonly warnings: readonly string[];
	/** What still names the conversation after the purge (SPEC 4.1 residual); empty when clean. */
	readonly residual: readonly string[];
	/** The trash entry holding what was taken out (`mam-tui restore <id>`); absent for a hard purge. */
	readonly trashId?: string;
}

export interface PurgeOptions {
	readonly onProgress?: (progress: PurgeProgress) => void;
	/** Skip the trash: nothing is kept for restore (`purge --hard`). */
	readonly hard?: boolean;
}

/** Same artifacts ⇒ same fingerprint; sizes and counts may change (an agent appended a line). */
export function planFingerprint(plan: PurgePlan): string {
	const items = plan.items.map(i => [i.kind, i.path, i.table ?? '', i.sessionId].join('\u0000')).sort();
	return JSON.stringify({agent: plan.agent, id: plan.id, descendants: [...plan.descendants].sort(), items});
}

/** What the user must type to confirm `views`: the name for one, `purge N` for a bulk purge. */
export function expectedConfirmation(views: readonly PurgePlanView[]): string {
	if (views.length === 1 && views[0]) return views[0].label;
	return `purge ${views.length}`;
}

/** Only the exact expected text confirms; anything else (including nothing) cancels. */
export function confirmPurge(views: readonly PurgePlanView[], typed: string): boolean {
	return views.length > 0 && typed === expectedConfirmation(views);
}

/** The purge-capable adapter for `ref`, its validated id and its registry row (if any). */
function resolve(deps: ActionDeps, ref: SessionRef): ActionResult<{adapter: AgentAdapter; id: string; session?: SessionRecord}> {
	const found = findSession(deps, ref);
	if (!found.ok) return found;
	const session = found.value;
	if ('name' in ref && !session) return refusal('not-found', `no session named ${JSON.stringify(ref.name)}`);
	const adapter = adapterOf(deps, session?.agent ?? ('agent' in ref ? ref.agent : ''));
	if (!adapter.ok) return adapter;
	const rawId = session?.agentSessionId ?? ('id' in ref ? ref.id : null);
	if (!rawId) return refusal('unpinned', `session ${session?.name ?? '?'} has no conversation id pinned: there is nothing of it on disk to purge`);
	const id = validId(adapter.value, rawId);
	if (!id.ok) return id;
	if (!adapter.value.capabilities.purge) return refusal('unsupported', `purging ${adapter.value.label} conversations is not supported yet`);
	return {ok: true, value: {adapter: adapter.value, id: id.value, ...(session ? {session} : {})}};
}

/** Refuse while the conversation runs in a registered pane or any process uses it (SPEC 6.3 steps 1–2). */
async function checkNotInUse(deps: ActionDeps, adapter: AgentAdapter, id: string): Promise<ActionResult<true>> {
	const running = deps.registry.findByPin(adapter.id, id).find(r => r.status === 'running');
	const holders = await adapter.inUse(deps.context, id);
	if (running) {
		// In use (exit 4), like any other user of the conversation: the pane and the pids say where.
		const pids = holders.length > 0 ? ` (pid ${holders.map(h => h.pid).join(', ')})` : '';
		return refusal(
			'in-use',
			`session ${running.name} is running${running.paneId ? ` in pane ${running.paneId}` : ''}${pids}; stop it first (mam-tui stop ${running.name}); nothing was deleted`,
			holders,
		);
	}
	if (holders.length > 0) return refusal('in-use', `conversation ${id} is in use by ${describeHolders(holders)}; nothing was deleted`, holders);
	return {ok: true, value: true};
}

/** The purge plan for one session or conversation, after the running and in-use checks. */
export async function purgePlan(deps: ActionDeps, ref: SessionRef): Promise<ActionResult<PurgePlanView>> {
	const target = resolve(deps, ref);
	if (!target.ok) return target;
	const {adapter, id, session} = target.value;
	const free = await checkNotInUse(deps, adapter, id);
	if (!free.ok) {
		audit(deps, {
			session: session?.name ?? null,
			action: 'purge',
			outcome: 'refused',
			detail: {agent: adapter.id, id, kind: free.error.kind, message: free.error.message},
		});
		return free;
	}
	const plan = await adapter.artifacts(deps.context, id);
	return {ok: true, value: {agent: adapter.id, id, label: session?.name ?? id, ...(session ? {session} : {}), plan, fingerprint: planFingerprint(plan)}};
}

/**
 * Just before deleting: still not in use, and the disk still holds the shown plan (SPEC 6.3 step
 * 3): the id resolves to the same artifacts. The fresh reading is only compared, never deleted:
 * the adapter deletes the plan that was shown.
 */
async function recheck(deps: ActionDeps, view: PurgePlanView): Promise<ActionResult<AgentAdapter>> {
	const adapter = adapterOf(deps, view.agent);
	if (!adapter.ok) return adapter;
	const free = await checkNotInUse(deps, adapter.value, view.id);
	if (!free.ok) return free;
	const again = await adapter.value.artifacts(deps.context, view.id);
	if (planFingerprint(again) !== view.fingerprint) {
		return refusal(
			'changed',
			`what ${view.label} resolves to changed since the plan was shown (${again.items.length} items now, ${view.plan.items.length} before); review the plan again. Nothing was deleted.`,
		);
	}
	return adapter;
}

function markRows(deps: ActionDeps, view: PurgePlanView, mark: PurgeMark, status?: 'purged'): void {
	for (const row of deps.registry.findByPin(view.agent, view.id)) {
		deps.registry.transaction(() => {
			const current = deps.registry.getById(row.id);
			if (!current) return;
			deps.registry.update(row.id, {...(status ? {status} : {}), extra: purgeExtra.write(current.extra, mark)});
		});
	}
}

/**
 * Copy what the plan names into the trash before anything is deleted, or take up the entry an
 * interrupted purge of the same conversation left (its copies were complete; the rerun finishes
 * the deletion). Undefined for a hard purge or deps without a trash.
 */
async function openTrash(deps: ActionDeps, view: PurgePlanView, hard: boolean): Promise<OpenEntry | undefined> {
	if (hard || !deps.trashDir) return undefined;
	const left = await unfinishedEntry(deps.trashDir, view.agent, view.id, writerAlive(deps));
	if (left) return left;
	// Nothing on disk names it (a second purge): nothing to keep, and no empty entry in the list.
	if (view.plan.items.length === 0) return undefined;
	const subject = {agent: view.agent, conversation: view.id, label: view.label, session: view.session?.name ?? null, home: deps.context.home, plan: view.plan};
	return captureToTrash(deps.trashDir, subject, await selfWriter(deps), deps.now());
}

/** Erase the conversation and its descendants from the search index; a warning when that failed. */
function forgetInIndex(deps: ActionDeps, view: PurgePlanView): string | undefined {
	if (!deps.searchIndex) return undefined;
	try {
		deps.searchIndex.forget(view.agent, [view.id, ...view.plan.descendants]);
		return undefined;
	} catch (error) {
		return `the search index could not be cleared of ${view.id}: ${messageOf(error)} (run the purge again)`;
	}
}

/**
 * Erase what the parse memo kept of every file the plan deletes or rewrites (a store's row holds
 * other conversations' titles and this one's); a warning when that failed.
 */
function forgetInMemo(deps: ActionDeps, view: PurgePlanView): string | undefined {
	if (!deps.parseMemo) return undefined;
	const paths = [...new Set([...view.plan.items.map(i => i.path), ...(view.plan.changed ?? []).map(c => c.path)])];
	try {
		deps.parseMemo.forget(paths);
		return undefined;
	} catch (error) {
		return `the parse memo could not be cleared of ${view.id}'s files: ${messageOf(error)} (run the purge again)`;
	}
}

async function purgeOne(deps: ActionDeps, adapter: AgentAdapter, view: PurgePlanView, report: (p: PurgeProgress) => void, hard: boolean): Promise<PurgeResult> {
	const session = view.session?.name ?? null;
	const detail = {agent: view.agent, id: view.id, items: view.plan.items.length, bytes: view.plan.totalBytes, descendants: view.plan.descendants, hard};
	// The intent goes on record before anything is deleted: a purge killed half-way is visible, and
	// running it again finishes the job (the adapter's purge deletes what is still there).
	deps.registry.audit({session, action: 'purge', step: 'delete', outcome: 'started', detail});
	markRows(deps, view, {state: 'purging', at: deps.now(), items: view.plan.items.length});
	const trash = await openTrash(deps, view, hard);
	report({label: view.label, step: 'delete', state: 'running', message: `deleting ${view.plan.items.length} items of ${view.label}`});
	// Exactly the plan that was shown, re-checked against the disk and copied into the trash.
	const outcome = await adapter.purge(deps.context, view.plan);
	// mam-tui's own copy of the words goes with the agent's: the trash keeps what restore needs,
	// and restore's next index sync reads the conversation again.
	const indexWarning = forgetInIndex(deps, view);
	const memoWarning = forgetInMemo(deps, view);
	const kept = trash ? finishTrash(trash, await selfWriter(deps)) : undefined;
	report({
		label: view.label,
		step: 'delete',
		state: 'done',
		message: `removed ${outcome.removed.length} items${outcome.warnings.length > 0 ? `; ${outcome.warnings.length} warnings` : ''}`,
	});
	report({label: view.label, step: 'residual', state: 'running', message: 'scanning for what is left'});
	// A database the agent holds keeps the deleted text in freed pages until it checkpoints: its own residual line.
	const residual = [...(outcome.held ?? []), ...(await adapter.residual(deps.context, view.id))];
	const clean = residual.length === 0;
	report({label: view.label, step: 'residual', state: clean ? 'done' : 'failed', message: clean ? 'nothing left' : `${residual.length} left`});
	markRows(deps, view, {state: clean ? 'done' : 'residual', at: deps.now(), ...(clean ? {} : {residual})}, 'purged');
	audit(deps, {
		session,
		action: 'purge',
		outcome: clean ? 'ok' : 'failed',
		detail: {...detail, removed: outcome.removed.length, warnings: outcome.warnings, residual, trashId: kept?.purgeId ?? null},
	});
	const warnings = [...outcome.warnings, ...(kept?.notes ?? []), ...(indexWarning ? [indexWarning] : []), ...(memoWarning ? [memoWarning] : [])];
	return {label: view.label, agent: view.agent, id: view.id, removed: outcome.removed, warnings, residual, ...(kept ? {trashId: kept.purgeId} : {})};
}

/**
 * Purge confirmed plans. `typed` must be exactly the expected confirmation, else nothing happens.
 * Every plan is re-checked (identity and use) before the first deletion, so a bulk purge either
 * starts with all of them still valid or deletes nothing.
 */
export async function purgeConfirmed(
	deps: ActionDeps,
	views: readonly PurgePlanView[],
	typed: string,
	options: PurgeOptions = {},
): Promise<ActionResult<readonly PurgeResult[]>> {
	if (!confirmPurge(views, typed)) {
		return refusal(
			'not-confirmed',
			`purge cancelled: the confirmation did not match (type ${JSON.stringify(expectedConfirmation(views))}); nothing was deleted`,
		);
	}
	const report = (p: PurgeProgress) => options.onProgress?.(p);
	await expireTrash(deps);
	const adapters: AgentAdapter[] = [];
	for (const view of views) {
		report({label: view.label, step: 'recheck', state: 'running', message: 'checking identity and use again'});
		const checked = await recheck(deps, view);
		if (!checked.ok) {
			report({label: view.label, step: 'recheck', state: 'failed', message: checked.error.message});
			audit(deps, {
				session: view.session?.name ?? null,
				action: 'purge',
				step: 'recheck',
				outcome: 'refused',
				detail: {agent: view.agent, id: view.id, message: checked.error.message},
			});
			return checked;
		}
		report({label: view.label, step: 'recheck', state: 'done', message: 'unchanged and not in use'});
		adapters.push(checked.value);
	}
	const results: PurgeResult[] = [];
	for (const [i, view] of views.entries()) {
		const adapter = adapters[i];
		if (!adapter) continue;
		try {
			results.push(await purgeOne(deps, adapter, view, report, options.hard === true));
		} catch (error) {
			audit(deps, {
				session: view.session?.name ?? null,
				action: 'purge',
				outcome: 'failed',
				detail: {agent: view.agent, id: view.id, message: messageOf(error)},
			});
			return refusal('failed', `purging ${view.label} failed: ${messageOf(error)}; run the purge again to finish it`);
		}
	}
	return {ok: true, value: results};
}
