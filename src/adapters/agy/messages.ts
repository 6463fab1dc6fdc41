import fs from 'node:fs';
import {toEpochMs} from '../common/jsonRecords.js';
import {str} from '../common/jsonl.js';
import {decodeCursor, encodeCursor, messageOf, readFilesSince, statIn, textOfContent} from '../common/messageRead.js';
import type {AdapterContext, ConversationMessage, MessageRead} from '../types.js';
import {agyPaths, conversationDb, transcriptFile} from './store.js';

/**
 * agy's readable record of a conversation is `brain/<id>/…/transcript.jsonl` (its database holds
 * protobuf steps): read by byte offset. agy records no token counts.
 */
export function agyMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const paths = agyPaths(ctx);
	if (!fs.existsSync(conversationDb(paths, id))) return undefined;
	const file = transcriptFile(paths, id);
	const read = readFilesSince(fs.existsSync(file) ? [file] : [], decodeCursor(since), statIn(ctx));
	const messages: ConversationMessage[] = [];
	const offsets = read.each(record => {
		const source = str(record, 'source');
		const role = source === 'USER_EXPLICIT' ? 'user' : source === 'MODEL' ? 'assistant' : undefined;
		if (!role) return;
		const text = textOfContent(record['content']).replace(/<\/?USER_REQUEST>/g, '');
		const m = messageOf(role, toEpochMs(record['created_at']), text);
		if (m) messages.push(m);
	});
	return {messages, cursor: encodeCursor({files: offsets}), restart: read.restart};
}
