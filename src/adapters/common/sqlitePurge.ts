import {openDatabase, type SqliteDb} from '../../system/sqlite.js';
import {describeSqliteError, withReadOnlyDb} from '../../system/sqliteRead.js';

/** One `DELETE FROM table WHERE column IN (ids)` step of a purge. */
export interface RowDelete {
	readonly table: string;
	readonly column: string;
	readonly ids: readonly string[];
}

/** FORMATS 0.3: wait at least 5 s for the agent's own writer before giving up. */
const PURGE_BUSY_TIMEOUT_MS = 5000;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Delete rows the FORMATS 0.3 way: busy_timeout, `foreign_keys=ON` on our connection, one
 * `BEGIN IMMEDIATE` transaction, children deleted explicitly in the given order (a database may
 * lack the foreign keys), commit. The `-wal`/`-shm` files are left to sqlite. `steps` may repeat a
 * table: triggers can add rows while others are deleted. Returns rows deleted per table; throws
 * (with everything rolled back) when the database is locked, corrupt or refuses.
 */
export function deleteRows(file: string, steps: readonly RowDelete[]): Map<string, number> {
	let db: SqliteDb;
	try {
		db = openDatabase(file, {fileMustExist: true, timeout: PURGE_BUSY_TIMEOUT_MS});
	} catch (error) {
		throw new Error(`${file}: ${describeSqliteError(error)}`);
	}
	try {
		db.pragma(`busy_timeout = ${PURGE_BUSY_TIMEOUT_MS}`);
		db.pragma('foreign_keys = ON');
		// Deleted cells and freed pages are zeroed as they go, not merely unlinked (issue 18).
		db.pragma('secure_delete = ON');
		const counts = new Map<string, number>();
		const run = db.transaction(() => {
			for (const step of steps) {
				if (step.ids.length === 0) continue;
				const placeholders = step.ids.map(() => '?').join(', ');
				const info = db.prepare(`DELETE FROM ${quote(step.table)} WHERE ${quote(step.column)} IN (${placeholders})`).run(...step.ids);
				counts.set(step.table, (counts.get(step.table) ?? 0) + info.changes);
			}
		});
		try {
			run.immediate();
		} catch (error) {
			throw new Error(`${file}: ${describeSqliteError(error)}`);
		}
		return counts;
	} finally {
		db.close();
	}
}

/**
 * Overwrite what deleted rows left behind in `file`: text in freed pages and in the free space of
 * pages that still hold other rows (the agent's own deleter does not zero them), and in the WAL.
 * `VACUUM` rebuilds every page (temp_store in memory, so no copy lands in a temp file), then a
 * `TRUNCATE` checkpoint copies the rebuilt pages over the old ones and empties the WAL; pages past
 * the new end are cut off the file (their blocks are freed, which is as far as a file can go).
 * Returns undefined when that worked; otherwise the residual line that says the deleted text may
 * still be in the file's bytes until the agent lets go (a reader holds an old snapshot, or the
 * database was locked).
 */
export function eraseFreed(file: string, agent: string): string | undefined {
	const held = (why: string) =>
		`${file}: freed pages not yet overwritten (${why}); until ${agent} checkpoints, its database may still hold the deleted text in freed pages or WAL frames; run the purge again once ${agent} has exited`;
	let db: SqliteDb;
	try {
		db = openDatabase(file, {fileMustExist: true, timeout: PURGE_BUSY_TIMEOUT_MS});
	} catch (error) {
		return held(describeSqliteError(error));
	}
	try {
		db.pragma(`busy_timeout = ${PURGE_BUSY_TIMEOUT_MS}`);
		db.pragma('secure_delete = ON');
		db.pragma('temp_store = MEMORY');
		db.exec('VACUUM');
		const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Checkpoint[];
		const problem = checkpointProblem(result);
		return problem === undefined ? undefined : held(problem);
	} catch (error) {
		return held(describeSqliteError(error));
	} finally {
		db.close();
	}
}

/** One row of `PRAGMA wal_checkpoint`: was it blocked, WAL frames in all, frames copied back. */
export interface Checkpoint {
	readonly busy: number;
	readonly log: number;
	readonly checkpointed: number;
}

/** Why a checkpoint left deleted text in the WAL, or undefined when it copied every frame back. */
export function checkpointProblem(result: Checkpoint | undefined): string | undefined {
	if (!result) return undefined;
	if (result.busy !== 0) return 'another process is reading it';
	if (result.log > 0 && result.checkpointed < result.log) return 'the WAL could not be fully copied back';
	return undefined;
}

/** Freed pages in `file` (read-only look; 0 when it cannot be read). */
function freelistCount(file: string): number {
	try {
		return withReadOnlyDb(file, db => Number(db.pragma('freelist_count', {simple: true})));
	} catch {
		return 0;
	}
}

/**
 * `eraseFreed` for the databases a purge deleted rows from (`touched`), and for any other of the
 * agent's databases that still has freed pages (a rerun after the agent held one: the rerun
 * finishes the overwrite). Returns one residual line per touched database the agent still holds;
 * an untouched one that could not be erased gives a warning, since it held none of this
 * conversation's rows this time.
 */
export function eraseDatabases(files: readonly string[], touched: ReadonlySet<string>, agent: string): {held: string[]; warnings: string[]} {
	const held: string[] = [];
	const warnings: string[] = [];
	for (const file of files) {
		if (!touched.has(file) && freelistCount(file) === 0) continue;
		const problem = eraseFreed(file, agent);
		if (problem !== undefined) (touched.has(file) ? held : warnings).push(problem);
	}
	return {held, warnings};
}
