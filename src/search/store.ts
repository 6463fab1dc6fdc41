// Kept whole (about 370 lines): every statement that writes search.db is here, so the purge rule
// below can be checked in one file.
// The search index: one SQLite file under $MAM_HOME (`search.db`), one row per message of every
// agent's conversations, with an FTS5 index over the text. It is mam-tui's own copy of the
// agents' words, so it obeys purge: deleting a conversation's rows erases them (secure_delete
// zeroes freed pages, FTS5 `secure-delete` takes the words out of the index itself, and a
// TRUNCATE checkpoint empties the WAL), never leaves them for later.
import fs from 'node:fs';
import path from 'node:path';
import type {Statement} from 'better-sqlite3';
import {openDatabase, type SqliteDb} from '../system/sqlite.js';
import type {AgentId} from '../domain/types.js';
import type {ConversationMessage, TokenUsage} from '../adapters/types.js';

/** `PRAGMA application_id`: 'mams'. A file without it is not ours and is never trusted. */
const APPLICATION_ID = 0x6d616d73;
/** Bumped when the schema or what is indexed changes: an older index is rebuilt from the agents' files. */
const SCHEMA_VERSION = 3;

const SCHEMA = `
CREATE TABLE conv (
	key INTEGER PRIMARY KEY,
	agent TEXT NOT NULL,
	id TEXT NOT NULL,
	parent TEXT,
	cwd TEXT NOT NULL,
	title TEXT,
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL,
	stamp INTEGER NOT NULL,
	cursor TEXT NOT NULL,
	usage TEXT,
	headless INTEGER NOT NULL DEFAULT 0,
	UNIQUE (agent, id)
);
CREATE TABLE msg (
	rowid INTEGER PRIMARY KEY,
	conv INTEGER NOT NULL,
	role TEXT NOT NULL,
	at INTEGER NOT NULL,
	text TEXT NOT NULL
);
CREATE INDEX msg_conv ON msg (conv);
CREATE TABLE stage (
	rowid INTEGER PRIMARY KEY,
	conv INTEGER NOT NULL,
	ord INTEGER NOT NULL,
	role TEXT NOT NULL,
	at INTEGER NOT NULL,
	text TEXT NOT NULL
);
CREATE VIRTUAL TABLE fts USING fts5(text, content='msg', content_rowid='rowid', detail=column, tokenize='unicode61 remove_diacritics 2');
INSERT INTO fts (fts, rank) VALUES ('secure-delete', 1);
`;

/** What the index keeps about one conversation. */
export interface IndexedConversation {
	readonly agent: AgentId;
	readonly id: string;
	readonly parent?: string;
	readonly cwd: string;
	readonly title?: string;
	readonly createdAt: number;
	readonly updatedAt: number;
	/** The discovery `updatedAt` the index last read up to: unchanged means nothing to read. */
	readonly stamp: number;
	readonly cursor: string;
	readonly usage?: TokenUsage;
	readonly headless: boolean;
}

interface ConvRow {
	key: number;
	agent: string;
	id: string;
	parent: string | null;
	cwd: string;
	title: string | null;
	created: number;
	updated: number;
	stamp: number;
	cursor: string;
	usage: string | null;
	headless: number;
}

export function rowToConversation(row: ConvRow): IndexedConversation {
	const usage = row.usage ? (JSON.parse(row.usage) as TokenUsage) : undefined;
	return {
		agent: row.agent as AgentId,
		id: row.id,
		...(row.parent ? {parent: row.parent} : {}),
		cwd: row.cwd,
		...(row.title ? {title: row.title} : {}),
		createdAt: row.created,
		updatedAt: row.updated,
		stamp: row.stamp,
		cursor: row.cursor,
		...(usage ? {usage} : {}),
		headless: row.headless === 1,
	};
}

/** One message that matched, with its conversation and bm25 score (lower is better). */
export interface RawHit {
	readonly conversation: IndexedConversation;
	readonly score: number;
	readonly text: string;
	readonly role: string;
	readonly at: number;
}

export interface QueryFilter {
	readonly agent?: string;
	readonly cwd?: string;
	/** Only conversations updated at or after this time (ms). */
	readonly since?: number;
	/** Include sub-agent and headless conversations. */
	readonly all?: boolean;
	readonly limit?: number;
}

/** Matches ranked at a time (see `query`): about 2 microseconds of bm25 each. */
const WINDOW = 2000;

