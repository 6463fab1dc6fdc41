import {hermesMessages} from './hermes/messages.js';
import path from 'node:path';
import type {Conversation} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import {StoreReadError, withReadOnlyDb} from '../system/sqliteRead.js';
import {MEASURED_EXIT_STEPS} from './common/exitSequences.js';
import {argvUsers, fileUsers, uniqueHolders} from './common/inUse.js';
import {liveUsesOnce, needsFolders, usersOf, ANY_FOLDER} from './common/liveEvidence.js';
import {canonicalCwd, listDir} from './common/paths.js';
import {memo, memoKind} from './common/refresh.js';
import {makePlan, removePaths} from './common/plan.js';
import {runsProgram} from './common/programs.js';
import {scanResidual} from './common/residual.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter, type InUseHolder, type KeptPlace, type PlanItem} from './types.js';
import {belongsToParent, continuationChain, cwdOf, descendantsIn, toConversation} from './hermes/lineage.js';
import {agentDelete, deleteRows, eraseStores, requestDumps, sessionFiles, storePlan, storesNaming} from './hermes/plan.js';
import {readHermesScreen} from './hermes/screen.js';
import {askStores, hermesRoot, ID_PATTERN, indexFor, PROGRAMS, readStores, storesOf, viewOf} from './hermes/store.js';
import {logFiles, removablePrompts, removeText} from './hermes/text.js';
import {hermesLiveUses, isService, leasesQueried, leasesRead, liveLeaseHolders, storeUse, type Leases, type StoreUse, verdictIn} from './hermes/use.js';

const DUMPS = memoKind<ReturnType<typeof requestDumps>>('hermes:dumps');
const LEASES = memoKind<Leases>('hermes:leases');

// Hermes Agent (FORMATS 6), checked against hermes 0.19.0 (pip `hermes-agent`): a state.db per
// profile store holding sessions, messages and two FTS5 indexes over them; the TUI's prompt
// history (.hermes_history) and the logs hold its words too; per-session files only for gateway
// runs. A conversation is a root session with its delegate (sub-agent) children and its
// compression continuations; /branch and reset children are separate conversations.

/** A session whose folder is unknown: every project claim reaches it (fail safe). */

/** Who uses what, by hermes' own evidence (see `liveUsesOnce`). */
const liveUses = liveUsesOnce('hermes', hermesRoot, (ctx, procs) => hermesLiveUses(ctx, hermesAdapter.matchesProcess, procs));

