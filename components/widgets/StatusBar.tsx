import React, {useMemo} from 'react';
import {Box, Text} from 'ink';
import type {AppState} from '../../src/store/state.js';
import {countsByStatus, needYouCount, parkedSummary, untrackedSummary} from '../../src/store/selectors.js';
import {hintsFor, type Keymap} from '../input/keymap.js';
import {memory, printable} from '../format.js';

/** The fields the status bar reads (an AppState will do). */
export interface StatusView {
	readonly mux: AppState['mux'];
	readonly sessions: AppState['sessions'];
	readonly findings: AppState['findings'];
	readonly lastRefresh: AppState['lastRefresh'];
	readonly notices: AppState['notices'];
	readonly ui: {readonly mode: AppState['ui']['mode']};
	/** Running sessions whose agent is blocked. */
	readonly needYou: number;
	/** The configured hosts and their state (absent or empty: this machine only). */
	readonly hosts?: AppState['hosts'];
}

export interface StatusBarProps {
	readonly state: StatusView;
	/** The effective keys, for the hints line. */
	readonly keymap: Keymap;
}

/** The status bar's slice; compare with `sameStatusView` (a keystroke that moves the cursor leaves it alone). */
export function selectStatusView(state: AppState): StatusView {
	return {
		mux: state.mux,
		sessions: state.sessions,
		findings: state.findings,
		lastRefresh: state.lastRefresh,
		notices: state.notices,
		ui: {mode: state.ui.mode},
		needYou: needYouCount(state) + untrackedSummary(state).needYou,
		hosts: state.hosts,
	};
}

export function sameStatusView(a: StatusView, b: StatusView): boolean {
	return (
		a.mux === b.mux &&
		a.sessions === b.sessions &&
		a.findings.length === b.findings.length &&
		a.lastRefresh === b.lastRefresh &&
		a.notices === b.notices &&
		a.ui.mode === b.ui.mode &&
		a.needYou === b.needYou &&
		a.hosts === b.hosts
	);
}

function clock(ms: number | null): string {
	if (ms === null) return 'never';
	return new Date(ms).toTimeString().slice(0, 8);
}

/** Dialogs and fields answer fixed keys; the lists' hints come from the keymap. */
const DIALOG_HINTS: Partial<Record<AppState['ui']['mode'], string>> = {
	filter: 'type to filter · enter keeps · esc clears',
	purge: 'type the name · enter confirms · esc cancels · ↑/↓ PgUp/PgDn scroll',
	new: 'tab field · ↑/↓ agent · enter spawn · esc cancel',
	stop: 'y stops · n or esc cancels',
	park: 'y parks · n or esc cancels',
	trashEmpty: 'type empty 1 · enter deletes for good · esc cancels',
};

/** Mux backend and health, counts by status, findings, last refresh, the last action's outcome, key hints. */
/** Lines the status bar takes: the counts line, one per notice, the hints line. */
export function statusBarLines(notices: AppState['notices']): number {
	return 2 + notices.length;
}

export function StatusBar({state, keymap}: StatusBarProps): React.JSX.Element {
	const counts = useMemo(() => countsByStatus(state.sessions), [state.sessions]);
	const parked = useMemo(() => parkedSummary(state.sessions), [state.sessions]);
	const mux = state.mux ? `${state.mux.kind} ${state.mux.ok ? 'ok' : `down: ${state.mux.message}`}` : 'mux —';
	return (
		<Box flexDirection="column">
			<Text wrap="truncate">
				<Text color={state.mux && !state.mux.ok ? 'red' : 'green'}>{mux}</Text>
				{(state.hosts ?? []).map(h => (
					<Text key={h.name} color={h.state === 'up' ? 'green' : h.state === 'down' ? 'red' : 'yellow'}>
						{` │ ${h.name} ${h.state === 'up' ? `up ${h.rttMs ?? '?'} ms` : h.state === 'down' ? `down: ${h.message}` : 'connecting'}`}
					</Text>
				))}
				{state.needYou > 0 ? <Text color="yellow" bold>{` │ ${state.needYou} need${state.needYou === 1 ? 's' : ''} you`}</Text> : null}
				{parked.count > 0 ? <Text color="blue">{` │ ${parked.count} parked · ${memory(parked.freedBytes)} freed`}</Text> : null}
				{` │ ${counts.running} running, ${counts.stopped} stopped, ${counts.purged} purged │ ${state.findings.length} findings │ refreshed ${clock(state.lastRefresh)}`}
			</Text>
			{state.notices.map(n => (
				<Text key={`${n.at}:${n.text}`} wrap="truncate" color={n.level === 'error' ? 'red' : n.level === 'ok' ? 'green' : undefined}>
					{printable(n.level === 'error' ? `✗ ${n.text} (esc dismisses)` : n.text)}
				</Text>
			))}
			<Text dimColor wrap="truncate">
				{DIALOG_HINTS[state.ui.mode] ?? hintsFor(state.ui.mode, keymap)}
			</Text>
		</Box>
	);
}