/** The conversation filter as SQL conditions on `c` (conv) and their bound values. */
function filterClause(filter: QueryFilter): {where: string[]; params: unknown[]} {
	const where: string[] = [];
	const params: unknown[] = [];
	if (filter.agent) {
		where.push('c.agent = ?');
		params.push(filter.agent);
	}
	if (filter.cwd) {
		where.push('(c.cwd = ? OR substr(c.cwd, 1, ?) = ?)');
		const prefix = filter.cwd.endsWith('/') ? filter.cwd : `${filter.cwd}/`;
		params.push(filter.cwd, prefix.length, prefix);
	}
	if (filter.since !== undefined) {
		where.push('c.updated >= ?');
		params.push(filter.since);
	}
	if (!filter.all) where.push('c.parent IS NULL AND c.headless = 0');
	return {where, params};
}

function removeFiles(file: string): void {
	for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, {force: true});
}

/** Is `error` SQLite's "another connection holds the lock"? */
function isBusy(error: unknown): boolean {
	const code = (error as {code?: unknown} | undefined)?.code;
	return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** True when `db` is a mam-tui search index of this schema, readable through. */
function trusted(db: SqliteDb): boolean {
	try {
		if (db.pragma('application_id', {simple: true}) !== APPLICATION_ID) return false;
		if (db.pragma('user_version', {simple: true}) !== SCHEMA_VERSION) return false;
		const names = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as {name: string}[]).map(r => r.name));
		if (!['conv', 'msg', 'stage', 'fts'].every(n => names.has(n))) return false;
		// Without FTS5's secure-delete a purged word stays in the index's segments until a merge:
		// an index that lost it is rebuilt rather than trusted with a purge.
		if ((db.prepare("SELECT v FROM fts_config WHERE k = 'secure-delete'").get() as {v: number} | undefined)?.v !== 1) return false;
		// A damaged FTS index answers wrongly rather than failing: FTS5's own check says. It is a
		// write: while another connection writes (a build in the dashboard's index thread), which
		// opened the file as trusted, it is left for the next open rather than waited for (an
		// open that timed out here took the index for corrupt and deleted it under the writer).
		db.pragma('busy_timeout = 0');
		try {
			db.prepare("INSERT INTO fts (fts, rank) VALUES ('integrity-check', 0)").run();
		} catch (error) {
			if (!isBusy(error)) throw error;
		}
		return db.pragma('quick_check', {simple: true}) === 'ok';
	} catch {
		return false;
	}
}

function create(file: string): SqliteDb {
	removeFiles(file);
	const db = openDatabase(file);
	// Set before the first table: auto_vacuum cannot be switched on later without a VACUUM.
	db.pragma('auto_vacuum = INCREMENTAL');
	db.pragma('journal_mode = WAL');
	db.exec(SCHEMA);
	db.pragma(`application_id = ${APPLICATION_ID}`);
	db.pragma(`user_version = ${SCHEMA_VERSION}`);
	return db;
}

/**
 * Open the index at `file`, or make it anew when it is missing, foreign (another application's
 * file, another schema version) or corrupt: it holds nothing the agents' own files cannot give
 * again, so it is rebuilt rather than trusted.
 */
function openIndexDb(file: string): {db: SqliteDb; rebuilt: boolean} {
	fs.mkdirSync(path.dirname(file), {recursive: true, mode: 0o700});
	if (fs.existsSync(file)) {
		let db: SqliteDb | undefined;
		try {
			db = openDatabase(file);
			if (trusted(db)) return {db, rebuilt: false};
		} catch {
			// unreadable: rebuilt below
		}
		db?.close();
		return {db: create(file), rebuilt: true};
	}
	return {db: create(file), rebuilt: false};
}

export class SearchStore {
	readonly file: string;
	/** True when an existing file was not trusted and the index started again from nothing. */
	readonly rebuilt: boolean;
	private readonly db: SqliteDb;
	/** Prepared once: preparing a statement per conversation was a fifth of a build. */
	private readonly statements = new Map<string, Statement>();

	private constructor(file: string, db: SqliteDb, rebuilt: boolean) {
		this.file = file;
		this.db = db;
		this.rebuilt = rebuilt;
		db.pragma('secure_delete = ON');
		db.pragma('busy_timeout = 5000');
		// A lost last commit is read again from the agents' files: no fsync per commit.
		db.pragma('synchronous = NORMAL');
		// better-sqlite3's default page cache is 16 MB a connection: a build writes once, near
		// the end of the file, and reads little back. 2 MB keeps the dashboard's peak RSS down.
		db.pragma('cache_size = -2000');
		// The file holds the agents' words: only its owner reads it.
		fs.chmodSync(file, 0o600);
		this.flushLeftovers();
	}

