import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {openDatabase} from '../../system/sqlite.js';
import {jsonl, writeFile} from './files.js';

// Both products that share ~/.grok (FORMATS 7). Grok Build as grok 1.0.41 writes it (measured):
// sessions/<encodeURIComponent(cwd)>/<uuid>/{summary.json,updates.jsonl,…} and the shared files
// beside it. grok-cli, in its documented layout (it could not be installed here):
// grok-cli (grok-dev 1.1.x): grok.db with the schema of src/storage/migrations.ts (user_version 3).

export function grokRoot(home: string): string {
	return path.join(home, '.grok');
}

/** A grok-cli id: the first 12 hex characters of a dashless UUID (`createSessionId`). */
export function grokCliId(): string {
	return crypto.randomUUID().replaceAll('-', '').slice(0, 12);
}

/** A Grok Build id (UUID; v7 observed, any version accepted). */
export function grokBuildId(): string {
	return crypto.randomUUID();
}

export interface GrokBuildSpec {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly parentId?: string;
	readonly title?: string;
	/** user/agent message chunks in updates.jsonl (0 = a session that never got a prompt). */
	readonly turns?: number;
}

export function grokBuildDir(home: string, cwd: string, id: string): string {
	return path.join(grokRoot(home), 'sessions', encodeURIComponent(cwd), id);
}

/** The search index Grok Build 1.0.41 keeps of its sessions (schema copied from a real one, version 4). */
const SEARCH_SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE session_docs (session_id TEXT PRIMARY KEY, cwd TEXT NOT NULL, updated_at INTEGER NOT NULL, title TEXT NOT NULL,
	content TEXT NOT NULL, content_hash TEXT NOT NULL);
CREATE VIRTUAL TABLE session_docs_fts USING fts5(title, content, content='session_docs', content_rowid='rowid');
CREATE TRIGGER session_docs_ai AFTER INSERT ON session_docs BEGIN
	INSERT INTO session_docs_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content);
