import crypto from 'node:crypto';
import path from 'node:path';
import type {SqliteDb} from '../../system/sqlite.js';
import {jsonl} from './files.js';

// Codex CLI 0.171.0 on disk (FORMATS 2): rollouts under `sessions/YYYY/MM/DD/` and the state,
// thread-history and logs databases in their real schemas (./codexSchema.ts).

const iso = (ms: number) => new Date(ms).toISOString();
const pad = (n: number) => String(n).padStart(2, '0');

/** A UUID v7 for `ms` (codex thread ids are `Uuid::now_v7()`), random in the rest. */
export function uuidV7(ms: number): string {
	const hex = ms.toString(16).padStart(12, '0') + crypto.randomBytes(10).toString('hex');
	const v = `${hex.slice(0, 12)}7${hex.slice(13, 16)}${((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 32)}`;
	return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20, 32)}`;
}

/** `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl` in local time, as codex names it. */
export function rolloutRelPath(id: string, ms: number): string {
	const d = new Date(ms);
	const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
	const time = `${pad(d.getHours())}-${pad(d.getMinutes())}-${pad(d.getSeconds())}`;
	return path.join('sessions', String(d.getFullYear()), pad(d.getMonth() + 1), pad(d.getDate()), `rollout-${day}T${time}-${id}.jsonl`);
}

export interface RolloutSpec {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly prompt: string;
	readonly parent?: {readonly id: string; readonly depth: number};
	/** Only the session_meta line and injected context: a rollout with no real message. */
	readonly empty?: boolean;
	/** Started in the TUI (`codex`, source `cli`) rather than `codex exec`, as the samples were recorded. */
	readonly interactive?: boolean;
}

/** A rollout in the shape Codex CLI 0.171.0 writes (samples/codex). */
export function codexRollout(spec: RolloutSpec): string {
	const at = (offset: number) => iso(spec.createdAt + offset);
	const turnId = uuidV7(spec.createdAt + 100);
	const source = spec.parent
		? {subagent: {thread_spawn: {parent_thread_id: spec.parent.id, depth: spec.parent.depth, agent_path: null, agent_nickname: 'James', agent_role: null}}}
		: spec.interactive
			? 'cli'
			: 'exec';
	const meta = {
		account_scoped: true,
		session_id: spec.parent?.id ?? spec.id,
		id: spec.id,
		...(spec.parent ? {parent_thread_id: spec.parent.id} : {}),
		timestamp: at(0),
		cwd: spec.cwd,
		runtime_workspace_roots: [spec.cwd],
		originator: spec.interactive ? 'codex_cli_rs' : 'codex_exec',
		cli_version: '0.171.0',
		source,
		thread_source: spec.parent ? 'subagent' : 'user',
		model_provider: 'fake',
		base_instructions: {text: 'You are a coding agent running in the Codex CLI.'},
		history_mode: 'paginated',
	};
	const message = (ordinal: number, role: string, type: string, text: string) => ({
		timestamp: at(ordinal * 10),
		ordinal,
		type: 'response_item',
		payload: {type: 'message', id: `msg_${uuidV7(spec.createdAt)}`, role, content: [{type, text}]},
	});
	const records: object[] = [
		{timestamp: at(100), ordinal: 0, type: 'session_meta', payload: meta},
		{timestamp: at(110), ordinal: 1, type: 'event_msg', payload: {type: 'task_started', turn_id: turnId, started_at: Math.floor(spec.createdAt / 1000)}},
		message(2, 'developer', 'input_text', '<skills_instructions>\n## Skills\n</skills_instructions>'),
		message(3, 'user', 'input_text', `<environment_context>\n  <cwd>${spec.cwd}</cwd>\n</environment_context>`),
		{timestamp: at(40), ordinal: 4, type: 'turn_context', payload: {turn_id: turnId, cwd: spec.cwd, approval_policy: 'never', model: 'fake-model'}},
	];
	if (!spec.empty) {
		records.push(message(5, 'user', 'input_text', spec.prompt), message(6, 'assistant', 'output_text', 'Hello from the fake model.'), {
			timestamp: at(70),
			ordinal: 7,
			type: 'event_msg',
			payload: {type: 'task_complete', turn_id: turnId},
		});
	}
	return jsonl(records);
}

/** One thread as the databases record it; `rollout` is the rollout path the state row names. */
export interface CodexThread {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly prompt: string;
	readonly rollout: string;
	readonly parent?: string;
	readonly archived?: boolean;
	/** Started in the TUI (source `cli`), not by `codex exec`. */
	readonly interactive?: boolean;
}

/** `threads`, spawn edges and dynamic tools rows in state_5.sqlite. */
export function fillCodexState(db: SqliteDb, threads: readonly CodexThread[]): void {
	const insert = db.prepare(
		`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode,
			archived, first_user_message, created_at_ms, updated_at_ms, thread_source, preview, cli_version)
		VALUES (?, ?, ?, ?, ?, 'fake', ?, ?, 'read-only', 'never', ?, ?, ?, ?, ?, ?, '0.171.0')`,
	);
	for (const t of threads) {
		const source = t.parent ? JSON.stringify({subagent: {thread_spawn: {parent_thread_id: t.parent, depth: 1}}}) : t.interactive ? 'cli' : 'exec';
		const secs = Math.floor(t.createdAt / 1000);
		insert.run(
			t.id,
			t.rollout,
			secs,
			secs + 1,
			source,
			t.cwd,
			t.prompt,
			t.archived ? 1 : 0,
			t.prompt,
			t.createdAt,
			t.createdAt + 1000,
			t.parent ? 'subagent' : 'user',
			t.prompt,
		);
		if (t.parent) db.prepare("INSERT INTO thread_spawn_edges (parent_thread_id, child_thread_id, status) VALUES (?, ?, 'open')").run(t.parent, t.id);
		db.prepare("INSERT INTO thread_dynamic_tools (thread_id, position, name, description, input_schema) VALUES (?, 0, 'tool', 'a tool', '{}')").run(t.id);
	}
	db.prepare("INSERT INTO backfill_state (id, status, last_watermark, last_success_at, updated_at) VALUES (1, 'complete', NULL, 1, 1)").run();
}

/** One turn, one user item and the projection state per thread in thread_history_1.sqlite. */
export function fillCodexHistory(db: SqliteDb, threads: readonly CodexThread[]): void {
	threads.forEach((t, i) => {
		const turn = `turn-${i}`;
		db.prepare("INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status) VALUES (?, ?, 1, 'completed')").run(t.id, turn);
		db.prepare(
			"INSERT INTO thread_items (thread_id, turn_id, item_id, rollout_ordinal, created_at_ms, item_json, item_type) VALUES (?, ?, ?, 5, ?, ?, 'userMessage')",
		).run(t.id, turn, `item-${i}`, t.createdAt, JSON.stringify({type: 'userMessage', text: t.prompt}));
		db.prepare('INSERT INTO thread_history_projection_state (thread_id, next_rollout_byte_offset, next_rollout_ordinal) VALUES (?, 4000, 8)').run(t.id);
	});
}

/** A process log line and one line per thread in logs_2.sqlite. */
export function fillCodexLogs(db: SqliteDb, threads: readonly CodexThread[]): void {
	const insert = db.prepare(
		"INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, thread_id, process_uuid) VALUES (?, 0, 'INFO', 'codex_core', ?, ?, 'p-1')",
	);
	insert.run(1, 'process started', null);
	for (const t of threads) insert.run(Math.floor(t.createdAt / 1000), `turn finished for ${t.prompt}`, t.id);
}
