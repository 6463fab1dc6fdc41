import fs from 'node:fs';
import {quoteIdent} from '../adapters/common/purgeDb.js';
import {openDatabase, type SqliteDb} from '../system/sqlite.js';
import {withReadOnlyDb} from '../system/sqliteRead.js';
import type {StoredTable} from './trashStore.js';

/**
 * The sqlite half of the trash. Before a purge the agent's database is copied whole (sqlite's
 * backup: a consistent snapshot, rowids kept); after it, the rows of the snapshot whose rowid the
 * database no longer has are the rows the purge deleted (ours, the agent's own deleter's, and
 * their cascades), and they are written to a small sqlite file with the same `CREATE TABLE`
 * text. The snapshot is then deleted. Restore puts those rows back with bound parameters.
 */

const BUSY_TIMEOUT_MS = 5000;

interface TableInfo {
	readonly name: string;
	readonly sql: string;
}

/** Plain tables (not sqlite's own, not virtual tables or their shadow tables: those follow their content table's triggers). */
function plainTables(db: SqliteDb): TableInfo[] {
	const all = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all() as TableInfo[];
	const virtual = all.filter(t => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql)).map(t => t.name);
	return all.filter(t => !virtual.includes(t.name) && !virtual.some(v => t.name.startsWith(`${v}_`)));
}

function columnsOf(db: SqliteDb, table: string): string[] {
	return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as {name: string}[]).map(c => c.name);
}

/** Rowids of a table, or undefined for a WITHOUT ROWID table. */
function rowids(db: SqliteDb, table: string): Set<number | bigint> | undefined {
	try {
		return new Set(
			db
				.prepare(`SELECT rowid FROM ${quoteIdent(table)}`)
				.pluck()
				.all() as (number | bigint)[],
		);
	} catch {
		return undefined;
	}
}

/** Copy the agent's database whole into `snapshot` (read-only open; the agent's file is not changed). */
export async function snapshotDatabase(source: string, snapshot: string): Promise<void> {
	const db = openDatabase(source, {readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS});
	try {
		await db.backup(snapshot);
	} finally {
		db.close();
	}
}

/**
 * Write the rows of `snapshot` that `source` no longer has into `stored` (a new sqlite file),
 * table by table with the same CREATE TABLE text; returns what was kept and notes for what could
 * not be (a WITHOUT ROWID table that lost rows).
 */
export function exportGoneRows(source: string, snapshot: string, stored: string): {tables: StoredTable[]; notes: string[]} {
	const current = fs.existsSync(source)
		? withReadOnlyDb(source, db => new Map(plainTables(db).map(t => [t.name, rowids(db, t.name)] as const)))
		: new Map<string, Set<number | bigint> | undefined>();
	const snap = openDatabase(snapshot, {readonly: true, fileMustExist: true});
	const out = openDatabase(stored);
	const tables: StoredTable[] = [];
	const notes: string[] = [];
	try {
		out.pragma('journal_mode = DELETE');
		// better-sqlite3 turns foreign keys on by default; the parents of these rows are not here.
		out.pragma('foreign_keys = OFF');
		for (const table of plainTables(snap)) {
			const before = rowids(snap, table.name);
			if (!before) {
				notes.push(`${source} table ${table.name} has no rowid; its deleted rows (if any) are not kept in the trash`);
				continue;
			}
			const now = current.get(table.name);
			const gone = [...before].filter(r => !now?.has(r));
			if (gone.length === 0) continue;
			const columns = columnsOf(snap, table.name);
			const list = columns.map(quoteIdent).join(', ');
			out.exec(table.sql);
			const read = snap.prepare(`SELECT rowid, ${list} FROM ${quoteIdent(table.name)} WHERE rowid = ?`).raw();
			const write = out.prepare(`INSERT INTO ${quoteIdent(table.name)} (rowid, ${list}) VALUES (${['?', ...columns.map(() => '?')].join(', ')})`);
			out.transaction(() => {
				for (const r of gone) write.run(...(read.get(r) as unknown[]));
			})();
			tables.push({name: table.name, sql: table.sql, rows: gone.length});
		}
	} finally {
		snap.close();
		out.close();
	}
	return {tables, notes};
}

