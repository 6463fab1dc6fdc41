import {obj, str} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {hasColumns} from '../common/dbRead.js';
import {compactUsage, count, decodeCursor, encodeCursor, messageOf, textOfContent} from '../common/messageRead.js';
import {withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import {dbFiles, q, SESSION_TABLES} from './store.js';
import {preparedOn} from '../common/statements.js';

interface SessionTokens {
	readonly tokens_input: number | null;
	readonly tokens_output: number | null;
	readonly tokens_cache_read: number | null;
	readonly tokens_cache_write: number | null;
}

/**
 * The session row's token columns. They default to 0, so all four 0 is "not recorded" (unknown),
 * never a figure.
 */
function sessionUsage(row: SessionTokens): TokenUsage | undefined {
	const u = {
		input: count(row.tokens_input),
		output: count(row.tokens_output),
		cacheRead: count(row.tokens_cache_read),
		cacheWrite: count(row.tokens_cache_write),
	};
	if (!u.input && !u.output && !u.cacheRead && !u.cacheWrite) return undefined;
	return compactUsage(u);
}

/** The session's row in one database, with its table. */
function sessionIn(db: ReadDb, id: string): {table: string; usage?: TokenUsage} | undefined {
	for (const table of SESSION_TABLES) {
		if (!hasColumns(db, table, ['id'])) continue;
		const tokens = hasColumns(db, table, ['tokens_input', 'tokens_output', 'tokens_cache_read', 'tokens_cache_write']);
		const row = preparedOn(
			db,
			`SELECT ${tokens ? 'tokens_input, tokens_output, tokens_cache_read, tokens_cache_write' : 'id'} FROM ${q(table)} WHERE id = ?`,
		).get(id) as SessionTokens | undefined;
		if (!row) continue;
		const usage = tokens ? sessionUsage(row) : undefined;
		return {table, ...(usage ? {usage} : {})};
	}
	return undefined;
}

/** 1.x: text parts after row `from`, with their message's role. */
function v1Parts(db: ReadDb, id: string, from: number): {row: number; messages: ConversationMessage[]} {
	const messages: ConversationMessage[] = [];
	let row = from;
	if (!hasColumns(db, 'part', ['message_id', 'session_id', 'data']) || !hasColumns(db, 'message', ['id', 'data'])) return {row, messages};
	const rows = preparedOn(
		db,
		'SELECT p.rowid AS r, p.data AS pd, m.data AS md, p.time_created AS t FROM part p JOIN message m ON m.id = p.message_id WHERE p.session_id = ? AND p.rowid > ? ORDER BY p.rowid',
	).all(id, from) as {r: number; pd: string; md: string; t: number | null}[];
	for (const r of rows) {
		row = Math.max(row, r.r);
		const part = parseJsonLine(r.pd);
		if (str(part, 'type') !== 'text' || part?.['synthetic'] === true) continue;
		const m = messageOf(str(parseJsonLine(r.md), 'role') ?? 'assistant', r.t ?? 0, textOfContent(part));
		if (m) messages.push(m);
	}
	return {row, messages};
}

/** 2.x: `session_message` rows after sequence `from`. */
function v2Messages(db: ReadDb, id: string, from: number): {row: number; messages: ConversationMessage[]} {
	const messages: ConversationMessage[] = [];
	let row = from;
	if (!hasColumns(db, 'session_message', ['session_id', 'seq', 'type', 'data'])) return {row, messages};
	const rows = preparedOn(db, 'SELECT seq, type, data, time_created AS t FROM session_message WHERE session_id = ? AND seq > ? ORDER BY seq').all(id, from) as {
		seq: number;
		type: string;
		data: string;
		t: number | null;
	}[];
	for (const r of rows) {
		row = Math.max(row, r.seq);
		const data = parseJsonLine(r.data);
		const text = str(data, 'text') ?? textOfContent(obj(data, 'content') ?? data?.['content']);
		const m = messageOf(r.type, r.t ?? 0, text);
		if (m) messages.push(m);
	}
	return {row, messages};
}

/** The session's text after `since`, from the first database that holds it (rows by rowid or seq). */
export function opencodeMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const before = decodeCursor(since);
	for (const file of dbFiles(ctx)) {
		const found = withReadOnlyDb(file, ctx.reads, db => {
			const session = sessionIn(db, id);
			if (!session) return undefined;
			const from = before?.sig === file ? (before.row ?? 0) : 0;
			const read = session.table === 'session_v2' ? v2Messages(db, id, from) : v1Parts(db, id, from);
			return {session, read, restart: before !== undefined && before.sig !== file};
		});
		if (!found) continue;
		const {session, read, restart} = found;
		return {messages: read.messages, cursor: encodeCursor({sig: file, row: read.row}), restart, ...(session.usage ? {usage: session.usage} : {})};
	}
	return undefined;
}
