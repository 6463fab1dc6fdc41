import React from 'react';
import {Box, Text} from 'ink';
import type {StopDialog as StopDialogState} from '../../src/store/state.js';
import {wrapLine} from '../widgets/detailLines.js';

export interface StopDialogProps {
	readonly dialog: StopDialogState;
	/** The key that confirms besides `y` (the stop key), as `?` writes it. */
	readonly againKey: string;
	readonly width: number;
	readonly height: number;
}

/** Says what `s` is about to do, before it does it: the sessions, their panes, the three steps and their waits. */
export function StopDialog({dialog, againKey, width, height}: StopDialogProps): React.JSX.Element {
	const count = dialog.targets.length;
	const inner = Math.max(20, width - 4);
	const exitTexts = [...new Set(dialog.targets.map(t => t.exitText))].join(' / ');
	const steps = [
		`1. type ${exitTexts} into the pane, then wait up to ${dialog.graceSeconds}s for the agent to exit`,
		`2. close the pane (SIGHUP), then wait up to ${dialog.killWaitSeconds}s`,
		'3. SIGKILL whatever of the agent still runs',
	];
	// The steps and the question always show; the list of sessions gets what room is left.
	const room = Math.max(1, height - steps.length - 7);
	const names = dialog.targets.slice(0, room).map(t => `  ${t.name} (${t.agent}) in pane ${t.pane ?? '—'}`);
	if (count > room) names[room - 1] = `  … and ${count - room + 1} more`;
	return (
		<Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
			<Text bold color="yellow">
				{count === 1 ? `Stop ${dialog.targets[0]?.name ?? ''}?` : `Stop ${count} sessions?`}
			</Text>
			{names.map((line, i) => (
				<Text key={i} wrap="truncate">
					{line}
				</Text>
			))}
			<Text>Each stop goes step by step, shown live, and ends at the first step that works:</Text>
			{steps
				.flatMap(step => wrapLine(`  ${step}`, inner))
				.map((line, i) => (
					<Text key={`s${i}`}>{line.text}</Text>
				))}
			<Text>
				<Text bold>y</Text>
				{` or ${againKey} stops ${count === 1 ? 'it' : `all ${count}`} · `}
				<Text bold>n</Text>
				{' or esc cancels'}
			</Text>
		</Box>
	);
}
