import React from 'react';
import {Box, Text} from 'ink';
import {AGENT_IDS} from '../../src/domain/types.js';
import type {NewDialog} from '../../src/store/state.js';

export interface NewSessionDialogProps {
	readonly dialog: NewDialog;
}

export function NewSessionDialog({dialog}: NewSessionDialogProps): React.JSX.Element {
	return (
		<Box flexDirection="column" borderStyle="round" paddingX={1}>
			<Text bold>New session</Text>
			<Text>
				{dialog.field === 'agent' ? '> ' : '  '}agent:{' '}
				{AGENT_IDS.map((agent, i) => (
					<Text key={agent} inverse={i === dialog.agentIndex}>{` ${agent} `}</Text>
				))}
			</Text>
			<Text>
				{dialog.field === 'cwd' ? '> ' : '  '}cwd: {dialog.cwd}
				{dialog.field === 'cwd' ? <Text inverse> </Text> : null}
			</Text>
			<Text dimColor>tab switches field · ↑/↓ picks the agent · enter spawns · esc cancels</Text>
		</Box>
	);
}
