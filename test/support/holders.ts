import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** A real process started by a test; `stop()` kills it (by its own pid) and removes its script. */
export interface HeldProcess {
	readonly pid: number;
	stop(): Promise<void>;
}

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

function waitForLine(child: ChildProcess, line: string): Promise<void> {
	return new Promise((resolve, reject) => {
		let buffer = '';
		let stderr = '';
		const onData = (chunk: Buffer) => {
			buffer += chunk.toString();
			if (buffer.split('\n').includes(line)) {
				child.stdout?.off('data', onData);
				resolve();
			}
		};
		child.stdout?.on('data', onData);
		child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		child.once('exit', code => reject(new Error(`holder exited (${code}) before "${line}": ${stderr}`)));
	});
}

function stopper(child: ChildProcess, dir: string | undefined): () => Promise<void> {
	return async () => {
		if (child.exitCode === null && child.signalCode === null) {
			const gone = new Promise<void>(resolve => child.once('exit', () => resolve()));
			child.kill('SIGKILL');
			await gone;
		}
		if (dir) fs.rmSync(dir, {recursive: true, force: true});
	};
}

/** `node -e <idle> ...args`: a process whose argv names whatever `args` hold (e.g. a session id). */
export async function spawnArgvHolder(args: readonly string[]): Promise<HeldProcess> {
	const child = spawn(process.execPath, ['-e', 'console.log("ready"); setInterval(() => {}, 1e6)', '--', ...args], {stdio: ['ignore', 'pipe', 'pipe']});
	await waitForLine(child, 'ready');
	return {pid: child.pid ?? -1, stop: stopper(child, undefined)};
}

/**
 * The environment of a process of the fixture user whose home is `world.home` (an agent started
 * by that user keeps its data there): the in-use rule counts only processes of the same store.
 */
export function asUserOf(world: {readonly home: string}): NodeJS.ProcessEnv {
	return {PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: world.home};
}

/**
 * `node <dir>/<name> ...args`, holding `paths` open for reading: a process that looks like the
 * agent (its script's basename is `name`) and shows in /proc/<pid>/fd.
 */
export async function spawnFileHolder(
	paths: readonly string[],
	name = 'holder',
	args: readonly string[] = [],
	cwd?: string,
	env?: NodeJS.ProcessEnv,
): Promise<HeldProcess> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-holder-'));
	const script = path.join(dir, name);
	fs.writeFileSync(
		script,
		[
			"const fs = require('node:fs');",
			`const fds = ${JSON.stringify(paths)}.map(p => fs.openSync(p, 'r'));`,
			"console.log('ready');",
			'setInterval(() => fds.length, 1e6);',
		].join('\n'),
	);
	const child = spawn(process.execPath, [script, ...args], {stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? {cwd} : {}), ...(env ? {env} : {})});
	await waitForLine(child, 'ready');
	return {pid: child.pid ?? -1, stop: stopper(child, dir)};
}

/**
 * A child process that opens each database in WAL mode and moves every row into the WAL: it
 * deletes all rows, checkpoints (the main file now holds empty tables), then inserts the same rows
 * again without checkpointing. A reader that ignores the WAL sees nothing. The process stays
 * alive holding the databases open (a live writer); `crash()` SIGKILLs it, leaving `-wal` and
 * `-shm` behind the way a killed agent does.
 */
export async function spawnWalWriter(databases: readonly string[]): Promise<HeldProcess & {crash(): Promise<void>}> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-writer-'));
	const script = path.join(dir, 'writer.cjs');
	fs.writeFileSync(script, WAL_WRITER_SCRIPT);
	const child = spawn(process.execPath, [script, BETTER_SQLITE3, ...databases], {stdio: ['ignore', 'pipe', 'pipe']});
	await waitForLine(child, 'ready');
	const stop = stopper(child, dir);
	return {pid: child.pid ?? -1, stop, crash: stop};
}

const WAL_WRITER_SCRIPT = `
const Database = require(process.argv[2]);
const q = name => '"' + name.replaceAll('"', '""') + '"';
const dbs = [];
for (const file of process.argv.slice(3)) {
	const db = new Database(file);
	db.pragma('journal_mode = WAL');
	db.pragma('wal_autocheckpoint = 0');
	// better-sqlite3 turns foreign keys on; re-inserting children before parents must not cascade or fail.
	db.pragma('foreign_keys = OFF');
	// Rows leave and return table by table: a schema with plain (non-cascading) foreign keys, like hermes', must not trip them.
	db.pragma('foreign_keys = OFF');
	const master = db.prepare("SELECT type, name, sql FROM sqlite_master").all();
	const virtual = master.filter(m => m.type === 'table' && /^CREATE VIRTUAL/i.test(m.sql || '')).map(m => m.name);
	const tables = master
		.filter(m => m.type === 'table' && !m.name.startsWith('sqlite_') && !virtual.some(v => m.name === v || m.name.startsWith(v + '_')))
		.map(m => m.name);
	const triggers = master.filter(m => m.type === 'trigger');
	const saved = tables.map(t => [t, db.prepare('SELECT * FROM ' + q(t)).all()]);
	const hasSeq = master.some(m => m.name === 'sqlite_sequence');
	const seq = hasSeq ? db.prepare('SELECT name, seq FROM sqlite_sequence').all() : [];
	db.transaction(() => {
		for (const t of triggers) db.exec('DROP TRIGGER ' + q(t.name));
		for (const t of tables) db.exec('DELETE FROM ' + q(t));
	})();
	db.pragma('wal_checkpoint(TRUNCATE)');
	db.transaction(() => {
		for (const [t, rows] of saved) {
			for (const row of rows) {
				const cols = Object.keys(row);
				db.prepare('INSERT OR REPLACE INTO ' + q(t) + ' (' + cols.map(q).join(', ') + ') VALUES (' + cols.map(() => '?').join(', ') + ')').run(...cols.map(c => row[c]));
			}
		}
		if (hasSeq) {
			db.exec('DELETE FROM sqlite_sequence');
			for (const s of seq) db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(s.name, s.seq);
		}
		for (const t of triggers) db.exec(t.sql);
	})();
	dbs.push(db);
}
console.log('ready');
setInterval(() => dbs.length, 1e6);
`;
