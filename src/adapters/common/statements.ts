// Statements prepared once per read connection. A search index build reads thousands of
// conversations through one kept connection (system/sqliteRead.ts keepingReadConnections), and
// preparing the same few statements for each of them was a tenth of the build.
import type {Statement} from 'better-sqlite3';
import type {SqliteDb} from '../../system/sqlite.js';

/** Per connection; a closed connection's entry goes with it. */
const prepared = new WeakMap<SqliteDb, Map<string, Statement>>();

/** `db.prepare(sql)`, kept for the connection's life (values are bound; names in `sql` come from the probed schema). */
export function preparedOn(db: SqliteDb, sql: string): Statement {
	let statements = prepared.get(db);
	if (!statements) {
		statements = new Map();
		prepared.set(db, statements);
	}
	let statement = statements.get(sql);
	if (!statement) {
		statement = db.prepare(sql);
		statements.set(sql, statement);
	}
	return statement;
}
