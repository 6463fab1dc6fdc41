import React from 'react';
import {Box, Text, useStdout} from 'ink';
import {useAppState} from './StoreContext.js';
import {useCommands, useFilterInput} from './input/useCommands.js';
import {useNewSessionInput, usePurgeInput} from './input/useDialogInput.js';
import {ConversationsScreen} from './screens/ConversationsScreen.js';
import {FindingsScreen} from './screens/FindingsScreen.js';
import {HelpOverlay} from './screens/HelpOverlay.js';
import {NewSessionDialog} from './screens/NewSessionDialog.js';
import {PurgeDialog} from './screens/PurgeDialog.js';
import {SessionsScreen} from './screens/SessionsScreen.js';
import {anyRunning, OperationsPanel} from './widgets/OperationsPanel.js';
import {StatusBar} from './widgets/StatusBar.js';
import {useNow} from './useNow.js';

export interface AppProps {
	/** Shown in the cwd column as `~`. */
	readonly home: string;
}

/** Lines taken by the title and the status bar. */
const CHROME_LINES = 5;

const TITLES = {sessions: 'sessions', findings: 'findings', conversations: 'conversations on disk'} as const;

/** Chooses the screen by mode. Owns no resource and does no I/O. */
export function App({home}: AppProps): React.JSX.Element {
	const state = useAppState();
	const {stdout} = useStdout();
	const {mode} = state.ui;
	useCommands(mode !== 'filter' && mode !== 'purge' && mode !== 'new');
	useFilterInput(mode === 'filter');
	usePurgeInput(mode === 'purge');
	useNewSessionInput(mode === 'new');
	const now = useNow(anyRunning(state.operations));
	const width = stdout.columns || 80;
	const opLines = Object.keys(state.operations).length;
	const height = Math.max(4, (stdout.rows || 24) - CHROME_LINES - Math.min(opLines, 4));
	const list = mode === 'sessions' || mode === 'findings' || mode === 'conversations' ? mode : state.ui.previousMode;
	return (
		<Box flexDirection="column" width={width}>
			<Text bold>{`mam-tui — ${TITLES[list]}`}</Text>
			{mode === 'help' ? (
				<HelpOverlay />
			) : mode === 'purge' && state.purge ? (
				<PurgeDialog dialog={state.purge} home={home} height={height} />
			) : mode === 'new' && state.newDialog ? (
				<NewSessionDialog dialog={state.newDialog} />
			) : list === 'findings' ? (
				<FindingsScreen findings={state.findings} cursor={state.ui.findingsCursor} height={height} width={width} />
			) : list === 'conversations' ? (
				<ConversationsScreen
					conversations={state.conversations}
					sessions={state.sessions}
					cursor={state.ui.conversationsCursor}
					height={height - 2}
					width={width}
					home={home}
					now={now}
				/>
			) : (
				<SessionsScreen state={state} height={height} width={width} home={home} now={now} />
			)}
			<OperationsPanel operations={state.operations} now={now} />
			<StatusBar state={state} />
		</Box>
	);
}
