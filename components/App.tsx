import React from 'react';
import {Box, Text} from 'ink';
import {shallowEqual, useApp, useStoreSelector} from './StoreContext.js';
import {chordText} from './input/keymap.js';
import {useKeyRouter} from './input/useKeyRouter.js';
import {ConversationsScreen} from './screens/ConversationsScreen.js';
import {FindingsScreen} from './screens/FindingsScreen.js';
import {HelpOverlay} from './screens/HelpOverlay.js';
import {NewSessionDialog} from './screens/NewSessionDialog.js';
import {PurgeDialog} from './screens/PurgeDialog.js';
import {SessionsScreen} from './screens/SessionsScreen.js';
import {StopDialog} from './screens/StopDialog.js';
import {ParkDialog} from './screens/ParkDialog.js';
import {TrashScreen} from './screens/TrashScreen.js';
import {anyRunning, OperationsPanel} from './widgets/OperationsPanel.js';
import {sameStatusView, selectStatusView, StatusBar, statusBarLines} from './widgets/StatusBar.js';
import {useAgeClock, useNow} from './useNow.js';
import {useTerminalSize} from './useTerminalSize.js';
import {currentTextHits, visibleConversations} from '../src/store/conversations.js';
import {folderUsage, usageLine} from '../src/domain/usage.js';
import {sameSessionsView, selectSessionsView, visibleSessions} from '../src/store/selectors.js';
import type {AppState} from '../src/store/state.js';

export interface AppProps {
	/** Shown in the cwd column as `~`. */
	readonly home: string;
}

const TITLES = {sessions: 'sessions', findings: 'findings', conversations: 'conversations on disk', trash: 'trash (purges that can be undone)'} as const;
/**
 * Modes whose screen is a dialog: only these are clipped to their room (their text may wrap past
 * it). Clipping costs every frame a pass over its lines, and the lists, which size themselves to
 * fit, are what a keystroke redraws (the bench's key latency).
 */
const DIALOG_MODES: ReadonlySet<AppState['ui']['mode']> = new Set(['help', 'purge', 'new', 'stop', 'park']);
/** Operations shown at most; more wait their turn in the store. */
const MAX_OPERATION_LINES = 4;

// Each part of the screen subscribes to the slice it shows (STYLE 3.2's store, read by selector):
// a keystroke that moves the sessions cursor re-renders the sessions screen only, not App, the
// status bar or the operations panel, and a refresh that changes nothing on screen renders nothing.
const selectModes = (s: AppState) => ({mode: s.ui.mode, previousMode: s.ui.previousMode});
const selectOperations = (s: AppState) => s.operations;
const selectNotices = (s: AppState) => s.notices;
const selectPurge = (s: AppState) => s.purge;
const selectNewDialog = (s: AppState) => s.newDialog;
const selectStopDialog = (s: AppState) => s.stopDialog;
const selectParkDialog = (s: AppState) => s.parkDialog;
const selectDetailScroll = (s: AppState) => s.ui.detailScroll;
const selectFindings = (s: AppState) => ({findings: s.findings, cursor: s.ui.findingsCursor});
const selectTrash = (s: AppState) => ({entries: s.trash, cursor: s.ui.trashCursor, emptying: s.trashEmpty});
const selectConversations = (s: AppState) => ({
	conversations: visibleConversations(s),
	sessions: s.sessions,
	cursor: s.ui.conversationsCursor,
	scope: s.ui.conversationScope,
	search: s.ui.conversationFilter,
	searching: s.ui.mode === 'filter',
	loadingAll: s.ui.conversationScope === 'all' && s.allConversations === null,
	snippets: currentTextHits(s)?.snippets,
	hidden: s.ui.conversationsAll,
	usage: s.conversationUsage,
	folderLine: selectedFolderLine(s),
});

/**
 * The selected conversation's folder with the tokens of the list's conversations in it summed; a
 * string, so the pane's shallow comparison sees an unchanged line as unchanged.
 */
function selectedFolderLine(s: AppState): string {
	const rows = visibleConversations(s);
	const selected = rows[Math.min(s.ui.conversationsCursor, rows.length - 1)];
	if (!selected || !s.conversationUsage) return '';
	const sum = folderUsage(rows, s.conversationUsage, selected.cwd);
	return `${selected.cwd}: ${sum.usage ? usageLine(sum.usage) : '—'} (tokens of ${sum.counted} of its ${sum.total} conversations here)`;
}

const createdAt = (row: {readonly createdAt: number}) => row.createdAt;
const updatedAt = (row: {readonly updatedAt: number}) => row.updatedAt;