/** Why the rows of `stored` cannot go back into `source`, or undefined when they can (or are back already). */
export function checkRowsRestorable(source: string, stored: string, tables: readonly StoredTable[]): string | undefined {
	if (!fs.existsSync(source)) return `${source} is gone; its rows have nowhere to go back to`;
	return withReadOnlyDb(source, cur => {
		const schema = new Map((cur.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as TableInfo[]).map(t => [t.name, t.sql]));
		const kept = openDatabase(stored, {readonly: true, fileMustExist: true});
		try {
			for (const table of tables) {
				if (schema.get(table.name) !== table.sql)
					return `${source} table ${table.name}: the agent's schema changed since the purge; refusing to insert rows of the old one`;
				const conflict = firstConflict(cur, kept, table.name);
				if (conflict !== undefined) return `${source} table ${table.name}: rowid ${conflict} is taken by another row now; restoring would overwrite it`;
			}
			return undefined;
		} finally {
			kept.close();
		}
	});
}

/** A rowid of a kept row that the database now holds with other values. */
function firstConflict(cur: SqliteDb, kept: SqliteDb, table: string): number | bigint | undefined {
	const columns = columnsOf(kept, table);
	const list = columns.map(quoteIdent).join(', ');
	const now = cur.prepare(`SELECT ${list} FROM ${quoteIdent(table)} WHERE rowid = ?`).raw();
	for (const row of kept
		.prepare(`SELECT rowid, ${list} FROM ${quoteIdent(table)}`)
		.raw()
		.iterate() as IterableIterator<unknown[]>) {
		const [rowid, ...values] = row;
		const there = now.get(rowid) as unknown[] | undefined;
		if (there && JSON.stringify(there) !== JSON.stringify(values)) return rowid as number | bigint;
	}
	return undefined;
}

/**
 * Insert the kept rows back, one `BEGIN IMMEDIATE` transaction for the database (all or none), with
 * bound parameters; a row already back with the same values (an interrupted restore) is skipped.
 * Foreign keys stay off on this connection, so parents and children may go back in any order.
 */
export function restoreRows(source: string, stored: string, tables: readonly StoredTable[]): number {
	const problem = checkRowsRestorable(source, stored, tables);
	if (problem) throw new Error(problem);
	const cur = openDatabase(source, {fileMustExist: true, timeout: BUSY_TIMEOUT_MS});
	const kept = openDatabase(stored, {readonly: true, fileMustExist: true});
	let inserted = 0;
	try {
		cur.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
		// Off explicitly (better-sqlite3 defaults it on): parents and children go back in any order.
		cur.pragma('foreign_keys = OFF');
		cur
			.transaction(() => {
				// Rows the agent's insert triggers add while ours go back (codex's queue revisions) are
				// not the original ones: when one stands in the way of a kept row, it gives way. Only
				// rows born in this transaction are ever removed.
				const before = new Map(tables.map(t => [t.name, rowids(cur, t.name) ?? new Set<number | bigint>()]));
				const ours = new Map(tables.map(t => [t.name, new Set<unknown>()]));
				for (const table of tables) {
					const columns = columnsOf(kept, table.name);
					const list = columns.map(quoteIdent).join(', ');
					const exists = cur.prepare(`SELECT 1 FROM ${quoteIdent(table.name)} WHERE rowid = ?`).pluck();
					const write = cur.prepare(`INSERT INTO ${quoteIdent(table.name)} (rowid, ${list}) VALUES (${['?', ...columns.map(() => '?')].join(', ')})`);
					for (const row of kept
						.prepare(`SELECT rowid, ${list} FROM ${quoteIdent(table.name)}`)
						.raw()
						.all() as unknown[][]) {
						if (exists.get(row[0]) !== undefined && before.get(table.name)?.has(row[0] as number)) continue;
						try {
							write.run(...row);
						} catch (error) {
							if (!String((error as {code?: unknown}).code ?? '').startsWith('SQLITE_CONSTRAINT')) throw error;
							const born = [...(rowids(cur, table.name) ?? [])].filter(r => !before.get(table.name)?.has(r) && !ours.get(table.name)?.has(r));
							if (born.length === 0) throw error;
							for (const r of born) cur.prepare(`DELETE FROM ${quoteIdent(table.name)} WHERE rowid = ?`).run(r);
							write.run(...row);
						}
						ours.get(table.name)?.add(row[0]);
						inserted++;
					}
				}
			})
			.immediate();
	} finally {
		kept.close();
		cur.close();
	}
	return inserted;
}
