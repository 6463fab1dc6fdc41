import {isoMs, obj, str} from '../common/jsonl.js';
import {compactUsage, count, decodeCursor, encodeCursor, linesHolding, messageOf, readFilesSince, statIn, textOfContent} from '../common/messageRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import {verifyRolloutsOf} from './rollouts.js';

/** Context codex injects as user messages (instructions, environment): not what the user typed. */
const INJECTED = /^\s*<(environment_context|user_instructions|permissions instructions|user_shell_command|turn_aborted)|^\s*# AGENTS\.md instructions/;

/** Lines that can be a message, a token count or the session's meta (others are skipped unparsed). */
const READ_RECORDS = linesHolding('"message"', '"token_count"', '"session_meta"');

/**
 * `token_count.info.total_token_usage` is the thread's running total (cumulative, not one turn):
 * the last one read is the answer. `input_tokens` includes the cached part.
 */
function totalUsage(payload: Record<string, unknown>): TokenUsage | undefined {
	const total = obj(obj(payload, 'info'), 'total_token_usage');
	if (!total) return undefined;
	const input = count(total['input_tokens']);
	const cached = count(total['cached_input_tokens']);
	return compactUsage({
		input: input === undefined ? undefined : input - Math.min(input, cached ?? 0),
		output: count(total['output_tokens']),
		cacheRead: cached,
		cacheWrite: count(total['cache_write_input_tokens']),
	});
}

/** User and assistant text of the thread's rollouts after `since`. */
export function codexMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const files = verifyRolloutsOf(ctx, id).map(r => r.file);
	if (files.length === 0) return undefined;
	const before = decodeCursor(since);
	const read = readFilesSince(files, before, statIn(ctx));
	const state = read.restart ? undefined : before?.state;
	let usage = state?.['usage'] as TokenUsage | undefined;
	let headless = state?.['headless'] === true;
	const messages: ConversationMessage[] = [];
	const offsets = read.each(record => {
		const payload = obj(record, 'payload');
		if (!payload) return;
		const type = str(record, 'type');
		if (type === 'session_meta') {
			if (payload['source'] === 'exec') headless = true;
		} else if (type === 'event_msg' && payload['type'] === 'token_count') {
			usage = totalUsage(payload) ?? usage;
		} else if (type === 'response_item' && payload['type'] === 'message') {
			const role = str(payload, 'role');
			if (role !== 'user' && role !== 'assistant') return;
			const text = textOfContent(payload['content']);
			if (role === 'user' && INJECTED.test(text)) return;
			const m = messageOf(role, isoMs(record['timestamp']), text);
			if (m) messages.push(m);
		}
	}, READ_RECORDS);
	const cursor = encodeCursor({files: offsets, state: {...(usage ? {usage} : {}), headless}});
	return {messages, cursor, restart: read.restart, ...(usage ? {usage} : {}), headless};
}
