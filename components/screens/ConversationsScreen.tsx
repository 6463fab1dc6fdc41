import React from 'react';
import {Box, Text} from 'ink';
import type {Conversation, SessionRecord} from '../../src/domain/types.js';
import {age, EMPTY_CELL, fit, RESUME_COLOR, resumeText, shortenPath} from '../format.js';
import {windowStart} from '../widgets/SessionTable.js';

export interface ConversationsScreenProps {
	readonly conversations: readonly Conversation[];
	readonly sessions: readonly SessionRecord[];
	readonly cursor: number;
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly now: number;
}

/** Everything the adapters find on disk for the known cwds, registered or not. */
export function ConversationsScreen({conversations, sessions, cursor, height, width, home, now}: ConversationsScreenProps): React.JSX.Element {
	if (conversations.length === 0) {
		return <Text>No conversations found on disk for the sessions' folders yet. c or esc goes back.</Text>;
	}
	const registered = new Map(sessions.filter(s => s.agentSessionId).map(s => [`${s.agent}:${s.agentSessionId}`, s.name]));
	const start = windowStart(cursor, height, conversations.length);
	const titleWidth = Math.max(8, width - 90);
	return (
		<Box flexDirection="column">
			<Text bold>{`   ${fit('AGENT', 8)} ${fit('ID', 14)} ${fit('REGISTERED', 14)} ${fit('RESUME', 14)} ${fit('AGE', 4)} KIDS ${fit('CWD', 20)} TITLE`}</Text>
			{conversations.slice(start, start + height).map((c, i) => {
				const selected = start + i === cursor;
				return (
					<Text key={`${c.agent}:${c.id}`} inverse={selected} wrap="truncate">
						{selected ? '> ' : '  '} {fit(c.agent, 8)} {fit(c.id, 14)} {fit(registered.get(`${c.agent}:${c.id}`) ?? EMPTY_CELL, 14)}{' '}
						<Text color={RESUME_COLOR[c.resumeState.kind]}>{fit(resumeText(c.resumeState), 14)}</Text> {fit(age(c.updatedAt, now), 4)}{' '}
						{fit(String(c.childCount), 4)} {fit(shortenPath(c.cwd, home), 20)} {fit(c.title ?? '', titleWidth)}
					</Text>
				);
			})}
			<Text dimColor>a adopt · r resume · p purge · c/esc back</Text>
		</Box>
	);
}
