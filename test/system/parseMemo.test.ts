import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {createRefresh, ParseCache, parseKind, persistedParseKind, type ParseKind} from '../../src/adapters/common/refresh.js';
import {decodeValue, encodeValue} from '../../src/system/memoValue.js';
import {forgetInMemo, ParseMemo, parseMemoPath, type MemoLog} from '../../src/system/parseMemo.js';
import {openDatabase} from '../../src/system/sqlite.js';
import {tempDir} from '../helpers/tmp.js';

/**
 * The parse memo (issue 27 item 7): what a refresh parsed, kept under $MAM_HOME across starts,
 * against real files and a real sqlite file.
 */

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

interface Summary {
	readonly file: string;
	readonly lines: number;
	readonly title: string | undefined;
	readonly words: readonly string[];
}

const SUMMARY = persistedParseKind<Summary>('test-summary', 1);

function world() {
	const t = tempDir('mam-memo-');
	cleanups.push(t.dispose);
	const state = path.join(t.dir, 'state');
	const data = path.join(t.dir, 'data');
	fs.mkdirSync(data, {recursive: true});
	const warnings: string[] = [];
	const log: MemoLog = {warn: m => warnings.push(m)};
	let calls = 0;
	const summarize = (file: string): Summary => {
		calls += 1;
		const text = fs.readFileSync(file, 'utf8');
		const lines = text.split('\n').filter(Boolean);
		return {file, lines: lines.length, title: lines[0]?.startsWith('#') ? lines[0].slice(1) : undefined, words: text.split(/\s+/).filter(Boolean)};
	};
	/** A new process: a fresh ParseCache on the memo file the last one left. */
	const start = (appVersion = '1.0.0') => {
		const memo = new ParseMemo(parseMemoPath(state), {appVersion, log, flushDelayMs: 60_000});
		const parses = new ParseCache(memo);
		cleanups.push(() => parses.close());
		const refresh = () => createRefresh({parses});
		const read = (file: string, kind: ParseKind<Summary> = SUMMARY, also = '') => refresh().parse(kind, file, also, () => summarize(file));
		return {memo, parses, read};
	};
	const write = (name: string, text: string) => {
		const file = path.join(data, name);
		fs.writeFileSync(file, text);
		return file;
	};
	return {state, data, warnings, start, write, calls: () => calls};
}

/** Every byte of the memo's files (db, WAL, shm). */
function memoBytes(state: string): Buffer {
	const file = parseMemoPath(state);
	return Buffer.concat([file, `${file}-wal`, `${file}-shm`].filter(f => fs.existsSync(f)).map(f => fs.readFileSync(f)));
}

