import '../support/sqliteUri.js';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {dirItem, fileItem, makePlan, removePaths} from '../../src/adapters/common/plan.js';
import {scanResidual} from '../../src/adapters/common/residual.js';
import {fsyncDir, writeReplacing, writeSynced, type Rewritten} from '../../src/adapters/common/rewrite.js';
import type {PlanItem} from '../../src/adapters/types.js';
import {tempDir} from '../helpers/tmp.js';

// The shared steps every adapter's plan and purge are made of: what a plan holds, what a purge
// deletes (and in which order), and how a shared file is rewritten without losing a change.

const disposers: (() => void)[] = [];
afterEach(() => {
	for (const dispose of disposers.splice(0)) dispose();
});

function scratch(): string {
	const t = tempDir('mam-purge-helpers-');
	disposers.push(t.dispose);
	return t.dir;
}

function write(file: string, text: string): string {
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, text);
	return file;
}

describe('plan items', () => {
	it('a file item is the file itself, with its size; none for a folder or nothing', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'a.jsonl'), 'twelve bytes');
		expect(fileItem(file, 's1', 'transcript')).toEqual({kind: 'file', path: file, bytes: 12, sessionId: 's1', description: 'transcript'});
		expect(fileItem(dir, 's1', 'transcript')).toBeUndefined();
		expect(fileItem(path.join(dir, 'gone'), 's1', 'transcript')).toBeUndefined();
	});

	it('a symlink is planned as the link, not what it points to', () => {
		const dir = scratch();
		const target = write(path.join(dir, 'elsewhere', 'big'), 'x'.repeat(1000));
		const link = path.join(dir, 'link');
		fs.symlinkSync(target, link);
		expect(fileItem(link, 's1', 't')?.bytes).toBe(fs.lstatSync(link).size);
		const folderLink = path.join(dir, 'folder-link');
		fs.symlinkSync(path.dirname(target), folderLink);
		expect(dirItem(folderLink, 's1', 'sub-agents')).toEqual({
			kind: 'file',
			path: folderLink,
			bytes: fs.lstatSync(folderLink).size,
			sessionId: 's1',
			description: 'sub-agents (link)',
		});
	});

	it('a folder item counts what is not planned on its own, and never below zero', () => {
		const dir = scratch();
		const folder = path.join(dir, 'sess');
		write(path.join(folder, 'one'), 'x'.repeat(5000));
		const whole = dirItem(folder, 's1', 'session folder');
		expect(whole).toMatchObject({kind: 'dir', path: folder, sessionId: 's1', description: 'session folder'});
		const bytes = whole?.bytes ?? 0;
		expect(bytes).toBeGreaterThan(0);
		expect(dirItem(folder, 's1', 'session folder', 100)?.bytes).toBe(bytes - 100);
		expect(dirItem(folder, 's1', 'session folder', bytes + 1)?.bytes).toBe(0);
		expect(dirItem(path.join(dir, 'none'), 's1', 'x')).toBeUndefined();
	});
});

describe('makePlan', () => {
	it('drops absent items, sums the bytes, and keeps the id and descendants', () => {
		const items: PlanItem[] = [
			{kind: 'file', path: '/r/a', bytes: 3, sessionId: 'p', description: 'a'},
			{kind: 'rows', path: '/r/db', table: 'messages', count: 2, bytes: 4, sessionId: 'p', description: 'rows'},
		];
		expect(makePlan('claude', 'p', ['c'], [items[0], undefined, items[1]])).toEqual({agent: 'claude', id: 'p', descendants: ['c'], items, totalBytes: 7});
	});

	it('with roots, leaves out a file or folder that does not lie inside one, but keeps rows, lines and keys', () => {
		const dir = scratch();
		const root = path.join(dir, 'root');
		const inside = write(path.join(root, 'in'), 'a');
		const outside = write(path.join(dir, 'out'), 'b');
		fs.mkdirSync(path.join(dir, 'outdir'));
		const items: PlanItem[] = [
			{kind: 'file', path: inside, bytes: 1, sessionId: 'p', description: 'in'},
			{kind: 'file', path: outside, bytes: 1, sessionId: 'p', description: 'out'},
			{kind: 'dir', path: path.join(dir, 'outdir'), bytes: 1, sessionId: 'p', description: 'outdir'},
			{kind: 'lines', path: outside, count: 1, bytes: 9, sessionId: 'p', description: 'lines'},
			{kind: 'key', path: outside, count: 1, bytes: 0, sessionId: 'p', description: 'key'},
		];
		const plan = makePlan('claude', 'p', [], items, [root]);
		expect(plan.items.map(i => i.description)).toEqual(['in', 'lines', 'key']);
		expect(plan.totalBytes).toBe(10);
		// Without roots nothing is left out.
		expect(makePlan('claude', 'p', [], items).items).toHaveLength(5);
	});
});

