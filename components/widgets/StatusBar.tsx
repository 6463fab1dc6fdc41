import React from 'react';
import {Box, Text} from 'ink';
import type {AppState} from '../../src/store/state.js';
import {countsByStatus} from '../../src/store/selectors.js';

export interface StatusBarProps {
	readonly state: AppState;
}

function clock(ms: number | null): string {
	if (ms === null) return 'never';
	return new Date(ms).toTimeString().slice(0, 8);
}

export function StatusBar({state}: StatusBarProps): React.JSX.Element {
	const counts = countsByStatus(state.sessions);
	const mux = state.mux ? `${state.mux.kind}: ${state.mux.ok ? 'ok' : state.mux.message}` : 'mux: —';
	return (
		<Box flexDirection="column">
			<Text>
				<Text color={state.mux && !state.mux.ok ? 'red' : undefined}>{mux}</Text>
				{` │ ${counts.running} running, ${counts.stopped} stopped, ${counts.purged} purged │ ${state.findings.length} findings │ refreshed ${clock(state.lastRefresh)}`}
			</Text>
			{state.notice ? (
				<Text color={state.notice.level === 'error' ? 'red' : state.notice.level === 'ok' ? 'green' : undefined}>{state.notice.text}</Text>
			) : null}
			<Text dimColor>j/k move · / filter · tab findings · ? keys · q quit</Text>
		</Box>
	);
}
