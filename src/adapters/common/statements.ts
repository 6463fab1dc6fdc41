// Statements prepared once per read connection. A search index build reads thousands of
// conversations through one kept connection (system/sqliteRead.ts keepingReadConnections), and
// preparing the same few statements for each of them was a tenth of the build.
import type {Statement} from 'better-sqlite3';
import type {SqliteDb} from '../../system/sqlite.js';

/** Where a connection keeps its prepared statements (a symbol: the handle still reads as a plain one). */
const PREPARED = Symbol('prepared');

type WithPrepared = SqliteDb & {[PREPARED]?: Map<string, Statement>};

/** `db.prepare(sql)`, kept as long as the connection (values are bound; names in `sql` come from the probed schema). */
export function preparedOn(db: SqliteDb, sql: string): Statement {
	const holder = db as WithPrepared;
	let statements = holder[PREPARED];
	if (!statements) {
		statements = new Map();
		Object.defineProperty(holder, PREPARED, {value: statements});
	}
	let statement = statements.get(sql);
	if (!statement) {
		statement = db.prepare(sql);
		statements.set(sql, statement);
	}
	return statement;
}
