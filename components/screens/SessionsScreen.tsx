import React from 'react';
import {Box, Text} from 'ink';
import type {AppState} from '../../src/store/state.js';
import {visibleSessions} from '../../src/store/selectors.js';
import {SessionTable} from '../widgets/SessionTable.js';

export interface SessionsScreenProps {
	readonly state: AppState;
	readonly height: number;
	readonly width: number;
	readonly home: string;
}

function EmptyState({filtered}: {readonly filtered: boolean}): React.JSX.Element {
	if (filtered) return <Text>No session matches the filter. Press / then esc to clear it.</Text>;
	return (
		<Box flexDirection="column">
			<Text bold>No sessions yet.</Text>
			<Text>mam-tui lists the agent sessions in its registry. To get started:</Text>
			<Text>  • run `mam-tui new --agent claude --cwd DIR` to start one in a new pane,</Text>
			<Text>  • or `mam-tui adopt --agent codex --id ID` to register a conversation you already have,</Text>
			<Text>  • or `mam-tui demo` to try every key in a private sandbox.</Text>
			<Text dimColor>Press ? for the keys, q to quit.</Text>
		</Box>
	);
}

export function SessionsScreen({state, height, width, home}: SessionsScreenProps): React.JSX.Element {
	const rows = visibleSessions(state);
	const filtering = state.ui.mode === 'filter' || state.ui.filter !== '';
	return (
		<Box flexDirection="column">
			{filtering ? (
				<Text>
					filter: {state.ui.filter}
					{state.ui.mode === 'filter' ? '▏' : ''}
				</Text>
			) : null}
			{rows.length === 0 ? (
				<EmptyState filtered={state.ui.filter !== ''} />
			) : (
				<SessionTable rows={rows} cursor={state.ui.cursor} height={height} width={width} home={home} marked={state.ui.marked} />
			)}
		</Box>
	);
}
