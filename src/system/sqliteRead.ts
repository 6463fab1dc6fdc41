import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {openDatabase, type SqliteDb} from './sqlite.js';
import {messageOf} from '../domain/result.js';

/** Where a read connection keeps what it learnt of its schema (a symbol: the handle reads as a plain better-sqlite3 one). */
const SCHEMA = Symbol('schema');

/** A connection's schema, probed on first ask and kept as long as the connection (FORMATS 0: probe, never assume). */
interface SchemaMemo {
	tables?: Map<string, Set<string>>;
	readonly columns: Map<string, Set<string>>;
}

/** A read-only connection (`withReadOnlyDb`), carrying its schema memo. */
export type ReadDb = SqliteDb & {readonly [SCHEMA]: SchemaMemo};

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

/**
 * A read connection's page cache, in KiB (SQLite's own default; better-sqlite3 builds with 16 MB).
 * A refresh reads each page of an agent's store about once (whole-table scans, then lookups by id
 * whose inner pages stay cached), and keeps up to KEPT_CONNECTIONS open: at 16 MB each, a large
 * codex or opencode store stayed in memory until the refresh ended.
 */
export const READ_CACHE_KIB = 2000;

function openUri(uri: string, file: string): ReadDb {
	// fileMustExist would stat the URI string itself; existence was checked by the caller.
	let db: SqliteDb;
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
	// Set once the header was read: on a file that is not a database, it would fail unmapped.
	db.pragma(`cache_size = -${READ_CACHE_KIB}`);
	// A connection kept for a refresh is probed by every row's call: once per connection.
	const schema: SchemaMemo = {columns: new Map()};
	return Object.defineProperty(db, SCHEMA, {value: schema}) as ReadDb;
}

export function describeSqliteError(error: unknown): string {
	const code = (error as {code?: string} | undefined)?.code ?? '';
	const message = messageOf(error);
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
	return locksName(locks, inode);
}

/**
 * Does a lock in `locks` (the text of /proc/locks) hold the file with this inode? Lines look like
 * `1: POSIX  ADVISORY  READ 29834 fe:00:2188869 128 128` (`->` marks waiters): the file is the
 * `major:minor:inode` field.
 */
export function locksName(locks: string, inode: number): boolean {
	const suffix = `:${inode}`;
	return locks.split('\n').some(line => line.split(/\s+/).some(field => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(field) && field.endsWith(suffix)));
}

/** An open read-only connection, and what to remove once it is closed (a private copy). */
interface ReadConnection {
	readonly db: ReadDb;
	readonly cleanup?: () => void;
	/** Reads running on it now (opencode reads one database while holding another). */
	busy: number;
}

/**
 * How many connections a refresh keeps. A few shared stores (hermes, opencode, grok) are read by
 * every row; agy keeps a database per conversation, read once each, and hundreds of open
 * connections held their page caches until the refresh ended (76 MB more peak memory).
 */
const KEPT_CONNECTIONS = 8;

/**
 * The read connections one refresh keeps open (the last few used), owned by that refresh and
 * passed to adapters as `ctx.reads`: its verify and inUse calls then open each shared store once,
 * not once per row (an open costs about a millisecond: stat, access, /proc/locks, the header
 * read, schema probes). `close` closes them and removes any private copy; after it, reads open
 * and close their own connection.
 */
export class ReadPool {
	/** By absolute path, least recently used first. */
	private readonly kept = new Map<string, ReadConnection>();
	private closed = false;

	/** `withReadOnlyDb(file, fn)` on the connection kept for `file` (opened on first use). */
	withDb<T>(file: string, fn: (db: ReadDb) => T): T {
		const abs = path.resolve(file);
		if (this.closed) return readOnce(abs, fn);
		const connection = this.kept.get(abs) ?? openReadOnly(abs);
		// Busy before the bound is applied: the connection about to be read is never the one closed.
		connection.busy += 1;
		this.keep(abs, connection);
		try {
			return readWith(connection.db, abs, fn);
		} finally {
			connection.busy -= 1;
		}
	}

	close(): void {
		this.closed = true;
		for (const connection of this.kept.values()) close(connection);
		this.kept.clear();
	}

	/** Keep `connection` as the most recently used, closing the least recently used idle ones beyond the bound. */
	private keep(abs: string, connection: ReadConnection): void {
		const kept = this.kept;
		kept.delete(abs);
		kept.set(abs, connection);
		for (const [file, old] of kept) {
			if (kept.size <= KEPT_CONNECTIONS) break;
			if (old.busy > 0) continue;
			kept.delete(file);
			close(old);
		}
	}
}

