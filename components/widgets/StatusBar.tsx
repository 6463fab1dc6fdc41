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

const HINTS: Record<string, string> = {
	sessions: 'enter focus · r resume · s stop · p purge · n new · c conversations · tab findings · / filter · ? keys · q quit',
	findings: 'f fix · tab sessions · ? keys · q quit',
	conversations: 'a adopt · r resume · p purge · c back · ? keys · q quit',
	help: 'esc or ? closes',
	filter: 'type to filter · enter keeps · esc clears',
	purge: "type the name · enter confirms · esc cancels",
	new: 'tab field · ↑/↓ agent · enter spawn · esc cancel',
};

/** Mux backend and health, counts by status, findings, last refresh, the last action's outcome, key hints. */
export function StatusBar({state}: StatusBarProps): React.JSX.Element {
	const counts = countsByStatus(state.sessions);
	const mux = state.mux ? `${state.mux.kind} ${state.mux.ok ? 'ok' : `down: ${state.mux.message}`}` : 'mux —';
	return (
		<Box flexDirection="column">
			<Text wrap="truncate">
				<Text color={state.mux && !state.mux.ok ? 'red' : 'green'}>{mux}</Text>
				{` │ ${counts.running} running, ${counts.stopped} stopped, ${counts.purged} purged │ ${state.findings.length} findings │ refreshed ${clock(state.lastRefresh)}`}
			</Text>
			{state.notice ? (
				<Text wrap="truncate" color={state.notice.level === 'error' ? 'red' : state.notice.level === 'ok' ? 'green' : undefined}>
					{state.notice.text}
				</Text>
			) : null}
			<Text dimColor wrap="truncate">{HINTS[state.ui.mode] ?? ''}</Text>
		</Box>
	);
}
