import React from 'react';
import {Box, Text, useStdout} from 'ink';
import {shallowEqual, useStoreSelector} from './StoreContext.js';
import {useCommands, useFilterInput} from './input/useCommands.js';
import {useNewSessionInput, usePurgeInput} from './input/useDialogInput.js';
import {ConversationsScreen} from './screens/ConversationsScreen.js';
import {FindingsScreen} from './screens/FindingsScreen.js';
import {HelpOverlay} from './screens/HelpOverlay.js';
import {NewSessionDialog} from './screens/NewSessionDialog.js';
import {PurgeDialog} from './screens/PurgeDialog.js';
import {SessionsScreen} from './screens/SessionsScreen.js';
import {anyRunning, OperationsPanel} from './widgets/OperationsPanel.js';
import {sameStatusView, selectStatusView, StatusBar} from './widgets/StatusBar.js';
import {useNow} from './useNow.js';
import {sameSessionsView, selectSessionsView} from '../src/store/selectors.js';
import type {AppState} from '../src/store/state.js';

export interface AppProps {
	/** Shown in the cwd column as `~`. */
	readonly home: string;
}

/** Lines taken by the title and the status bar. */
const CHROME_LINES = 5;

const TITLES = {sessions: 'sessions', findings: 'findings', conversations: 'conversations on disk'} as const;

// Each part of the screen subscribes to the slice it shows (STYLE 3.2's store, read by selector):
// a keystroke that moves the sessions cursor re-renders the sessions screen only, not App, the
// status bar or the operations panel, and a refresh that changes nothing on screen renders nothing.
const selectModes = (s: AppState) => ({mode: s.ui.mode, previousMode: s.ui.previousMode});
const selectOperations = (s: AppState) => s.operations;
const selectPurge = (s: AppState) => s.purge;
const selectNewDialog = (s: AppState) => s.newDialog;
const selectFindings = (s: AppState) => ({findings: s.findings, cursor: s.ui.findingsCursor});
const selectConversations = (s: AppState) => ({conversations: s.conversations, sessions: s.sessions, cursor: s.ui.conversationsCursor});

interface PaneProps {
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly now: number;
}

const SessionsPane = React.memo(function SessionsPane({height, width, home, now}: PaneProps): React.JSX.Element {
	const view = useStoreSelector(selectSessionsView, sameSessionsView);
	return <SessionsScreen state={view} height={height} width={width} home={home} now={now} />;
});

const FindingsPane = React.memo(function FindingsPane({height, width}: Pick<PaneProps, 'height' | 'width'>): React.JSX.Element {
	const {findings, cursor} = useStoreSelector(selectFindings, shallowEqual);
	return <FindingsScreen findings={findings} cursor={cursor} height={height} width={width} />;
});

const ConversationsPane = React.memo(function ConversationsPane({height, width, home, now}: PaneProps): React.JSX.Element {
	const {conversations, sessions, cursor} = useStoreSelector(selectConversations, shallowEqual);
	return <ConversationsScreen conversations={conversations} sessions={sessions} cursor={cursor} height={height} width={width} home={home} now={now} />;
});

const StatusPane = React.memo(function StatusPane(): React.JSX.Element {
	const view = useStoreSelector(selectStatusView, sameStatusView);
	return <StatusBar state={view} />;
});

/** Chooses the screen by mode. Owns no resource and does no I/O. */
export function App({home}: AppProps): React.JSX.Element {
	const {mode, previousMode} = useStoreSelector(selectModes, shallowEqual);
	const operations = useStoreSelector(selectOperations);
	const purge = useStoreSelector(selectPurge);
	const newDialog = useStoreSelector(selectNewDialog);
	const {stdout} = useStdout();
	useCommands(mode !== 'filter' && mode !== 'purge' && mode !== 'new');
	useFilterInput(mode === 'filter');
	usePurgeInput(mode === 'purge');
	useNewSessionInput(mode === 'new');
	const now = useNow(anyRunning(operations));
	const width = stdout.columns || 80;
	const opLines = Object.keys(operations).length;
	const height = Math.max(4, (stdout.rows || 24) - CHROME_LINES - Math.min(opLines, 4));
	const list = mode === 'sessions' || mode === 'findings' || mode === 'conversations' ? mode : previousMode;
	return (
		<Box flexDirection="column" width={width}>
			<Text bold>{`mam-tui — ${TITLES[list]}`}</Text>
			{mode === 'help' ? (
				<HelpOverlay />
			) : mode === 'purge' && purge ? (
				<PurgeDialog dialog={purge} home={home} height={height} />
			) : mode === 'new' && newDialog ? (
				<NewSessionDialog dialog={newDialog} />
			) : list === 'findings' ? (
				<FindingsPane height={height} width={width} />
			) : list === 'conversations' ? (
				<ConversationsPane height={height - 2} width={width} home={home} now={now} />
			) : (
				<SessionsPane height={height} width={width} home={home} now={now} />
			)}
			<OperationsPanel operations={operations} now={now} />
			<StatusPane />
		</Box>
	);
}
