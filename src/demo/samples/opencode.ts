import crypto from 'node:crypto';
import path from 'node:path';
import type {SqliteDb} from '../../system/sqlite.js';
import {writeDb, writeFile} from './files.js';
import {OPENCODE_MIGRATED_SCHEMA, OPENCODE_V1_SCHEMA, OPENCODE_V2_SCHEMA} from './opencodeSchema.js';

// opencode on disk (FORMATS 3): `opencode.db` with the 1.x tables, the 2.x `session_v2` family,
// or both (a migrated database), plus the legacy pre-SQLite JSON files under `storage/`.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(n: number): string {
	return [...crypto.randomBytes(n)].map(b => BASE62[b % 62]).join('');
}

/** `ses_` + 12 hex + 14 base62, the shape opencode mints (ids.ts). */
export function opencodeId(prefix = 'ses'): string {
	return `${prefix}_${crypto.randomBytes(6).toString('hex')}${base62(14)}`;
}

/** Which tables hold a session: 1.x `session`, 2.x `session_v2`, or both (backfilled under the same id). */
export type Generation = 'v1' | 'v2' | 'both';

export interface OcSession {
	readonly id: string;
	readonly projectId: string;
	readonly directory: string;
	readonly createdAt: number;
	readonly title: string;
	readonly gen: Generation;
	readonly parentId?: string;
	/** The 1.18 bug: the child row has parent_id NULL; only the parent's task part names it. */
	readonly parentIdMissing?: boolean;
	/** Children to name in a task-tool part of this session. */
	readonly taskChildren?: readonly string[];
	/** Write no message at all (a session that was never used). */
	readonly empty?: boolean;
}

function insertSessionRow(db: SqliteDb, table: 'session' | 'session_v2', s: OcSession): void {
	const parent = s.parentIdMissing ? null : (s.parentId ?? null);
	db.prepare(
		`INSERT INTO ${table} (id, project_id, parent_id, slug, directory, path, title, version, time_created, time_updated) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?)`,
	).run(s.id, s.projectId, parent, 'calm-orchid', s.directory, s.title, table === 'session' ? '1.18.33' : '2.0.25', s.createdAt, s.createdAt + 5000);
}

function insertV1Messages(db: SqliteDb, s: OcSession): void {
	const user = opencodeId('msg');
	const assistant = opencodeId('msg');
	const msg = db.prepare('INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)');
	const part = db.prepare('INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)');
	msg.run(
		user,
		s.id,
		s.createdAt + 80,
		s.createdAt + 80,
		JSON.stringify({role: 'user', time: {created: s.createdAt + 80}, agent: 'build', model: {providerID: 'fake', modelID: 'fake-model'}}),
	);
	part.run(opencodeId('prt'), user, s.id, s.createdAt + 90, s.createdAt + 90, JSON.stringify({type: 'text', text: `"${s.title}"`}));
	msg.run(
		assistant,
		s.id,
		s.createdAt + 100,
		s.createdAt + 200,
		JSON.stringify({parentID: user, role: 'assistant', mode: 'build', path: {cwd: s.directory, root: s.directory}}),
	);
	part.run(opencodeId('prt'), assistant, s.id, s.createdAt + 150, s.createdAt + 150, JSON.stringify({type: 'text', text: 'Hello from the fake model.'}));
	for (const child of s.taskChildren ?? []) {
		const data = {
			type: 'tool',
			tool: 'task',
			callID: 'call_fake18',
			state: {status: 'completed', input: {description: 'fake subtask', subagent_type: 'general'}, metadata: {parentSessionId: s.id, sessionId: child}},
		};
		part.run(opencodeId('prt'), assistant, s.id, s.createdAt + 160, s.createdAt + 160, JSON.stringify(data));
	}
}

