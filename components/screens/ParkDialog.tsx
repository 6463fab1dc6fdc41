import React from 'react';
import {Box, Text} from 'ink';
import type {ParkDialog as ParkDialogState} from '../../src/store/state.js';

export interface ParkDialogProps {
	readonly dialog: ParkDialogState;
	/** The key that confirms besides `y` (the park key), as `?` writes it. */
	readonly againKey: string;
	readonly height: number;
}

/** Says what `z` is about to do: which sessions, and that each is checked again and never forced. */
export function ParkDialog({dialog, againKey, height}: ParkDialogProps): React.JSX.Element {
	const count = dialog.names.length;
	const room = Math.max(1, height - 8);
	const names = dialog.names.slice(0, room).map(n => `  ${n}`);
	if (count > room) names[room - 1] = `  … and ${count - room + 1} more`;
	return (
		<Box flexDirection="column" borderStyle="round" borderColor="blue" paddingX={1}>
			<Text bold color="blue">
				{count === 1 ? `Park ${dialog.names[0] ?? ''}?` : `Park ${count} sessions?`}
			</Text>
			{names.map((line, i) => (
				<Text key={i} wrap="truncate">
					{line}
				</Text>
			))}
			<Text wrap="wrap">
				Each is checked again first (idle long enough, empty composer, no dialog, no tool running, not in front of you, its conversation on disk), then typed
				its exit command only: one that does not exit is left running. enter or r wakes a parked session where it was.
			</Text>
			<Text>
				<Text bold>y</Text>
				{` or ${againKey} parks ${count === 1 ? 'it' : `all ${count}`} · `}
				<Text bold>n</Text>
				{' or esc cancels'}
			</Text>
		</Box>
	);
}
