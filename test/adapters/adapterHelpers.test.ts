import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import '../support/sqliteUri.js';
import Database from 'better-sqlite3';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {jsonLike, rewriteJsonFile, toEpochMs} from '../../src/adapters/common/jsonRecords.js';
import {runsProgram, subcommand} from '../../src/adapters/common/programs.js';
import {withPurgeDb} from '../../src/adapters/common/purgeDb.js';

// The helpers agy, hermes, gemini and grok add to src/adapters/common (the shared ones are
// covered by common.test.ts).

let base: string;
let root: string;
beforeEach(() => {
	base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-helpers-')));
	root = path.join(base, 'root');
	fs.mkdirSync(root);
});
afterEach(() => fs.rmSync(base, {recursive: true, force: true}));

const proc = (argv: string[], name = path.basename(argv[0] ?? '')) => ({name, argv});

describe('programs', () => {
	it('knows a program by comm, argv[0], or the script a runtime runs, never by a later word', () => {
		expect(runsProgram(proc(['/usr/local/bin/agy', '--conversation', 'x']), ['agy'])).toBe(true);
		expect(runsProgram(proc(['node', '--no-warnings', '/usr/lib/node_modules/.bin/gemini', '--resume', 'x']), ['gemini'])).toBe(true);
		expect(runsProgram(proc(['/usr/bin/python3', '/home/u/.local/bin/hermes', 'gateway']), ['hermes'])).toBe(true);
		expect(runsProgram(proc(['node', '/opt/mam/dist/src/cli.js', 'stop', 'gemini']), ['gemini'])).toBe(false);
		expect(runsProgram(proc(['bash'], 'grok'), ['grok'])).toBe(true);
	});

	it('reads the subcommand after the program', () => {
		expect(subcommand(['node', '/tmp/x/hermes', 'gateway', 'run'])).toBe('gateway');
		expect(subcommand(['/usr/bin/agy', '--verbose', 'daemon'])).toBe('daemon');
		expect(subcommand(['grok'])).toBeUndefined();
	});
});

describe('jsonRecords', () => {
	it('reads ISO text, epoch seconds (with fractions) and epoch milliseconds', () => {
		expect(toEpochMs('2026-11-30T06:22:04.290Z')).toBe(Date.parse('2026-11-30T06:22:04.290Z'));
		expect(toEpochMs(1764483724.29)).toBe(1764483724290);
		expect(toEpochMs(1764483724290)).toBe(1764483724290);
		expect(toEpochMs('1764483724')).toBe(1764483724000);
		for (const bad of ['', 'soon', -1, Number.NaN, null, {}]) expect(toEpochMs(bad)).toBeUndefined();
	});

	it('writes JSON in the style of the original (indent, trailing newline)', () => {
		expect(jsonLike('{"a":1}', {b: 2})).toBe('{"b":2}');
		expect(jsonLike('{\n    "a": 1\n}\n', {b: 2})).toBe('{\n    "b": 2\n}\n');
		expect(jsonLike('[\n\t1\n]', [2])).toBe('[\n\t2\n]');
	});

	it('rewrites a JSON file inside the root, keeping its mode; refuses one reached through a link out of it', () => {
		const file = path.join(root, 'index.json');
		fs.writeFileSync(file, '{\n  "a": 1\n}\n', {mode: 0o600});
		rewriteJsonFile(file, [root], fs.readFileSync(file, 'utf8'), {b: 2});
		expect(fs.readFileSync(file, 'utf8')).toBe('{\n  "b": 2\n}\n');
		expect(fs.statSync(file).mode & 0o777).toBe(0o600);
		const outside = path.join(base, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'index.json'), '{"keep":1}');
		fs.symlinkSync(outside, path.join(root, 'linked'));
		expect(() => rewriteJsonFile(path.join(root, 'linked', 'index.json'), [root], '{}', {})).toThrow(/refused/);
		expect(fs.readFileSync(path.join(outside, 'index.json'), 'utf8')).toBe('{"keep":1}');
		expect(fs.readdirSync(root).sort()).toEqual(['index.json', 'linked']);
	});
});

describe('purgeDb', () => {
	function makeDb(file: string): void {
		const db = new Database(file);
		db.exec('CREATE TABLE parent (id TEXT PRIMARY KEY); CREATE TABLE child (id TEXT, parent TEXT REFERENCES parent(id));');
		db.exec("INSERT INTO parent VALUES ('p1'), ('p2'); INSERT INTO child VALUES ('c1', 'p1');");
		db.close();
	}
	const count = (file: string, table: string) => {
		const db = new Database(file, {readonly: true});
		const n = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as {n: number}).n;
		db.close();
		return n;
	};

	it('runs with foreign keys on, in one transaction: a failing step rolls every step back', () => {
		const file = path.join(root, 'store.db');
		makeDb(file);
		expect(() =>
			withPurgeDb(root, file, db => {
				db.prepare("DELETE FROM parent WHERE id = 'p2'").run();
				db.prepare("DELETE FROM parent WHERE id = 'p1'").run();
			}),
		).toThrow(/FOREIGN KEY/);
		expect(count(file, 'parent')).toBe(2);
		withPurgeDb(root, file, db => {
			db.prepare("DELETE FROM child WHERE parent = 'p1'").run();
			db.prepare("DELETE FROM parent WHERE id = 'p1'").run();
		});
		expect(count(file, 'parent')).toBe(1);
		expect(count(file, 'child')).toBe(0);
	});

	it('refuses a database outside the root and never creates a missing one', () => {
		const outside = path.join(base, 'outside.db');
		makeDb(outside);
		expect(() => withPurgeDb(root, outside, db => db.prepare('DELETE FROM child').run())).toThrow(/refused/);
		expect(count(outside, 'child')).toBe(1);
		expect(() => withPurgeDb(root, path.join(root, 'missing.db'), () => undefined)).toThrow();
		expect(fs.existsSync(path.join(root, 'missing.db'))).toBe(false);
	});
});
