import {readSmallText} from '../common/jsonRecords.js';
import {isoMs, obj} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {addUsage, compactUsage, count, decodeCursor, encodeCursor, messageOf, signatureOf, statIn, textOfContent} from '../common/messageRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import path from 'node:path';
import {geminiRoot, legacyRecords, sessionsWithId} from './chats.js';

const SESSION_CONTEXT = '<session_context>';

/** gemini's per-message `tokens`: `input` counts the cached part too. */
function tokensOf(record: Record<string, unknown>): TokenUsage | undefined {
	const tokens = obj(record, 'tokens');
	if (!tokens) return undefined;
	const input = count(tokens['input']);
	const cached = count(tokens['cached']);
	return compactUsage({input: input === undefined ? undefined : input - Math.min(input, cached ?? 0), output: count(tokens['output']), cacheRead: cached});
}

/** The messages of one chat file as gemini shows them: the last version of each id, rewinds applied. */
function chatMessages(file: string): Record<string, unknown>[] {
	const body = readSmallText(file, Number.MAX_SAFE_INTEGER);
	if (body === undefined) return [];
	const records = file.endsWith('.json') ? legacyRecords(body).slice(1) : body.split('\n').map(parseJsonLine);
	const byId = new Map<string, Record<string, unknown>>();
	for (const record of records) {
		if (!record) continue;
		const rewind = record['$rewindTo'];
		if (typeof rewind === 'string') {
			const ids = [...byId.keys()];
			const at = ids.indexOf(rewind);
			for (const id of ids.slice(at < 0 ? 0 : at)) byId.delete(id);
		} else if (typeof record['id'] === 'string' && (record['type'] === 'user' || record['type'] === 'gemini')) {
			byId.set(record['id'], record);
		}
	}
	return [...byId.values()];
}

/**
 * What a chat's signature covers: its files, and the folders holding them (a chat file added
 * beside them moves a folder's mtime).
 */
function signatureOfChat(ctx: AdapterContext, files: readonly string[]): string {
	// Inside a full sync's refresh the listing stat()ed these already: one moment, no second stat.
	return signatureOf([...files, ...new Set(files.map(f => path.dirname(f)))], statIn(ctx));
}

/**
 * The files a cursor names, when each is a plain path under gemini's root; else undefined (an
 * older cursor, or one that names something else: the chat is then looked for by its id).
 */
function filesNamed(root: string, state: Readonly<Record<string, unknown>> | undefined): string[] | undefined {
	const named = state?.['files'];
	if (!Array.isArray(named) || named.length === 0) return undefined;
	const files: string[] = [];
	for (const rel of named) {
		if (typeof rel !== 'string' || rel === '' || path.isAbsolute(rel)) return undefined;
		const file = path.resolve(root, rel);
		if (!file.startsWith(root + path.sep)) return undefined;
		files.push(file);
	}
	return files;
}

/**
 * gemini rewrites and rewinds its chat files (`$set`, `$rewindTo`), so a chat is read whole again
 * whenever one of its files changed; tokens are summed over the messages that remain. The cursor
 * names the chat's files: when none of them nor their folders changed, nothing is read and no
 * other folder is looked at (a search hit's re-check costs a few stats, not a listing of every
 * project's chats).
 */
export function geminiMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const root = geminiRoot(ctx);
	const before = decodeCursor(since);
	const unchanged = (): MessageRead => ({
		messages: [],
		cursor: since ?? '',
		restart: false,
		...(before?.state?.['usage'] ? {usage: before.state['usage'] as TokenUsage} : {}),
	});
	const named = filesNamed(root, before?.state);
	if (named && before?.sig === signatureOfChat(ctx, named)) return unchanged();
	const files = sessionsWithId(ctx, id).flatMap(s => s.files.map(f => f.file));
	if (files.length === 0) return undefined;
	const sig = signatureOfChat(ctx, files);
	if (before?.sig === sig) return unchanged();
	const messages: ConversationMessage[] = [];
	let usage: TokenUsage | undefined;
	for (const file of files) {
		for (const record of chatMessages(file)) {
			usage = addUsage(usage, tokensOf(record));
			const text = textOfContent(record['content']);
			if (text.trimStart().startsWith(SESSION_CONTEXT)) continue;
			const m = messageOf(record['type'] === 'gemini' ? 'assistant' : 'user', isoMs(record['timestamp']), text);
			if (m) messages.push(m);
		}
	}
	const state = {files: files.map(f => path.relative(root, f)), ...(usage ? {usage} : {})};
	return {messages, cursor: encodeCursor({sig, state}), restart: since !== undefined, ...(usage ? {usage} : {})};
}
