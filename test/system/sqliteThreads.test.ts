import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {execa} from 'execa';
import {afterEach, describe, expect, it} from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
let dir: string | undefined;
afterEach(() => {
	if (dir) fs.rmSync(dir, {recursive: true, force: true});
	dir = undefined;
});

// A fresh process whose first database open is the index thread's: the addon reads
// SQLITE_USE_URI once per process, from the real environment a worker's process.env copy never
// reaches, so the URI reads of SPEC 4.3 must still work afterwards in every thread.
const CHILD = `
import {startIndexWorker} from './src/search/worker.ts';
import {openDatabase} from './src/system/sqlite.ts';
const [dir] = process.argv.slice(1);
const index = startIndexWorker({stateDir: dir, home: dir, ownHome: false, env: {}, tmpDir: dir}, line => console.error(line));
await index.sync();
await index.close();
const file = dir + '/plain.db';
openDatabase(file).exec('CREATE TABLE t (x)');
const db = openDatabase('file:' + file + '?mode=ro&immutable=1', {readonly: true, fileMustExist: true});
console.log(JSON.stringify(db.prepare('SELECT count(*) AS n FROM t').get()));
`;

describe('sqlite in more than one thread', () => {
	it('a URI read works after the index thread opened the first database of the process', async () => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-threads-')));
		const run = await execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD, dir], {
			cwd: root,
			reject: false,
			env: {SQLITE_USE_URI: undefined},
		});
		expect(run.stderr).toBe('');
		expect(run.stdout).toBe('{"n":0}');
		expect(fs.readdirSync(root).filter(f => f.startsWith('file:'))).toEqual([]);
	});
});
