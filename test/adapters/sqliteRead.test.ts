import '../support/sqliteUri.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {
	columnsOf,
	describeSqliteError,
	hasTable,
	keepingReadConnections,
	locksName,
	READ_CACHE_KIB,
	StoreReadError,
	tableColumns,
	withReadOnlyDb,
	type ReadDb,
	type ReadPool,
} from '../../src/system/sqliteRead.js';
import {spawnWalWriter, type HeldProcess} from '../support/holders.js';
import {tempDir} from '../helpers/tmp.js';

// SPEC 4.3: an agent's database is read without leaving a trace beside it, whatever state its
// sidecars are in, and every failure to read it is a StoreReadError naming the file.

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

function scratch(): string {
	const t = tempDir('mam-sqlite-read-');
	cleanups.push(t.dispose);
	return t.dir;
}

/** A database with `rows` rows in `t(a TEXT)`, closed, with no sidecar left. */
function store(dir: string, name = 'store.db', rows = 2): string {
	const file = path.join(dir, name);
	const db = new Database(file);
	db.exec('CREATE TABLE t (a TEXT, n INTEGER)');
	for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?, ?)').run(`row-${i}`, i);
	db.close();
	return file;
}

const count = (file: string) => withReadOnlyDb(file, db => (db.prepare('SELECT count(*) AS n FROM t').get() as {n: number}).n);
const beside = (file: string) => fs.readdirSync(path.dirname(file)).sort();
const privateCopies = () =>
	fs
		.readdirSync(os.tmpdir())
		.filter(e => e.startsWith('mam-ro-'))
		.sort();

function thrown(fn: () => unknown): unknown {
	try {
		fn();
	} catch (error) {
		return error;
	}
	throw new Error('did not throw');
}

/** The rows of `t`, and the private copies that existed while the read ran. */
function countWatchingCopies(file: string): {n: number; during: string[]} {
	let during: string[] = [];
	const n = withReadOnlyDb(file, db => {
		during = privateCopies();
		return (db.prepare('SELECT count(*) AS n FROM t').get() as {n: number}).n;
	});
	return {n, during};
}

describe('reading without a trace', () => {
	it('reads a database with no -wal, creates no sidecar and returns what the reader returns', () => {
		const dir = scratch();
		const file = store(dir);
		const before = fs.statSync(file);
		expect(count(file)).toBe(2);
		expect(beside(file)).toEqual(['store.db']);
		expect(fs.statSync(file).mtimeMs).toBe(before.mtimeMs);
	});

	it('opens a path holding ?, # and %, which a file: URI would otherwise cut or decode', () => {
		const dir = scratch();
		const odd = path.join(dir, 'a?b#c%41d');
		fs.mkdirSync(odd);
		const file = store(odd, 'x%20y.db', 3);
		expect(count(file)).toBe(3);
		expect(beside(file)).toEqual(['x%20y.db']);
	});

	it('reads the rows still in the WAL of a live writer, in place, leaving its -wal as it was', async () => {
		const dir = scratch();
		const file = store(dir, 'store.db', 4);
		const writer: HeldProcess = await spawnWalWriter([file]);
		cleanups.push(() => writer.stop());
		const wal = fs.readFileSync(`${file}-wal`);
		const copies = privateCopies();
		const {n, during} = countWatchingCopies(file);
		expect(n).toBe(4);
		expect(fs.readFileSync(`${file}-wal`).equals(wal)).toBe(true);
		expect(beside(file)).toEqual(['store.db', 'store.db-shm', 'store.db-wal']);
		// A live writer's WAL is read in place (its lock on the -shm says so), not through a copy.
		expect(during).toEqual(copies);
	});

	it('reads a -wal left by a dead writer through a private copy, removed after; the store is untouched', async () => {
		const dir = scratch();
		const file = store(dir, 'store.db', 3);
		const writer = await spawnWalWriter([file]);
		await writer.crash();
		fs.rmSync(`${file}-shm`);
		const wal = fs.readFileSync(`${file}-wal`);
		const copies = privateCopies();
		const {n, during} = countWatchingCopies(file);
		expect(n).toBe(3);
		expect(during.length).toBe(copies.length + 1);
		expect(privateCopies()).toEqual(copies);
		expect(beside(file)).toEqual(['store.db', 'store.db-wal']);
		expect(fs.readFileSync(`${file}-wal`).equals(wal)).toBe(true);
	});

	it('a stale -shm a killed writer left is not rebuilt in place either', async () => {
		const dir = scratch();
		const file = store(dir, 'store.db', 2);
		const writer = await spawnWalWriter([file]);
		await writer.crash();
		const shm = fs.readFileSync(`${file}-shm`);
		expect(count(file)).toBe(2);
		expect(fs.readFileSync(`${file}-shm`).equals(shm)).toBe(true);
	});
});