	/**
	 * A build that stopped before its end left messages staged: their conversations are recorded
	 * as read, so the messages are indexed now. Only when no one is writing: a build running in
	 * another process (the dashboard's index thread) holds the write lock for a while and indexes
	 * its stage itself at its end; an open (a search, a purge) never waits for that.
	 */
	private flushLeftovers(): void {
		this.db.pragma('busy_timeout = 0');
		try {
			this.flushStaged();
		} catch (error) {
			if (!isBusy(error)) throw error;
		} finally {
			this.db.pragma('busy_timeout = 5000');
		}
	}

	static open(file: string): SearchStore {
		const {db, rebuilt} = openIndexDb(file);
		return new SearchStore(file, db, rebuilt);
	}

	close(): void {
		this.db.close();
	}

	private stmt(sql: string): Statement {
		let statement = this.statements.get(sql);
		if (!statement) {
			statement = this.db.prepare(sql);
			this.statements.set(sql, statement);
		}
		return statement;
	}

	transaction<T>(fn: () => T): T {
		return this.db.transaction(fn)();
	}

	get(agent: string, id: string): IndexedConversation | undefined {
		const row = this.stmt('SELECT * FROM conv WHERE agent = ? AND id = ?').get(agent, id) as ConvRow | undefined;
		return row ? rowToConversation(row) : undefined;
	}

	/** Every conversation the index holds, by agent and id. */
	all(): IndexedConversation[] {
		return (this.stmt('SELECT * FROM conv').all() as ConvRow[]).map(rowToConversation);
	}

	/** Every conversation's recorded tokens, by `agent:id` (those whose agent records none are absent). */
	usages(): [string, TokenUsage][] {
		return (this.stmt('SELECT agent, id, usage FROM conv WHERE usage IS NOT NULL').all() as {agent: string; id: string; usage: string}[]).map(r => [
			`${r.agent}:${r.id}`,
			JSON.parse(r.usage) as TokenUsage,
		]);
	}

	/**
	 * Record what was read of a conversation: its facts, where the next read starts, and the new
	 * messages (after dropping the old ones when the source was rewritten). `staged`: the messages
	 * wait in `stage` until `flushStaged` (a full sync, which reads one agent after another).
	 */
	put(conv: IndexedConversation, messages: readonly ConversationMessage[], restart: boolean, staged = false): void {
		const existing = this.stmt('SELECT key FROM conv WHERE agent = ? AND id = ?').get(conv.agent, conv.id) as {key: number} | undefined;
		if (existing && restart) this.dropMessages(existing.key);
		const values = [
			conv.parent ?? null,
			conv.cwd,
			conv.title ?? null,
			conv.createdAt,
			conv.updatedAt,
			conv.stamp,
			conv.cursor,
			conv.usage ? JSON.stringify(conv.usage) : null,
			conv.headless ? 1 : 0,
		];
		let key: number;
		if (existing) {
			this.stmt('UPDATE conv SET parent = ?, cwd = ?, title = ?, created = ?, updated = ?, stamp = ?, cursor = ?, usage = ?, headless = ? WHERE key = ?').run(
				...values,
				existing.key,
			);
			key = existing.key;
		} else {
			key = Number(
				this.stmt(
					'INSERT INTO conv (agent, id, parent, cwd, title, created, updated, stamp, cursor, usage, headless) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
				).run(conv.agent, conv.id, ...values).lastInsertRowid,
			);
		}
		if (staged) {
			const stage = this.stmt('INSERT INTO stage (conv, ord, role, at, text) VALUES (?, ?, ?, ?, ?)');
			for (const m of messages) stage.run(key, conv.stamp, m.role, m.at, m.text);
			return;
		}
		const insert = this.stmt('INSERT INTO msg (conv, role, at, text) VALUES (?, ?, ?, ?)');
		const index = this.stmt('INSERT INTO fts (rowid, text) VALUES (?, ?)');
		for (const m of messages) {
			const rowid = insert.run(key, m.role, m.at, m.text).lastInsertRowid;
			index.run(rowid, m.text);
		}
	}