function insertV2Messages(db: SqliteDb, s: OcSession): void {
	const row = db.prepare('INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)');
	row.run(opencodeId('msg'), s.id, 'user', 1, s.createdAt + 80, s.createdAt + 80, JSON.stringify({text: s.title}));
	row.run(opencodeId('msg'), s.id, 'assistant', 2, s.createdAt + 100, s.createdAt + 200, JSON.stringify({text: 'Hello from the fake model.'}));
	db.prepare(
		"INSERT INTO session_input (id, session_id, prompt, delivery, admitted_seq, promoted_seq, time_created) VALUES (?, ?, ?, 'immediate', 1, 1, ?)",
	).run(opencodeId('inp'), s.id, s.title, s.createdAt + 70);
	db.prepare("INSERT INTO session_context_epoch (session_id, baseline, snapshot, baseline_seq) VALUES (?, '{}', '{}', 1)").run(s.id);
}

function insertEvents(db: SqliteDb, s: OcSession): void {
	db.prepare('INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, 2, NULL)').run(s.id);
	const event = db.prepare('INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)');
	event.run(opencodeId('evt'), s.id, 0, 'session.created.1', JSON.stringify({sessionID: s.id, info: {id: s.id, directory: s.directory}}));
	event.run(opencodeId('evt'), s.id, 1, 'session.updated.1', JSON.stringify({sessionID: s.id, info: {id: s.id, title: s.title}}));
}

/** Write sessions into an opencode database of the layout `schema` creates. */
export function fillOpencodeDb(db: SqliteDb, sessions: readonly OcSession[], projects: readonly {id: string; worktree: string}[]): void {
	const hasV1 = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'session'").get() !== undefined;
	for (const p of projects) {
		db.prepare("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, 'git', 1, 1, '[]')").run(p.id, p.worktree);
	}
	for (const s of sessions) {
		if (s.gen !== 'v2' && hasV1) insertSessionRow(db, 'session', s);
		if (s.gen !== 'v1') insertSessionRow(db, 'session_v2', s);
		if (!s.empty) {
			if (s.gen !== 'v2' && hasV1) insertV1Messages(db, s);
			if (s.gen !== 'v1') insertV2Messages(db, s);
		}
		insertEvents(db, s);
	}
	if (hasV1) {
		const first = sessions[0];
		if (first) {
			db.prepare(
				"INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES (?, 'a todo', 'pending', 'high', 0, 1, 1)",
			).run(first.id);
			db.prepare(
				"INSERT INTO session_share (session_id, id, secret, url, time_created, time_updated) VALUES (?, 'shr', 'secret', 'https://opncd.ai/s/x', 1, 1)",
			).run(first.id);
		}
	}
}

/** Create `opencode.db` (WAL, as opencode runs it) with the given layout. */
export function writeOpencodeDb(
	file: string,
	layout: 'v1' | 'v2' | 'migrated',
	sessions: readonly OcSession[],
	projects: readonly {id: string; worktree: string}[],
): void {
	const schema = layout === 'v2' ? OPENCODE_V2_SCHEMA : layout === 'v1' ? OPENCODE_V1_SCHEMA : OPENCODE_MIGRATED_SCHEMA;
	writeDb(file, schema, db => fillOpencodeDb(db, sessions, projects));
}

/** Legacy pre-SQLite JSON files of one session (FORMATS 3 `storage/`); returns its message id. */
export function writeOpencodeLegacy(storage: string, s: OcSession): string {
	const msg = opencodeId('msg');
	writeFile(
		path.join(storage, 'session', s.projectId, `${s.id}.json`),
		JSON.stringify({id: s.id, projectID: s.projectId, directory: s.directory, title: s.title}, null, 2),
	);
	writeFile(path.join(storage, 'message', s.id, `${msg}.json`), JSON.stringify({id: msg, sessionID: s.id, role: 'user'}));
	writeFile(path.join(storage, 'part', msg, `${opencodeId('prt')}.json`), JSON.stringify({type: 'text', text: 'legacy part'}));
	writeFile(path.join(storage, 'todo', `${s.id}.json`), '[]');
	writeFile(path.join(storage, 'session_diff', `${s.id}.json`), '[]');
	return msg;
}
