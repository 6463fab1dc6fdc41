import '../support/sqliteUri.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {jsonFieldIn, removeLines} from '../../src/adapters/common/lines.js';
import {joinNames, removeInsideRoots} from '../../src/adapters/common/paths.js';
import {fileItem, makePlan, removePaths} from '../../src/adapters/common/plan.js';
import {scanResidual} from '../../src/adapters/common/residual.js';
import {deleteRows} from '../../src/adapters/common/sqlitePurge.js';
import {keepingReadConnections, withReadOnlyDb} from '../../src/system/sqliteRead.js';

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
	base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-common-')));
	root = path.join(base, 'root');
	outside = path.join(base, 'outside');
	fs.mkdirSync(root);
	fs.mkdirSync(path.join(outside, 'victim'), {recursive: true});
	fs.writeFileSync(path.join(outside, 'victim', 'keep.txt'), 'precious');
});
afterEach(() => fs.rmSync(base, {recursive: true, force: true}));

describe('deleting inside an agent root', () => {
	it('refuses a path whose parent folder is a symlink leading out of the root', () => {
		fs.symlinkSync(outside, path.join(root, 'linked'));
		const target = path.join(root, 'linked', 'victim');
		expect(removeInsideRoots(target, [root])).toMatch(/refused, not inside/);
		expect(fs.existsSync(path.join(outside, 'victim', 'keep.txt'))).toBe(true);
	});

	it('unlinks a symlink itself, never what it points to, also inside a folder it removes', () => {
		const dir = path.join(root, 'session');
		fs.mkdirSync(dir);
		fs.symlinkSync(path.join(outside, 'victim'), path.join(dir, 'escape'));
		fs.symlinkSync(path.join(outside, 'victim'), path.join(root, 'top-link'));
		expect(removeInsideRoots(dir, [root])).toBeUndefined();
		expect(removeInsideRoots(path.join(root, 'top-link'), [root])).toBeUndefined();
		expect(fs.readdirSync(root)).toEqual([]);
		expect(fs.readFileSync(path.join(outside, 'victim', 'keep.txt'), 'utf8')).toBe('precious');
	});

	it('refuses the root itself', () => {
		expect(removeInsideRoots(root, [root])).toMatch(/refused/);
		expect(fs.existsSync(root)).toBe(true);
	});

	it('a plan built with roots leaves out items that resolve elsewhere; removal refuses them anyway', () => {
		fs.symlinkSync(outside, path.join(root, 'linked'));
		const item = fileItem(path.join(root, 'linked', 'victim', 'keep.txt'), 'id', 'x');
		expect(makePlan('claude', 'id', [], [item], [root]).items).toEqual([]);
		const {removed, warnings} = removePaths(item ? [item] : [], [root]);
		expect(removed).toEqual([]);
		expect(warnings).toHaveLength(1);
		expect(fs.existsSync(path.join(outside, 'victim', 'keep.txt'))).toBe(true);
	});

	it('builds paths only from plain names', () => {
		for (const bad of ['..', '.', '', 'a/b', 'x\0y', 'a\\b']) expect(() => joinNames(root, bad)).toThrow(/refusing/);
		expect(joinNames(root, 'tasks', 'abc')).toBe(path.join(root, 'tasks', 'abc'));
	});
});

describe('removing lines of a shared file', () => {
	it('replaces the file by rename, keeps every other line byte for byte, keeps the mode', () => {
		const file = path.join(root, 'history.jsonl');
		const lines = ['{"sessionId":"a","x":1}\n', '{"sessionId":"b",  "x":2}\r\n', 'not json\n', '{"sessionId":"a"}\n', '{"sessionId":"c"}'];
		fs.writeFileSync(file, lines.join(''), {mode: 0o600});
		const inode = fs.statSync(file).ino;
		expect(removeLines(file, jsonFieldIn('sessionId', ['a']), [root])).toBe(2);
		expect(fs.readFileSync(file, 'utf8')).toBe([lines[1], lines[2], lines[4]].join(''));
		expect(fs.statSync(file).ino).not.toBe(inode);
		expect(fs.statSync(file).mode & 0o777).toBe(0o600);
		expect(fs.readdirSync(root)).toEqual(['history.jsonl']);
	});

	it('a line that only mentions the id in its text is not the session’s line', () => {
		const file = path.join(root, 'history.jsonl');
		fs.writeFileSync(file, '{"sessionId":"b","display":"see a"}\n');
		expect(removeLines(file, jsonFieldIn('sessionId', ['a']), [root])).toBe(0);
	});
});

describe('residual scan', () => {
	it('names entries, lines and rows, labelling descendants', () => {
		fs.mkdirSync(path.join(root, 'sessions', 'parent-id', 'sub'), {recursive: true});
		fs.writeFileSync(path.join(root, 'sessions', 'parent-id', 'sub', 'child-id.jsonl'), '');
		fs.writeFileSync(path.join(root, 'index.jsonl'), '{"id":"parent-id"}\n{"id":"child-id"}\n{"id":"other"}\n');
		const db = path.join(root, 'state.sqlite');
		const handle = new Database(db);
		handle.exec("CREATE TABLE t (id TEXT, body TEXT); INSERT INTO t VALUES ('x', 'about parent-id'), ('y', 'child-id'), ('z', 'nothing')");
		handle.close();
		const lines = scanResidual({id: 'parent-id', descendants: ['child-id'], roots: [root], indexFiles: [path.join(root, 'index.jsonl')], databases: [db]});
		expect(lines.sort()).toEqual(
			[
				`${root}/sessions/parent-id/`,
				`${root}/sessions/parent-id/sub/child-id.jsonl [child session child-id]`,
				`${root}/index.jsonl: 1 line`,
				`${root}/index.jsonl: 1 line [child session child-id]`,
				`${db} table t: 1 row`,
				`${db} table t: 1 row [child session child-id]`,
			].sort(),
		);
	});

	it('an unreadable database is named as unchecked, not skipped', () => {
		const db = path.join(root, 'broken.sqlite');
		fs.writeFileSync(db, 'garbage'.repeat(100));
		expect(scanResidual({id: 'a', descendants: [], roots: [], indexFiles: [], databases: [db]})).toEqual([
			expect.stringMatching(/broken\.sqlite: not a sqlite database .*could not check/),
		]);
	});
});

