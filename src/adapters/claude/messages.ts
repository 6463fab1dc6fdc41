import {isoMs, obj, str} from '../common/jsonl.js';
import {compactUsage, count, decodeCursor, encodeCursor, linesHolding, messageOf, readFilesSince, statIn, textOfContent} from '../common/messageRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import {claudeRoot, transcriptsIn} from './transcripts.js';

/** Lines that can be a user or assistant record (others are skipped unparsed). */
const MAIN_RECORDS = linesHolding('"user"', '"assistant"');

/** How many recent message ids a cursor remembers: claude writes one API message's usage on each of its records, one after another. */
const SEEN_IDS = 8;

function usageOf(record: Record<string, unknown>): TokenUsage | undefined {
	const usage = obj(obj(record, 'message'), 'usage');
	if (!usage) return undefined;
	return compactUsage({
		input: count(usage['input_tokens']),
		output: count(usage['output_tokens']),
		cacheRead: count(usage['cache_read_input_tokens']),
		cacheWrite: count(usage['cache_creation_input_tokens']),
	});
}

function add(total: TokenUsage | undefined, u: TokenUsage): TokenUsage {
	return {
		input: (total?.input ?? 0) + (u.input ?? 0),
		output: (total?.output ?? 0) + (u.output ?? 0),
		cacheRead: (total?.cacheRead ?? 0) + (u.cacheRead ?? 0),
		cacheWrite: (total?.cacheWrite ?? 0) + (u.cacheWrite ?? 0),
	};
}

/**
 * The main thread's user and assistant text after `since`. Usage is counted once per API message
 * id: claude writes the same `message.usage` on every record of one message (one per content block).
 */
export function claudeMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const files = [...transcriptsIn(ctx, claudeRoot(ctx), id)];
	if (files.length === 0) return undefined;
	const before = decodeCursor(since);
	const read = readFilesSince(files, before, statIn(ctx));
	const state = read.restart ? undefined : before?.state;
	let usage = state?.['usage'] as TokenUsage | undefined;
	const seen = new Set<string>(Array.isArray(state?.['seen']) ? (state['seen'] as string[]) : []);
	let headless = state?.['headless'] === true;
	const messages: ConversationMessage[] = [];
	const offsets = read.each(record => {
		const type = record['type'];
		if (type !== 'user' && type !== 'assistant') return;
		if (str(record, 'entrypoint')?.startsWith('sdk')) headless = true;
		if (record['isSidechain'] === true || record['isMeta'] === true) return;
		const message = obj(record, 'message');
		if (!message) return;
		const messageId = str(message, 'id');
		const u = usageOf(record);
		if (u && messageId !== undefined && !seen.has(messageId)) {
			seen.add(messageId);
			usage = add(usage, u);
		} else if (u && messageId === undefined) usage = add(usage, u);
		const m = messageOf(type, isoMs(record['timestamp']), textOfContent(message['content']));
		if (m) messages.push(m);
	}, MAIN_RECORDS);
	const cursor = encodeCursor({files: offsets, state: {...(usage ? {usage} : {}), seen: [...seen].slice(-SEEN_IDS), headless}});
	return {messages, cursor, restart: read.restart, ...(usage ? {usage} : {}), headless};
}
