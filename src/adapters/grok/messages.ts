import path from 'node:path';
import {parseJsonOrUndefined, readSmallText, toEpochMs} from '../common/jsonRecords.js';
import {obj, str} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {hasColumns} from '../common/dbRead.js';
import {compactUsage, count, decodeCursor, encodeCursor, existsIn, messageOf, readFilesSince, statIn, textOfContent} from '../common/messageRead.js';
import {withReadOnlyDb} from '../../system/sqliteRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import {buildSessionOf, cliDb, layoutOf} from './build.js';
import {preparedOn} from '../common/statements.js';

const CHUNK_ROLES: Readonly<Record<string, string>> = {user_message_chunk: 'user', agent_message_chunk: 'assistant'};

/** The first of `keys` that holds a count. */
function firstCount(record: Record<string, unknown> | undefined, keys: readonly string[]): number | undefined {
	for (const key of keys) {
		const n = count(record?.[key]);
		if (n !== undefined) return n;
	}
	return undefined;
}

/**
 * Grok Build's `usage.json` (the session's totals). Its field names are not documented
 * (REAL.md lists the file only), so the usual spellings are tried; none found: unknown.
 */
function buildUsage(dir: string): TokenUsage | undefined {
	const parsed = parseJsonOrUndefined(readSmallText(path.join(dir, 'usage.json'), 1024 * 1024)) as Record<string, unknown> | undefined;
	if (!parsed) return undefined;
	const u = obj(parsed, 'total') ?? obj(parsed, 'usage') ?? parsed;
	return compactUsage({
		input: firstCount(u, ['input_tokens', 'inputTokens', 'prompt_tokens', 'promptTokens']),
		output: firstCount(u, ['output_tokens', 'outputTokens', 'completion_tokens', 'completionTokens']),
		cacheRead: firstCount(u, ['cache_read_input_tokens', 'cached_input_tokens', 'cachedInputTokens', 'cache_read_tokens', 'cached_tokens']),
		cacheWrite: firstCount(u, ['cache_creation_input_tokens', 'cache_write_tokens', 'cacheWriteTokens']),
	});
}

/** Grok Build: `updates.jsonl` by byte offset; consecutive chunks of one speaker make one message. */
function buildMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const session = buildSessionOf(ctx, id);
	if (!session) return undefined;
	const file = path.join(session.dir, 'updates.jsonl');
	if (!existsIn(ctx)(file)) return undefined;
	const read = readFilesSince([file], decodeCursor(since), statIn(ctx));
	const messages: ConversationMessage[] = [];
	let current: {role: string; at: number; parts: string[]} | undefined;
	const flush = () => {
		const m = current ? messageOf(current.role, current.at, current.parts.join('')) : undefined;
		if (m) messages.push(m);
		current = undefined;
	};
	const offsets = read.each(record => {
		const update = obj(obj(record, 'params'), 'update');
		const role = CHUNK_ROLES[str(update, 'sessionUpdate') ?? ''];
		if (role === undefined) return;
		if (current?.role !== role) flush();
		current ??= {role, at: toEpochMs(record['timestamp']) ?? 0, parts: []};
		current.parts.push(textOfContent(update?.['content']));
	});
	flush();
	const usage = buildUsage(session.dir);
	return {messages, cursor: encodeCursor({files: offsets}), restart: read.restart, ...(usage ? {usage} : {})};
}

/** grok-cli: `messages` rows after `seq`; usage is the sum of its `usage_events`. */
function cliMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const db = cliDb(ctx);
	if (!existsIn(ctx)(db)) return undefined;
	return withReadOnlyDb(db, ctx.reads, handle => {
		if (!preparedOn(handle, 'SELECT 1 FROM sessions WHERE id = ?').get(id)) return undefined;
		let row = decodeCursor(since)?.row ?? -1;
		const messages: ConversationMessage[] = [];
		if (hasColumns(handle, 'messages', ['session_id', 'seq', 'role', 'message_json'])) {
			const rows = preparedOn(
				handle,
				"SELECT seq, role, message_json AS j, created_at AS t FROM messages WHERE session_id = ? AND seq > ? AND role IN ('user', 'assistant') ORDER BY seq",
			).all(id, row) as {
				seq: number;
				role: string;
				j: string;
				t: unknown;
			}[];
			for (const r of rows) {
				row = Math.max(row, r.seq);
				const m = messageOf(r.role, toEpochMs(r.t), textOfContent(parseJsonLine(r.j)?.['content']));
				if (m) messages.push(m);
			}
		}
		let usage: TokenUsage | undefined;
		if (hasColumns(handle, 'usage_events', ['session_id', 'input_tokens', 'output_tokens'])) {
			const sum = preparedOn(handle, 'SELECT count(*) AS n, sum(input_tokens) AS i, sum(output_tokens) AS o FROM usage_events WHERE session_id = ?').get(
				id,
			) as {
				n: number;
				i: number | null;
				o: number | null;
			};
			if (sum.n > 0 && ((sum.i ?? 0) > 0 || (sum.o ?? 0) > 0)) usage = compactUsage({input: count(sum.i), output: count(sum.o)});
		}
		return {messages, cursor: encodeCursor({row}), restart: false, ...(usage ? {usage} : {})};
	});
}

export function grokMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	return layoutOf(id) === 'build' ? buildMessages(ctx, id, since) : cliMessages(ctx, id, since);
}