describe('what cannot be read', () => {
	it('a missing file, a folder and a non-database each throw a StoreReadError naming the file', () => {
		const dir = scratch();
		const missing = path.join(dir, 'missing.db');
		const e1 = thrown(() => count(missing));
		expect(e1).toBeInstanceOf(StoreReadError);
		expect((e1 as StoreReadError).message).toBe(`${missing}: missing`);
		expect((e1 as StoreReadError).dbPath).toBe(missing);
		expect((e1 as StoreReadError).name).toBe('StoreReadError');
		expect(fs.existsSync(missing)).toBe(false);
		expect(() => count(dir)).toThrow(`${dir}: not a file`);
		const text = path.join(dir, 'text.db');
		fs.writeFileSync(text, 'this is not a sqlite database, only some words in a file');
		const e3 = thrown(() => count(text));
		expect(e3).toBeInstanceOf(StoreReadError);
		expect((e3 as Error).message).toBe(`${text}: not a sqlite database (corrupt?)`);
		expect(fs.readdirSync(dir)).toEqual(['text.db']);
	});

	it('a -wal that is a folder is a StoreReadError naming the store', () => {
		const dir = scratch();
		const file = store(dir);
		fs.mkdirSync(`${file}-wal`);
		const e = thrown(() => count(file));
		expect(e).toBeInstanceOf(StoreReadError);
		expect((e as StoreReadError).message).toBe(`${file}: cannot be copied with its write-ahead log (is a folder)`);
		expect((e as StoreReadError).dbPath).toBe(file);
		expect(fs.readdirSync(dir).sort()).toEqual(['store.db', 'store.db-wal']);
	});

	it('a query the schema cannot answer is a StoreReadError; an error of the reader itself stays what it was', () => {
		const dir = scratch();
		const file = store(dir);
		const e = thrown(() => withReadOnlyDb(file, db => db.prepare('SELECT nope FROM t').all()));
		expect(e).toBeInstanceOf(StoreReadError);
		expect((e as Error).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*no such column: nope`));
		const own = new RangeError('mine');
		expect(
			thrown(() =>
				withReadOnlyDb(file, () => {
					throw own;
				}),
			),
		).toBe(own);
		// Only SQLite's own errors become StoreReadError: a file error of the reader, or a thrown
		// value that is not an Error whatever its code, stays what it was.
		const enoent = Object.assign(new Error('no such file'), {code: 'ENOENT'});
		expect(
			thrown(() =>
				withReadOnlyDb(file, () => {
					throw enoent;
				}),
			),
		).toBe(enoent);
		const notAnError = {code: 'SQLITE_ERROR', message: 'an object'};
		expect(
			thrown(() =>
				withReadOnlyDb(file, () => {
					throw notAnError;
				}),
			),
		).toBe(notAnError);
		const already = new StoreReadError('x: already', 'x');
		expect(
			thrown(() =>
				withReadOnlyDb(file, () => {
					throw already;
				}),
			),
		).toBe(already);
	});

	it('leaves no file open after a read that failed on the header', () => {
		const dir = scratch();
		const text = path.join(dir, 'text.db');
		fs.writeFileSync(text, 'this is not a sqlite database, only some words in a file');
		const open = () => fs.readdirSync('/proc/self/fd').length;
		const before = open();
		for (let i = 0; i < 3; i++) expect(() => count(text)).toThrow(StoreReadError);
		expect(open()).toBe(before);
	});

	it('closes the handle when the reader is done, and when it throws', () => {
		const dir = scratch();
		const file = store(dir);
		const handles: {open: boolean}[] = [];
		withReadOnlyDb(file, db => handles.push(db));
		thrown(() =>
			withReadOnlyDb(file, db => {
				handles.push(db);
				throw new Error('x');
			}),
		);
		expect(handles.map(h => h.open)).toEqual([false, false]);
	});

	it("keeps a read connection's page cache at READ_CACHE_KIB, kept or not (better-sqlite3's default is 16 MB)", async () => {
		const file = store(scratch());
		const cacheOf = (db: ReadDb) => db.pragma('cache_size', {simple: true});
		expect(withReadOnlyDb(file, cacheOf)).toBe(-READ_CACHE_KIB);
		expect(await keepingReadConnections(async reads => withReadOnlyDb(file, reads, cacheOf))).toBe(-READ_CACHE_KIB);
		expect(READ_CACHE_KIB).toBeLessThan(16_000);
	});

	it('words SQLite errors the way a user reads them', () => {
		const coded = (code: string, message = 'x') => Object.assign(new Error(message), {code});
		expect(describeSqliteError(coded('SQLITE_NOTADB'))).toBe('not a sqlite database (corrupt?)');
		expect(describeSqliteError(new Error('file is not a database'))).toBe('not a sqlite database (corrupt?)');
		expect(describeSqliteError(coded('SQLITE_CORRUPT'))).toBe('database is corrupt');
		expect(describeSqliteError(new Error('database disk image is malformed'))).toBe('database is corrupt');
		expect(describeSqliteError(coded('SQLITE_BUSY_SNAPSHOT'))).toBe('database is locked by another process');
		expect(describeSqliteError(coded('SQLITE_LOCKED_SHAREDCACHE'))).toBe('database is locked by another process');
		expect(describeSqliteError(new Error('database table is locked'))).toBe('database is locked by another process');
		expect(describeSqliteError(coded('SQLITE_CANTOPEN'))).toBe('cannot open database (missing or permission denied)');
		expect(describeSqliteError(new Error('unable to open database file'))).toBe('cannot open database (missing or permission denied)');
		expect(describeSqliteError(coded('SQLITE_ERROR', 'near "x": syntax error'))).toBe('near "x": syntax error');
		expect(describeSqliteError('plain words')).toBe('plain words');
		expect(describeSqliteError(undefined)).toBe('undefined');
	});
});

describe('a live connection, from /proc/locks', () => {
	const line = (file: string) => `1: POSIX  ADVISORY  READ 29834 ${file} 128 128`;
	it.each([
		["the file's major:minor:inode field", line('fe:00:2188869'), 2188869, true],
		["a waiter's line (`->`)", ` 1: -> POSIX  ADVISORY  WRITE 4100 08:01:55 128 128`, 55, true],
		['one line among others', [line('fe:00:1'), line('fe:00:2188869'), ''].join('\n'), 2188869, true],
		['another inode ending in the same digits', line('fe:00:2188869'), 188869, false],
		['another inode that starts the same', line('fe:00:2188869'), 21888, false],
		['a field with more before major:minor', line('x:fe:00:55'), 55, false],
		['a field with more after the inode', line('fe:00:5x:5'), 5, false],
		['an inode with several digits', line('fe:00:55'), 55, true],
		['major and minor of several hex digits', line('fd0:1a:7'), 7, true],
		['no locks at all', '', 7, false],
	])('%s', (_what, locks, inode, held) => {
		expect(locksName(locks, inode)).toBe(held);
	});
});

describe('tableColumns', () => {
	it('lists every table with its columns', () => {
		const dir = scratch();
		const file = store(dir);
		const db = new Database(file);
		db.exec('CREATE TABLE "two words" (x BLOB, "y z" TEXT)');
		db.close();
		const columns = withReadOnlyDb(file, db => tableColumns(db));
		expect([...columns.entries()].map(([t, c]) => [t, [...c].sort()])).toEqual([
			['t', ['a', 'n']],
			['two words', ['x', 'y z']],
		]);
	});

	it('are probed once per connection: the kept one of a refresh remembers them, a new one asks again', async () => {
		const file = store(scratch());
		const kept = await keepingReadConnections(async reads => {
			const first = withReadOnlyDb(file, reads, db => [tableColumns(db), columnsOf(db, 't')] as const);
			const again = withReadOnlyDb(file, reads, db => [tableColumns(db), columnsOf(db, 't')] as const);
			return {first, again};
		});
		expect(kept.again[0]).toBe(kept.first[0]);
		expect(kept.again[1]).toBe(kept.first[1]);
		expect([...kept.first[1]].sort()).toEqual(['a', 'n']);
		const alone = withReadOnlyDb(file, db => tableColumns(db));
		expect(alone).not.toBe(kept.first[0]);
		expect(alone).toEqual(kept.first[0]);
	});
});

describe('hasTable and columnsOf', () => {
	it('hasTable: a table of that name, not a view, an index or a missing one', () => {
		const file = store(scratch());
		const db = new Database(file);
		db.exec('CREATE VIEW v AS SELECT a FROM t; CREATE INDEX i ON t (n)');
		db.close();
		expect(withReadOnlyDb(file, db => ['t', 'v', 'i', 'nope'].map(name => hasTable(db, name)))).toEqual([true, false, false, false]);
	});

	it('hasTable answers from the probe once the connection was probed: no query of its own', () => {
		const file = store(scratch());
		const answers = withReadOnlyDb(file, db => {
			tableColumns(db);
			const prepare = db.prepare.bind(db);
			let asked = 0;
			db.prepare = ((sql: string) => ((asked += 1), prepare(sql))) as typeof db.prepare;
			return {t: hasTable(db, 't'), nope: hasTable(db, 'nope'), asked};
		});
		expect(answers).toEqual({t: true, nope: false, asked: 0});
	});

	it('on a connection of our own (a purge writes through one), columns are probed afresh every time', () => {
		const file = store(scratch());
		const db = new Database(file);
		try {
			const first = columnsOf(db, 't');
			expect([...first].sort()).toEqual(['a', 'n']);
			expect(columnsOf(db, 'nope')).toEqual(new Set());
			db.exec('ALTER TABLE t ADD COLUMN later TEXT');
			expect([...columnsOf(db, 't')].sort()).toEqual(['a', 'later', 'n']);
			expect([...(tableColumns(db).get('t') ?? [])].sort()).toEqual(['a', 'later', 'n']);
			expect(hasTable(db, 't')).toBe(true);
		} finally {
			db.close();
		}
	});
});

describe("a refresh's pool of read connections", () => {
	it('keeps the last eight stores it read open, and closes the ones before', async () => {
		const dir = scratch();
		const files = Array.from({length: 11}, (_, i) => store(dir, `s${i}.db`, 1));
		const handles: {open: boolean}[] = [];
		await keepingReadConnections(async reads => {
			for (const file of files) withReadOnlyDb(file, reads, db => handles.push(db));
			expect(handles.map(h => h.open)).toEqual([false, false, false, true, true, true, true, true, true, true, true]);
		});
		expect(handles.every(h => !h.open)).toBe(true);
	});

	it('does not keep a file that failed on its header: once it is a database, the next read of the refresh reads it', async () => {
		const dir = scratch();
		const file = path.join(dir, 'late.db');
		fs.writeFileSync(file, 'this is not a sqlite database, only some words in a file');
		await keepingReadConnections(async reads => {
			expect(() => withReadOnlyDb(file, reads, db => db.prepare('SELECT count(*) AS n FROM t').get())).toThrow(`${file}: not a sqlite database (corrupt?)`);
			// The agent writes its database (a new file renamed over the path, as sqlite tools do).
			const made = store(dir, 'made.db', 3);
			fs.renameSync(made, file);
			expect(withReadOnlyDb(file, reads, db => db.prepare('SELECT count(*) AS n FROM t').get())).toEqual({n: 3});
		});
	});

	it('once closed, still reads, each read on a connection of its own that it closes', async () => {
		const file = store(scratch());
		let pool: ReadPool | undefined;
		const during = await keepingReadConnections(async reads => {
			pool = reads;
			return withReadOnlyDb(file, reads, db => db);
		});
		expect(during.open).toBe(false);
		const after = withReadOnlyDb(file, pool, db => ({db, n: (db.prepare('SELECT count(*) AS n FROM t').get() as {n: number}).n}));
		expect(after.n).toBe(2);
		expect(after.db).not.toBe(during);
		expect(after.db.open).toBe(false);
	});
});

describe('a -wal the private copy cannot take', () => {
	it('a -wal that is a folder: the read fails, the half-made copy is removed, the store is untouched', () => {
		const dir = scratch();
		const name = `wal-folder-${process.pid}-${Date.now()}.db`;
		const file = store(dir, name);
		fs.mkdirSync(`${file}-wal`);
		expect(() => count(file)).toThrow();
		const left = privateCopies().filter(copy => fs.existsSync(path.join(os.tmpdir(), copy, name)));
		expect(left).toEqual([]);
		expect(beside(file)).toEqual([name, `${name}-wal`]);
	});
});
