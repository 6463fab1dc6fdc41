import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import '../../support/sqliteUri.js';
import Database from 'better-sqlite3';
import type {FixtureWorld} from '../../adapters/fixtures/types.js';

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const SIDECAR = /-(wal|shm|journal)$/;
const sha = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');
const names = (text: string, ids: readonly string[]) => ids.some(id => text.includes(id));

/** The session and every descendant at every depth, from the builder's parent links. */
export function withDescendants(world: FixtureWorld, id: string): string[] {
	const out = [id];
	for (let i = 0; i < out.length; i++) {
		for (const s of world.sessions) if (s.parentId === out[i] && !out.includes(s.id)) out.push(s.id);
	}
	return out;
}

/**
 * What belongs to the purged sessions without naming them, worked out on the state before the
 * purge (afterwards the evidence is gone):
 * - `stems`: record ids taken from the names of files that name a purged id (`msg_X.json` under a
 *   purged session's folder makes `msg_X` theirs, so `part/msg_X/…` is theirs too);
 * - `rows`: per `<db>:<table>`, the rows that name a purged id, plus the rows that reference one of
 *   those through a declared foreign key (a tool result of a purged session's tool call).
 */
export interface Ownership {
	readonly excluded: readonly string[];
	readonly stems: ReadonlySet<string>;
	readonly rows: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A record id worth following: long, letters and digits, nothing that would match common words. */
const ID_LIKE = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_-]{12,}$/;

function stemOf(name: string): string {
	const dot = name.indexOf('.');
	return dot > 0 ? name.slice(0, dot) : name;
}

function isSqlite(file: string): boolean {
	const fd = fs.openSync(file, 'r');
	try {
		const head = Buffer.alloc(16);
		return fs.readSync(fd, head, 0, 16, 0) === 16 && head.equals(SQLITE_MAGIC);
	} finally {
		fs.closeSync(fd);
	}
}

function rowText(row: unknown): string {
	return JSON.stringify(row, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v));
}

/** Every regular file under `root` (symlinks are not followed), relative paths. */
function walkFiles(root: string, visit: (abs: string, rel: string, entry: fs.Dirent) => void): void {
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
			const abs = path.join(dir, entry.name);
			visit(abs, path.relative(root, abs), entry);
			if (entry.isDirectory()) walk(abs);
		}
	};
	walk(root);
}

/** Read every table of a database through a private copy (db + -wal): the original is never opened. */
function readTables(file: string): Map<string, {rows: Record<string, unknown>[]; fks: {table: string; from: string; to: string}[]}> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-iso-'));
	try {
		const copy = path.join(dir, 'db.sqlite');
		fs.copyFileSync(file, copy);
		if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
		const db = new Database(copy);
		try {
			const out = new Map<string, {rows: Record<string, unknown>[]; fks: {table: string; from: string; to: string}[]}>();
			const tables = db
				.prepare<[], {name: string}>("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence' ORDER BY name")
				.all()
				.map(r => r.name);
			for (const table of tables) {
				const quoted = `"${table.replaceAll('"', '""')}"`;
				let rows: Record<string, unknown>[];
				try {
					rows = db.prepare(`SELECT * FROM ${quoted}`).all() as Record<string, unknown>[];
				} catch {
					// A virtual table whose module this build lacks: its shadow tables carry the rows.
					continue;
				}
				const fks = (db.prepare(`PRAGMA foreign_key_list(${quoted})`).all() as {table: string; from: string; to: string | null}[]).map(f => ({
					table: f.table,
					from: f.from,
					to: f.to ?? 'rowid',
				}));
				out.set(table, {rows, fks});
			}
			return out;
		} finally {
			db.close();
		}
	} finally {
		fs.rmSync(dir, {recursive: true, force: true});
	}
}

/** Rows naming a purged id, closed over declared foreign keys. */
function ownedRows(tables: ReturnType<typeof readTables>, excluded: readonly string[]): Map<string, Set<string>> {
	const owned = new Map<string, Set<string>>();
	const ownedObjects = new Map<string, Record<string, unknown>[]>();
	const add = (table: string, row: Record<string, unknown>) => {
		const set = owned.get(table) ?? new Set<string>();
		owned.set(table, set);
		const text = rowText(row);
		if (set.has(text)) return false;
		set.add(text);
		ownedObjects.set(table, [...(ownedObjects.get(table) ?? []), row]);
		return true;
	};
	for (const [table, {rows}] of tables) for (const row of rows) if (names(rowText(row), excluded)) add(table, row);
	for (let changed = true; changed;) {
		changed = false;
		for (const [table, {rows, fks}] of tables) {
			for (const fk of fks) {
				const parents = ownedObjects.get(fk.table) ?? [];
				if (parents.length === 0) continue;
				const keys = new Set(parents.map(p => String(p[fk.to])));
				for (const row of rows) if (row[fk.from] !== null && keys.has(String(row[fk.from])) && add(table, row)) changed = true;
			}
		}
	}
	return owned;
}

/** Lines of text files and rows of databases: the records that can reference other files. */
function recordTexts(home: string): string[] {
	const texts: string[] = [];
	walkFiles(home, (abs, _rel, entry) => {
		if (!entry.isFile() || SIDECAR.test(entry.name)) return;
		if (isSqlite(abs)) {
			for (const {rows} of readTables(abs).values()) for (const row of rows) texts.push(rowText(row));
			return;
		}
		const data = fs.readFileSync(abs);
		if (!data.includes(0)) texts.push(...data.toString('utf8').split('\n'));
	});
	return texts;
}

/**
 * Work out what the purged sessions own (see Ownership), before the purge. A file named by a
 * record id is theirs when its path sits under a purged id, or when only their records reference
 * it (a pasted-content file that the other session referencing it no longer does).
 */