describe('deleting rows', () => {
	it('deletes children explicitly in one transaction, even without foreign keys in the schema', () => {
		const db = path.join(root, 'x.db');
		const handle = new Database(db);
		handle.exec(
			"CREATE TABLE s (id TEXT PRIMARY KEY); CREATE TABLE m (session_id TEXT); INSERT INTO s VALUES ('a'), ('b'); INSERT INTO m VALUES ('a'), ('a'), ('b');",
		);
		handle.close();
		const counts = deleteRows(db, [
			{table: 'm', column: 'session_id', ids: ['a']},
			{table: 's', column: 'id', ids: ['a']},
		]);
		expect([...counts]).toEqual([
			['m', 2],
			['s', 1],
		]);
		const check = new Database(db, {readonly: true});
		expect(check.prepare('SELECT session_id FROM m').all()).toEqual([{session_id: 'b'}]);
		check.close();
	});

	it('rolls everything back when one step fails', () => {
		const db = path.join(root, 'y.db');
		const handle = new Database(db);
		handle.exec("CREATE TABLE s (id TEXT PRIMARY KEY); INSERT INTO s VALUES ('a');");
		handle.close();
		expect(() =>
			deleteRows(db, [
				{table: 's', column: 'id', ids: ['a']},
				{table: 'missing', column: 'id', ids: ['a']},
			]),
		).toThrow(/no such table/);
		const check = new Database(db, {readonly: true});
		expect(check.prepare('SELECT id FROM s').all()).toEqual([{id: 'a'}]);
		check.close();
	});
});

describe('read-only connections kept for one refresh', () => {
	function walDatabase(dir: string): string {
		const file = path.join(dir, 'store.db');
		const db = new Database(file);
		db.pragma('journal_mode = WAL');
		db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1), (2)');
		db.close();
		return file;
	}

	const tempCopies = () => new Set(fs.readdirSync(os.tmpdir()).filter(n => n.startsWith('mam-ro-')));

	it('one handle serves every read of a store inside the refresh, and is closed when it ends', async () => {
		const file = walDatabase(base);
		const handles: unknown[] = [];
		await keepingReadConnections(async reads => {
			withReadOnlyDb(file, reads, db => handles.push(db));
			await new Promise(resolve => setImmediate(resolve));
			expect(withReadOnlyDb(file, reads, db => (handles.push(db), db.prepare('SELECT count(*) AS n FROM t').get()))).toEqual({n: 2});
		});
		expect(handles[0]).toBe(handles[1]);
		expect((handles[0] as {open: boolean}).open).toBe(false);
		// Outside a refresh: a handle per call, closed when the call returns.
		const alone = withReadOnlyDb(file, db => db);
		expect(alone).not.toBe(handles[0]);
		expect(alone.open).toBe(false);
	});

	it('keeps only the last few stores open (a store per conversation would hold hundreds), never one in use', async () => {
		const files = Array.from({length: 20}, (_, i) => {
			const dir = path.join(base, `s${i}`);
			fs.mkdirSync(dir);
			return walDatabase(dir);
		});
		const handles: {open: boolean}[] = [];
		await keepingReadConnections(async reads => {
			// The first store stays in use while the others are read (opencode holds one open per database).
			withReadOnlyDb(files[0] ?? '', reads, outer => {
				handles.push(outer);
				for (const file of files.slice(1)) withReadOnlyDb(file, reads, db => handles.push(db));
				expect(outer.open).toBe(true);
			});
			const open = handles.filter(h => h.open).length;
			expect(open).toBeGreaterThan(1);
			expect(open).toBeLessThanOrEqual(9);
			// The most recent ones are the ones kept.
			expect(handles.slice(-5).every(h => h.open)).toBe(true);
		});
		expect(handles.every(h => !h.open)).toBe(true);
	});

	it('a private copy (a -wal nobody holds) lives until the refresh ends, then is removed; the store gets no sidecar', async () => {
		const made = walDatabase(root);
		// A -wal without its -shm: what a crashed writer leaves; only a private copy reads it trace-free.
		const stale = path.join(base, 'stale');
		fs.mkdirSync(stale);
		const file = path.join(stale, 'store.db');
		fs.copyFileSync(made, file);
		fs.writeFileSync(`${file}-wal`, '');
		const before = tempCopies();
		let during: string[] = [];
		await keepingReadConnections(async reads => {
			withReadOnlyDb(file, reads, db => db.prepare('SELECT count(*) FROM t').get());
			withReadOnlyDb(file, reads, db => db.prepare('SELECT count(*) FROM t').get());
			during = [...tempCopies()].filter(n => !before.has(n));
		});
		expect(during).toHaveLength(1);
		expect(tempCopies().has(during[0] ?? '')).toBe(false);
		expect(fs.readdirSync(stale).sort()).toEqual(['store.db', 'store.db-wal']);
	});
});
