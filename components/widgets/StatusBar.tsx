import React, {useMemo} from 'react';
import {Box, Text} from 'ink';
import type {AppState} from '../../src/store/state.js';
import {countsByStatus, needYouCount} from '../../src/store/selectors.js';

/** The fields the status bar reads (an AppState will do). */
export interface StatusView {
	readonly mux: AppState['mux'];
	readonly sessions: AppState['sessions'];
	readonly findings: AppState['findings'];
	readonly lastRefresh: AppState['lastRefresh'];
	readonly notice: AppState['notice'];
	readonly ui: {readonly mode: AppState['ui']['mode']};
	/** Running sessions whose agent is blocked. */
	readonly needYou: number;
}

export interface StatusBarProps {
	readonly state: StatusView;
}

/** The status bar's slice; compare with `sameStatusView` (a keystroke that moves the cursor leaves it alone). */
export function selectStatusView(state: AppState): StatusView {
	return {mux: state.mux, sessions: state.sessions, findings: state.findings, lastRefresh: state.lastRefresh, notice: state.notice, ui: {mode: state.ui.mode}, needYou: needYouCount(state.sessions, state.live)};
}

export function sameStatusView(a: StatusView, b: StatusView): boolean {
	return a.mux === b.mux && a.sessions === b.sessions && a.findings.length === b.findings.length && a.lastRefresh === b.lastRefresh && a.notice === b.notice && a.ui.mode === b.ui.mode && a.needYou === b.needYou;
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
	const counts = useMemo(() => countsByStatus(state.sessions), [state.sessions]);
	const mux = state.mux ? `${state.mux.kind} ${state.mux.ok ? 'ok' : `down: ${state.mux.message}`}` : 'mux —';
	return (
		<Box flexDirection="column">
			<Text wrap="truncate">
				<Text color={state.mux && !state.mux.ok ? 'red' : 'green'}>{mux}</Text>
				{state.needYou > 0 ? <Text color="yellow" bold>{` │ ${state.needYou} need${state.needYou === 1 ? 's' : ''} you`}</Text> : null}
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