describe('a restarted ParseCache', () => {
	it('returns equal values from the memo without parsing', () => {
		const w = world();
		const files = ['a', 'b', 'c'].map(n => w.write(`${n}.txt`, `#title ${n}\nsome words of ${n}\n`));
		const first = w.start();
		const parsed = files.map(f => first.read(f));
		expect(w.calls()).toBe(3);
		first.parses.close();

		const second = w.start();
		const again = files.map(f => second.read(f));
		expect(w.calls()).toBe(3);
		expect(second.memo.hits).toBe(3);
		expect(again).toStrictEqual(parsed);
		// Asked again in the same process: the in-memory answer, still no parse.
		expect(second.read(files[0] ?? '')).toStrictEqual(parsed[0]);
		expect(w.calls()).toBe(3);
	});

	it('parses again a file whose size, mtime, ctime or inode moved, or whose `also` did', () => {
		const w = world();
		const names = ['size', 'mtime', 'ctime', 'ino', 'also', 'same'];
		const files = Object.fromEntries(names.map(n => [n, w.write(`${n}.txt`, `#${n}\nbody\n`)]));
		const first = w.start();
		for (const n of names) first.read(files[n] ?? '');
		first.parses.close();
		const before = w.calls();

		const at = (f: string) => fs.statSync(f);
		fs.appendFileSync(files['size'] ?? '', 'more\n');
		const m = at(files['mtime'] ?? '');
		fs.utimesSync(files['mtime'] ?? '', m.atime, new Date(m.mtimeMs + 5000));
		// chmod moves ctime alone: same size, same mtime, same inode.
		const c = at(files['ctime'] ?? '');
		fs.chmodSync(files['ctime'] ?? '', 0o600);
		expect(at(files['ctime'] ?? '').mtimeMs).toBe(c.mtimeMs);
		// Same bytes and mtime under a new inode (an atomic rewrite).
		const ino = files['ino'] ?? '';
		const old = at(ino);
		fs.copyFileSync(ino, `${ino}.new`);
		fs.utimesSync(`${ino}.new`, old.atime, old.mtime);
		fs.renameSync(`${ino}.new`, ino);
		expect(at(ino).ino).not.toBe(old.ino);
		expect(at(ino).size).toBe(old.size);

		const second = w.start();
		for (const n of names) second.read(files[n] ?? '', SUMMARY, n === 'also' ? 'other' : '');
		// Five re-parsed, `same` loaded.
		expect(w.calls() - before).toBe(5);
		expect(second.memo.hits).toBe(6);
	});

	it('keeps nothing for `keep` false, in-memory kinds, other kind versions, or values that are not plain data', () => {
		const w = world();
		const file = w.write('x.txt', '#x\n');
		const first = w.start();
		const refresh = createRefresh({parses: first.parses});
		let calls = 0;
		const transient = refresh.parse(
			persistedParseKind<string>('test-locked', 1),
			file,
			'',
			() => (calls++, 'locked'),
			() => false,
		);
		refresh.parse(parseKind<string>('test-memory'), file, '', () => (calls++, 'memory'));
		refresh.parse(persistedParseKind<Map<string, number>>('test-map', 1), file, '', () => (calls++, new Map([['a', 1]])));
		first.read(file);
		expect(transient).toBe('locked');
		first.parses.close();
		const rows = openDatabase(parseMemoPath(w.state), {readonly: true});
		cleanups.push(() => rows.close());
		expect(rows.prepare('SELECT kind FROM memo ORDER BY kind').all()).toEqual([{kind: 'test-summary'}]);

		const second = w.start();
		const again = createRefresh({parses: second.parses});
		again.parse(
			persistedParseKind<string>('test-locked', 1),
			file,
			'',
			() => (calls++, 'locked'),
			() => false,
		);
		again.parse(parseKind<string>('test-memory'), file, '', () => (calls++, 'memory'));
		again.parse(persistedParseKind<Map<string, number>>('test-map', 1), file, '', () => (calls++, new Map([['a', 1]])));
		expect(calls).toBe(6);
		// A new shape version of the parse: the old rows answer nothing.
		const before = w.calls();
		second.read(file, persistedParseKind<Summary>('test-summary', 2));
		expect(w.calls()).toBe(before + 1);
	});

	it('a parse that is transient on every refresh stages no write', () => {
		const w = world();
		const file = w.write('x.txt', '#x\n');
		const {memo, parses} = w.start();
		const locked = persistedParseKind<string>('test-locked', 1);
		for (let i = 0; i < 3; i++)
			createRefresh({parses}).parse(
				locked,
				file,
				'',
				() => 'locked',
				() => false,
			);
		expect(memo.pending).toBe(0);
	});

	it('drops the whole file written by another app version', () => {
		const w = world();
		const file = w.write('x.txt', '#x\n');
		const first = w.start('1.0.0');
		first.read(file);
		first.parses.close();
		const second = w.start('1.0.1');
		second.read(file);
		expect(w.calls()).toBe(2);
		expect(w.warnings.join('\n')).toMatch(/another version or not a parse memo: rebuilt/);
	});

	it('does not write a parse whose file moved or went before the batch (a purge racing it)', () => {
		const w = world();
		const kept = w.write('kept.txt', '#kept\n');
		const gone = w.write('gone.txt', '#gone\n');
		const moved = w.write('moved.txt', '#moved\n');
		const first = w.start();
		for (const f of [kept, gone, moved]) first.read(f);
		fs.rmSync(gone);
		fs.appendFileSync(moved, 'rewritten\n');
		first.parses.close();
		const rows = openDatabase(parseMemoPath(w.state), {readonly: true});
		cleanups.push(() => rows.close());
		expect(rows.prepare('SELECT file FROM memo').all()).toEqual([{file: kept}]);
	});

	it('prunes rows of files that are gone, once nothing asked about them', () => {
		const w = world();
		const a = w.write('a.txt', '#a\n');
		const b = w.write('b.txt', '#b\n');
		const first = w.start();
		first.read(a);
		first.read(b);
		first.parses.close();
		fs.rmSync(b);
		const second = w.start();
		second.read(a);
		second.parses.close();
		const rows = openDatabase(parseMemoPath(w.state), {readonly: true});
		cleanups.push(() => rows.close());
		expect(rows.prepare('SELECT file FROM memo').all()).toEqual([{file: a}]);
	});

	it('a process that asked about few rows (a status run) leaves the pruning to one that read them all', () => {
		const w = world();
		const files = ['a', 'b', 'c'].map(n => w.write(`${n}.txt`, `#${n}\n`));
		const [a, b, c] = files as [string, string, string];
		const first = w.start();
		for (const f of files) first.read(f);
		first.parses.close();
		fs.rmSync(c);
		const rowsNow = () => {
			const db = openDatabase(parseMemoPath(w.state), {readonly: true});
			try {
				return db
					.prepare<[], {file: string}>('SELECT file FROM memo ORDER BY file')
					.all()
					.map(r => r.file);
			} finally {
				db.close();
			}
		};
		const few = w.start();
		few.read(a);
		few.parses.close();
		expect(rowsNow()).toEqual([a, b, c]);
		const all = w.start();
		all.read(a);
		all.read(b);
		all.parses.close();
		expect(rowsNow()).toEqual([a, b]);
	});
});