export function ownershipOf(world: FixtureWorld, excluded: readonly string[]): Ownership {
	const stems = new Set<string>();
	const rows = new Map<string, Set<string>>();
	const candidates = new Set<string>();
	walkFiles(world.home, (abs, rel, entry) => {
		const stem = stemOf(entry.name);
		if (ID_LIKE.test(stem) && !names(stem, excluded)) {
			if (names(rel, excluded)) stems.add(stem);
			else candidates.add(stem);
		}
		if (entry.isFile() && !SIDECAR.test(entry.name) && isSqlite(abs)) {
			for (const [table, set] of ownedRows(readTables(abs), excluded)) rows.set(`${rel}:${table}`, set);
		}
	});
	const texts = recordTexts(world.home);
	const theirs = texts.filter(t => names(t, excluded));
	const others = texts.filter(t => !names(t, excluded));
	for (const stem of candidates) {
		if (theirs.some(t => t.includes(stem)) && !others.some(t => t.includes(stem))) stems.add(stem);
	}
	return {excluded, stems, rows};
}

const REMOVED = Symbol('removed');

/** An object that names a purged id in one of its own string values: a record about that session. */
function isRecordOf(value: unknown, excluded: readonly string[]): boolean {
	return !!value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).some(v => typeof v === 'string' && names(v, excluded));
}

/**
 * A JSON value with everything about the purged sessions taken out, so shared indexes compare by
 * what the other sessions own rather than by bytes: an array element that is a record about a
 * purged session goes (a log entry); an object entry keyed by a purged id or whose value names
 * one goes (a map from folder to last conversation).
 */
function pruneJson(value: unknown, excluded: readonly string[]): unknown {
	if (typeof value === 'string') return names(value, excluded) ? REMOVED : value;
	if (Array.isArray(value)) {
		return value
			.filter(v => !isRecordOf(v, excluded))
			.map(v => pruneJson(v, excluded))
			.filter(v => v !== REMOVED);
	}
	if (value && typeof value === 'object') {
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
			if (names(key, excluded)) continue;
			const pruned = pruneJson(v, excluded);
			if (pruned !== REMOVED) out[key] = pruned;
		}
		return out;
	}
	return value;
}

function parseJsonFile(file: string): {ok: true; value: unknown} | {ok: false} {
	try {
		return {ok: true, value: JSON.parse(fs.readFileSync(file, 'utf8')) as unknown};
	} catch {
		return {ok: false};
	}
}

function tableHash(rows: readonly Record<string, unknown>[], excluded: readonly string[], owned: ReadonlySet<string> | undefined): string {
	const kept = rows
		.map(rowText)
		.filter(text => !names(text, excluded) && !owned?.has(text))
		.sort();
	return sha(kept.join('\n'));
}

/**
 * Everything of the other sessions, as a map to compare before and after a purge: the builder's
 * own `snapshotOthers` (which knows the agent's layout), refined where a generic rule knows more:
 * paths under a record the purged sessions own, rows they own through foreign keys, and shared
 * JSON indexes compared by content rather than bytes (a rewrite drops a trailing comma).
 */
export function othersSnapshot(world: FixtureWorld, own: Ownership): Map<string, string> {
	const base = world.snapshotOthers(own.excluded);
	const out = new Map<string, string>();
	const dbTables = new Map<string, ReturnType<typeof readTables>>();
	for (const [key, value] of base) {
		const [kind, ...restParts] = key.split(':');
		const rest = restParts.join(':');
		if ([...own.stems].some(stem => rest.includes(stem))) continue;
		if (kind === 'rows') {
			const table = rest.slice(rest.lastIndexOf(':') + 1);
			const rel = rest.slice(0, rest.lastIndexOf(':'));
			const abs = path.join(world.home, rel);
			if (!dbTables.has(rel)) dbTables.set(rel, readTables(abs));
			const rows = dbTables.get(rel)?.get(table)?.rows;
			out.set(key, rows ? tableHash(rows, own.excluded, own.rows.get(`${rel}:${table}`)) : value);
			continue;
		}
		if (kind === 'file' && rest.endsWith('.json')) {
			const parsed = parseJsonFile(path.join(world.home, rest));
			if (parsed.ok) {
				const pruned = pruneJson(parsed.value, own.excluded);
				if (pruned !== REMOVED) out.set(key, sha(JSON.stringify(pruned)));
				continue;
			}
		}
		out.set(key, value);
	}
	return out;
}

/** Keys whose values differ between two snapshots (added, removed or changed). */
export function differences(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
	return [...new Set([...before.keys(), ...after.keys()])].filter(k => before.get(k) !== after.get(k)).sort();
}

function inside(p: string, roots: readonly string[]): boolean {
	return roots.some(root => p === root || p.startsWith(`${root}${path.sep}`));
}

/**
 * Byte fingerprint of everything under `dir` that is not inside one of `roots` (the agent roots,
 * as they are spelled under the home): files by content, symlinks by target, folders by name.
 * Nothing outside the agent roots may change when a purge runs.
 */
export function outsideSnapshot(dir: string, roots: readonly string[]): Map<string, string> {
	const out = new Map<string, string>();
	const walk = (current: string) => {
		for (const entry of fs.readdirSync(current, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1))) {
			const abs = path.join(current, entry.name);
			if (inside(abs, roots)) continue;
			const rel = path.relative(dir, abs);
			if (entry.isSymbolicLink()) out.set(`link:${rel}`, fs.readlinkSync(abs));
			else if (entry.isDirectory()) {
				out.set(`dir:${rel}`, '');
				walk(abs);
			} else if (entry.isFile()) out.set(`file:${rel}`, sha(fs.readFileSync(abs)));
		}
	};
	walk(dir);
	return out;
}
