import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {openDatabase} from '../../system/sqlite.js';

// Hermes Agent stores as hermes 0.19.0 writes them (schema version 22, read from a real
// state.db; columns mam-tui never reads are trimmed from sessions and messages): state.db in WAL
// mode with two FTS5 indexes over messages kept in step by triggers, the TUI's prompt history
// (.hermes_history) and logs/agent.log lines tagged with the session id.

/** `YYYYMMDD_HHMMSS_<6 hex>` for a start time, as the hermes CLI mints it. */
export function hermesId(startedAt: number): string {
	const iso = new Date(startedAt).toISOString();
	const stamp = `${iso.slice(0, 10).replaceAll('-', '')}_${iso.slice(11, 19).replaceAll(':', '')}`;
	return `${stamp}_${crypto.randomBytes(3).toString('hex')}`;
}

export const HERMES_SCHEMA = `
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
	id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT,
	display_name TEXT, origin_json TEXT, expiry_finalized INTEGER DEFAULT 0, model TEXT, model_config TEXT, system_prompt TEXT,
	parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
	tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT,
	git_repo_root TEXT, billing_provider TEXT, billing_base_url TEXT, title TEXT, api_call_count INTEGER DEFAULT 0,
	profile_name TEXT, rewind_count INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
	FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE messages (
	id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content TEXT,
	tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
	reasoning TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
	compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT);
CREATE TABLE session_model_usage (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, model TEXT NOT NULL, billing_provider TEXT NOT NULL DEFAULT '',
	billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT '', task TEXT NOT NULL DEFAULT '',
	api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
	first_seen REAL, last_seen REAL,
	PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task));
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE compression_locks (session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE async_delegations (
	delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL, origin_ui_session_id TEXT NOT NULL DEFAULT '', parent_session_id TEXT,
	state TEXT NOT NULL, dispatched_at REAL NOT NULL, completed_at REAL, updated_at REAL NOT NULL, event_json TEXT, result_json TEXT,
	delivery_state TEXT NOT NULL DEFAULT 'pending', delivery_attempts INTEGER NOT NULL DEFAULT 0, owner_pid INTEGER);
CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, session_key));
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX idx_session_model_usage_session ON session_model_usage(session_id);
`;

/** hermes 0.19's two FTS5 indexes: plain tables (their own copy of the text), kept in step by triggers. */
export const HERMES_FTS = ['messages_fts', 'messages_fts_trigram']
	.map(
		(t, i) => `
CREATE VIRTUAL TABLE ${t} USING fts5(content${i === 1 ? ", tokenize='trigram'" : ''});
CREATE TRIGGER ${t}_insert AFTER INSERT ON messages BEGIN
	INSERT INTO ${t}(rowid, content) VALUES (new.id, COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')); END;
CREATE TRIGGER ${t}_delete AFTER DELETE ON messages BEGIN
	DELETE FROM ${t} WHERE rowid = old.id; END;`,
	)
	.join('\n');

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
	/** What the user typed first (hermes stores it as the first user message); default `hello 0 from <id>`. */
	readonly prompt?: string;
}

/** Create `<home>/state.db` (WAL, as hermes leaves it) with the schema; `fts: false` leaves the indexes out. */
export function createHermesStore(home: string, options: {fts?: boolean} = {}): string {
	const file = path.join(home, 'state.db');
	fs.mkdirSync(home, {recursive: true});
	const db = openDatabase(file);
	try {
		db.pragma('journal_mode = WAL');
		db.exec(HERMES_SCHEMA);
		if (options.fts !== false) db.exec(HERMES_FTS);
		db.prepare('INSERT INTO schema_version (version) VALUES (22)').run();
		db.prepare("INSERT INTO state_meta (key, value) VALUES ('ghost_session_prune_v1', '1')").run();
	} finally {
		db.close();
	}
	return file;
}

/** Insert a session, its messages, a model-usage row, its prompt history entries and its log lines. */
export function insertHermesSession(home: string, spec: HermesSessionSpec): void {
	const db = openDatabase(path.join(home, 'state.db'));
	const seconds = (ms: number) => ms / 1000;
	const prompts: string[] = [];
	try {
		db.prepare(
			`INSERT INTO sessions (id, source, session_key, model, model_config, system_prompt, parent_session_id, started_at, ended_at,
				end_reason, message_count, cwd, git_repo_root, title, billing_provider)
			 VALUES (?, ?, ?, 'stand-in', ?, 'You are Hermes Agent.', ?, ?, ?, ?, ?, ?, NULL, ?, 'custom')`,
		).run(
			spec.id,
			spec.source ?? 'cli',
			spec.sessionKey ?? null,
			JSON.stringify(spec.modelConfig ?? {max_iterations: 90, reasoning_config: null, max_tokens: null}),
			spec.parentId ?? null,
			seconds(spec.startedAt),
			spec.endedAt === undefined ? null : seconds(spec.endedAt),
			spec.endReason ?? null,
			(spec.turns ?? 1) * 2,
			spec.cwd ?? null,
			spec.title ?? null,
		);
		const insert = db.prepare('INSERT INTO messages (session_id, role, content, timestamp, finish_reason) VALUES (?, ?, ?, ?, ?)');
		for (let i = 0; i < (spec.turns ?? 1); i++) {
			const prompt = i === 0 && spec.prompt !== undefined ? spec.prompt : `hello ${i} from ${spec.id}`;
			prompts.push(prompt);
			insert.run(spec.id, 'user', prompt, seconds(spec.startedAt + 100 + i * 200), null);
			insert.run(spec.id, 'assistant', 'Hello from the stand-in model.', seconds(spec.startedAt + 200 + i * 200), 'stop');
		}
		db.prepare(
			'INSERT INTO session_model_usage (session_id, model, billing_provider, api_call_count, input_tokens, output_tokens) VALUES (?, ?, ?, 1, 12, 6)',
		).run(spec.id, 'stand-in', 'custom');
	} finally {
		db.close();
	}
	// Delegate runs take no typed prompt and write no TUI history.
	if (spec.source === 'subagent') return;
	const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '000');
	fs.mkdirSync(home, {recursive: true});
	fs.appendFileSync(path.join(home, '.hermes_history'), prompts.map((p, i) => `\n# ${stamp(spec.startedAt + 100 + i * 200)}\n+${p}\n`).join(''));
	fs.mkdirSync(path.join(home, 'logs'), {recursive: true});
	fs.appendFileSync(
		path.join(home, 'logs', 'agent.log'),
		prompts
			.map(
				p =>
					`${stamp(spec.startedAt)} INFO [${spec.id}] agent.turn_context: conversation turn: session=${spec.id} model=stand-in provider=custom platform=cli history=0 msg='${p}'\n`,
			)
			.join(''),
	);
}
