import '../support/sqliteUri.js';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {chunks, deleteWhereIn, placeholders, quoteIdent, withPurgeDb} from '../../src/adapters/common/purgeDb.js';
import {checkpointProblem, deleteRows, eraseDatabases, eraseFreed} from '../../src/adapters/common/sqlitePurge.js';
import {StoreReadError} from '../../src/system/sqliteRead.js';
import {tempDir} from '../helpers/tmp.js';

// FORMATS 0.3: how a purge deletes rows from an agent's database, and how it overwrites what the
// deleted rows leave in the file's bytes.

const cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.splice(0).reverse()) c();
});

function scratch(): string {
	const t = tempDir('mam-purge-rows-');
	cleanups.push(t.dispose);
	return t.dir;
}

const SECRET = 'secret-text-of-the-purged-conversation';

/** sessions(id) and messages(session_id → sessions ON DELETE CASCADE, body), in WAL mode or not. */
function store(dir: string, {wal = false, rows = 3} = {}): string {
	const file = path.join(dir, 'agent.db');
	const db = new Database(file);
	if (wal) db.pragma('journal_mode = WAL');
	db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY);
		CREATE TABLE "odd ""name""" (id TEXT, "the col" TEXT);
		CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE, body TEXT);`);
	for (let i = 0; i < rows; i++) {
		db.prepare('INSERT INTO sessions VALUES (?)').run(`s${i}`);
		db.prepare('INSERT INTO messages (session_id, body) VALUES (?, ?)').run(`s${i}`, i === 0 ? `${SECRET} ${'x'.repeat(10_000)}` : `other ${i}`);
		db.prepare('INSERT INTO "odd ""name""" VALUES (?, ?)').run(`s${i}`, 'v');
	}
	db.close();
	return file;
}

const count = (file: string, sql: string) => {
	const db = new Database(file, {readonly: true});
	try {
		return (db.prepare(sql).get() as {n: number}).n;
	} finally {
		db.close();
	}
};

const bytesHold = (file: string, text: string) => [file, `${file}-wal`].some(f => fs.existsSync(f) && fs.readFileSync(f).includes(Buffer.from(text)));

describe('deleteRows', () => {
	it('deletes the rows of every step, counts per table (a table may come twice), skips a step with no ids', () => {
		const file = store(scratch());
		const counts = deleteRows(file, [
			{table: 'messages', column: 'session_id', ids: ['s0', 's1']},
			{table: 'odd "name"', column: 'the col', ids: []},
			{table: 'odd "name"', column: 'id', ids: ['s0']},
			{table: 'messages', column: 'session_id', ids: ['s2']},
		]);
		expect([...counts]).toEqual([
			['messages', 3],
			['odd "name"', 1],
		]);
		expect(count(file, 'SELECT count(*) AS n FROM messages')).toBe(0);
		expect(count(file, 'SELECT count(*) AS n FROM "odd ""name"""')).toBe(2);
	});

	it('with foreign keys on: deleting the parent takes its children along', () => {
		const file = store(scratch());
		deleteRows(file, [{table: 'sessions', column: 'id', ids: ['s0']}]);
		expect(count(file, "SELECT count(*) AS n FROM messages WHERE session_id = 's0'")).toBe(0);
		expect(count(file, 'SELECT count(*) AS n FROM messages')).toBe(2);
	});

	it("zeroes what it deletes: the text is gone from the file's bytes, not merely unlinked", () => {
		const file = store(scratch());
		expect(bytesHold(file, SECRET)).toBe(true);
		deleteRows(file, [{table: 'messages', column: 'session_id', ids: ['s0']}]);
		expect(bytesHold(file, SECRET)).toBe(false);
	});

	it('one transaction: a failing step rolls every step back, and says which file', () => {
		const file = store(scratch());
		expect(() =>
			deleteRows(file, [
				{table: 'messages', column: 'session_id', ids: ['s0']},
				{table: 'no_such_table', column: 'id', ids: ['s0']},
			]),
		).toThrow(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no such table`));
		expect(count(file, 'SELECT count(*) AS n FROM messages')).toBe(3);
	});

	it('never creates a missing database', () => {
		const dir = scratch();
		const missing = path.join(dir, 'none.db');
		expect(() => deleteRows(missing, [{table: 't', column: 'c', ids: ['x']}])).toThrow(`${missing}: `);
		expect(fs.existsSync(missing)).toBe(false);
	});
});

