import React from 'react';
import {Box, Text} from 'ink';
import type {PurgeDialog as PurgeDialogState} from '../../src/store/state.js';
import {bytes, shortenPath} from '../format.js';

export interface PurgeDialogProps {
	readonly dialog: PurgeDialogState;
	readonly home: string;
	readonly height: number;
}

/**
 * Shows exactly what a purge deletes and asks for the session's name (or `purge N`). The dialog
 * only reports what was typed; the caller confirms it again before anything is deleted.
 */
export function PurgeDialog({dialog, home, height}: PurgeDialogProps): React.JSX.Element {
	const lines = dialog.plans.flatMap(plan => [
		`${plan.target} (${plan.agent} ${plan.id})${plan.descendants.length ? ` + ${plan.descendants.length} child session(s): ${plan.descendants.join(', ')}` : ''}`,
		...plan.lines.map(l => `  ${l.description}: ${shortenPath(l.path, home)}${l.table ? ` [${l.table}${l.count === undefined ? '' : ` ×${l.count}`}]` : ''} ${bytes(l.bytes)}`),
	]);
	const total = dialog.plans.reduce((sum, p) => sum + p.totalBytes, 0);
	const room = Math.max(3, height - 9);
	const scroll = Math.min(dialog.scroll, Math.max(0, lines.length - room));
	return (
		<Box flexDirection="column" borderStyle="double" borderColor="red" paddingX={1}>
			<Text bold color="red">{`Purge ${dialog.targets.length === 1 ? dialog.targets[0] : `${dialog.targets.length} sessions`}: delete the conversation data below`}</Text>
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
						<Text key={scroll + i} wrap="truncate">{line}</Text>
					))}
					{lines.length > room ? <Text dimColor>{`↑/↓ scroll (${scroll + 1}–${Math.min(lines.length, scroll + room)} of ${lines.length})`}</Text> : null}
					<Text>{`Total ${bytes(total)}. Type `}<Text bold>{dialog.expected}</Text>{' and press enter to delete; anything else or esc cancels.'}</Text>
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
