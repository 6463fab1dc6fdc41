import React from 'react';
import {Box, Text} from 'ink';
import {BINDINGS} from '../input/keymap.js';

/** Generated from the key table, so it can never disagree with what the keys do. */
export function HelpOverlay(): React.JSX.Element {
	const width = Math.max(...BINDINGS.map(b => b.keys.length));
	return (
		<Box flexDirection="column" borderStyle="round" paddingX={1}>
			<Text bold>Keys</Text>
			{BINDINGS.map(b => (
				<Text key={b.command} wrap="truncate">
					{b.keys.padEnd(width)}  {b.description}
				</Text>
			))}
			<Text dimColor>esc or ? closes this</Text>
		</Box>
	);
}
