import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {openDatabase} from '../../system/sqlite.js';
import {jsonl, writeFile} from './files.js';

// Antigravity CLI home in the FORMATS 5 layout: no real agy could be installed here, so the
// shapes follow FORMATS (table and column names, file names); payload blobs are opaque bytes.

/** A fresh agy conversation id (UUID v4, what agy mints). */
export function agyId(): string {
	return crypto.randomUUID();
}

export interface AgyConversationSpec {
	readonly id: string;
	/** Workspace URIs in summary order; the last one is the cwd. */
	readonly workspaces: readonly string[];
	readonly createdAt: number;
	readonly parentId?: string;
	readonly depth?: number;
	readonly title?: string;
	/** Steps in the conversation database (0 = a conversation that never ran). */
	readonly steps?: number;
	/** Write no brain folder (a conversation that produced no artifacts). */
	readonly noBrain?: boolean;
}

export function agyRoot(home: string): string {
	return path.join(home, '.gemini', 'antigravity-cli');
}

export function agyDbPath(home: string, id: string): string {
	return path.join(agyRoot(home), 'conversations', `${id}.db`);
}

export function agySummariesPath(home: string): string {
	return path.join(agyRoot(home), 'conversation_summaries.db');
}

const STEPS_DDL = `CREATE TABLE steps (idx INTEGER PRIMARY KEY, step_type INTEGER, status INTEGER, has_subtrajectory INTEGER,
	metadata BLOB, error_details BLOB, permissions BLOB, task_details BLOB, render_info BLOB, step_payload BLOB, step_format INTEGER);
CREATE TABLE trajectory_meta (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE parent_references (idx INTEGER PRIMARY KEY, reference BLOB);
CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB);`;

const SUMMARIES_DDL = `CREATE TABLE conversation_summaries (conversation_id TEXT PRIMARY KEY, title TEXT, preview TEXT,
	step_count INTEGER, last_modified_time INTEGER, workspace_uris TEXT, status INTEGER, source INTEGER, project_id TEXT,
	agent_name TEXT, parent_conversation_id TEXT, nesting_depth INTEGER, battle_id TEXT, winning_conversation_id TEXT,
	not_fully_idle INTEGER, killed INTEGER, last_user_input_time INTEGER, last_user_input_step_index INTEGER,
	app_data_dir TEXT, raw_summary BLOB, group_id TEXT)`;

/** Write one conversation: its own database, its brain transcript and its summary row. */
export function writeAgyConversation(home: string, spec: AgyConversationSpec): void {
	const root = agyRoot(home);
	const dbFile = agyDbPath(home, spec.id);
	fs.mkdirSync(path.dirname(dbFile), {recursive: true});
	const db = openDatabase(dbFile);
	try {
		db.exec(STEPS_DDL);
		const insert = db.prepare(
			'INSERT INTO steps (idx, step_type, status, has_subtrajectory, metadata, step_payload, step_format) VALUES (?, ?, ?, 0, ?, ?, 1)',
		);
		for (let i = 0; i < (spec.steps ?? 3); i++) insert.run(i, i % 2 === 0 ? 14 : 15, 3, Buffer.from(`meta-${i}`), Buffer.from(`\n\x08payload ${i}`));
		db.prepare('INSERT INTO trajectory_meta (key, value) VALUES (?, ?)').run('cascade', Buffer.from(spec.id));
		if (spec.parentId) db.prepare('INSERT INTO parent_references (idx, reference) VALUES (0, ?)').run(Buffer.from(`\n$${spec.parentId}`));
	} finally {
		db.close();
	}
	fs.chmodSync(dbFile, 0o600);
	if (!spec.noBrain) {
		const transcript = path.join(root, 'brain', spec.id, '.system_generated', 'logs', 'transcript.jsonl');
		const at = (offset: number) => new Date(spec.createdAt + offset).toISOString();
		writeFile(
			transcript,
			jsonl([
				{source: 'USER_EXPLICIT', type: 'USER_INPUT', content: `<USER_REQUEST>${spec.title ?? 'hello'}</USER_REQUEST>`, created_at: at(0)},
				{source: 'MODEL', type: 'PLANNER_RESPONSE', content: 'Hello from the stand-in model.', created_at: at(400)},
			]),
		);
		writeFile(path.join(root, 'brain', spec.id, 'task.md'), `# ${spec.title ?? 'task'}\n`);
	}
	const summaries = openDatabase(agySummariesPath(home));
	try {
		summaries.pragma('journal_mode = WAL');
		summaries.exec(`${SUMMARIES_DDL.replace('CREATE TABLE', 'CREATE TABLE IF NOT EXISTS')}`);
		summaries
			.prepare(
				`INSERT INTO conversation_summaries (conversation_id, title, preview, step_count, last_modified_time, workspace_uris,
					status, source, project_id, agent_name, parent_conversation_id, nesting_depth, not_fully_idle, killed, last_user_input_time)
				 VALUES (?, ?, ?, ?, ?, ?, 1, 1, 'default-cli-project', ?, ?, ?, 0, 0, ?)`,
			)
			.run(
				spec.id,
				spec.title ?? 'hello',
				spec.title ?? 'hello',
				spec.steps ?? 3,
				Math.floor((spec.createdAt + 400) / 1000),
				JSON.stringify(spec.workspaces.map(w => pathToFileURL(w).href)),
				spec.parentId ? 'subagent' : 'agy',
				spec.parentId ?? null,
				spec.depth ?? 0,
				Math.floor(spec.createdAt / 1000),
			);
	} finally {
		summaries.close();
	}
}

/** `cache/last_conversations.json` as Go's MarshalIndent writes it (sorted keys, two spaces). */
export function writeLastConversations(home: string, claims: Readonly<Record<string, string>>): void {
	const sorted = Object.fromEntries(Object.entries(claims).sort(([a], [b]) => a.localeCompare(b)));
	writeFile(path.join(agyRoot(home), 'cache', 'last_conversations.json'), `${JSON.stringify(sorted, null, 2)}\n`);
}