describe('withPurgeDb', () => {
	it('runs inside the root only, with foreign keys and secure delete on, in one transaction', () => {
		const dir = scratch();
		const file = store(dir);
		const seen = withPurgeDb(dir, file, db => ({
			fk: db.pragma('foreign_keys', {simple: true}),
			secure: db.pragma('secure_delete', {simple: true}),
			busy: db.pragma('busy_timeout', {simple: true}),
			inTransaction: db.inTransaction,
			deleted: deleteWhereIn(db, 'sessions', 'id', ['s0']),
		}));
		expect(seen).toEqual({fk: 1, secure: 1, busy: 5000, inTransaction: true, deleted: 1});
		expect(count(file, "SELECT count(*) AS n FROM messages WHERE session_id = 's0'")).toBe(0);
		expect(() => withPurgeDb(path.join(dir, 'elsewhere'), file, () => 1)).toThrow(`${file}: refused, not inside the agent's folder`);
	});

	it('a SQLite error becomes a StoreReadError naming the file and rolls back; another error is thrown as it was', () => {
		const dir = scratch();
		const file = store(dir);
		let thrown: unknown;
		try {
			withPurgeDb(dir, file, db => {
				deleteWhereIn(db, 'messages', 'session_id', ['s0']);
				db.prepare('DELETE FROM nope').run();
			});
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(StoreReadError);
		expect((thrown as Error).message).toMatch(/: no such table: nope$/);
		expect(count(file, 'SELECT count(*) AS n FROM messages')).toBe(3);
		const mine = new TypeError('mine');
		expect(() =>
			withPurgeDb(dir, file, () => {
				throw mine;
			}),
		).toThrow(mine);
		const missing = path.join(dir, 'missing.db');
		expect(() => withPurgeDb(dir, missing, () => 1)).toThrow(`${missing}: cannot open database (missing or permission denied)`);
		expect(() => withPurgeDb(dir, missing, () => 1)).toThrow(StoreReadError);
		expect(fs.existsSync(missing)).toBe(false);
	});

	it('deletes in lists of at most 500 ids, however many there are', () => {
		const dir = scratch();
		const file = path.join(dir, 'many.db');
		const db = new Database(file);
		db.exec('CREATE TABLE t (id TEXT)');
		const ids = Array.from({length: 1201}, (_, i) => `id-${i}`);
		db.transaction(() => {
			for (const id of ids) db.prepare('INSERT INTO t VALUES (?)').run(id);
		})();
		db.close();
		expect(withPurgeDb(dir, file, w => deleteWhereIn(w, 't', 'id', ids))).toBe(1201);
		expect(chunks(ids).map(c => c.length)).toEqual([500, 500, 201]);
		expect(chunks([1, 2, 3], 2)).toEqual([[1, 2], [3]]);
		expect(chunks([])).toEqual([]);
		expect(placeholders(3)).toBe('?, ?, ?');
		expect(placeholders(0)).toBe('');
		expect(quoteIdent('a"b')).toBe('"a""b"');
		expect(quoteIdent('a""b')).toBe('"a""""b"');
	});
});

describe('connections', () => {
	it('every open is closed again: after a delete, a refusal, a purge step and an erase', () => {
		const dir = scratch();
		const file = store(dir, {wal: true});
		const open = () => fs.readdirSync('/proc/self/fd').length;
		const before = open();
		deleteRows(file, [{table: 'messages', column: 'session_id', ids: ['s1']}]);
		expect(() => deleteRows(file, [{table: 'nope', column: 'id', ids: ['x']}])).toThrow();
		withPurgeDb(dir, file, db => deleteWhereIn(db, 'messages', 'session_id', ['s2']));
		expect(() =>
			withPurgeDb(dir, file, () => {
				throw new Error('x');
			}),
		).toThrow();
		expect(eraseFreed(file, 'agentx')).toBeUndefined();
		expect(open()).toBe(before);
	});
});

describe('eraseFreed and eraseDatabases', () => {
	/** Delete the way an agent does (no secure_delete): the text stays in freed pages or the WAL. */
	function agentDeletes(file: string): void {
		const db = new Database(file);
		db.pragma('secure_delete = OFF');
		db.prepare("DELETE FROM messages WHERE session_id = 's0'").run();
		db.close();
	}

	it("overwrites the freed pages and the WAL an agent's own delete left", () => {
		const file = store(scratch(), {wal: true});
		agentDeletes(file);
		expect(bytesHold(file, SECRET)).toBe(true);
		expect(eraseFreed(file, 'agentx')).toBeUndefined();
		expect(bytesHold(file, SECRET)).toBe(false);
		expect(count(file, 'SELECT count(*) AS n FROM messages')).toBe(2);
	});

	it('a reader holding an old snapshot: the checkpoint cannot copy the WAL back, so the database is reported held', {timeout: 30_000}, () => {
		const file = store(scratch(), {wal: true});
		agentDeletes(file);
		// The agent's own connection, in the middle of a read (its snapshot predates the rebuild); the
		// checkpoint waits out its busy timeout (5 s) for it.
		const reader = new Database(file);
		try {
			reader.exec('BEGIN');
			reader.prepare('SELECT count(*) FROM messages').get();
			expect(eraseFreed(file, 'agentx')).toBe(
				`${file}: freed pages not yet overwritten (another process is reading it); until agentx checkpoints, its database may still hold the deleted text in freed pages or WAL frames; run the purge again once agentx has exited`,
			);
		} finally {
			reader.close();
		}
	});

	it('a database that cannot be opened is reported held, not thrown', () => {
		const dir = scratch();
		const missing = path.join(dir, 'gone.db');
		expect(eraseFreed(missing, 'agentx')).toMatch(/gone\.db: freed pages not yet overwritten \(.+\)/);
		expect(fs.existsSync(missing)).toBe(false);
	});

	it('a database sqlite cannot rebuild (corrupt pages) is reported held, not thrown', () => {
		const file = store(scratch());
		const bytes = fs.readFileSync(file);
		// Keep the header (the open succeeds), overwrite every page after the first.
		fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, 4096), Buffer.alloc(bytes.length - 4096, 0xee)]));
		expect(eraseFreed(file, 'agentx')).toMatch(/freed pages not yet overwritten \(database is corrupt\)/);
	});

	it('an untouched database that cannot be read is left alone: nothing held, no warning', () => {
		const dir = scratch();
		const junk = path.join(dir, 'junk.db');
		fs.writeFileSync(junk, 'not a database at all');
		expect(eraseDatabases([junk], new Set(), 'agentx')).toEqual({held: [], warnings: []});
		expect(fs.readFileSync(junk, 'utf8')).toBe('not a database at all');
	});

	it.each([
		['no row (not in WAL mode)', undefined, undefined],
		['every frame copied back', {busy: 0, log: 0, checkpointed: 0}, undefined],
		['all of a log copied', {busy: 0, log: 5, checkpointed: 5}, undefined],
		['a reader blocked it', {busy: 1, log: 5, checkpointed: 5}, 'another process is reading it'],
		['frames left in the WAL', {busy: 0, log: 5, checkpointed: 4}, 'the WAL could not be fully copied back'],
		['frames left of a one-frame log', {busy: 0, log: 1, checkpointed: 0}, 'the WAL could not be fully copied back'],
	])('a checkpoint with %s', (_what, result, problem) => {
		expect(checkpointProblem(result)).toBe(problem);
	});

	it('erases the touched databases and any other with freed pages, leaves a clean one alone; a failure is held for a touched one', () => {
		const dir = scratch();
		const touched = store(fs.mkdtempSync(path.join(dir, 't-')));
		const dirty = store(fs.mkdtempSync(path.join(dir, 'd-')));
		agentDeletes(dirty);
		const clean = store(fs.mkdtempSync(path.join(dir, 'c-')));
		const cleanBefore = fs.readFileSync(clean);
		const missingTouched = path.join(dir, 'missing-touched.db');
		const {held, warnings} = eraseDatabases([touched, dirty, clean, missingTouched], new Set([touched, missingTouched]), 'agentx');
		expect(held).toEqual([expect.stringMatching(/^.*missing-touched\.db: freed pages not yet overwritten/)]);
		expect(warnings).toEqual([]);
		expect(bytesHold(dirty, SECRET)).toBe(false);
		expect(fs.readFileSync(clean).equals(cleanBefore)).toBe(true);
	});
});