describe('a memo that cannot be trusted or written', () => {
	it('a corrupt file is rebuilt: the run parses, says so, and the next start loads again', () => {
		const w = world();
		const file = w.write('x.txt', '#x\n');
		fs.mkdirSync(w.state, {recursive: true});
		fs.writeFileSync(parseMemoPath(w.state), 'not a database at all, just bytes'.repeat(200));
		const first = w.start();
		expect(first.read(file).title).toBe('x');
		first.parses.close();
		expect(w.warnings.join('\n')).toMatch(/unreadable: rebuilt|not a parse memo: rebuilt/);
		const second = w.start();
		second.read(file);
		expect(w.calls()).toBe(1);
	});

	it('a damaged page found while reading rebuilds it rather than failing the parse', () => {
		const w = world();
		const files = Array.from({length: 400}, (_, i) => w.write(`f${i}.txt`, `#t${i}\n${'word '.repeat(200)}\n`));
		const first = w.start();
		for (const f of files) first.read(f);
		first.parses.close();
		// Scribble over the table's pages, keeping the header: sqlite opens it and fails on read.
		const memoFile = parseMemoPath(w.state);
		const bytes = fs.readFileSync(memoFile);
		bytes.fill(0xa5, 4096 * 2, bytes.length - 4096);
		fs.writeFileSync(memoFile, bytes);
		const second = w.start();
		expect(files.map(f => second.read(f).title)).toEqual(files.map((_, i) => `t${i}`));
		second.parses.close();
		expect(w.warnings.join('\n')).toMatch(/rebuilt/);
		const third = w.start();
		for (const f of files) third.read(f);
		expect(third.memo.hits).toBe(files.length);
	});

	it('a memo another mam-tui holds locked: the batch is skipped, nothing throws, the next one is written', () => {
		const w = world();
		const a = w.write('a.txt', '#a\n');
		const b = w.write('b.txt', '#b\n');
		const first = w.start();
		first.read(a);
		first.parses.persist();
		const other = openDatabase(parseMemoPath(w.state));
		cleanups.push(() => other.close());
		other.exec('BEGIN IMMEDIATE');
		first.read(b);
		expect(() => first.parses.persist()).not.toThrow();
		expect(w.warnings.join('\n')).toMatch(/busy/);
		other.exec('COMMIT');
		const c = w.write('c.txt', '#c\n');
		first.read(c);
		first.parses.close();
		const second = w.start();
		for (const f of [a, b, c]) second.read(f);
		// a and c were kept; b's batch was skipped.
		expect(second.memo.hits).toBe(2);
	});

	it('a state folder that cannot be written: parses work without a memo', () => {
		const w = world();
		const file = w.write('x.txt', '#x\n');
		// The state "folder" is a file: nothing can be made under it.
		fs.writeFileSync(w.state, 'a file');
		const first = w.start();
		expect(first.read(file).title).toBe('x');
		expect(() => first.parses.close()).not.toThrow();
		expect(w.warnings.join('\n')).toMatch(/left out for this run/);
	});
});

