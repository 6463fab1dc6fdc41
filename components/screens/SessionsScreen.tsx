import React, {useMemo} from 'react';
import {Box, Text} from 'ink';
import type {Finding} from '../../src/domain/types.js';
import {findingsFor, visibleSessions, type SessionsView, type UntrackedSummary} from '../../src/store/selectors.js';
import {hostAway} from '../format.js';
import {DetailPanel} from '../widgets/DetailPanel.js';
import {detailLines} from '../widgets/detailLines.js';
import {SessionTable, type SessionRow} from '../widgets/SessionTable.js';
import {detailTextWidth, sessionsLayout} from './sessionsLayout.js';

export interface SessionsScreenProps {
	/** The slice this screen reads (an AppState will do); App passes `selectSessionsView`'s. */
	readonly state: SessionsView;
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly now: number;
	/** The detail panel's first line (J/K). */
	readonly detailScroll?: number;
}

function EmptyState({filtered, untracked}: {readonly filtered: boolean; readonly untracked: UntrackedSummary}): React.JSX.Element {
	if (filtered) return <Text>No session matches the filter. Press / then esc to clear it.</Text>;
	const waiting = untracked.needYou > 0 ? ` (${untracked.needYou} ${untracked.needYou === 1 ? 'needs' : 'need'} you)` : '';
	return (
		<Box flexDirection="column">
			<Text bold>No sessions yet.</Text>
			{untracked.count > 0 ? (
				<Text color={untracked.needYou > 0 ? 'yellow' : undefined}>
					{`${untracked.count} agent ${untracked.count === 1 ? 'pane runs' : 'panes run'} outside the registry${waiting}: tab lists them, f adopts the selected one.`}
				</Text>
			) : null}
			<Text>mam-tui lists the agent sessions in its registry. To get started:</Text>
			<Text> • press n (or run `mam-tui new --agent claude --cwd DIR`) to start one in a new pane,</Text>
			<Text> • or `mam-tui adopt --agent codex --id ID` to register a conversation you already have,</Text>
			<Text> • or `mam-tui demo` to try every key in a private sandbox.</Text>
			<Text dimColor>Press ? for the keys, q to quit.</Text>
		</Box>
	);
}

const NO_FINDINGS: readonly Finding[] = [];

export function SessionsScreen({state, height, width, home, now, detailScroll = 0}: SessionsScreenProps): React.JSX.Element {
	// Remembered per (sessions, filter) in the selector: no sort per keystroke.
	const records = visibleSessions(state);
	// Row records change only when the list, the live data or the findings do, never on a keystroke.
	const rows: SessionRow[] = useMemo(
		() =>
			records.map(record => {
				const away = record.host === undefined ? undefined : hostAway(state.hosts?.find(h => h.name === record.host));
				return {record, live: state.live[record.name], findings: findingsFor(state, record).length, ...(away ? {away} : {})};
			}),
		[records, state.live, state.findings, state.hosts], // eslint-disable-line react-hooks/exhaustive-deps
	);
	const cursor = Math.min(state.ui.cursor, rows.length - 1);
	const selected = rows[cursor];
	// The same array while the selection and the findings stay, so the memoised detail panel is skipped.
	const selectedFindings = useMemo(
		() => (selected ? findingsFor(state, selected.record) : NO_FINDINGS),
		[selected?.record, state.findings], // eslint-disable-line react-hooks/exhaustive-deps
	);
	const filtering = state.ui.mode === 'filter' || state.ui.filter !== '';
	const layout = sessionsLayout(width, height, filtering, rows.length);
	const textWidth = detailTextWidth(layout);
	// Rebuilt only when what the panel shows changes, never on a keystroke elsewhere.
	const lines = useMemo(
		() =>
			selected
				? detailLines(
						{
							session: selected.record,
							live: selected.live,
							detail: state.detail,
							findings: selectedFindings,
							home,
							usage: state.usage?.get(`${selected.record.agent}:${selected.record.agentSessionId ?? ''}`),
							usageUnread: !state.usage,
							...(selected.away ? {away: selected.away} : {}),
						},
						textWidth,
					)
				: [],
		[selected?.record, selected?.live, selected?.away, state.detail, selectedFindings, home, textWidth, state.usage], // eslint-disable-line react-hooks/exhaustive-deps
	);
	const filterLine = filtering ? (
		<Text>
			filter: {state.ui.filter}
			{state.ui.mode === 'filter' ? '▏' : ''}
		</Text>
	) : null;
	if (rows.length === 0) {
		return (
			<Box flexDirection="column">
				{filterLine}
				<EmptyState filtered={state.ui.filter !== ''} untracked={state.untracked} />
			</Box>
		);
	}
	const {side, listWidth} = layout;
	const detail = selected ? <DetailPanel lines={lines} scroll={detailScroll} height={layout.detailHeight} /> : null;
	const table = (
		<SessionTable
			rows={rows}
			cursor={cursor}
			height={layout.listRows}
			width={listWidth}
			home={home}
			marked={state.ui.marked}
			now={now}
			hosts={state.showHosts === true}
		/>
	);
	return (
		<Box flexDirection="column">
			{filterLine}
			{side ? (
				<Box>
					<Box width={listWidth} flexDirection="column">
						{table}
					</Box>
					<Box width={layout.detailWidth} flexDirection="column">
						{detail}
					</Box>
				</Box>
			) : (
				<>
					{table}
					{detail}
				</>
			)}
		</Box>
	);
}
