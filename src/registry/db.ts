import fs from 'node:fs';
import path from 'node:path';
import {openDatabase, type SqliteDb} from '../system/sqlite.js';
import {MIGRATIONS, SCHEMA_VERSION} from './migrations.js';
import {messageOf} from '../domain/result.js';

export type RegistryDb = SqliteDb;

/** Why the registry could not be opened. Carries the path so the CLI can name it (exit 2). */
export class RegistryError extends Error {
	readonly registryPath: string;
	constructor(message: string, registryPath: string) {
		super(message);
		this.registryPath = registryPath;
		this.name = 'RegistryError';
	}
}

const SQLITE_HEADER = 'SQLite format 3\0';
/** Long enough to ride out another mam-tui's write transaction, short enough to report a stuck lock. */
const BUSY_TIMEOUT_MS = 5000;

/** Check the file header before SQLite touches it, so a foreign file is never rewritten. */
function assertSqliteHeader(file: string): void {
	let stat: fs.Stats;
	try {
		stat = fs.statSync(file);
	} catch {
		return; // absent: it will be created
	}
	if (!stat.isFile()) throw new RegistryError(`registry ${file} is not a regular file`, file);
	if (stat.size === 0) return;
	const fd = fs.openSync(file, 'r');
	try {
		const head = Buffer.alloc(16);
		fs.readSync(fd, head, 0, 16, 0);
		if (head.toString('latin1') !== SQLITE_HEADER) {
			throw new RegistryError(`registry ${file} is not a sqlite database; it was left untouched`, file);
		}
	} finally {
		fs.closeSync(fd);
	}
}

/** Integrity and version check on a read-only connection: nothing is written if either fails. */
function inspectReadOnly(file: string): void {
	if (!fs.existsSync(file) || fs.statSync(file).size === 0) return;
	let db: RegistryDb | undefined;
	try {
		// With no -wal beside it, immutable=1 reads without creating sidecars: a broken file stays
		// exactly as it was. With a -wal, another mam-tui is live and the sidecars are expected.
		const uri = `file:${file.replace(/[%?#]/g, ch => encodeURIComponent(ch))}?mode=ro${fs.existsSync(`${file}-wal`) ? '' : '&immutable=1'}`;
		db = openDatabase(uri, {readonly: true});
		db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
		const check = db.pragma('quick_check', {simple: true});
		if (check !== 'ok') throw new Error(String(check));
		const version = db.pragma('user_version', {simple: true}) as number;
		if (version > SCHEMA_VERSION) {
			throw new RegistryError(
				`registry ${file} has schema version ${version}, newer than this mam-tui knows (${SCHEMA_VERSION}); upgrade mam-tui. Nothing was written.`,
				file,
			);
		}
	} catch (error) {
		if (error instanceof RegistryError) throw error;
		const reason = messageOf(error);
		throw new RegistryError(`registry ${file} is corrupt or unreadable (${reason}); it was left untouched`, file);
	} finally {
		db?.close();
	}
}

function migrate(db: RegistryDb): void {
	// Up to date (every open but the first): no write transaction. Taking one made every read-only
	// command write the registry's -wal and checkpoint it on close (15 ms of each status run).
	if ((db.pragma('user_version', {simple: true}) as number) >= SCHEMA_VERSION) return;
	const step = db.transaction(() => {
		const version = db.pragma('user_version', {simple: true}) as number;
		for (let v = version; v < SCHEMA_VERSION; v++) {
			db.exec(MIGRATIONS[v] ?? '');
		}
		if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
	});
	// IMMEDIATE: two mam-tui processes starting at once must not both migrate.
	step.immediate();
}

/**
 * `mkdir -p` with mode 0700, one level at a time: node's recursive mkdir spins forever where
 * mkdir answers ENOENT although the parent exists (under /proc), and a path there must fail.
 */
function makeFolder(dir: string): void {
	const missing: string[] = [];
	for (let current = path.resolve(dir); !fs.existsSync(current); current = path.dirname(current)) {
		missing.unshift(current);
		if (path.dirname(current) === current) break;
	}
	for (const folder of missing) {
		try {
			fs.mkdirSync(folder, {mode: 0o700});
		} catch (error) {
			// Another mam-tui starting at the same moment made it first.
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(folder).isDirectory()) throw error;
		}
	}
}

/**
 * Open (creating if needed) the registry at `file`: WAL, busy timeout, migrations.
 * A file that is not a healthy sqlite database, or has a newer schema, throws RegistryError
 * and is left byte-identical. `:memory:` is accepted for tests.
 */
export function openRegistryDb(file: string): RegistryDb {
	if (file !== ':memory:') {
		try {
			makeFolder(path.dirname(file));
		} catch (error) {
			// A parent that is a file, a read-only or immutable place: say which registry, not just errno.
			const reason = messageOf(error);
			throw new RegistryError(`registry ${file} cannot be created: its folder ${path.dirname(file)} cannot be made (${reason})`, file);
		}
		assertSqliteHeader(file);
		inspectReadOnly(file);
	}
	let db: RegistryDb;
	try {
		db = openDatabase(file);
	} catch (error) {
		const reason = messageOf(error);
		throw new RegistryError(`registry ${file} cannot be opened (${reason})`, file);
	}
	try {
		db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
		if (file !== ':memory:') db.pragma('journal_mode = WAL');
		db.pragma('foreign_keys = ON');
		migrate(db);
	} catch (error) {
		db.close();
		const reason = messageOf(error);
		throw new RegistryError(`registry ${file} cannot be prepared (${reason})`, file);
	}
	return db;
}
