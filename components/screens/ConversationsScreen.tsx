import React from 'react';
import {Box, Text} from 'ink';
import type {Conversation, SessionRecord} from '../../src/domain/types.js';
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
	/** Every folder was asked for and has not come yet. */
	readonly loadingAll: boolean;
	readonly cursor: number;
	/** Lines available for the whole screen. */
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly now: number;
}

/** What the adapters find on disk, registered or not: in the registry's folders, or in every folder (`A`). */
export function ConversationsScreen(props: ConversationsScreenProps): React.JSX.Element {
	const {conversations, sessions, scope, search, searching, loadingAll, cursor, height, width, home, now} = props;
	const where = scope === 'all' ? `every folder${loadingAll ? ' (reading…)' : ''}` : "the registry's folders";
	const searchLine = searching || search ? `search: ${search}${searching ? '▏' : ''}` : '/ searches titles, ids and folders';
	const top = (
		<Text wrap="truncate">
			<Text bold>{`${conversations.length} in ${where}`}</Text>
			{` · A ${scope === 'all' ? "registry's folders" : 'every folder'} · ${searchLine}`}
		</Text>
	);
	if (conversations.length === 0) {
		return (
			<Box flexDirection="column">
				{top}
				<Text>{search ? 'No conversation matches the search (/ then esc clears it).' : 'No conversations found on disk here yet. A switches folders; c or esc goes back.'}</Text>
			</Box>
		);
	}
	const registered = new Map(sessions.filter(s => s.agentSessionId).map(s => [`${s.agent}:${s.agentSessionId}`, s.name]));
	const rows = Math.max(1, height - 2);
	const start = windowStart(cursor, rows, conversations.length);
	const resumeWidth = width >= 120 ? 22 : 14;
	const cwdWidth = width >= 120 ? 20 : 16;
	const titleWidth = Math.max(8, width - 55 - resumeWidth - cwdWidth);
	return (
		<Box flexDirection="column">
			{top}
			<Text bold>{`   ${fit('AGENT', 8)} ${fit('ID', 14)} ${fit('REGISTERED', 14)} ${fit('RESUME', resumeWidth)} ${fit('AGE', 4)} KIDS ${fit('CWD', cwdWidth)} TITLE`}</Text>
			{conversations.slice(start, start + rows).map((c, i) => {
				const selected = start + i === cursor;
				return (
					<Text key={`${c.agent}:${c.id}`} inverse={selected} wrap="truncate">
						{selected ? '> ' : '  '} {fit(c.agent, 8)} {fit(c.id, 14)} {fit(registered.get(`${c.agent}:${c.id}`) ?? EMPTY_CELL, 14)}{' '}
						<Text color={RESUME_COLOR[c.resumeState.kind]}>{fit(resumeText(c.resumeState), resumeWidth)}</Text> {fit(age(c.updatedAt, now), 4)}{' '}
						{fit(String(c.childCount), 4)} {fit(shortenPath(c.cwd, home), cwdWidth)} {fit(c.title ?? '', titleWidth)}
					</Text>
				);
			})}
		</Box>
	);
}
