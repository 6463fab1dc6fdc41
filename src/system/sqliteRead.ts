import {AsyncLocalStorage} from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {openDatabase, type SqliteDb} from './sqlite.js';

export type ReadDb = SqliteDb;

/** Why an agent's database could not be read: becomes `unknown: <reason>` for its sessions. */
export class StoreReadError extends Error {
	readonly dbPath: string;
	constructor(message: string, dbPath: string) {
		super(message);
		this.dbPath = dbPath;
		this.name = 'StoreReadError';
	}
}

function exists(file: string): boolean {
	try {
		fs.lstatSync(file);
		return true;
	} catch {
		return false;
	}
}

/** How long a reader waits for a writer's lock before reporting the store as locked. */
const READ_BUSY_TIMEOUT_MS = 2000;

function openUri(uri: string, file: string): ReadDb {
	// fileMustExist would stat the URI string itself; existence was checked by the caller.
	let db: ReadDb;
	try {
		db = openDatabase(uri, {readonly: true});
	} catch (error) {
		throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
	}
	db.pragma(`busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
	// Force the header read now so a non-database fails here, inside our error mapping.
	try {
		db.prepare('SELECT count(*) FROM sqlite_master').get();
	} catch (error) {
		db.close();
		throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
	}
	return db;
}

export function describeSqliteError(error: unknown): string {
	const code = (error as {code?: string} | undefined)?.code ?? '';
	const message = error instanceof Error ? error.message : String(error);
	if (code === 'SQLITE_NOTADB' || /not a database/i.test(message)) return 'not a sqlite database (corrupt?)';
	if (code === 'SQLITE_CORRUPT' || /malformed/i.test(message)) return 'database is corrupt';
	if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || /locked/i.test(message)) return 'database is locked by another process';
	if (code === 'SQLITE_CANTOPEN' || /unable to open/i.test(message)) return 'cannot open database (missing or permission denied)';
	return message;
}

/**
 * True unless we know no process has the database open. Every live sqlite connection to a WAL
 * database keeps a POSIX read lock on byte 128 of its `-shm` for its whole life; Linux lists it
 * in /proc/locks by inode. Without /proc/locks we cannot tell, and assume a live writer.
 */
function shmHasLiveConnection(shm: string): boolean {
	let inode: number;
	let locks: string;
	try {
		inode = fs.statSync(shm).ino;
		locks = fs.readFileSync('/proc/locks', 'utf8');
	} catch {
		return true;
	}
	const suffix = `:${inode}`;
	// Lines look like `1: POSIX  ADVISORY  READ 29834 fe:00:2188869 128 128` (`->` marks waiters).
	return locks.split('\n').some(line => line.split(/\s+/).some(field => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(field) && field.endsWith(suffix)));
}

/** An open read-only connection, and what to remove once it is closed (a private copy). */
interface ReadConnection {
	readonly db: ReadDb;
	readonly cleanup?: () => void;
}

/** Connections kept open for one refresh, by absolute path (`keepingReadConnections`). */
const keptConnections = new AsyncLocalStorage<Map<string, ReadConnection>>();

/**
 * Run `fn` (one discovery refresh) keeping every database it reads open until it ends: its
 * verify and inUse calls then open each store once, not once per row (an open costs about a
 * millisecond: stat, access, /proc/locks, the header read, schema probes). The connections are
 * closed, and any private copy removed, when `fn` settles.
 */
export async function keepingReadConnections<T>(fn: () => Promise<T>): Promise<T> {
	const kept = new Map<string, ReadConnection>();
	try {
		return await keptConnections.run(kept, fn);
	} finally {
		for (const connection of kept.values()) close(connection);
	}
}

function close(connection: ReadConnection): void {
	connection.db.close();
	connection.cleanup?.();
}

/**
 * Read an agent's sqlite database without leaving a trace beside it (SPEC 4.3):
 * - no `-wal`: `mode=ro&immutable=1` (no locks, no sidecars created);
 * - `-wal` and `-shm` with a live connection: `mode=ro` (immutable would miss the WAL's rows);
 * - `-wal` without `-shm`, or sidecars a dead process left (no live lock on the `-shm`): read a
 *   private copy of db + `-wal`, then remove the copy. A `mode=ro` open would rebuild the stale
 *   wal-index inside the user's `-shm`, which rewrites that file.
 * `fn` runs with the open handle; the handle (and any copy) is gone when this returns, or, inside
 * `keepingReadConnections`, when that ends (the same handle serves the refresh's later reads).
 * Throws StoreReadError for a missing, corrupt, locked or unreadable database.
 */
export function withReadOnlyDb<T>(file: string, fn: (db: ReadDb) => T): T {
	const abs = path.resolve(file);
	const kept = keptConnections.getStore();
	const known = kept?.get(abs);
	if (known) return readWith(known.db, abs, fn);
	const connection = openReadOnly(abs);
	if (kept) {
		kept.set(abs, connection);
		return readWith(connection.db, abs, fn);
	}
	try {
		return readWith(connection.db, abs, fn);
	} finally {
		close(connection);
	}
}

/** Open `abs` read-only the trace-free way (see `withReadOnlyDb`). */
function openReadOnly(abs: string): ReadConnection {
	let stat: fs.Stats;
	try {
		stat = fs.statSync(abs);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		throw new StoreReadError(`${abs}: ${code === 'EACCES' ? 'permission denied' : 'missing'}`, abs);
	}
	if (!stat.isFile()) throw new StoreReadError(`${abs}: not a file`, abs);
	try {
		fs.accessSync(abs, fs.constants.R_OK);
	} catch {
		throw new StoreReadError(`${abs}: permission denied`, abs);
	}
	const hasWal = exists(`${abs}-wal`);
	const hasShm = exists(`${abs}-shm`);
	if (!hasWal) return {db: openUri(`file:${encodeUriPath(abs)}?mode=ro&immutable=1`, abs)};
	if (hasShm && shmHasLiveConnection(`${abs}-shm`)) return {db: openUri(`file:${encodeUriPath(abs)}?mode=ro`, abs)};
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ro-'));
	const cleanup = () => fs.rmSync(dir, {recursive: true, force: true});
	try {
		const copy = path.join(dir, path.basename(abs));
		fs.copyFileSync(abs, copy);
		fs.copyFileSync(`${abs}-wal`, `${copy}-wal`);
		// The copy is ours: a normal read-only open may replay the WAL into a private -shm.
		return {db: openUri(`file:${encodeUriPath(copy)}?mode=ro`, abs), cleanup};
	} catch (error) {
		cleanup();
		throw error;
	}
}

/** `fn` on an open handle, its SQLite errors as StoreReadError naming `file`. */
function readWith<T>(db: ReadDb, file: string, fn: (db: ReadDb) => T): T {
	try {
		return fn(db);
	} catch (error) {
		if (error instanceof StoreReadError) throw error;
		if (error instanceof Error && 'code' in error && String((error as {code: unknown}).code).startsWith('SQLITE')) {
			throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
		}
		throw error;
	}
}

/** Percent-encode the characters that end or alter a URI path (`?`, `#`, `%`). */
function encodeUriPath(file: string): string {
	return file.replace(/[%?#]/g, ch => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Tables and their columns, for probing a schema rather than assuming it (FORMATS 0). */
export function tableColumns(db: ReadDb): Map<string, Set<string>> {
	// Once per connection: a connection kept for a refresh is probed by every row's call.
	const known = columnsByConnection.get(db);
	if (known) return known;
	const tables = db
		.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table'")
		.all()
		.map(r => r.name);
	const out = new Map<string, Set<string>>();
	for (const table of tables) {
		const columns = db.prepare<[string], {name: string}>('SELECT name FROM pragma_table_info(?)').all(table);
		out.set(table, new Set(columns.map(c => c.name)));
	}
	columnsByConnection.set(db, out);
	return out;
}

const columnsByConnection = new WeakMap<ReadDb, Map<string, Set<string>>>();
