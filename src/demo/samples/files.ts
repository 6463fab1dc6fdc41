import fs from 'node:fs';
import path from 'node:path';
import {openDatabase, type SqliteDb} from '../../system/sqlite.js';

// The small write primitives every sample writer shares. The demo (`mam-tui demo`) and the
// adapter test fixtures write agents' data through the same code, so the two cannot drift apart.

/** Write `text` to `file`, creating parent folders. */
export function writeFile(file: string, text: string | Buffer): void {
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, text);
}

/** JSON Lines text from records. */
export function jsonl(records: readonly unknown[]): string {
	return records.map(r => `${JSON.stringify(r)}\n`).join('');
}

/** Create a database in WAL mode (as the agents run theirs) with `schema`, fill it, close it (no sidecars left). */
export function writeDb(file: string, schema: string, fill: (db: SqliteDb) => void): void {
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const db = openDatabase(file);
	try {
		db.pragma('journal_mode = WAL');
		db.exec(schema);
		db.transaction(() => fill(db))();
	} finally {
		db.close();
	}
}