	/**
	 * Index the staged messages, oldest conversation first (by the `stamp` they were read at):
	 * rowids then grow with time whatever order the agents were read in, which is what lets a
	 * query rank the newest matches first (`query`). Returns how many were indexed.
	 */
	flushStaged(): number {
		if (this.stmt('SELECT 1 FROM stage LIMIT 1').get() === undefined) return 0;
		const moved = this.transaction(() => {
			const before = (this.stmt('SELECT max(rowid) AS n FROM msg').get() as {n: number | null}).n ?? 0;
			// A conversation forgotten since it was staged has no row: its messages are not indexed.
			const count = this.stmt(
				'INSERT INTO msg (conv, role, at, text) SELECT s.conv, s.role, s.at, s.text FROM stage s JOIN conv c ON c.key = s.conv ORDER BY s.ord, s.rowid',
			).run().changes;
			this.stmt('INSERT INTO fts (rowid, text) SELECT rowid, text FROM msg WHERE rowid > ?').run(before);
			this.stmt('DELETE FROM stage').run();
			return count;
		});
		// The stage's pages (zeroed: secure_delete) go back to the file system.
		this.db.pragma('incremental_vacuum');
		return moved;
	}

	private dropMessages(key: number): void {
		// The index entry needs the text it was made from (external content): delete it first.
		this.stmt("INSERT INTO fts (fts, rowid, text) SELECT 'delete', rowid, text FROM msg WHERE conv = ?").run(key);
		this.stmt('DELETE FROM msg WHERE conv = ?').run(key);
	}

	/**
	 * Erase conversations: their words leave the FTS index (secure-delete), their rows are
	 * deleted over zeroed pages (secure_delete), freed pages go back to the file system
	 * (incremental vacuum), and the WAL that held the old pages is emptied (TRUNCATE). Returns
	 * how many conversations were removed.
	 */
	forget(agent: string, ids: readonly string[]): number {
		let removed = 0;
		this.transaction(() => {
			for (const id of ids) {
				const row = this.stmt('SELECT key FROM conv WHERE agent = ? AND id = ?').get(agent, id) as {key: number} | undefined;
				if (!row) continue;
				this.dropMessages(row.key);
				// Staged by a build not finished yet (another process's): erased as well.
				this.stmt('DELETE FROM stage WHERE conv = ?').run(row.key);
				this.stmt('DELETE FROM conv WHERE key = ?').run(row.key);
				removed++;
			}
		});
		if (removed > 0) this.compact();
		return removed;
	}

	/** Give freed pages back and empty the WAL, so no deleted word stays in the files. */
	compact(): void {
		this.db.pragma('incremental_vacuum');
		this.db.pragma('wal_checkpoint(TRUNCATE)');
	}

	/**
	 * Matches of an FTS5 query, best message per conversation, best first (ties: the newer
	 * first). bm25 costs a few microseconds a match, and a common word matches most messages: the matches
	 * are ranked a window of the newest `WINDOW` at a time (rowids grow with time: the build
	 * reads oldest first, appends come later), and an older window is read only when the newer
	 * ones did not give `limit` conversations.
	 */
	query(match: string, filter: QueryFilter): RawHit[] {
		const limit = filter.limit ?? 20;
		const total = (this.stmt('SELECT count(*) AS n FROM fts WHERE fts MATCH ?').get(match) as {n: number}).n;
		const {where, params} = filterClause(filter);
		const ranked = this.stmt(`
			WITH h AS MATERIALIZED (SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ? AND rowid >= ? AND rowid < ?)
			SELECT c.*, min(h.s) AS score, m.text AS mtext, m.role AS mrole, m.at AS mat
			FROM h JOIN msg m ON m.rowid = h.rowid JOIN conv c ON c.key = m.conv
			${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
			GROUP BY c.key
			ORDER BY round(score, 6), c.updated DESC
			LIMIT ?`);
		const nth = this.stmt('SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 1 OFFSET ?');
		const hits: RawHit[] = [];
		const seen = new Set<number>();
		let upper = Number.MAX_SAFE_INTEGER;
		for (let newer = 0; newer < total && hits.length < limit; newer += WINDOW) {
			const offset = total - newer - WINDOW;
			const lower = offset > 0 ? (nth.get(match, offset) as {rowid: number}).rowid : 0;
			const rows = ranked.all(match, lower, upper, ...params, limit) as (ConvRow & {score: number; mtext: string; mrole: string; mat: number})[];
			for (const r of rows) {
				if (hits.length >= limit || seen.has(r.key)) continue;
				seen.add(r.key);
				hits.push({conversation: rowToConversation(r), score: r.score, text: r.mtext, role: r.mrole, at: r.mat});
			}
			upper = lower;
		}
		return hits;
	}

	/** Bytes on disk (the file and its WAL). */
	size(): number {
		return [this.file, `${this.file}-wal`].reduce((sum, f) => sum + (fs.statSync(f, {throwIfNoEntry: false})?.size ?? 0), 0);
	}
}