describe('removePaths', () => {
	it('deletes files first, then folders deepest first, and only inside the roots', () => {
		const dir = scratch();
		const root = path.join(dir, 'root');
		const deep = path.join(root, 'a', 'b');
		const file = write(path.join(deep, 'f'), 'x');
		const outside = write(path.join(dir, 'keep'), 'y');
		const item = (kind: PlanItem['kind'], p: string): PlanItem => ({kind, path: p, bytes: 0, sessionId: 's', description: p});
		// Folders listed shallow first, the file last: the order comes from removePaths.
		const {removed, warnings} = removePaths(
			[item('dir', path.join(root, 'a')), item('dir', deep), item('rows', outside), item('file', file), item('file', outside)],
			[root],
		);
		expect(removed.map(i => i.path)).toEqual([file, deep, path.join(root, 'a')]);
		expect(warnings).toEqual([`${outside}: refused, not inside the agent's folder`]);
		expect(fs.existsSync(path.join(root, 'a'))).toBe(false);
		expect(fs.readFileSync(outside, 'utf8')).toBe('y');
	});

	it('a short file goes before a long folder: kind first, depth second', () => {
		const dir = scratch();
		const root = path.join(dir, 'root');
		const file = write(path.join(root, 'f'), '1');
		const folder = path.join(root, 'a', 'very', 'deep', 'folder');
		fs.mkdirSync(folder, {recursive: true});
		const item = (kind: PlanItem['kind'], p: string): PlanItem => ({kind, path: p, bytes: 0, sessionId: 's', description: p});
		expect(removePaths([item('dir', folder), item('file', file)], [root]).removed.map(i => i.path)).toEqual([file, folder]);
	});

	it('orders by depth among files as among folders', () => {
		const dir = scratch();
		const root = path.join(dir, 'root');
		const shallow = write(path.join(root, 'x'), '1');
		const deeper = write(path.join(root, 'sub', 'x'), '2');
		const item = (p: string): PlanItem => ({kind: 'file', path: p, bytes: 0, sessionId: 's', description: p});
		expect(removePaths([item(shallow), item(deeper)], [root]).removed.map(i => i.path)).toEqual([deeper, shallow]);
	});
});

describe('writeSynced and fsyncDir', () => {
	it('writes text and bytes whole to a new file of the given mode, and refuses one that exists', () => {
		const dir = scratch();
		const text = path.join(dir, 'a.json');
		writeSynced(text, 'é'.repeat(100_000), 0o600);
		expect(fs.readFileSync(text, 'utf8')).toBe('é'.repeat(100_000));
		expect(fs.statSync(text).mode & 0o777).toBe(0o600);
		const bytes = path.join(dir, 'b.bin');
		writeSynced(bytes, Uint8Array.from([0, 255, 7]), 0o644);
		expect([...fs.readFileSync(bytes)]).toEqual([0, 255, 7]);
		expect(() => writeSynced(text, 'again', 0o600)).toThrow(/EEXIST/);
		expect(fs.readFileSync(text, 'utf8')).toBe('é'.repeat(100_000));
	});

	it('fsyncDir of a folder that cannot be opened does nothing and does not throw', () => {
		expect(() => fsyncDir(path.join(scratch(), 'missing'))).not.toThrow();
		expect(() => fsyncDir(scratch())).not.toThrow();
	});
});

