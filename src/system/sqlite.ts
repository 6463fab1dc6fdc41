import {createRequire} from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import './sqliteUri.js';

/** An open better-sqlite3 connection. */
export type SqliteDb = BetterSqlite3.Database;

const load = createRequire(import.meta.url);

/**
 * better-sqlite3, loaded with require: it is CommonJS, and the ESM loader's import of it (each of
 * its files lexed again for named exports) cost about 10 ms more of every start.
 */
const Database = load('better-sqlite3') as typeof BetterSqlite3;

let addonPath: string | null | undefined;

/**
 * Where the addon is, found once. better-sqlite3's own search (the `bindings` package) builds a
 * stack trace and probes a dozen paths: about 10 ms of every command that opens a database.
 * Null where the build is not in its usual place: the default search then.
 */
function nativeBinding(): string | null {
	if (addonPath === undefined) {
		try {
			addonPath = load.resolve('better-sqlite3/build/Release/better_sqlite3.node');
		} catch {
			addonPath = null;
		}
	}
	return addonPath;
}

/** `new Database(file, options)`, with the addon given by its path. */
export function openDatabase(file: string, options: BetterSqlite3.Options = {}): SqliteDb {
	const binding = nativeBinding();
	return new Database(file, binding === null ? options : {...options, nativeBinding: binding});
}