describe('forgetInMemo', () => {
	it('erases the rows of files and folders, leaving no byte of their text in the memo files', () => {
		const w = world();
		fs.mkdirSync(path.join(w.data, 'conv'));
		const word = 'zanzibarquokka';
		const target = w.write('target.txt', `#${word} secret\n${word} ${'filler '.repeat(500)}\n`);
		const inFolder = w.write(path.join('conv', 'child.txt'), `#child ${word}\n`);
		const other = w.write('other.txt', '#other\nkept words\n');
		const neighbour = w.write('conv2.txt', '#neighbour\n');
		const first = w.start();
		for (const f of [target, inFolder, other, neighbour]) first.read(f);
		// A dashboard still running: its batch sits in the WAL, its connection open.
		first.parses.persist();
		expect(memoBytes(w.state).includes(word)).toBe(true);

		forgetInMemo(parseMemoPath(w.state), [target, path.join(w.data, 'conv')]);
		expect(memoBytes(w.state).includes(word)).toBe(false);
		first.parses.close();
		expect(memoBytes(w.state).includes(word)).toBe(false);
		const second = w.start();
		for (const f of [target, inFolder, other, neighbour]) second.read(f);
		// other and conv2.txt (a name that starts like the folder) kept; the two forgotten parsed again.
		expect(second.memo.hits).toBe(2);
	});

	it('a row parsed again leaves no copy of its old value to survive the erase', () => {
		const w = world();
		const old = 'oldtitlewombat';
		const file = w.write('t.txt', `#${old}\n${'filler '.repeat(20)}\n`);
		const other = w.write('other.txt', '#other\n');
		const first = w.start();
		first.read(file);
		first.read(other);
		first.parses.persist();
		fs.writeFileSync(file, `#newtitle\n${'other filler '.repeat(20)}\n`);
		first.read(file);
		first.parses.persist();
		forgetInMemo(parseMemoPath(w.state), [file]);
		first.parses.close();
		expect(memoBytes(w.state).includes(old)).toBe(false);
		expect(memoBytes(w.state).includes('newtitle')).toBe(false);
	});

	it('a damaged memo is removed whole: nothing of it is left to hold the rows', () => {
		const w = world();
		fs.mkdirSync(w.state, {recursive: true});
		fs.writeFileSync(parseMemoPath(w.state), 'SQLite format 3\0'.padEnd(8192, 'zanzibarquokka '));
		forgetInMemo(parseMemoPath(w.state), ['/some/file']);
		expect(fs.existsSync(parseMemoPath(w.state))).toBe(false);
	});

	it('a missing memo is nothing to erase (and is not created)', () => {
		const w = world();
		forgetInMemo(parseMemoPath(w.state), ['/nowhere']);
		expect(fs.existsSync(parseMemoPath(w.state))).toBe(false);
	});
});

describe('encodeValue / decodeValue', () => {
	it('round-trips plain data exactly, undefined properties and values included', () => {
		const values: unknown[] = [
			undefined,
			null,
			'text',
			0,
			1.5,
			true,
			{a: 1, b: undefined, c: {d: undefined, e: [1, 'x', {f: undefined}]}},
			[{kind: 'no', reason: 'why'}],
		];
		for (const v of values) {
			const text = encodeValue(v);
			expect(text).toBeDefined();
			const back = decodeValue(text ?? '');
			expect(back).toStrictEqual({ok: true, value: v});
			if (typeof v === 'object' && v !== null && !Array.isArray(v)) expect(Object.keys((back as {value: object}).value)).toEqual(Object.keys(v));
		}
	});

	it('refuses what JSON would change', () => {
		class Box {
			x = 1;
		}
		for (const v of [new Map(), new Set([1]), new Date(0), new Box(), () => 1, 1n, NaN, Infinity, -0, [undefined], {a: new Date(0)}, Symbol('s')]) {
			expect(encodeValue(v)).toBeUndefined();
		}
		expect(decodeValue('not json')).toEqual({ok: false});
	});
});
