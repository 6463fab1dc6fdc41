import path from 'node:path';
import {purgeExtra} from '../registry/extra.js';
import {audit} from './session.js';
import {emptyEntry, emptyTrash, listTrash, type TrashListing, type WriterAlive} from './trash.js';
import {restoreFromTrash, type RestoreOutcome} from './trashRestore.js';
import type {TrashWriter} from './trashStore.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import type {ResumeState} from '../domain/types.js';
import {messageOf} from '../domain/result.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** This process, as the writer of a trash entry's state. */
export async function selfWriter(deps: ActionDeps): Promise<TrashWriter> {
	const pid = deps.selfPid ?? process.pid;
	return {pid, startTime: (await deps.processes.get(pid))?.startTime ?? 0};
}

/** Is a trash entry's writer still that same process (same pid, same start time)? */
export function writerAlive(deps: ActionDeps): WriterAlive {
	return async writer => {
		const proc = await deps.processes.get(writer.pid);
		return proc !== undefined && (writer.startTime === 0 || proc.startTime === writer.startTime);
	};
}

/** The trash folder, or undefined when these deps have none (then purges are hard). */
export function trashDirOf(deps: ActionDeps): string | undefined {
	return deps.trashDir;
}

/**
 * Retention (`purge.trashDays`): finished purges older than that are hard-deleted, and abandoned
 * entries removed. Run at the start of every purge and trash command, never in the background.
 */
export async function expireTrash(deps: ActionDeps): Promise<string[]> {
	const dir = trashDirOf(deps);
	if (!dir) return [];
	const removed = await emptyTrash(dir, deps.now(), await selfWriter(deps), writerAlive(deps), deps.config.purge.trashDays * DAY_MS);
	if (removed.length > 0)
		audit(deps, {session: null, action: 'trash-empty', outcome: 'ok', detail: {reason: 'retention', days: deps.config.purge.trashDays, purges: removed}});
	return removed;
}

export async function trashList(deps: ActionDeps): Promise<ActionResult<readonly TrashListing[]>> {
	const dir = trashDirOf(deps);
	if (!dir) return refusal('unsupported', 'this mam-tui has no trash folder');
	await expireTrash(deps);
	return {ok: true, value: listTrash(dir, deps.now())};
}

/** Hard-delete from the trash: every finished purge, or those older than `olderThanMs`. */
export async function trashEmpty(deps: ActionDeps, olderThanMs?: number): Promise<ActionResult<readonly string[]>> {
	const dir = trashDirOf(deps);
	if (!dir) return refusal('unsupported', 'this mam-tui has no trash folder');
	await expireTrash(deps);
	const removed = await emptyTrash(dir, deps.now(), await selfWriter(deps), writerAlive(deps), olderThanMs);
	audit(deps, {session: null, action: 'trash-empty', outcome: 'ok', detail: {olderThanMs: olderThanMs ?? null, purges: removed}});
	return {ok: true, value: removed};
}

/** Hard-delete one finished purge (the dashboard's trash view, after its typed confirmation). */
export async function trashEmptyOne(deps: ActionDeps, purgeId: string): Promise<ActionResult<string>> {
	const dir = trashDirOf(deps);
	if (!dir) return refusal('unsupported', 'this mam-tui has no trash folder');
	await expireTrash(deps);
	let removed: boolean;
	try {
		removed = emptyEntry(dir, purgeId, await selfWriter(deps));
	} catch (error) {
		return refusal('failed', messageOf(error));
	}
	if (!removed) return refusal('failed', `${purgeId} is not a finished purge in the trash`);
	audit(deps, {session: null, action: 'trash-empty', outcome: 'ok', detail: {purges: [purgeId]}});
	return {ok: true, value: purgeId};
}

export interface RestoreResult extends RestoreOutcome {
	/** What the adapter says about resuming the conversation now. */
	readonly resume: ResumeState;
}

/**
 * The adapter context for the home a trash entry came from: a plain `restore` after `purge --home
 * X` checks X. Another home than the command's own is read in its default layout (SPEC 4.2).
 */
function contextFor(deps: ActionDeps, home: string | undefined): AdapterContext {
	if (home === undefined || home === deps.context.home) return deps.context;
	return {...deps.context, home, ownHome: false};
}

/** The restored conversation goes back into the search index at once (purge took it out); a note when that failed. */
async function indexAgain(deps: ActionDeps, adapter: AgentAdapter, context: AdapterContext, id: string): Promise<string | undefined> {
	if (!deps.searchIndex) return undefined;
	try {
		await deps.searchIndex.indexAgain(adapter, context, id);
		return undefined;
	} catch (error) {
		return `the search index could not read ${id} again: ${messageOf(error)} (the dashboard's next pass or \`mam-tui search\` will)`;
	}
}

/**
 * Put a purge back from the trash, then ask the adapter whether the conversation resumes. The
 * registry row (if any) goes back to `stopped`; the audit log records the restore.
 */
export async function restorePurge(deps: ActionDeps, purgeId: string): Promise<ActionResult<RestoreResult>> {
	const dir = trashDirOf(deps);
	if (!dir) return refusal('unsupported', 'this mam-tui has no trash folder');
	await expireTrash(deps);
	let restored: Awaited<ReturnType<typeof restoreFromTrash>>;
	try {
		restored = await restoreFromTrash(dir, purgeId, await selfWriter(deps), writerAlive(deps));
	} catch (error) {
		restored = {ok: false, error: messageOf(error)};
	}
	if (!restored.ok) {
		audit(deps, {session: null, action: 'restore', outcome: 'refused', detail: {purgeId, message: restored.error}});
		return refusal('failed', restored.error);
	}
	const value = restored.value;
	for (const row of deps.registry.findByPin(value.agent, value.conversation)) {
		deps.registry.transaction(() => {
			const current = deps.registry.getById(row.id);
			if (!current) return;
			deps.registry.update(row.id, {status: 'stopped', extra: purgeExtra.remove(current.extra)});
		});
	}
	const adapter = deps.adapterFor(value.agent);
	const context = contextFor(deps, value.home);
	const resume: ResumeState = adapter ? await adapter.verify(context, value.conversation) : {kind: 'unknown', reason: `no adapter for ${value.agent}`};
	const indexNote = adapter ? await indexAgain(deps, adapter, context, value.conversation) : undefined;
	const notes = indexNote ? [...value.notes, indexNote] : value.notes;
	audit(deps, {
		session: value.session,
		action: 'restore',
		outcome: 'ok',
		detail: {purgeId, agent: value.agent, id: value.conversation, files: value.files, rows: value.rows, edits: value.edits, resume, notes},
	});
	return {ok: true, value: {...value, notes, resume}};
}

/** The trash folder beside the registry: `<state dir>/trash`. */
export function trashDirIn(stateDir: string): string {
	return path.join(stateDir, 'trash');
}