export const hermesAdapter: AgentAdapter = {
	id: 'hermes',
	label: 'Hermes Agent',
	capabilities: {resume: true, purge: true},
	idPattern: ID_PATTERN,
	processNames: PROGRAMS,
	residentChildren: [],
	// Measured on hermes 0.19.0 in tmux (test/real/stop.test.ts): the four agents' sequence with
	// `/quit`; Ctrl+U clears the composer's line, and its screen tells a draft or a dialog first.
	exitInput: {
		text: '/quit',
		steps: MEASURED_EXIT_STEPS,
		readScreen: readHermesScreen,
		evidence: 'measured on hermes 0.19.0: Ctrl+U, 300 ms, /quit, 500 ms, Enter; its screen is read for a draft or a dialog first',
	},

	spawn: () => ({argv: ['hermes']}),

	resume(_ctx, id) {
		assertValidId(hermesAdapter, id);
		return {argv: ['hermes', '--resume', id]};
	},

	matchesProcess: proc => runsProgram(proc, PROGRAMS) && !isService(proc.argv),

	async discover(ctx, query = {}) {
		const {data, problems} = readStores(ctx);
		const want = query.cwd === undefined ? undefined : canonicalCwd(ctx, query.cwd);
		const conversations: Conversation[] = [];
		for (const store of data) {
			for (const row of store.rows.values()) {
				if (row.source === 'tool') continue;
				if (!query.includeChildren && belongsToParent(viewOf(store), row)) continue;
				if (query.since !== undefined && row.startedAt < query.since) continue;
				const cwd = cwdOf(viewOf(store), row.id);
				if (want !== undefined && (cwd === undefined || canonicalCwd(ctx, cwd) !== want)) continue;
				conversations.push(toConversation(store, row));
			}
		}
		return {conversations: conversations.sort((a, b) => b.createdAt - a.createdAt), problems: [...problems]};
	},

	watchPaths(ctx) {
		const root = hermesRoot(ctx);
		// Every session change lands in a store's state.db or, while hermes runs, in its WAL.
		return [root, path.join(root, 'profiles'), ...storesOf(ctx, root).flatMap(s => [s.db, `${s.db}-wal`])];
	},

	async verify(ctx, id, cwd) {
		assertValidId(hermesAdapter, id);
		const index = indexFor(ctx);
		if (!index) {
			// A few ids: the stores are asked for this id's rows only (see indexAfter).
			const {found, problems} = askStores(ctx, view => (view.row(id) ? verdictIn(ctx, view, id, cwd) : undefined));
			const first = found[0];
			if (first) return first;
			return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: `no hermes session ${id}`};
		}
		const {data, problems} = index;
		const store = data.find(d => d.rows.has(id));
		if (!store) return problems.length > 0 ? {kind: 'unknown', reason: problems.join('; ')} : {kind: 'no', reason: `no hermes session ${id}`};
		return verdictIn(ctx, viewOf(store), id, cwd);
	},

	async messages(ctx, id, since) {
		assertValidId(hermesAdapter, id);
		return hermesMessages(ctx, id, since);
	},

	async artifacts(ctx, id) {
		assertValidId(hermesAdapter, id);
		const {data, problems} = readStores(ctx);
		// An unreadable store may hold rows of this conversation: a partial plan would be a silent lie.
		if (problems.length > 0) throw new StoreReadError(`cannot build the purge plan: ${problems.join('; ')}`, hermesRoot(ctx));
		const descendants = new Set<string>();
		const items: PlanItem[] = [];
		const kept: KeptPlace[] = [];
		for (const store of storesNaming(data, id)) {
			const plan = storePlan(store, id);
			for (const d of plan.descendants) descendants.add(d);
			items.push(...plan.items);
			kept.push(...plan.kept);
		}
		const plan = makePlan('hermes', id, [...descendants], items);
		return kept.length > 0 ? {...plan, kept} : plan;
	},

	async purge(ctx, plan) {
		assertPlanOf(hermesAdapter, plan);
		const id = plan.id;
		const {data} = readStores(ctx);
		const warnings: string[] = [];
		const removed: PlanItem[] = [];
		const touched = new Set<string>();
		for (const store of storesNaming(data, id)) {
			const ids = [id, ...descendantsIn(viewOf(store), id)];
			// Which prompt history entries are this conversation's is read from its rows, before they go.
			const prompts = removablePrompts(store.store, ids);
			const chain = continuationChain(viewOf(store), id).reverse();
			const refusal = await agentDelete(ctx, store, chain, warnings);
			if (refusal) {
				warnings.push(`${refusal}; nothing else was deleted in ${store.store.db}`);
				continue;
			}
			// Files first, rows last: the rows are how a rerun finds the files and the descendants,
			// so a purge killed half-way must not lose them before everything else is gone.
			const files = plan.items.filter(i => (i.kind === 'file' || i.kind === 'dir') && path.dirname(path.dirname(i.path)) === store.store.home);
			const outcome = removePaths(files, [store.store.home]);
			removed.push(...outcome.removed);
			warnings.push(...outcome.warnings);
			const text = removeText(store.store, plan.items, prompts.prompts, ids);
			removed.push(...text.removed);
			warnings.push(...text.warnings);
			try {
				deleteRows(store, ids);
				removed.push(...plan.items.filter(i => i.kind === 'rows' && i.path === store.store.db));
			} catch (error) {
				warnings.push(messageOf(error));
			}
			touched.add(store.store.db);
		}
		const erased = eraseStores(
			data.map(d => d.store),
			touched,
		);
		return {removed, warnings: [...warnings, ...erased.warnings], held: erased.held};
	},

	async residual(ctx, id) {
		assertValidId(hermesAdapter, id);
		const root = hermesRoot(ctx);
		const {data} = readStores(ctx);
		const descendants = new Set<string>();
		for (const store of data) for (const d of descendantsIn(viewOf(store), id)) descendants.add(d);
		const stores = storesOf(ctx, root);
		const crumbs = stores.flatMap(s =>
			listDir(path.join(s.home, 'terminal-sessions'))
				.filter(e => e.isFile())
				.map(e => path.join(s.home, 'terminal-sessions', e.name)),
		);
		return scanResidual({
			id,
			descendants: [...descendants],
			roots: [root],
			indexFiles: [...crumbs, ...stores.flatMap(logFiles)],
			databases: stores.map(s => s.db),
			skip: abs => /state\.db-(wal|shm|journal)$/.test(abs),
		});
	},

	async inUse(ctx, id) {
		assertValidId(hermesAdapter, id);
		const index = indexFor(ctx);
		let uses: StoreUse[];
		if (index) {
			uses = [];
			for (const data of storesNaming(index.data, id)) {
				// The store's leases read once per refresh: a query per conversation was most of inUse.
				const leases = memo(ctx, LEASES.of(data.store.db), () => withReadOnlyDb(data.store.db, ctx.reads, db => leasesRead(db, data.columns)));
				const use = storeUse(viewOf(data), leases, id);
				if (use) uses.push(use);
			}
		} else {
			// Unreadable stores are skipped, as the index skips them.
			uses = askStores(ctx, (view, db) => storeUse(view, leasesQueried(db, view.columns), id)).found;
		}
		const ids = new Set([id]);
		const files: string[] = [];
		const leases: InUseHolder[] = [];
		for (const use of uses) {
			for (const x of use.own) ids.add(x);
			// One listing of the sessions folder per refresh, not one per id.
			const dumps = memo(ctx, DUMPS.of(use.store.home), () => requestDumps(use.store, ctx));
			files.push(...use.own.flatMap(x => sessionFiles(use.store, x, dumps)));
			// state.db is shared: holding it counts only while one of these sessions is still open.
			if (use.open) files.push(use.store.db, `${use.store.db}-wal`);
			leases.push(...(await liveLeaseHolders(ctx, use.leases)));
		}
		// A plain `hermes` TUI keeps no record of which session it is on: its folder's are all in use.
		const live = await liveUses(ctx);
		const cwds = needsFolders(live) ? [...new Set(conversationFolders(ctx, id))] : [];
		const byProject = usersOf(ctx, live, {ids: [...ids], cwds});
		return uniqueHolders([...byProject, ...(await argvUsers(ctx, [...ids])), ...(await fileUsers(ctx, files, h => isService(h.argv))), ...leases]);
	},

	liveUses,
};

/** The recorded folder of `id` in each store holding it (ANY_FOLDER when one records none). */
function conversationFolders(ctx: AdapterContext, id: string): string[] {
	const index = indexFor(ctx);
	if (index) return index.data.filter(d => d.rows.has(id)).map(d => cwdOf(viewOf(d), id) ?? ANY_FOLDER);
	return askStores(ctx, view => (view.row(id) ? (cwdOf(view, id) ?? ANY_FOLDER) : undefined)).found;
}

/** For tests: the store root this context resolves to. */
export function hermesRootFor(ctx: AdapterContext): string {
	return hermesRoot(ctx);
}
