import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {openDatabase} from '../../system/sqlite.js';
import {jsonl, writeFile} from './files.js';

// Hermes Agent stores in the FORMATS 6 layout (schema after hermes_state_common.py SCHEMA_SQL,
// trimmed to the columns and tables mam-tui touches). Hermes could not be installed here.

/** `YYYYMMDD_HHMMSS_<6 hex>` for a start time, as the hermes CLI mints it. */
export function hermesId(startedAt: number): string {
	const iso = new Date(startedAt).toISOString();
	const stamp = `${iso.slice(0, 10).replaceAll('-', '')}_${iso.slice(11, 19).replaceAll(':', '')}`;
	return `${stamp}_${crypto.randomBytes(3).toString('hex')}`;
}

export const HERMES_SCHEMA = `
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE TABLE sessions (
	id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, model TEXT, model_config TEXT,
	system_prompt_hash TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
	message_count INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT, git_repo_root TEXT, title TEXT,
	last_activity_at REAL, profile_name TEXT, archived INTEGER NOT NULL DEFAULT 0, hidden INTEGER NOT NULL DEFAULT 0,
	FOREIGN KEY (parent_session_id) REFERENCES sessions(id),
	FOREIGN KEY (system_prompt_hash) REFERENCES system_prompts(hash));
CREATE TABLE messages (
	id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
	content TEXT, tool_calls TEXT, timestamp REAL NOT NULL, active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE session_model_usage (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, model TEXT NOT NULL, api_call_count INTEGER NOT NULL DEFAULT 0,
	input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, model));
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE conversation_generations (source TEXT NOT NULL, session_key TEXT NOT NULL, generation INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (source, session_key));
CREATE TABLE gateway_heartbeats (backend_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, started_at REAL NOT NULL, last_heartbeat REAL NOT NULL);
CREATE TABLE compression_locks (session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE session_turn_leases (conversation_id TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE async_delegations (
	delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL, origin_ui_session_id TEXT NOT NULL DEFAULT '', parent_session_id TEXT,
	state TEXT NOT NULL, dispatched_at REAL NOT NULL, updated_at REAL NOT NULL, origin_session_id TEXT NOT NULL DEFAULT '');
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
`;

/** The FTS5 index hermes keeps over messages, kept in sync by triggers (for tests that want it). */
export const HERMES_FTS = `
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
	INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
	INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END;
`;

export interface HermesSessionSpec {
	readonly id: string;
	readonly startedAt: number;
	readonly cwd?: string;
	readonly source?: string;
	readonly parentId?: string;
	readonly modelConfig?: Record<string, unknown>;
	readonly endedAt?: number;
	readonly endReason?: string;
	readonly title?: string;
	readonly sessionKey?: string;
	/** Real messages (user + assistant pairs); default 1 pair. */
	readonly turns?: number;
}

/** Create `<home>/state.db` (WAL, as hermes leaves it after a clean close) with the schema. */
export function createHermesStore(home: string, options: {fts?: boolean} = {}): string {
	const file = path.join(home, 'state.db');
	fs.mkdirSync(home, {recursive: true});
	const db = openDatabase(file);
	try {
		db.pragma('journal_mode = WAL');
		db.exec(HERMES_SCHEMA);
		if (options.fts) db.exec(HERMES_FTS);
		db.prepare('INSERT INTO schema_version (version) VALUES (30)').run();
		db.prepare("INSERT INTO system_prompts (hash, prompt) VALUES ('sp1', 'You are Hermes.')").run();
		db.prepare("INSERT INTO state_meta (key, value) VALUES ('fts_storage_version', '3')").run();
	} finally {
		db.close();
	}
	return file;
}

/** Insert a session, its messages, a model-usage row and its transcript file. */
export function insertHermesSession(home: string, spec: HermesSessionSpec): void {
	const db = openDatabase(path.join(home, 'state.db'));
	try {
		const seconds = (ms: number) => ms / 1000;
		db.prepare(
			`INSERT INTO sessions (id, source, session_key, model, model_config, system_prompt_hash, parent_session_id, started_at, ended_at,
				end_reason, message_count, cwd, git_repo_root, title, last_activity_at)
			 VALUES (?, ?, ?, 'hermes-4', ?, 'sp1', ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
		).run(
			spec.id,
			spec.source ?? 'cli',
			spec.sessionKey ?? null,
			JSON.stringify(spec.modelConfig ?? {model: 'hermes-4'}),
			spec.parentId ?? null,
			seconds(spec.startedAt),
			spec.endedAt === undefined ? null : seconds(spec.endedAt),
			spec.endReason ?? null,
			(spec.turns ?? 1) * 2,
			spec.cwd ?? null,
			spec.title ?? null,
			seconds(spec.startedAt + 500),
		);
		const insert = db.prepare('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)');
		for (let i = 0; i < (spec.turns ?? 1); i++) {
			insert.run(spec.id, 'user', `hello ${i}`, seconds(spec.startedAt + 100 + i * 200));
			insert.run(spec.id, 'assistant', 'Hello from the stand-in model.', seconds(spec.startedAt + 200 + i * 200));
		}
		db.prepare('INSERT INTO session_model_usage (session_id, model, api_call_count, input_tokens, output_tokens) VALUES (?, ?, 1, 10, 5)').run(spec.id, 'hermes-4');
	} finally {
		db.close();
	}
	writeFile(
		path.join(home, 'sessions', `${spec.id}.jsonl`),
		jsonl([
			{role: 'user', content: 'hello 0', timestamp: spec.startedAt + 100},
			{role: 'assistant', content: 'Hello from the stand-in model.', timestamp: spec.startedAt + 200},
		]),
	);
}

