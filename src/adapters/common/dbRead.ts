import type {ReadDb} from '../../system/sqliteRead.js';

/** The columns of `table`, empty when it does not exist. */
export function columnsOf(db: ReadDb, table: string): Set<string> {
	const rows = db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as {name: string}[];
	return new Set(rows.map(r => r.name));
}

/** True when `table` has every one of `columns`. */
export function hasColumns(db: ReadDb, table: string, columns: readonly string[]): boolean {
	const have = columnsOf(db, table);
	return columns.every(c => have.has(c));
}
