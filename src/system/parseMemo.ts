// Kept whole (about 450 lines): every statement that writes parse-memo.db is here, with the erase
// rule, so what purge promises can be checked in one file.
// The parse memo: what a refresh's `parse` computed for an agent's file, kept on disk under
// $MAM_HOME (`parse-memo.db`) so a dashboard started again on the same history stats each file
// and loads its summary instead of parsing it (issue 27 item 7). Keyed by kind and file and the
// file's stat (dev, ino, size, mtime, ctime) plus the caller's `also`: anything differing is
// parsed again.
//
// It holds conversation text (titles, first prompts), so it obeys purge like the search index:
// secure_delete zeroes freed cells and pages, a TRUNCATE checkpoint empties the WAL after a
// forget, and no index holds a path or a word (the one index is on a number: an interior b-tree
// page keeps copies of its keys, which a delete does not zero). Every failure here (a corrupt,
// foreign, locked or read-only file) costs speed only: the memo is rebuilt or left out, never
// trusted, and the caller parses as if it were not there.
import fs from 'node:fs';
import path from 'node:path';
import {encodeValue} from './memoValue.js';
import {openDatabase, type SqliteDb} from './sqlite.js';

/** `PRAGMA application_id`: 'mamp'. A file without it is not ours and is rebuilt. */
const APPLICATION_ID = 0x6d616d70;
/** Bumped when the table changes: an older file is dropped whole. */
export const MEMO_SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memo (
	rowid INTEGER PRIMARY KEY,
	k INTEGER NOT NULL UNIQUE,
	kind TEXT NOT NULL,
	file TEXT NOT NULL,
	version INTEGER NOT NULL,
	dev REAL NOT NULL,
	ino REAL NOT NULL,
	size REAL NOT NULL,
	mtime REAL NOT NULL,
	ctime REAL NOT NULL,
	also TEXT NOT NULL,
	value TEXT NOT NULL
);
`;

/** The stat fields a memo row is valid for. */
export interface FileStamp {
	readonly dev: number;
	readonly ino: number;
	readonly size: number;
	readonly mtimeMs: number;
	readonly ctimeMs: number;
}

/** A row read back: its stamp, `also` and the encoded value (decoded only when it is used). */
export interface MemoRow extends FileStamp {
	readonly version: number;
	readonly also: string;
	readonly value: string;
}

/** What the memo says when things go wrong (the app's logger). */
export interface MemoLog {
	warn(message: string, detail?: unknown): void;
}

export interface ParseMemoOptions {
	/** The app's version: a file written by another version is dropped whole. */
	readonly appVersion: string;
	readonly log?: MemoLog;
	/**
	 * How long a write waits for another mam-tui holding the file (ms). Short: a busy memo only
	 * skips persisting one batch.
	 */
	readonly busyMs?: number;
	/**
	 * Delay from the last staged change to the batched write (ms; default 5 s): long enough that a
	 * first start's refresh (seconds, with gaps between its parses) answers before the batch is
	 * written; a crash loses only re-parsable work.
	 */
	readonly flushDelayMs?: number;
}

interface Staged {
	readonly kind: string;
	readonly file: string;
	readonly version: number;
	/** Undefined: delete the row. */
	readonly stamp?: FileStamp;
	readonly also?: string;
	/** The parsed value, encoded when the batch is written (off the refresh's path). */
	readonly value?: unknown;
}

/** A row as `raw()` reads it: kind, file, version, dev, ino, size, mtime, ctime, also, value. */
type RawRow = [string, string, number, number, number, number, number, number, string, string];

/** Where the memo lives in the state dir. */
export function parseMemoPath(stateDir: string): string {
	return path.join(stateDir, 'parse-memo.db');
}

function removeFiles(file: string): void {
	for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, {force: true});
}

/**
 * A 53-bit hash of kind and file: the unique key the upsert finds a row by, so that no index
 * holds a path (see the top of this file). Two FNV-1a lanes; a collision only costs a re-parse
 * (the row's own kind and file are compared on read).
 */
export function rowKey(kind: string, file: string): number {
	let a = 0x811c9dc5;
	let b = 0x01000193 ^ 0x5bd1e995;
	const mix = (code: number) => {
		a = Math.imul(a ^ code, 0x01000193);
		b = Math.imul(b ^ code, 0x5bd1e995);
	};
	for (let i = 0; i < kind.length; i++) mix(kind.charCodeAt(i));
	mix(0);
	for (let i = 0; i < file.length; i++) mix(file.charCodeAt(i));
	return (b >>> 11) * 0x1_0000_0000 + (a >>> 0);
}

function sqliteCode(error: unknown): string {
	return typeof error === 'object' && error !== null && typeof (error as {code?: unknown}).code === 'string' ? (error as {code: string}).code : '';
}

function isBusy(error: unknown): boolean {
	return /^SQLITE_(BUSY|LOCKED)/.test(sqliteCode(error));
}

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** True when `db` is a parse memo of this schema and app version. */
function trusted(db: SqliteDb, appVersion: string): boolean {
	if (db.pragma('application_id', {simple: true}) !== APPLICATION_ID) return false;
	if (db.pragma('user_version', {simple: true}) !== MEMO_SCHEMA_VERSION) return false;
	const row = db.prepare<[], {value: string}>("SELECT value FROM meta WHERE name = 'app'").get();
	return row?.value === appVersion;
}

function create(file: string, appVersion: string): SqliteDb {
	removeFiles(file);
	const db = openDatabase(file);
	// Set before the first table: auto_vacuum cannot be switched on later without a VACUUM.
	db.pragma('auto_vacuum = INCREMENTAL');
	db.pragma('journal_mode = WAL');
	db.exec(SCHEMA);
	db.prepare("INSERT INTO meta (name, value) VALUES ('app', ?)").run(appVersion);
	db.pragma(`application_id = ${APPLICATION_ID}`);
	db.pragma(`user_version = ${MEMO_SCHEMA_VERSION}`);
	return db;
}

function configure(db: SqliteDb, file: string, busyMs: number): void {
	db.pragma('secure_delete = ON');
	db.pragma(`busy_timeout = ${busyMs}`);
	// A lost last commit is parsed again from the agents' files: no fsync per commit.
	db.pragma('synchronous = NORMAL');
	db.pragma('cache_size = -2000');
	// The file holds the agents' words: only its owner reads it.
	fs.chmodSync(file, 0o600);
}

/** The stat of `file` now (undefined when it is gone). */
function stampNow(file: string): FileStamp | undefined {
	try {
		return fs.statSync(file, {throwIfNoEntry: false});
	} catch {
		return undefined;
	}
}

export function sameStamp(a: FileStamp, b: FileStamp): boolean {
	return a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size && a.ino === b.ino && a.dev === b.dev;
}

/**
 * The on-disk memo of one process. Read whole on first use (one query; a lookup per file cost
 * more), written in batches: `put` and `drop` stage a change, and one transaction writes the
 * batch once no change came for `flushDelayMs`, or at `flush()`/`close()`.
 */
export class ParseMemo {
	readonly file: string;
	private readonly options: ParseMemoOptions;
	private db: SqliteDb | undefined;
	/** Set once the memo gave up for this process (locked, read-only, failing): calls do nothing. */
	private off = false;
	/** Rows read at the first use and not asked about yet, by kind then file. */
	private loaded: Map<string, Map<string, MemoRow>> | undefined;
	/** Kinds whose rows of another version were dropped already. */
	private readonly checkedKinds = new Map<string, number>();
	private readonly staged = new Map<number, Staged>();
	private timer: NodeJS.Timeout | undefined;
	/** Pruned once per process: rows of files that are gone, found among those never asked. */
	private pruned = false;
	/** Rows handed out by `take` (for tests and the bench: what a start did not parse). */
	hits = 0;
	/** Rows read at start, and how many of them were asked about. */
	private loadedRows = 0;
	private askedRows = 0;

	constructor(file: string, options: ParseMemoOptions) {
		this.file = file;
		this.options = options;
	}

	private warn(message: string, error?: unknown): void {
		this.options.log?.warn(`parse memo ${this.file}: ${message}${error === undefined ? '' : `: ${messageOf(error)}`}`);
	}

	/** The connection, opened (and, when foreign or corrupt, rebuilt) on first use; undefined when off. */
	private open(): SqliteDb | undefined {
		if (this.db || this.off) return this.db;
		try {
			fs.mkdirSync(path.dirname(this.file), {recursive: true, mode: 0o700});
			this.db = this.openOrRebuild();
			configure(this.db, this.file, this.options.busyMs ?? 100);
		} catch (error) {
			this.db?.close();
			this.db = undefined;
			this.off = true;
			this.warn('left out for this run (parses are not kept across starts)', error);
		}
		return this.db;
	}

	private openOrRebuild(): SqliteDb {
		const {appVersion} = this.options;
		if (!fs.existsSync(this.file)) return create(this.file, appVersion);
		let db: SqliteDb | undefined;
		try {
			db = openDatabase(this.file);
			if (trusted(db, appVersion)) return db;
			this.warn('another version or not a parse memo: rebuilt');
		} catch (error) {
			// Another mam-tui writing it: left out, not rebuilt under its feet.
			if (isBusy(error)) throw error;
			this.warn('unreadable: rebuilt', error);
		}
		db?.close();
		return create(this.file, appVersion);
	}

	/** Every row, read once (a corrupt file found here is rebuilt empty). */
	private rows(): Map<string, Map<string, MemoRow>> {
		if (this.loaded) return this.loaded;
		this.loaded = new Map();
		const db = this.open();
		if (!db) return this.loaded;
		try {
			// Rows as arrays: no object with ten named keys made per row only to be copied.
			const rows = db.prepare<[], RawRow>('SELECT kind, file, version, dev, ino, size, mtime, ctime, also, value FROM memo').raw().all();
			for (const [kind, file, version, dev, ino, size, mtimeMs, ctimeMs, also, value] of rows) {
				let byFile = this.loaded.get(kind);
				if (!byFile) this.loaded.set(kind, (byFile = new Map()));
				byFile.set(file, {version, dev, ino, size, mtimeMs, ctimeMs, also, value});
			}
			this.loadedRows = rows.length;
		} catch (error) {
			this.loaded.clear();
			this.rebuildAfter(error);
		}
		return this.loaded;
	}

	/** A read or write failed: busy skips, anything else rebuilds the file (or gives up when that fails). */
	private rebuildAfter(error: unknown): void {
		if (isBusy(error)) {
			this.warn('busy (another mam-tui?): this batch is not kept', error);
			return;
		}
		this.warn('failed: rebuilt', error);
		try {
			this.db?.close();
			this.db = create(this.file, this.options.appVersion);
			configure(this.db, this.file, this.options.busyMs ?? 100);
		} catch (again) {
			this.db = undefined;
			this.off = true;
			this.warn('left out for this run', again);
		}
	}

	/**
	 * The row kept for `kind` (of `version`) and `file`, taken out of the rows read at start (a
	 * file is asked once a process; later answers come from the caller's own cache).
	 */
	take(kind: string, version: number, file: string): MemoRow | undefined {
		const byFile = this.rows().get(kind);
		if (!byFile) return undefined;
		if (this.checkedKinds.get(kind) !== version) {
			this.checkedKinds.set(kind, version);
			// Rows another version of this parse wrote answer nothing now: dropped (never asked again).
			for (const [f, row] of byFile) if (row.version !== version) this.stageDrop(kind, f, row.version);
		}
		const row = byFile.get(file);
		if (!row) return undefined;
		byFile.delete(file);
		this.askedRows += 1;
		if (row.version !== version) return undefined;
		this.hits += 1;
		return row;
	}

	/**
	 * Keep `value` for `kind` and `file` as of `stamp`; encoded and written with the next batch (a
	 * value that is not plain JSON data is not kept). The value must not change afterwards.
	 */
	put(kind: string, version: number, file: string, stamp: FileStamp, also: string, value: unknown): void {
		if (this.off) return;
		const {dev, ino, size, mtimeMs, ctimeMs} = stamp;
		this.stage({kind, file, version, stamp: {dev, ino, size, mtimeMs, ctimeMs}, also, value});
	}

	/** Forget `kind`'s row for `file` with the next batch (the parse is not to be kept). */
	drop(kind: string, version: number, file: string): void {
		if (this.off) return;
		this.loaded?.get(kind)?.delete(file);
		this.stageDrop(kind, file, version);
	}

	private stageDrop(kind: string, file: string, version: number): void {
		this.stage({kind, file, version});
	}

	private stage(change: Staged): void {
		this.staged.set(rowKey(change.kind, change.file), change);
		if (this.timer) clearTimeout(this.timer);
		this.timer = setTimeout(() => this.flush(), this.options.flushDelayMs ?? 5000);
		// Never keeps the process alive: `close()` writes what is left.
		this.timer.unref();
	}

	/** Changes staged and not written yet (for tests and the bench). */
	get pending(): number {
		return this.staged.size;
	}

	/**
	 * Write the staged changes in one transaction. A row is written only when its file still has
	 * the stat it was parsed at, checked inside the write lock: a purge deletes (or rewrites) the
	 * files first and then forgets their rows under the same lock, so a batch racing a purge
	 * either sees the file gone or is erased after it. Busy or failing: the batch is dropped.
	 */
	flush(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		// Nothing to write, nothing read to prune: a command that parsed nothing makes no file.
		if (this.staged.size === 0 && (this.pruned || !this.loaded)) return;
		const db = this.open();
		const batch = [...this.staged.values()];
		this.staged.clear();
		if (!db) return;
		const gone = this.pruned ? [] : this.unaskedGone();
		try {
			const upsert = db.prepare(
				`INSERT INTO memo (k, kind, file, version, dev, ino, size, mtime, ctime, also, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (k) DO UPDATE SET kind = excluded.kind, file = excluded.file, version = excluded.version, dev = excluded.dev, ino = excluded.ino,
				size = excluded.size, mtime = excluded.mtime, ctime = excluded.ctime, also = excluded.also, value = excluded.value`,
			);
			const remove = db.prepare('DELETE FROM memo WHERE k = ?');
			db.transaction(() => {
				for (const c of batch) {
					const k = rowKey(c.kind, c.file);
					const now = c.stamp && stampNow(c.file);
					const text = c.stamp && now && sameStamp(now, c.stamp) ? encodeValue(c.value) : undefined;
					if (c.stamp && text !== undefined) {
						upsert.run(k, c.kind, c.file, c.version, c.stamp.dev, c.stamp.ino, c.stamp.size, c.stamp.mtimeMs, c.stamp.ctimeMs, c.also ?? '', text);
					} else remove.run(k);
				}
				for (const [kind, file] of gone) remove.run(rowKey(kind, file));
			}).immediate();
		} catch (error) {
			this.rebuildAfter(error);
		}
	}

	/**
	 * Rows read at start that nothing asked about and whose file is gone (once per process, at the
	 * first batch): a memo of a history that shrank does not keep its dead rows.
	 */
	private unaskedGone(): [string, string][] {
		this.pruned = true;
		const gone: [string, string][] = [];
		// A process that asked about few of the rows (a `status` looking up one id) would stat
		// thousands of files to prune: left to the next process that reads the whole history.
		if (this.askedRows * 2 < this.loadedRows) return gone;
		for (const [kind, byFile] of this.loaded ?? []) {
			for (const file of byFile.keys()) {
				if (stampNow(file)) continue;
				gone.push([kind, file]);
				byFile.delete(file);
			}
		}
		return gone;
	}

	/** Write what is staged and close the file. */
	close(): void {
		this.flush();
		this.db?.close();
		this.db = undefined;
		this.off = true;
	}
}

/**
 * Erase the rows of `paths` (files, or folders: every file under them) from the memo at `file`,
 * leaving no byte of them (zeroed cells, freed pages given back, the WAL emptied). Throws when
 * that cannot be done (the purge then says so); a missing memo has nothing to erase.
 */
export function forgetInMemo(file: string, paths: readonly string[]): void {
	if (paths.length === 0 || !fs.existsSync(file)) return;
	try {
		forgetRows(file, paths);
	} catch (error) {
		// Another mam-tui holding the write lock: the purge says so and can be run again.
		if (isBusy(error)) throw error;
		// Damaged, or a WAL a reader kept from being emptied: it is only a cache, so removing it
		// whole erases these rows too (a dashboard holding it writes on into the removed file).
		removeFiles(file);
	}
}

function forgetRows(file: string, paths: readonly string[]): void {
	const db = openDatabase(file);
	try {
		db.pragma('secure_delete = ON');
		// A dashboard's batch holds the lock for milliseconds: wait for it rather than fail the erase.
		db.pragma('busy_timeout = 5000');
		if (db.pragma('application_id', {simple: true}) !== APPLICATION_ID) return;
		const remove = db.prepare('DELETE FROM memo WHERE file = ? OR (file > ? AND file < ?)');
		db.transaction(() => {
			for (const p of paths) {
				const dir = p.endsWith(path.sep) ? p : `${p}${path.sep}`;
				// Everything under `dir`: the names between "dir/" and "dir0" ('0' follows '/').
				remove.run(p, dir, `${dir.slice(0, -1)}${String.fromCharCode(path.sep.charCodeAt(0) + 1)}`);
			}
		}).immediate();
		db.pragma('incremental_vacuum');
		const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as {busy: number}[];
		if (checkpoint && checkpoint.busy !== 0) throw new Error('the memo is busy: its WAL could not be emptied');
	} finally {
		db.close();
	}
}