END;
CREATE TRIGGER session_docs_ad AFTER DELETE ON session_docs BEGIN
	INSERT INTO session_docs_fts(session_docs_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
END;
CREATE TRIGGER session_docs_au AFTER UPDATE ON session_docs BEGIN
	INSERT INTO session_docs_fts(session_docs_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
	INSERT INTO session_docs_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content);
END;
`;

export function grokSearchDbPath(home: string): string {
	return path.join(grokRoot(home), 'sessions', 'session_search.sqlite');
}

/** Index one session as grok does: its title and its prompts and replies as one text. */
function indexSession(home: string, spec: GrokBuildSpec, title: string, content: string): void {
	const file = grokSearchDbPath(home);
	const fresh = !fs.existsSync(file);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const db = openDatabase(file);
	try {
		if (fresh) {
			db.exec(SEARCH_SCHEMA);
			db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('session_search_schema_version', '4');
		}
		const hash = crypto.createHash('sha256').update(content).digest('hex');
		db.prepare('INSERT OR REPLACE INTO session_docs (session_id, cwd, updated_at, title, content, content_hash) VALUES (?, ?, ?, ?, ?, ?)').run(
			spec.id,
			spec.cwd,
			Math.floor(spec.createdAt / 1000),
			title,
			content,
			hash,
		);
	} finally {
		db.close();
	}
}

/**
 * Write one Grok Build session as grok 1.0.41 does: its folder (summary.json, updates.jsonl with
 * epoch-second timestamps, …), a prompt_history.jsonl line per prompt in its cwd group, a row in
 * sessions/session_search.sqlite, and logs/unified.jsonl lines naming it.
 */
export function writeGrokBuildSession(home: string, spec: GrokBuildSpec): string {
	const dir = grokBuildDir(home, spec.cwd, spec.id);
	const iso = (ms: number) => new Date(ms).toISOString();
	const seconds = (ms: number) => Math.floor(ms / 1000);
	let event = 0;
	const update = (offset: number, sessionUpdate: string, text: string) => ({
		timestamp: seconds(spec.createdAt + offset),
		method: 'session/update',
		params: {
			sessionId: spec.id,
			update: {sessionUpdate, content: {type: 'text', text}},
			_meta: {eventId: `${spec.id}-${++event}`, agentTimestampMs: spec.createdAt + offset},
		},
	});
	const prompts = Array.from({length: spec.turns ?? 1}, (_v, i) => `hello ${i} from ${spec.title ?? 'a session'}`);
	const records: unknown[] = [];
	for (const [i, prompt] of prompts.entries()) {
		records.push(update(100 + i * 300, 'user_message_chunk', prompt), update(200 + i * 300, 'agent_message_chunk', 'Hello from the stand-in model.'));
	}
	writeFile(path.join(dir, 'updates.jsonl'), jsonl(records));
	const title = spec.title ?? 'hello';
	writeFile(
		path.join(dir, 'summary.json'),
		JSON.stringify(
			{
				info: {id: spec.id, cwd: spec.cwd},
				agent_id: 'ag1.0123456789abcdef0123456789abcdef',
				session_summary: prompts[0] ?? '',
				created_at: iso(spec.createdAt),
				updated_at: iso(spec.createdAt + 200 + ((spec.turns ?? 1) - 1) * 300),
				num_messages: records.length,
				current_model_id: 'stub',
				grok_home: grokRoot(home),
				generated_title: title,
				agent_name: spec.parentId ? 'explorer' : 'grok-build-plan',
				// A main TUI session has no session_kind (a -p run: `headless`); sub-agents name their parent.
				...(spec.parentId ? {session_kind: 'subagent', parent_session_id: spec.parentId} : {}),
			},
			null,
			2,
		),
	);
	writeFile(path.join(dir, 'events.jsonl'), jsonl([{type: 'turn_started', at: spec.createdAt + 100}]));
	writeFile(path.join(dir, 'chat_history.jsonl'), jsonl(prompts.map(content => ({role: 'user', content}))));
	writeFile(path.join(dir, 'signals.json'), '');
	writeFile(path.join(dir, 'updates.jsonl.lock'), '');
	const group = path.dirname(dir);
	for (const [i, prompt] of prompts.entries()) {
		fs.appendFileSync(
			path.join(group, 'prompt_history.jsonl'),
			`${JSON.stringify({timestamp: iso(spec.createdAt + 100 + i * 300), session_id: spec.id, prompt, is_bash: false})}\n`,
		);
	}
	indexSession(home, spec, title, prompts.map(p => `${p}\n\nHello from the stand-in model.\n`).join('\n'));
	const log = (msg: string, extra: Record<string, unknown>) =>
		JSON.stringify({ts: iso(spec.createdAt), src: 'shell', pid: 4242, ver: '1.0.41', lvl: 'info', msg, ...extra});
	fs.mkdirSync(path.join(grokRoot(home), 'logs'), {recursive: true});
	fs.appendFileSync(
		path.join(grokRoot(home), 'logs', 'unified.jsonl'),
		`${log('session.setup.phase', {sid: spec.id, ctx: {method: 'session/new', phase: 'persistence_init', sessionId: spec.id}})}\n${log('startup timing', {ctx: {name: 'session.spawn', elapsed_ms: 96, session_id: spec.id}})}\n`,
	);
	return dir;
}

const CLI_SCHEMA = `
CREATE TABLE workspaces (id TEXT PRIMARY KEY, scope_key TEXT NOT NULL UNIQUE, canonical_path TEXT NOT NULL, git_root TEXT,
	display_name TEXT NOT NULL, last_seen_at TEXT NOT NULL) STRICT;
CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE, title TEXT,
	recap_text TEXT, recap_model TEXT, recap_updated_at TEXT, model TEXT NOT NULL, mode TEXT NOT NULL, cwd_at_start TEXT NOT NULL,
	cwd_last TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT;
CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL, role TEXT NOT NULL,
	message_json TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (session_id, seq)) STRICT;
CREATE TABLE tool_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	message_seq INTEGER NOT NULL, tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL, args_json TEXT NOT NULL, status TEXT NOT NULL,
	started_at TEXT NOT NULL, completed_at TEXT, UNIQUE(session_id, tool_call_id)) STRICT;
CREATE TABLE tool_results (id INTEGER PRIMARY KEY AUTOINCREMENT, tool_call_row_id INTEGER NOT NULL REFERENCES tool_calls(id) ON DELETE CASCADE,
	output_kind TEXT NOT NULL, output_json TEXT NOT NULL, success INTEGER NOT NULL, created_at TEXT NOT NULL) STRICT;
