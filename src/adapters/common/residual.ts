import path from 'node:path';
import {describeSqliteError, StoreReadError, tableColumns, withReadOnlyDb} from '../../system/sqliteRead.js';
import {countLines} from './lines.js';
import {listDir} from './paths.js';

/** What to re-scan after a purge (FORMATS 0.5). */
export interface ResidualScan {
	readonly id: string;
	/** Descendant ids still known; a hit naming one is labelled `[child session X]`. */
	readonly descendants: readonly string[];
	/** (a) folders walked for entry names containing an id (links are listed, never followed). */
	readonly roots: readonly string[];
	/** (b) shared text files whose lines may name an id (history.jsonl, session_index.jsonl, …). */
	readonly indexFiles: readonly string[];
	/** (c) sqlite databases whose text columns may name an id. */
	readonly databases: readonly string[];
	/** Entries to skip in the walk (a database's sidecars are scanned through the database). */
	readonly skip?: (abs: string) => boolean;
}

/** Which id a text names: a descendant first (its text also names the parent), else the id itself. */
function owner(text: string, scan: ResidualScan): string | undefined {
	const child = scan.descendants.find(d => text.includes(d));
	if (child !== undefined) return child;
	return text.includes(scan.id) ? scan.id : undefined;
}

function label(ownerId: string, scan: ResidualScan): string {
	return ownerId === scan.id ? '' : ` [child session ${ownerId}]`;
}

function scanNames(dir: string, scan: ResidualScan, out: string[]): void {
	for (const entry of listDir(dir)) {
		const abs = path.join(dir, entry.name);
		if (scan.skip?.(abs)) continue;
		const who = owner(entry.name, scan);
		if (who !== undefined) out.push(`${abs}${entry.isDirectory() ? '/' : ''}${label(who, scan)}`);
		if (entry.isDirectory()) scanNames(abs, scan, out);
	}
}

function scanLines(file: string, scan: ResidualScan, out: string[]): void {
	for (const who of [...scan.descendants, scan.id]) {
		const n = countLines(file, line => owner(line, scan) === who);
		if (n > 0) out.push(`${file}: ${n} line${n === 1 ? '' : 's'}${label(who, scan)}`);
	}
}

function scanDatabase(file: string, scan: ResidualScan, out: string[]): void {
	const ids = [...scan.descendants, scan.id];
	try {
		withReadOnlyDb(file, db => {
			for (const [table, columns] of tableColumns(db)) {
				const textColumns = db
					.prepare<[string], {name: string; type: string}>('SELECT name, type FROM pragma_table_info(?)')
					.all(table)
					.filter(c => columns.has(c.name) && /^(TEXT|VARCHAR|CHAR|CLOB|)$/i.test(c.type.replace(/\(.*$/, '').trim()));
				if (textColumns.length === 0) continue;
				const q = (n: string) => `"${n.replaceAll('"', '""')}"`;
				const where = textColumns.map(c => ids.map(() => `instr(${q(c.name)}, ?) > 0`).join(' OR ')).join(' OR ');
				const params = textColumns.flatMap(() => ids);
				const rows = db.prepare(`SELECT ${textColumns.map(c => q(c.name)).join(', ')} FROM ${q(table)} WHERE ${where}`).all(...params) as Record<
					string,
					unknown
				>[];
				const counts = new Map<string, number>();
				for (const row of rows) {
					const who = owner(Object.values(row).map(String).join('\n'), scan) ?? scan.id;
					counts.set(who, (counts.get(who) ?? 0) + 1);
				}
				for (const [who, n] of counts) out.push(`${file} table ${table}: ${n} row${n === 1 ? '' : 's'}${label(who, scan)}`);
			}
		});
	} catch (error) {
		const reason = error instanceof StoreReadError ? error.message : `${file}: ${describeSqliteError(error)}`;
		out.push(`${reason} (could not check for leftover rows)`);
	}
}

/**
 * Everything that still names the id or a descendant (FORMATS 0.5): entry names under the roots,
 * lines of the index files, rows of the databases. Each line says where; descendants are labelled.
 */
export function scanResidual(scan: ResidualScan): string[] {
	const out: string[] = [];
	for (const root of scan.roots) scanNames(root, scan, out);
	for (const file of scan.indexFiles) scanLines(file, scan, out);
	for (const db of scan.databases) scanDatabase(db, scan, out);
	return [...new Set(out)];
}