/**
 * Run `fn` (one discovery refresh) with a pool of its own (`ReadPool`), closed when `fn` settles;
 * `fn` hands the pool to what it reads through (`ctx.reads`).
 */
export async function keepingReadConnections<T>(fn: (reads: ReadPool) => Promise<T>): Promise<T> {
	const reads = new ReadPool();
	try {
		return await fn(reads);
	} finally {
		reads.close();
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
 * `fn` runs with the open handle; the handle (and any copy) is gone when this returns, or, given
 * a refresh's `reads` pool (`ctx.reads`), when that pool closes (the same handle serves the
 * refresh's later reads). Throws StoreReadError for a missing, corrupt, locked or unreadable database.
 */
export function withReadOnlyDb<T>(file: string, fn: (db: ReadDb) => T): T;
export function withReadOnlyDb<T>(file: string, reads: ReadPool | undefined, fn: (db: ReadDb) => T): T;
export function withReadOnlyDb<T>(file: string, ...args: [(db: ReadDb) => T] | [ReadPool | undefined, (db: ReadDb) => T]): T {
	const [reads, fn] = args.length === 1 ? [undefined, args[0]] : args;
	return reads ? reads.withDb(file, fn) : readOnce(path.resolve(file), fn);
}

/** `fn` on a connection of its own, closed (and any copy removed) when it returns. */
function readOnce<T>(abs: string, fn: (db: ReadDb) => T): T {
	const connection = openReadOnly(abs);
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
	if (!hasWal) return {db: openUri(`file:${encodeUriPath(abs)}?mode=ro&immutable=1`, abs), busy: 0};
	if (hasShm && shmHasLiveConnection(`${abs}-shm`)) return {db: openUri(`file:${encodeUriPath(abs)}?mode=ro`, abs), busy: 0};
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ro-'));
	const cleanup = () => fs.rmSync(dir, {recursive: true, force: true});
	try {
		const copy = path.join(dir, path.basename(abs));
		fs.copyFileSync(abs, copy);
		fs.copyFileSync(`${abs}-wal`, `${copy}-wal`);
		// The copy is ours: a normal read-only open may replay the WAL into a private -shm.
		return {db: openUri(`file:${encodeUriPath(copy)}?mode=ro`, abs), cleanup, busy: 0};
	} catch (error) {
		cleanup();
		throw copyError(abs, error);
	}
}

/** A failure to copy a store and its WAL (a `-wal` that is a folder, unreadable): a StoreReadError naming the store. */
function copyError(abs: string, error: unknown): unknown {
	if (error instanceof StoreReadError || !(error instanceof Error) || !('code' in error)) return error;
	const code = String((error as NodeJS.ErrnoException).code);
	const why = code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a folder' : code === 'ENOENT' ? 'went away' : code;
	return new StoreReadError(`${abs}: cannot be copied with its write-ahead log (${why})`, abs);
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

/** The schema memo of a read connection; a write connection (a purge's) has none and is probed afresh. */
function schemaOf(db: SqliteDb): SchemaMemo {
	return (db as Partial<ReadDb>)[SCHEMA] ?? {columns: new Map()};
}

/** Tables and their columns, for probing a schema rather than assuming it (FORMATS 0). */
export function tableColumns(db: SqliteDb): Map<string, Set<string>> {
	const schema = schemaOf(db);
	if (schema.tables) return schema.tables;
	const tables = db
		.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table'")
		.all()
		.map(r => r.name);
	const out = new Map<string, Set<string>>();
	for (const table of tables) {
		const columns = db.prepare<[string], {name: string}>('SELECT name FROM pragma_table_info(?)').all(table);
		out.set(table, new Set(columns.map(c => c.name)));
	}
	schema.tables = out;
	return out;
}

/** The columns of `table`, empty when it does not exist (asked once per connection and table). */
export function columnsOf(db: SqliteDb, table: string): Set<string> {
	const schema = schemaOf(db);
	let columns = schema.columns.get(table);
	if (!columns) {
		const rows = db.prepare<[string], {name: string}>('SELECT name FROM pragma_table_info(?)').all(table);
		columns = new Set(rows.map(r => r.name));
		schema.columns.set(table, columns);
	}
	return columns;
}

/**
 * Does `db` have a table named `table`? The schema probe when this connection was probed already,
 * else one query: a caller that needs one table of every database it opens (agy's one database
 * per conversation) does not pay a pragma per table of each.
 */
export function hasTable(db: SqliteDb, table: string): boolean {
	const known = schemaOf(db).tables;
	if (known) return known.has(table);
	return db.prepare<[string], {n: number}>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)?.n === 1;
}