interface PaneProps {
	readonly height: number;
	readonly width: number;
	readonly home: string;
}

const SessionsPane = React.memo(function SessionsPane({height, width, home}: PaneProps): React.JSX.Element {
	const view = useStoreSelector(selectSessionsView, sameSessionsView);
	const detailScroll = useStoreSelector(selectDetailScroll);
	const records = visibleSessions(view);
	const now = useAgeClock(records, createdAt);
	return <SessionsScreen state={view} height={height} width={width} home={home} now={now} detailScroll={detailScroll} />;
});

const FindingsPane = React.memo(function FindingsPane({height, width}: Pick<PaneProps, 'height' | 'width'>): React.JSX.Element {
	const {findings, cursor} = useStoreSelector(selectFindings, shallowEqual);
	return <FindingsScreen findings={findings} cursor={cursor} height={height} width={width} />;
});

const ConversationsPane = React.memo(function ConversationsPane({height, width, home}: PaneProps): React.JSX.Element {
	const view = useStoreSelector(selectConversations, shallowEqual);
	const now = useAgeClock(view.conversations, updatedAt);
	return <ConversationsScreen {...view} height={height} width={width} home={home} now={now} />;
});

const TrashPane = React.memo(function TrashPane({height, width}: Pick<PaneProps, 'height' | 'width'>): React.JSX.Element {
	const view = useStoreSelector(selectTrash, shallowEqual);
	return <TrashScreen {...view} height={height} width={width} />;
});

const StatusPane = React.memo(function StatusPane(): React.JSX.Element {
	const view = useStoreSelector(selectStatusView, sameStatusView);
	const {keymap} = useApp();
	return <StatusBar state={view} keymap={keymap} />;
});

/**
 * The whole terminal: the title, the current screen filling what is left, the operations and the
 * status bar at the bottom. One line is left free at the foot: a frame as tall as the terminal
 * makes Ink clear the screen on every frame. Owns no resource and does no I/O.
 */
export function App({home}: AppProps): React.JSX.Element {
	const {keymap} = useApp();
	const {mode, previousMode} = useStoreSelector(selectModes, shallowEqual);
	const operations = useStoreSelector(selectOperations);
	const notices = useStoreSelector(selectNotices);
	const purge = useStoreSelector(selectPurge);
	const newDialog = useStoreSelector(selectNewDialog);
	const stopDialog = useStoreSelector(selectStopDialog);
	const parkDialog = useStoreSelector(selectParkDialog);
	const {columns: width, rows} = useTerminalSize();
	const now = useNow(anyRunning(operations));
	const opLines = Math.min(Object.keys(operations).length, MAX_OPERATION_LINES);
	const frameHeight = Math.max(8, rows - 1);
	const height = Math.max(4, frameHeight - 1 - opLines - statusBarLines(notices));
	useKeyRouter({width, height, home});
	const list = mode === 'sessions' || mode === 'findings' || mode === 'conversations' || mode === 'trash' ? mode : previousMode;
	const stopKey = keymap.find(b => b.command === 'session.stop')?.chords[0];
	const parkKey = keymap.find(b => b.command === 'session.park')?.chords[0];
	return (
		<Box flexDirection="column" width={width} height={frameHeight}>
			<Text bold wrap="truncate">{`mam-tui — ${TITLES[list]}`}</Text>
			<Box flexDirection="column" height={height} {...(DIALOG_MODES.has(mode) ? {overflowY: 'hidden' as const} : {})}>
				{mode === 'help' ? (
					<HelpOverlay keymap={keymap} width={width} height={height} />
				) : mode === 'purge' && purge ? (
					<PurgeDialog dialog={purge} home={home} width={width} height={height} />
				) : mode === 'new' && newDialog ? (
					<NewSessionDialog dialog={newDialog} />
				) : mode === 'stop' && stopDialog ? (
					<StopDialog dialog={stopDialog} againKey={stopKey ? chordText(stopKey) : 's'} width={width} height={height} />
				) : mode === 'park' && parkDialog ? (
					<ParkDialog dialog={parkDialog} againKey={parkKey ? chordText(parkKey) : 'z'} height={height} />
				) : list === 'findings' ? (
					<FindingsPane height={height} width={width} />
				) : list === 'trash' ? (
					<TrashPane height={height} width={width} />
				) : list === 'conversations' ? (
					<ConversationsPane height={height} width={width} home={home} />
				) : (
					<SessionsPane height={height} width={width} home={home} />
				)}
			</Box>
			<OperationsPanel operations={operations} now={now} limit={MAX_OPERATION_LINES} />
			<StatusPane />
		</Box>
	);
}
