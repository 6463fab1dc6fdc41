import {spawn} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import '../../support/sqliteUri.js';
import Database from 'better-sqlite3';
import {BETTER_SQLITE3} from '../../helpers/cli.js';

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

export function isSqliteFile(file: string): boolean {
	try {
		const fd = fs.openSync(file, 'r');
		try {
			const head = Buffer.alloc(16);
			return fs.readSync(fd, head, 0, 16, 0) === 16 && head.equals(SQLITE_MAGIC);
		} finally {
			fs.closeSync(fd);
		}
	} catch {
		return false;
	}
}

/** Ways a store can be broken. Each applies to one file (a transcript, a database). */
export const STORE_FAULTS = ['truncated', 'garbage', 'empty', 'directory', 'corrupt-pages', 'future-schema', 'locked', 'permission'] as const;
export type StoreFault = (typeof STORE_FAULTS)[number];

/** Faults that only make sense for a sqlite database. */
export const SQLITE_ONLY: ReadonlySet<StoreFault> = new Set(['corrupt-pages', 'future-schema', 'locked']);

/** Running as root, chmod 000 does not deny a read: the permission fault cannot be made. */
export const IS_ROOT = process.getuid?.() === 0;

/** A fault that stays in place until `release` (the lock holder), or nothing to release. */
export interface AppliedFault {
	release(): Promise<void>;
}

const none: AppliedFault = {release: async () => {}};

/** Cut the file in the middle (mid-line for JSONL, mid-page for a database). */
function truncate(file: string): void {
	const size = fs.statSync(file).size;
	fs.truncateSync(file, Math.max(1, Math.floor(size / 2) + 3));
}

/**
 * A newer agent version's schema: every column of every table renamed (`id` → `id_v2`), rows
 * kept, `user_version` raised. Queries written for today's columns fail; counting rows does not.
 */
function futureSchema(file: string): void {
	for (const side of ['-wal', '-shm']) fs.rmSync(`${file}${side}`, {force: true});
	const db = new Database(file);
	try {
		const q = (n: string) => `"${n.replaceAll('"', '""')}"`;
		const all = db
			.prepare<[], {name: string; sql: string | null}>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
			.all();
		const virtual = all.filter(t => /^CREATE VIRTUAL/i.test(t.sql ?? '')).map(t => t.name);
		// An FTS5 table's shadow tables (`<name>_data`, `_idx`, …) may not be altered: they follow their table.
		const tables = all.filter(t => !virtual.includes(t.name) && !virtual.some(v => t.name.startsWith(`${v}_`)));
		db.pragma('foreign_keys = OFF');
		for (const view of db.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type IN ('view', 'trigger')").all()) {
			db.exec(
				`DROP ${db.prepare<[string], {type: string}>('SELECT type FROM sqlite_master WHERE name = ?').get(view.name)?.type === 'view' ? 'VIEW' : 'TRIGGER'} ${q(view.name)}`,
			);
		}
		for (const {name} of tables) {
			const columns = db.prepare<[], {name: string}>(`PRAGMA table_info(${q(name)})`).all();
			for (const column of columns) db.exec(`ALTER TABLE ${q(name)} RENAME COLUMN ${q(column.name)} TO ${q(`${column.name}_v2`)}`);
		}
		db.pragma('user_version = 9999');
		db.pragma('journal_mode = DELETE');
	} finally {
		db.close();
	}
}

/**
 * A real child process that opens the database and holds a write transaction (BEGIN EXCLUSIVE
 * plus an uncommitted write) until released. Resolves once the lock is held.
 */
async function lock(file: string): Promise<AppliedFault> {
	const script = [
		`const Database = require(${JSON.stringify(BETTER_SQLITE3)});`,
		`const db = new Database(${JSON.stringify(file)});`,
		"db.pragma('locking_mode = EXCLUSIVE');",
		"db.exec('BEGIN EXCLUSIVE');",
		"db.exec('CREATE TABLE mam_lock_probe (x)');",
		"console.log('locked');",
		'setInterval(() => {}, 1e6);',
	].join('\n');
	const child = spawn(process.execPath, ['-e', script], {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, SQLITE_USE_URI: '1'}});
	await new Promise<void>((resolve, reject) => {
		let out = '';
		let err = '';
		child.stdout.on('data', (chunk: Buffer) => {
			out += chunk.toString();
			if (out.includes('locked')) resolve();
		});
		child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
		child.once('exit', code => reject(new Error(`lock holder exited (${code}): ${err}`)));
	});
	return {
		async release() {
			if (child.exitCode !== null || child.signalCode !== null) return;
			const gone = new Promise<void>(resolve => child.once('exit', () => resolve()));
			child.kill('SIGKILL');
			await gone;
		},
	};
}

/** Break `file` the way `fault` says. */
export async function applyFault(file: string, fault: StoreFault): Promise<AppliedFault> {
	switch (fault) {
		case 'truncated':
			truncate(file);
			return none;
		case 'garbage':
			fs.writeFileSync(file, crypto.randomBytes(Math.max(64, fs.statSync(file).size)));
			return none;
		case 'empty':
			fs.writeFileSync(file, '');
			return none;
		case 'directory':
			fs.rmSync(file);
			for (const side of ['-wal', '-shm', '-journal']) fs.rmSync(`${file}${side}`, {force: true});
			fs.mkdirSync(file);
			fs.writeFileSync(path.join(file, 'surprise.txt'), 'a folder where a file was\n');
			return none;
		case 'corrupt-pages': {
			for (const side of ['-wal', '-shm']) fs.rmSync(`${file}${side}`, {force: true});
			const data = fs.readFileSync(file);
			// Keep the 100-byte header (it still looks like a database); scramble every page after the first.
			const pageSize = data.readUInt16BE(16) === 1 ? 65536 : data.readUInt16BE(16);
			crypto.randomFillSync(data, Math.min(pageSize, data.length));
			if (data.length <= pageSize) crypto.randomFillSync(data, 100);
			fs.writeFileSync(file, data);
			return none;
		}
		case 'future-schema':
			futureSchema(file);
			return none;
		case 'locked':
			return lock(file);
		case 'permission':
			fs.chmodSync(file, 0o000);
			return {release: async () => fs.chmodSync(file, 0o600)};
	}
}

/**
 * Every folder under `root` with its entries (name, size, mtime): equal before and after a read
 * means the read wrote nothing. A `-shm` file counts by presence only (a reader may map it).
 */
export function listing(root: string): Map<string, string> {
	const out = new Map<string, string>();
	const walk = (dir: string) => {
		const entries = fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1));
		out.set(
			dir,
			entries
				.map(e => {
					const st = fs.lstatSync(path.join(dir, e.name));
					return e.name.endsWith('-shm') ? e.name : `${e.name} ${st.size} ${st.mtimeMs} ${st.mode}`;
				})
				.join('\n'),
		);
		for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
	};
	walk(root);
	return out;
}
