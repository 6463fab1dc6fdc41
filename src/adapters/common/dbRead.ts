import type {ReadDb} from '../../system/sqliteRead.js';

/** Columns per open connection and table: asked once per connection (a sync reads thousands of conversations through one). */
const known = new WeakMap<ReadDb, Map<string, Set<string>>>();

/** The columns of `table`, empty when it does not exist. */
export function columnsOf(db: ReadDb, table: string): Set<string> {
	let tables = known.get(db);
	if (!tables) known.set(db, (tables = new Map()));
	let columns = tables.get(table);
	if (!columns) {
		const rows = db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as {name: string}[];
		columns = new Set(rows.map(r => r.name));
		tables.set(table, columns);
	}
	return columns;
}

/** True when `table` has every one of `columns`. */
export function hasColumns(db: ReadDb, table: string, columns: readonly string[]): boolean {
	const have = columnsOf(db, table);
	return columns.every(c => have.has(c));
}
