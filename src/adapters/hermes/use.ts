// Who uses a hermes conversation: its open sessions' leases, and the verdict per store.

import type {ProcessRef, ResumeState} from '../../domain/types.js';
import type {ReadDb} from '../../system/sqliteRead.js';
import {toEpochMs} from '../common/jsonRecords.js';
import {canonicalCwd} from '../common/paths.js';
import type {InRefresh} from '../common/refresh.js';
import {runsProgram, subcommand} from '../common/programs.js';
import {chunks, placeholders} from '../common/purgeDb.js';
import {agentProcessesOf, flagValue, idsUse, projectUse, type LiveUse} from '../common/liveEvidence.js';
import type {AdapterContext, InUseHolder} from '../types.js';
import {cwdOf, descendantsIn, resumeStateOf} from './lineage.js';
import {hermesRoot, type HermesStore, ID_PATTERN, PROGRAMS, SERVICE_COMMANDS, type StoreView} from './store.js';

export function isService(argv: readonly string[]): boolean {
	return runsProgram({name: '', argv}, PROGRAMS) && SERVICE_COMMANDS.has(subcommand(argv) ?? '');
}

interface LeaseRow {
	readonly holder: string;
	readonly expires: unknown;
	readonly id: string;
}

/** The lease tables and the column naming the conversation, in the order their rows are reported. */
const LEASE_TABLES = [
	['session_turn_leases', 'conversation_id'],
	['compression_locks', 'session_id'],
] as const;

/** The lease tables this store has (with a holder and an expiry). */
function leaseTables(columns: ReadonlyMap<string, ReadonlySet<string>>): (typeof LEASE_TABLES)[number][] {
	return LEASE_TABLES.filter(([table, column]) => {
		const have = columns.get(table);
		return have?.has(column) === true && have.has('holder') && have.has('expires_at');
	});
}

/** A table's rows in one order whatever the query plan: by `ids`' order, then holder and expiry. */
function inOrder(rows: readonly LeaseRow[], ids: readonly string[]): LeaseRow[] {
	const at = new Map(ids.map((id, i) => [id, i]));
	const key = (r: LeaseRow) => `${String(r.holder)}\0${String(r.expires)}`;
	return [...rows].sort((a, b) => (at.get(a.id) ?? 0) - (at.get(b.id) ?? 0) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Turn leases and compression locks (holder `pid=<n>`) of some ids: a query per call, or a refresh's one read of them all. */
export type Leases = (ids: readonly string[]) => LeaseRow[];

/** Leases of `ids`, asked of the database (one query per table and chunk of ids). */
export function leasesQueried(db: ReadDb, columns: ReadonlyMap<string, ReadonlySet<string>>): Leases {
	return ids => {
		const out: LeaseRow[] = [];
		for (const [table, column] of leaseTables(columns)) {
			const rows: LeaseRow[] = [];
			for (const part of chunks(ids)) {
				const sql = `SELECT holder, expires_at AS expires, ${column} AS id FROM ${table} WHERE ${column} IN (${placeholders(part.length)})`;
				rows.push(...db.prepare<string[], LeaseRow>(sql).all(...part));
			}
			out.push(...inOrder(rows, ids));
		}
		return out;
	};
}

/**
 * Every lease of the store, read once (a refresh asks about a thousand conversations; the lease
 * tables hold only the few sessions running turns): `Leases` answered from that read, as the
 * queries would answer.
 */
export function leasesRead(db: ReadDb, columns: ReadonlyMap<string, ReadonlySet<string>>): Leases {
	const byTable = leaseTables(columns).map(([table, column]) => {
		const byId = new Map<string, LeaseRow[]>();
		for (const row of db.prepare<[], LeaseRow>(`SELECT holder, expires_at AS expires, ${column} AS id FROM ${table}`).all()) {
			const same = byId.get(row.id);
			if (same) same.push(row);
			else byId.set(row.id, [row]);
		}
		return byId;
	});
	return ids => {
		const unique = [...new Set(ids)];
		return byTable.flatMap(byId =>
			inOrder(
				unique.flatMap(id => byId.get(id) ?? []),
				ids,
			),
		);
	};
}

/** The leases whose pid still runs and has not expired. */
export async function liveLeaseHolders(ctx: AdapterContext, leases: readonly LeaseRow[]): Promise<InUseHolder[]> {
	const found: InUseHolder[] = [];
	for (const lease of leases) {
		const pid = Number(/pid=(\d+)/.exec(String(lease.holder))?.[1]);
		const expires = toEpochMs(lease.expires) ?? 0;
		if (!Number.isInteger(pid) || pid <= 0 || expires < ctx.now()) continue;
		const proc = await ctx.processes.get(pid);
		if (proc) found.push({pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, reason: `holds the lease of ${lease.id}`});
	}
	return found;
}

/** What inUse needs from one store naming `id`: its sessions of the conversation, whether one is open, their leases. */
export interface StoreUse {
	readonly store: HermesStore;
	readonly own: readonly string[];
	readonly open: boolean;
	readonly leases: readonly LeaseRow[];
}

export function storeUse(view: StoreView, leases: Leases, id: string): StoreUse | undefined {
	// Stores that hold `id` or rows of its vanished conversation (children pointing at it).
	if (!view.row(id) && view.children(id).length === 0) return undefined;
	const own = [id, ...descendantsIn(view, id)];
	const open = own.some(x => {
		const row = view.row(x);
		return row !== undefined && row.endedAt === undefined;
	});
	return {store: view.store, own, open, leases: leases(own)};
}

/** One verdict for `id` in the store holding its row (index and queries alike). */
export function verdictIn(ctx: InRefresh, view: StoreView, id: string, cwd: string | undefined): ResumeState {
	const state = resumeStateOf(view, id);
	if (state.kind !== 'yes' || cwd === undefined) return state;
	const recorded = cwdOf(view, id);
	if (recorded === undefined) return {kind: 'unknown', reason: 'the session records no cwd'};
	return canonicalCwd(ctx, recorded) === canonicalCwd(ctx, cwd) ? state : {kind: 'no', reason: `belongs to ${recorded}`};
}

/**
 * Which session each live hermes process is on: argv (`--resume ID`, `-r ID`), else its folder —
 * a plain `hermes` (or `-c`, or `--resume <title>`) keeps no record of its session that another
 * process can read: the id is minted at start, its row written at the first prompt, and the
 * process holds only the shared state.db open. Its background services get no entry.
 */
export async function hermesLiveUses(ctx: AdapterContext, matches: (proc: ProcessRef) => boolean, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const mine = await agentProcessesOf(ctx, matches, procs, {root: hermesRoot(ctx), rootOf: hermesRoot});
	return mine.map(proc => {
		const named = flagValue(proc.argv, ['--resume', '-r'], ID_PATTERN);
		return named ? idsUse(proc, [named], `argv names ${named}`) : projectUse(proc, 'hermes');
	});
}
