import {createRequire} from 'node:module';
import Database from 'better-sqlite3';
import './sqliteUri.js';

/** An open better-sqlite3 connection. */
export type SqliteDb = Database.Database;

const load = createRequire(import.meta.url);

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

/**
 * `new Database(file, options)`, with the addon given by its path. The bundle carries
 * better-sqlite3's JavaScript (resolving and reading its dozen files at run time was about 6 ms
 * of every start); only the addon is loaded from the package. Where the addon is not in its usual
 * place, the installed package and its own search are used instead.
 */
export function openDatabase(file: string, options: Database.Options = {}): SqliteDb {
	const binding = nativeBinding();
	if (binding === null) return new (load('better-sqlite3') as typeof Database)(file, options);
	return new Database(file, {...options, nativeBinding: binding});
}
