import {openDatabase, type SqliteDb} from '../../system/sqlite.js';
import {describeSqliteError, StoreReadError} from '../../system/sqliteRead.js';
import {rootContaining} from './paths.js';

export type WriteDb = SqliteDb;

/** How long a purge waits for an agent's write lock (FORMATS 0.3: at least 5 s). */
const PURGE_BUSY_TIMEOUT_MS = 5000;

/**
 * The read-write open of an agent's database for a purge whose steps are more than
 * `DELETE … WHERE column IN (ids)` (sqlitePurge.ts covers those): an `UPDATE`, a delete through a
 * subquery, deferred foreign keys. FORMATS 0.3: the file must lie inside `root`; busy_timeout 5 s;
 * foreign keys on for this connection (cascades are per-connection); `fn` runs inside one
 * `BEGIN IMMEDIATE` transaction. Sidecars are never deleted or truncated here, nothing is vacuumed.
 */
export function withPurgeDb<T>(root: string, file: string, fn: (db: WriteDb) => T): T {
	if (rootContaining(file, [root]) === undefined) throw new Error(`${file}: refused, not inside the agent's folder`);
	let db: WriteDb;
	try {
		db = openDatabase(file, {fileMustExist: true, timeout: PURGE_BUSY_TIMEOUT_MS});
	} catch (error) {
		throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
	}
	try {
		db.pragma(`busy_timeout = ${PURGE_BUSY_TIMEOUT_MS}`);
		db.pragma('foreign_keys = ON');
		db.pragma('secure_delete = ON');
		return db.transaction(() => fn(db)).immediate();
	} catch (error) {
		if (error instanceof Error && String((error as {code?: unknown}).code ?? '').startsWith('SQLITE')) {
			throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
		}
		throw error;
	} finally {
		db.close();
	}
}

/** Double-quote an identifier read from the database's own schema (never from user input). */
export function quoteIdent(name: string): string {
	return `"${name.replace(/"/g, '""')}"`;
}

/** `?, ?, ?` for `count` bound parameters. */
export function placeholders(count: number): string {
	return Array.from({length: count}, () => '?').join(', ');
}

/** Ids per `IN (…)` list: SQLite builds older than 3.32 cap bound parameters at 999. */
const IN_CHUNK = 500;

/** Split ids into lists small enough for one `IN (…)`. */
export function chunks<T>(items: readonly T[], size = IN_CHUNK): T[][] {
	const out: T[][] = [];
	for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
	return out;
}

/** Delete the rows of `table` whose `column` is one of `ids`; returns how many went. */
export function deleteWhereIn(db: WriteDb, table: string, column: string, ids: readonly string[]): number {
	let total = 0;
	for (const part of chunks(ids)) {
		total += db.prepare(`DELETE FROM ${quoteIdent(table)} WHERE ${quoteIdent(column)} IN (${placeholders(part.length)})`).run(...part).changes;
	}
	return total;
}
