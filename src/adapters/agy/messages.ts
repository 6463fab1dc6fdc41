import {toEpochMs} from '../common/jsonRecords.js';
import {str} from '../common/jsonl.js';
import {decodeCursor, encodeCursor, existsIn, messageOf, readFilesSince, statIn, textOfContent} from '../common/messageRead.js';
import type {AdapterContext, ConversationMessage, MessageRead} from '../types.js';
import {agyPaths, conversationDb, transcriptFile} from './store.js';

/**
 * agy's readable record of a conversation is `brain/<id>/…/transcript.jsonl` (its database holds
 * protobuf steps): read by byte offset. agy records no token counts.
 */
export function agyMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const paths = agyPaths(ctx);
	if (!existsIn(ctx)(conversationDb(paths, id))) return undefined;
	// A transcript not there is skipped by the read (and restarts it when the cursor named it).
	const read = readFilesSince([transcriptFile(paths, id)], decodeCursor(since), statIn(ctx));
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
