import {columnsOf, hasColumns} from '../common/dbRead.js';
import {compactUsage, count, decodeCursor, encodeCursor, messageOf} from '../common/messageRead.js';
import {withReadOnlyDb, type ReadDb} from '../../system/sqliteRead.js';
import type {AdapterContext, ConversationMessage, MessageRead, TokenUsage} from '../types.js';
import {hermesRoot, storesOf} from './store.js';
import {preparedOn} from '../common/statements.js';
import {memo, memoKind} from '../common/refresh.js';

/** The profile stores, listed once per refresh: an index build reads thousands of sessions in one. */
const STORES = memoKind<ReturnType<typeof storesOf>>('hermes:message-stores');

const TOKEN_COLUMNS = {input: 'input_tokens', output: 'output_tokens', cacheRead: 'cache_read_tokens', cacheWrite: 'cache_write_tokens'} as const;

/** The session row's token columns, else the sum of its `session_model_usage` rows; unknown when neither is there. */
function usageIn(db: ReadDb, id: string): TokenUsage | undefined {
	const have = columnsOf(db, 'sessions');
	const cols = Object.entries(TOKEN_COLUMNS).filter(([, c]) => have.has(c));
	if (cols.length > 0) {
		const row = preparedOn(db, `SELECT ${cols.map(([, c]) => `"${c}"`).join(', ')} FROM sessions WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
		if (row) {
			const u = Object.fromEntries(cols.map(([k, c]) => [k, count(row[c])]));
			if (Object.values(u).some(v => v !== undefined && v > 0)) return compactUsage(u);
		}
	}
	if (!hasColumns(db, 'session_model_usage', ['session_id', 'input_tokens', 'output_tokens'])) return undefined;
	const sum = preparedOn(db, 'SELECT count(*) AS n, sum(input_tokens) AS i, sum(output_tokens) AS o FROM session_model_usage WHERE session_id = ?').get(id) as {
		n: number;
		i: number | null;
		o: number | null;
	};
	return sum.n > 0 ? compactUsage({input: count(sum.i), output: count(sum.o)}) : undefined;
}

/** The session's user and assistant messages after message id `since`, from the first profile store holding it. */
export function hermesMessages(ctx: AdapterContext, id: string, since: string | undefined): MessageRead | undefined {
	const before = decodeCursor(since);
	const root = hermesRoot(ctx);
	for (const store of memo(ctx, STORES.of(root), () => storesOf(ctx, root))) {
		const found = withReadOnlyDb(store.db, ctx.reads, db => {
			const session = preparedOn(db, 'SELECT source FROM sessions WHERE id = ?').get(id) as {source: string | null} | undefined;
			if (!session) return undefined;
			const restart = before !== undefined && before.sig !== store.db;
			let row = restart || before === undefined ? 0 : (before.row ?? 0);
			const messages: ConversationMessage[] = [];
			const rows = preparedOn(
				db,
				"SELECT id, role, content, timestamp FROM messages WHERE session_id = ? AND id > ? AND role IN ('user', 'assistant') ORDER BY id",
			).all(id, row) as {
				id: number;
				role: string;
				content: string | null;
				timestamp: number | null;
			}[];
			for (const r of rows) {
				row = Math.max(row, r.id);
				const m = messageOf(r.role, r.timestamp === null ? 0 : Math.round(r.timestamp * 1000), r.content ?? '');
				if (m) messages.push(m);
			}
			const usage = usageIn(db, id);
			const headless = session.source !== null && session.source !== 'cli' && session.source !== 'tui';
			return {messages, cursor: encodeCursor({sig: store.db, row}), restart, headless, ...(usage ? {usage} : {})};
		});
		if (found) return found;
	}
	return undefined;
}