describe('writeReplacing', () => {
	const drop =
		(word: string) =>
		(text: string): Rewritten | undefined =>
			text.includes(word) ? {text: text.split(word).join(''), removed: text.split(word).length - 1} : undefined;
	const tempOf = (file: string) => `${file}.tmp`;

	it('replaces the file by a new one (a rename), keeping its mode, and says how many went', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'history.jsonl'), 'a X b X c');
		fs.chmodSync(file, 0o640);
		const inode = fs.statSync(file).ino;
		expect(writeReplacing(file, drop('X'), tempOf)).toBe(2);
		expect(fs.readFileSync(file, 'utf8')).toBe('a  b  c');
		expect(fs.statSync(file).mode & 0o7777).toBe(0o640);
		expect(fs.statSync(file).ino).not.toBe(inode);
		expect(fs.existsSync(tempOf(file))).toBe(false);
	});

	it('leaves the file as it is when nothing is to change, and a missing file is nothing', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'nothing here');
		const inode = fs.statSync(file).ino;
		expect(writeReplacing(file, drop('X'), tempOf)).toBe(0);
		expect(fs.statSync(file).ino).toBe(inode);
		expect(writeReplacing(path.join(dir, 'missing'), drop('X'), tempOf)).toBe(0);
		expect(fs.readdirSync(dir)).toEqual(['f']);
	});

	it('refuses a symlink or a folder, and changes nothing behind it', () => {
		const dir = scratch();
		const target = write(path.join(dir, 'target'), 'X');
		const link = path.join(dir, 'link');
		fs.symlinkSync(target, link);
		expect(() => writeReplacing(link, drop('X'), tempOf)).toThrow(`${link}: not a regular file`);
		expect(() => writeReplacing(dir, drop('X'), tempOf)).toThrow('not a regular file');
		expect(fs.readFileSync(target, 'utf8')).toBe('X');
		expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
	});

	it('starts over when the agent writes meanwhile, so its line is not lost', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'X old\n');
		let calls = 0;
		const removed = writeReplacing(
			file,
			text => {
				calls += 1;
				// The agent appends while the first rewrite is being made.
				if (calls === 1) fs.appendFileSync(file, 'new line\n');
				return drop('X')(text);
			},
			tempOf,
		);
		expect(calls).toBe(2);
		expect(removed).toBe(1);
		expect(fs.readFileSync(file, 'utf8')).toBe(' old\nnew line\n');
		expect(fs.existsSync(tempOf(file))).toBe(false);
	});

	it('starts over on a change that keeps the size (only the mtime moved)', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'X aaaa\n');
		let calls = 0;
		const removed = writeReplacing(
			file,
			text => {
				calls += 1;
				if (calls === 1) {
					fs.writeFileSync(file, 'X bbbb\n');
					fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
				}
				return drop('X')(text);
			},
			tempOf,
		);
		expect(calls).toBe(2);
		expect(removed).toBe(1);
		expect(fs.readFileSync(file, 'utf8')).toBe(' bbbb\n');
	});

	it('starts over on a change that keeps the mtime (only the size moved)', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'X a\n');
		// Whole seconds, so setting the same time again gives the very same mtime.
		const tick = new Date(1_700_000_000_000);
		fs.utimesSync(file, tick, tick);
		let calls = 0;
		writeReplacing(
			file,
			text => {
				calls += 1;
				if (calls === 1) {
					// An append in the same clock tick: the mtime reads as before.
					fs.appendFileSync(file, 'b\n');
					fs.utimesSync(file, tick, tick);
				}
				return drop('X')(text);
			},
			tempOf,
		);
		expect(calls).toBe(2);
		expect(fs.readFileSync(file, 'utf8')).toBe(' a\nb\n');
	});

	it('leaves no file descriptor open, after a rewrite or a refusal', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'X\n');
		const open = () => fs.readdirSync('/proc/self/fd').length;
		const before = open();
		writeReplacing(file, drop('X'), tempOf);
		writeReplacing(file, drop('X'), tempOf);
		expect(() => writeReplacing(dir, drop('X'), tempOf)).toThrow();
		expect(open()).toBe(before);
	});

	it('gives up after five tries on a file that never stops changing, keeping every write', () => {
		const dir = scratch();
		const file = write(path.join(dir, 'f'), 'X\n');
		let calls = 0;
		const busy = (text: string) => {
			calls += 1;
			fs.appendFileSync(file, `${calls}\n`);
			return drop('X')(text);
		};
		expect(() => writeReplacing(file, busy, tempOf)).toThrow(`${file}: kept changing while it was rewritten; try again`);
		expect(calls).toBe(5);
		expect(fs.readFileSync(file, 'utf8')).toBe('X\n1\n2\n3\n4\n5\n');
		expect(fs.existsSync(tempOf(file))).toBe(false);
	});
});

