import {openDatabase, type SqliteDb} from '../../system/sqlite.js';
import {describeSqliteError} from '../../system/sqliteRead.js';

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
