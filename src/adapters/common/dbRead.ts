import {columnsOf, type ReadDb} from '../../system/sqliteRead.js';

// Columns are kept per connection (the connection's schema memo, system/sqliteRead.ts): a sync
// reads thousands of conversations through one.
export {columnsOf};

/** True when `table` has every one of `columns`. */
export function hasColumns(db: ReadDb, table: string, columns: readonly string[]): boolean {
	const have = columnsOf(db, table);
	return columns.every(c => have.has(c));
}
