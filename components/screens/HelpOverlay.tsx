import React from 'react';
import {Box, Text} from 'ink';
import {keysText, type Keymap} from '../input/keymap.js';
import {fit} from '../format.js';

export interface HelpOverlayProps {
	readonly keymap: Keymap;
	readonly width: number;
	/** Lines available, border included: when one column does not fit, the keys go in two. */
	readonly height: number;
}

/** Generated from the effective key table, so it can never disagree with what the keys do. */
export function HelpOverlay({keymap, width, height}: HelpOverlayProps): React.JSX.Element {
	const keyWidth = Math.max(...keymap.map(b => keysText(b).length));
	const entries = keymap.map(b => `${keysText(b).padEnd(keyWidth)}  ${b.description}`);
	const rows = Math.max(1, height - 4);
	const columns = entries.length > rows ? 2 : 1;
	const perColumn = Math.ceil(entries.length / columns);
	const columnWidth = Math.floor((width - 4) / columns) - (columns > 1 ? 1 : 0);
	const lines = Array.from({length: perColumn}, (_, i) =>
		Array.from({length: columns}, (_, c) => fit(entries[c * perColumn + i] ?? '', columnWidth))
			.join(' ')
			.trimEnd(),
	);
	return (
		<Box flexDirection="column" borderStyle="round" paddingX={1}>
			<Text bold>Keys (rebind them under keys: in config.yaml)</Text>
			{lines.map((line, i) => (
				<Text key={i} wrap="truncate">
					{line}
				</Text>
			))}
			<Text dimColor>esc or ? closes this</Text>
		</Box>
	);
}
