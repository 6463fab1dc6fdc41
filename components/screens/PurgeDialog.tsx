import React from 'react';
import {Box, Text} from 'ink';
import type {PurgeDialog as PurgeDialogState} from '../../src/store/state.js';
import {planSize, planTotal, shortenPath} from '../format.js';
import {clampScroll, wrapLine, type PanelLine} from '../widgets/detailLines.js';

export interface PurgeDialogProps {
	readonly dialog: PurgeDialogState;
	readonly home: string;
	readonly width: number;
	readonly height: number;
}

/** Lines around the plan: border, title, scroll line, total, the field. */
const CHROME = 7;

/** Plan lines a dialog of `height` shows at once. */
export function purgeRoom(height: number): number {
	return Math.max(3, height - CHROME);
}

/** Every line of the plan in a dialog `width` wide: each path in full, wrapped, never cut at the edge. */
export function planLines(dialog: PurgeDialogState, home: string, dialogWidth: number): PanelLine[] {
	const width = Math.max(20, dialogWidth - 4);
	return dialog.plans.flatMap(plan => [
		...wrapLine(
			`${plan.target} (${plan.agent} ${plan.id})${plan.descendants.length ? ` + ${plan.descendants.length} child session(s): ${plan.descendants.join(', ')}` : ''}`,
			width,
			{bold: true},
		),
		...plan.lines.flatMap(l => [
			...wrapLine(`  ${l.description}: ${planSize(l)}`, width),
			...wrapLine(`    ${shortenPath(l.path, home)}`, width, {}, '      '),
		]),
	]);
}

/**
 * Shows exactly what a purge deletes and asks for the session's name (or `purge N`). The plan
 * scrolls (↑/↓, PgUp/PgDn) and says when more is below. The dialog only reports what was typed;
 * the caller confirms it again before anything is deleted.
 */
export function PurgeDialog({dialog, home, width, height}: PurgeDialogProps): React.JSX.Element {
	const lines = planLines(dialog, home, width);
	const total = dialog.plans.reduce((sum, p) => sum + p.totalBytes, 0);
	const items = dialog.plans.reduce((sum, p) => sum + p.lines.length, 0);
	const room = purgeRoom(height);
	const scroll = clampScroll(dialog.scroll, lines.length, room);
	const below = lines.length - (scroll + room);
	return (
		<Box flexDirection="column" borderStyle="double" borderColor="red" paddingX={1}>
			<Text
				bold
				color="red"
			>{`Purge ${dialog.targets.length === 1 ? dialog.targets[0] : `${dialog.targets.length} sessions`}: delete the conversation data below`}</Text>
			{dialog.loading ? <Text>Reading the purge plan…</Text> : null}
			{dialog.refusal ? (
				<>
					<Text color="yellow">{`Refused: ${dialog.refusal}`}</Text>
					<Text dimColor>esc closes</Text>
				</>
			) : null}
			{!dialog.loading && !dialog.refusal ? (
				<>
					{lines.slice(scroll, scroll + room).map((line, i) => (
						<Text key={scroll + i} wrap="truncate" bold={line.bold}>
							{line.text}
						</Text>
					))}
					{lines.length > room ? (
						<Text color={below > 0 ? 'yellow' : undefined} dimColor={below <= 0}>
							{`lines ${scroll + 1}–${Math.min(lines.length, scroll + room)} of ${lines.length}${below > 0 ? ` · ${below} more below: ↓/PgDn to read them (enter waits until you have)` : ' · ↑/PgUp scrolls back'}`}
						</Text>
					) : null}
					<Text>
						{`Total ${planTotal(items, total)}. Type `}
						<Text bold>{dialog.expected}</Text>
						{' and press enter to delete; anything else or esc cancels.'}
					</Text>
					<Text>
						{'> '}
						{dialog.typed}
						<Text inverse> </Text>
					</Text>
				</>
			) : null}
		</Box>
	);
}
