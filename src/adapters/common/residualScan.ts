import path from 'node:path';
import {StoreReadError, withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import {quoteIdent} from './purgeDb.js';
import {listDir, readSmallText} from './rootedFs.js';

/** The target id first, then its descendants; used to label what a residual line belongs to. */
export interface IdSet {
	readonly target: string;
	readonly ids: readonly string[];
}

/** ` [child session X]` for a descendant, nothing for the target itself (SPEC 4.1 residual). */
export function ownerLabel(set: IdSet, id: string): string {
	return id === set.target ? '' : ` [child session ${id}]`;
}

/** The first id of the set that `text` contains. */
export function idIn(set: IdSet, text: string): string | undefined {
	return set.ids.find(id => text.includes(id));
}

/** How deep a name scan walks: agents nest their files a few levels, never dozens. */
const MAX_SCAN_DEPTH = 8;

/**
 * (a) of FORMATS 0.5: every file or folder under `root` whose name contains an id. Symlinks are
 * reported but never followed; a matching folder is reported once, not its contents.
 */
export function scanNames(root: string, set: IdSet, depth = 0): string[] {
	if (depth > MAX_SCAN_DEPTH) return [];
	const out: string[] = [];
	for (const entry of listDir(root)) {
		const full = path.join(root, entry.name);
		const id = idIn(set, entry.name);
		if (id) {
			out.push(`${full}${ownerLabel(set, id)}`);
			continue;
		}
		if (entry.isDirectory() && !entry.isSymbolicLink()) out.push(...scanNames(full, set, depth + 1));
	}
	return out;
}

/** (b) of FORMATS 0.5: lines of known index files that contain an id. */
export function scanTextLines(files: readonly string[], set: IdSet): string[] {
	const out: string[] = [];
	for (const file of files) {
		const text = readSmallText(file);
		if (text === undefined) continue;
		text.split('\n').forEach((line, index) => {
			const id = idIn(set, line);
			if (id) out.push(`${file}:${index + 1}: line names ${id}${ownerLabel(set, id)}`);
		});
	}
	return out;
}

/**
 * (c) of FORMATS 0.5: for one sqlite database, every table column holding an id (text or blob,
 * compared as bytes). Read through withReadOnlyDb, so the scan leaves no trace; an unreadable
 * database becomes one line saying so.
 */
export function scanSqlite(file: string, set: IdSet): string[] {
	try {
		return withReadOnlyDb(file, db => scanTables(db, file, set));
	} catch (error) {
		if (error instanceof StoreReadError) return [`${file}: could not be scanned (${error.message})`];
		throw error;
	}
}

function scanTables(db: ReadDb, file: string, set: IdSet): string[] {
	const out: string[] = [];
	const tables = db.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
	for (const {name: table} of tables) {
		let columns: string[];
		try {
			columns = db.prepare<[string], {name: string}>('SELECT name FROM pragma_table_info(?)').all(table).map(c => c.name);
		} catch {
			continue;
		}
		for (const column of columns) {
			for (const id of set.ids) {
				const count = countMatches(db, table, column, id);
				if (count > 0) out.push(`${file}: table ${table}.${column}: ${count} row(s) name ${id}${ownerLabel(set, id)}`);
			}
		}
	}
	return out;
}

function countMatches(db: ReadDb, table: string, column: string, id: string): number {
	try {
		const row = db
			.prepare<[Buffer], {n: number}>(`SELECT count(*) AS n FROM ${quoteIdent(table)} WHERE instr(CAST(${quoteIdent(column)} AS BLOB), ?) > 0`)
			.get(Buffer.from(id, 'utf8'));
		return row?.n ?? 0;
	} catch {
		// a virtual table whose module this build lacks: nothing we can read there
		return 0;
	}
}