CREATE TABLE usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	message_seq INTEGER, source TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
	total_tokens INTEGER NOT NULL DEFAULT 0, cost_micros INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL) STRICT;
CREATE TABLE compactions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	first_kept_seq INTEGER NOT NULL, summary TEXT NOT NULL, tokens_before INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL) STRICT;
CREATE INDEX idx_sessions_workspace_updated ON sessions(workspace_id, updated_at DESC);
`;

export function grokCliDbPath(home: string): string {
	return path.join(grokRoot(home), 'grok.db');
}

/** Create grok.db (WAL, user_version 3) if it is not there yet. */
export function createGrokCliDb(home: string): string {
	const file = grokCliDbPath(home);
	if (fs.existsSync(file)) return file;
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const db = openDatabase(file);
	try {
		db.pragma('journal_mode = WAL');
		db.exec(CLI_SCHEMA);
		db.pragma('user_version = 3');
	} finally {
		db.close();
	}
	writeFile(path.join(grokRoot(home), 'user-settings.json'), JSON.stringify({defaultModel: 'grok-4'}));
	return file;
}

export interface GrokCliSpec {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly title?: string;
	/** Messages (user + assistant pairs); 0 = a session that was opened but never used. */
	readonly turns?: number;
	/** Add a tool call with its result, a usage event and a compaction. */
	readonly withTools?: boolean;
}

/** Insert a grok-cli session (and its workspace) the way SessionStore writes them. */
export function insertGrokCliSession(home: string, spec: GrokCliSpec): void {
	const db = openDatabase(createGrokCliDb(home));
	try {
		const iso = (ms: number) => new Date(ms).toISOString();
		const workspace = crypto.createHash('sha1').update(spec.cwd).digest('hex').slice(0, 16);
		db.prepare('INSERT OR IGNORE INTO workspaces (id, scope_key, canonical_path, git_root, display_name, last_seen_at) VALUES (?, ?, ?, NULL, ?, ?)').run(
			workspace,
			spec.cwd,
			spec.cwd,
			path.basename(spec.cwd),
			iso(spec.createdAt),
		);
		const turns = spec.turns ?? 1;
		db.prepare(
			"INSERT INTO sessions (id, workspace_id, title, model, mode, cwd_at_start, cwd_last, status, created_at, updated_at) VALUES (?, ?, ?, 'grok-4', 'agent', ?, ?, 'active', ?, ?)",
		).run(spec.id, workspace, spec.title ?? null, spec.cwd, spec.cwd, iso(spec.createdAt), iso(spec.createdAt + 300 * turns));
		const insert = db.prepare('INSERT INTO messages (session_id, seq, role, message_json, created_at) VALUES (?, ?, ?, ?, ?)');
		for (let i = 0; i < turns; i++) {
			insert.run(spec.id, i * 2, 'user', JSON.stringify({role: 'user', content: `hello ${i}`}), iso(spec.createdAt + 100 + i * 300));
			insert.run(
				spec.id,
				i * 2 + 1,
				'assistant',
				JSON.stringify({role: 'assistant', content: 'Hello from the stand-in model.'}),
				iso(spec.createdAt + 200 + i * 300),
			);
		}
		if (spec.withTools) {
			const call = db
				.prepare(
					"INSERT INTO tool_calls (session_id, message_seq, tool_call_id, tool_name, args_json, status, started_at) VALUES (?, 1, 'call_1', 'bash', '{}', 'done', ?)",
				)
				.run(spec.id, iso(spec.createdAt + 150));
			db.prepare("INSERT INTO tool_results (tool_call_row_id, output_kind, output_json, success, created_at) VALUES (?, 'text', '\"ok\"', 1, ?)").run(
				call.lastInsertRowid,
				iso(spec.createdAt + 160),
			);
			db.prepare("INSERT INTO usage_events (session_id, message_seq, source, model, created_at) VALUES (?, 1, 'agent', 'grok-4', ?)").run(
				spec.id,
				iso(spec.createdAt + 200),
			);
			db.prepare("INSERT INTO compactions (session_id, first_kept_seq, summary, created_at) VALUES (?, 0, 'summary', ?)").run(
				spec.id,
				iso(spec.createdAt + 250),
			);
		}
	} finally {
		db.close();
	}
}
