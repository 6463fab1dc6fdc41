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

/**
 * Read an agent's sqlite database without leaving a trace beside it (SPEC 4.3):
 * - no `-wal`: `mode=ro&immutable=1` (no locks, no sidecars created);
 * - `-wal` and `-shm` with a live connection: `mode=ro` (immutable would miss the WAL's rows);
 * - `-wal` without `-shm`, or sidecars a dead process left (no live lock on the `-shm`): read a
 *   private copy of db + `-wal`, then remove the copy. A `mode=ro` open would rebuild the stale
 *   wal-index inside the user's `-shm`, which rewrites that file.
 * `fn` runs with the open handle; the handle (and any copy) is gone when this returns.
 * Throws StoreReadError for a missing, corrupt, locked or unreadable database.
 */
export function withReadOnlyDb<T>(file: string, fn: (db: ReadDb) => T): T {
	const abs = path.resolve(file);
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
	if (!hasWal) return readWith(openUri(`file:${encodeUriPath(abs)}?mode=ro&immutable=1`, abs), abs, fn);
	if (hasShm && shmHasLiveConnection(`${abs}-shm`)) return readWith(openUri(`file:${encodeUriPath(abs)}?mode=ro`, abs), abs, fn);
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ro-'));
	try {
		const copy = path.join(dir, path.basename(abs));
		fs.copyFileSync(abs, copy);
		fs.copyFileSync(`${abs}-wal`, `${copy}-wal`);
		// The copy is ours: a normal read-only open may replay the WAL into a private -shm.
		return readWith(openUri(`file:${encodeUriPath(copy)}?mode=ro`, abs), abs, fn);
	} finally {
		fs.rmSync(dir, {recursive: true, force: true});
	}
}

function readWith<T>(db: ReadDb, file: string, fn: (db: ReadDb) => T): T {
	try {
		return fn(db);
	} catch (error) {
		if (error instanceof StoreReadError) throw error;
		if (error instanceof Error && 'code' in error && String((error as {code: unknown}).code).startsWith('SQLITE')) {
			throw new StoreReadError(`${file}: ${describeSqliteError(error)}`, file);
		}
		throw error;
	} finally {
		db.close();
	}
}

/** Percent-encode the characters that end or alter a URI path (`?`, `#`, `%`). */
function encodeUriPath(file: string): string {
	return file.replace(/[%?#]/g, ch => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Tables and their columns, for probing a schema rather than assuming it (FORMATS 0). */
export function tableColumns(db: ReadDb): Map<string, Set<string>> {
	const tables = db
		.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table'")
		.all()
		.map(r => r.name);
	const out = new Map<string, Set<string>>();
	for (const table of tables) {
		const columns = db.prepare<[string], {name: string}>('SELECT name FROM pragma_table_info(?)').all(table);
		out.set(table, new Set(columns.map(c => c.name)));
	}
	return out;
}
