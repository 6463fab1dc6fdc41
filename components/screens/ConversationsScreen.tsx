import React from 'react';
import {Box, Text} from 'ink';
import type {Conversation, SessionRecord} from '../../src/domain/types.js';
import {shortId} from '../../src/domain/ids.js';
import type {TokenUsage} from '../../src/domain/usage.js';
import {usageCell} from '../../src/domain/usage.js';
import type {ConversationScope} from '../../src/store/state.js';
import {age, EMPTY_CELL, fit, RESUME_COLOR, resumeText, shortenPath} from '../format.js';
import {windowStart} from '../widgets/SessionTable.js';

export interface ConversationsScreenProps {
	/** The rows to show: the scope and the search already applied (`visibleConversations`). */
	readonly conversations: readonly Conversation[];
	readonly sessions: readonly SessionRecord[];
	readonly scope: ConversationScope;
	/** The search text, and whether its field is open. */
	readonly search: string;
	readonly searching: boolean;
	/** For the search text: the index's snippet of each conversation whose messages match, by `agent:id`. */
	readonly snippets?: ReadonlyMap<string, string> | undefined;
	/** Tokens each conversation used (`agent:id`), from the search index; null until it was read. */
	readonly usage?: ReadonlyMap<string, TokenUsage> | null;
	/** The selected row's folder and its conversations' tokens summed ('' until the index was read). */
	readonly folderLine?: string;
	/** `H`: the message search also lists sub-agent and headless conversations. */
	readonly hidden?: boolean;
	/** Every folder was asked for and has not come yet. */
	readonly loadingAll: boolean;
	readonly cursor: number;
	/** Lines available for the whole screen. */
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly now: number;
}

/** The narrowest terminal that shows the tokens column (IN/OUT/CACHE). */
const TOKENS_FROM = 150;

/** What the adapters find on disk, registered or not: in the registry's folders, or in every folder (`A`). */
export function ConversationsScreen(props: ConversationsScreenProps): React.JSX.Element {
	const {conversations, sessions, scope, search, searching, loadingAll, cursor, height, width, home, now, snippets, hidden, usage, folderLine} = props;
	const where = scope === 'all' ? `every folder${loadingAll ? ' (reading…)' : ''}` : "the registry's folders";
	const searchLine = searching || search ? `search: ${search}${searching ? '▏' : ''}` : '/ searches titles, ids, folders and message text';
	const top = (
		<Text wrap="truncate">
			<Text bold>{`${conversations.length} in ${where}`}</Text>
			{` · A ${scope === 'all' ? "registry's folders" : 'every folder'} · H ${hidden ? 'hide' : 'show'} sub-agents and headless · ${searchLine}`}
		</Text>
	);
	if (conversations.length === 0) {
		return (
			<Box flexDirection="column">
				{top}
				<Text>
					{search
						? 'No conversation matches the search (/ then esc clears it).'
						: 'No conversations found on disk here yet. A switches folders; c or esc goes back.'}
				</Text>
			</Box>
		);
	}
	const registered = new Map(sessions.filter(s => s.agentSessionId).map(s => [`${s.agent}:${s.agentSessionId}`, s.name]));
	const rows = Math.max(1, height - 3);
	const start = windowStart(cursor, rows, conversations.length);
	const wide = width >= 120;
	const mid = width >= 100;
	// The title (where a search shows its snippet) keeps about 25 columns at 120: the tokens column comes from 150.
	const w = {
		agent: 8,
		id: mid ? 14 : 12,
		registered: mid ? 14 : 10,
		resume: wide ? 22 : 12,
		age: 4,
		kids: 4,
		tokens: width >= TOKENS_FROM ? 18 : 0,
		cwd: wide ? 20 : 12,
	};
	const used = 3 + Object.values(w).reduce((sum, n) => sum + (n > 0 ? n + 1 : 0), 0);
	// Unknown (the agent records none, or the index has not read it yet) is `—`, never 0.
	const tokenCell = (c: Conversation) => (w.tokens > 0 ? ` ${fit(usageCell(usage?.get(`${c.agent}:${c.id}`)), w.tokens)}` : '');
	// What is left goes to the title; on a narrow terminal there may be none.
	const titleWidth = Math.max(0, width - used - 1);
	return (
		<Box flexDirection="column">
			{top}
			<Text wrap="truncate">{folderLine ?? ''}</Text>
			<Text bold wrap="truncate">
				{`   ${fit('AGENT', w.agent)} ${fit('ID', w.id)} ${fit('REGISTERED', w.registered)} ${fit('RESUME', w.resume)} ${fit('AGE', w.age)} ${fit('KIDS', w.kids)}${w.tokens > 0 ? ` ${fit('IN/OUT/CACHE', w.tokens)}` : ''} ${fit('CWD', w.cwd)}${titleWidth > 0 ? ` ${fit('TITLE', titleWidth)}` : ''}`}
			</Text>
			{conversations.slice(start, start + rows).map((c, i) => {
				const selected = start + i === cursor;
				return (
					<Text key={`${c.agent}:${c.id}`} inverse={selected} wrap="truncate">
						{selected ? '> ' : '  '} {fit(c.agent, w.agent)} {fit(shortId(c.id, w.id), w.id)}{' '}
						{fit(registered.get(`${c.agent}:${c.id}`) ?? EMPTY_CELL, w.registered)}{' '}
						<Text color={RESUME_COLOR[c.resumeState.kind]}>{fit(resumeText(c.resumeState), w.resume)}</Text> {fit(age(c.updatedAt, now), w.age)}{' '}
						{fit(String(c.childCount), w.kids)}
						{tokenCell(c)} {fit(shortenPath(c.cwd, home), w.cwd)}
						{titleWidth > 0 ? ` ${fit(snippets?.get(`${c.agent}:${c.id}`) ?? c.title ?? '', titleWidth)}` : ''}
					</Text>
				);
			})}
		</Box>
	);
}
