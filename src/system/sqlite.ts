import {createRequire} from 'node:module';
import Database from 'better-sqlite3';

/** An open better-sqlite3 connection. */
export type SqliteDb = Database.Database;

const load = createRequire(import.meta.url);

/**
 * Where the addon is. better-sqlite3's own search (the `bindings` package) builds a stack trace
 * and probes a dozen paths: about 10 ms of every command that opens a database. Null where the
 * build is not in its usual place: the default search then.
 */
function nativeBinding(): string | null {
	try {
		return load.resolve('better-sqlite3/build/Release/better_sqlite3.node');
	} catch {
		return null;
	}
}

/** Resolved once, when this module loads: the install does not move while mam-tui runs. */
const ADDON_PATH = nativeBinding();

/**
 * better-sqlite3 is built with SQLITE_USE_URI=0 and reads this variable once, when its addon
 * first loads (the first open). The trace-free reads of SPEC 4.3 need `file:…?mode=ro&immutable=1`
 * URIs, so every open sets it for its own length; the processes mam-tui starts do not inherit it,
 * and a value the user set is put back.
 */
function withUriFilenames<T>(open: () => T): T {
	const before = process.env['SQLITE_USE_URI'];
	process.env['SQLITE_USE_URI'] = '1';
	try {
		return open();
	} finally {
		if (before === undefined) delete process.env['SQLITE_USE_URI'];
		else process.env['SQLITE_USE_URI'] = before;
	}
}

/**
 * `new Database(file, options)`, with the addon given by its path. The bundle carries
 * better-sqlite3's JavaScript (resolving and reading its dozen files at run time was about 6 ms
 * of every start); only the addon is loaded from the package. Where the addon is not in its usual
 * place, the installed package and its own search are used instead.
 */
export function openDatabase(file: string, options: Database.Options = {}): SqliteDb {
	return withUriFilenames(() =>
		ADDON_PATH === null ? new (load('better-sqlite3') as typeof Database)(file, options) : new Database(file, {...options, nativeBinding: ADDON_PATH}),
	);
}

/**
 * Let this thread be the one whose open configures the addon. The addon takes SQLITE_USE_URI from
 * the real environment once per process, at its first open; a worker thread's `process.env` is a
 * copy the addon never sees, so a worker that opened first would turn URI filenames off for the
 * whole process. Call before starting a thread that opens databases.
 */
export function configureSqliteHere(): void {
	openDatabase(':memory:').close();
}