describe('scanResidual', () => {
	const ID = 'ses-parent-1';
	const CHILD = 'ses-child-2';

	it('names the entries, lines and rows left, labels a descendant, and skips what it is told to', () => {
		const dir = scratch();
		const root = path.join(dir, 'root');
		write(path.join(root, `${ID}.jsonl`), 'x');
		write(path.join(root, ID, 'inner.txt'), 'x');
		write(path.join(root, `sub-${CHILD}.jsonl`), 'x');
		write(path.join(root, `${ID}.db-wal`), 'x');
		write(path.join(root, 'unrelated.txt'), ID);
		const index = write(path.join(dir, 'history.jsonl'), `{"s":"${ID}"}\n{"s":"${ID}"}\n{"s":"${CHILD}","parent":"${ID}"}\nother\n`);
		const single = write(path.join(dir, 'one.jsonl'), `${ID}\n`);
		const found = scanResidual({id: ID, descendants: [CHILD], roots: [root], indexFiles: [index, single], databases: [], skip: abs => abs.endsWith('-wal')});
		expect(found.sort()).toEqual(
			[
				path.join(root, `${ID}.jsonl`),
				`${path.join(root, ID)}/`,
				`${path.join(root, `sub-${CHILD}.jsonl`)} [child session ${CHILD}]`,
				`${index}: 2 lines`,
				`${index}: 1 line [child session ${CHILD}]`,
				`${single}: 1 line`,
			].sort(),
		);
	});

	it('reads the text columns of every table, quoting odd names, and counts rows per owner', () => {
		const dir = scratch();
		const file = path.join(dir, 'store.db');
		const db = new Database(file);
		db.exec(`CREATE TABLE "we""ird" ("na""me" TEXT, n INTEGER, blob BLOB, v VARCHAR(20), w VARCHAR (10));
			CREATE TABLE numbers (x INTEGER);`);
		const insert = db.prepare('INSERT INTO "we""ird" VALUES (?, ?, ?, ?, ?)');
		insert.run(ID, 1, null, null, null);
		insert.run('x', 2, null, `${CHILD} of ${ID}`, null);
		insert.run('y', 3, Buffer.from(ID), null, null);
		insert.run('z', 4, null, null, null);
		// Two columns read apart: the end of one and the start of the next do not make a child's id.
		insert.run(`${ID} ses-child`, 5, null, '-2', null);
		insert.run('w', 6, null, null, `${ID}`);
		db.prepare('INSERT INTO numbers VALUES (?)').run(7);
		db.close();
		expect(scanResidual({id: ID, descendants: [CHILD], roots: [], indexFiles: [], databases: [file]}).sort()).toEqual(
			[`${file} table we"ird: 3 rows`, `${file} table we"ird: 1 row [child session ${CHILD}]`].sort(),
		);
	});

	it('counts several rows in one line, and says when a database could not be read', () => {
		const dir = scratch();
		const file = path.join(dir, 'store.db');
		const db = new Database(file);
		db.exec('CREATE TABLE t (a TEXT)');
		for (let i = 0; i < 3; i++) db.prepare('INSERT INTO t VALUES (?)').run(`${ID}-${i}`);
		db.close();
		const broken = write(path.join(dir, 'broken.db'), 'not a database at all, just text that is long enough');
		expect(scanResidual({id: ID, descendants: [], roots: [], indexFiles: [], databases: [file, broken]})).toEqual([
			`${file} table t: 3 rows`,
			`${broken}: not a sqlite database (corrupt?) (could not check for leftover rows)`,
		]);
	});

	it('lists a place once, however it was reached', () => {
		const dir = scratch();
		const root = write(path.join(dir, 'r', `${ID}.json`), 'x');
		expect(scanResidual({id: ID, descendants: [], roots: [path.dirname(root), path.dirname(root)], indexFiles: [], databases: []})).toEqual([root]);
	});
});
