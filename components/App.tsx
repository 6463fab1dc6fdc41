import React from 'react';
import {Box, Text, useStdout} from 'ink';
import {useAppState} from './StoreContext.js';
import {useCommands, useFilterInput} from './input/useCommands.js';
import {HelpOverlay} from './screens/HelpOverlay.js';
import {SessionsScreen} from './screens/SessionsScreen.js';
import {FindingsScreen} from './screens/FindingsScreen.js';
import {StatusBar} from './widgets/StatusBar.js';

export interface AppProps {
	/** Shown in the cwd column as `~`. */
	readonly home: string;
}

/** Lines taken by the title, the table header and the status bar. */
const CHROME_LINES = 7;

/** Chooses the screen by mode. Owns no resource and does no I/O. */
export function App({home}: AppProps): React.JSX.Element {
	const state = useAppState();
	const {stdout} = useStdout();
	useCommands();
	useFilterInput(state.ui.mode === 'filter');
	const width = stdout.columns || 80;
	const height = Math.max(3, (stdout.rows || 24) - CHROME_LINES);
	const listMode = state.ui.mode === 'help' ? state.ui.previousMode : state.ui.mode;
	return (
		<Box flexDirection="column" width={width}>
			<Text bold>mam-tui {listMode === 'findings' ? '— findings' : '— sessions'}</Text>
			{state.ui.mode === 'help' ? (
				<HelpOverlay />
			) : listMode === 'findings' ? (
				<FindingsScreen state={state} />
			) : (
				<SessionsScreen state={state} height={height} width={width} home={home} />
			)}
			<StatusBar state={state} />
		</Box>
	);
}
