// What the built bundle (dist/bin, what `mam-tui` runs) must be for every command to start fast.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';

const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../dist/bin');

let dir: string;
beforeEach(() => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bundle-')));
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

describe('the built bundle', () => {
	it('is ASCII only', () => {
		// One non-ASCII character (a comment esbuild keeps, say) makes Node decode the whole chunk
		// the slow way and V8 parse it as two-byte source: a few ms of every start.
		const files = fs.readdirSync(BIN).filter(name => name.endsWith('.js'));
		expect(files.length).toBeGreaterThan(1);
		for (const name of files) {
			const text = fs.readFileSync(path.join(BIN, name), 'utf8');
			const at = text.search(/[^\x00-\x7f]/);
			expect(at < 0 ? 'ascii' : `${name}: ${JSON.stringify(text.slice(Math.max(0, at - 60), at + 20))}`).toBe('ascii');
		}
	});

	it('carries better-sqlite3: only its addon is loaded from the package at run time', () => {
		// Resolving and reading the package's dozen files at run time cost about 6 ms of every start.
		const hook = path.join(dir, 'hook.cjs');
		const log = path.join(dir, 'loaded.txt');
		fs.writeFileSync(
			hook,
			`const Module = require('node:module');
const fs = require('node:fs');
const load = Module._load;
Module._load = function (request, ...rest) {
	fs.appendFileSync(${JSON.stringify(log)}, request + '\\n');
	return load.call(this, request, ...rest);
};
`,
		);
		const env = {...process.env, HOME: path.join(dir, 'home'), MAM_HOME: path.join(dir, 'state')};
		const run = spawnSync(
			process.execPath,
			['--require', hook, path.join(BIN, 'cli.js'), 'status', '--json', '--mux', 'tmux', '--tmux-socket', `mam-none-${process.pid}`],
			{env, encoding: 'utf8', timeout: 20_000},
		);
		expect(run.stderr).toBe('');
		expect(JSON.parse(run.stdout)).toMatchObject({version: 1, sessions: []});
		const loaded = fs.readFileSync(log, 'utf8').trim().split('\n');
		expect(loaded.filter(request => request.endsWith('better_sqlite3.node'))).toHaveLength(1);
		expect(loaded.filter(request => request.includes('better-sqlite3') && !request.endsWith('.node'))).toEqual([]);
	});
});
