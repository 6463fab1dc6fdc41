import React from 'react';
import {Box, Text} from 'ink';
import type {AppState} from '../../src/store/state.js';

export interface FindingsScreenProps {
	readonly state: AppState;
}

export function FindingsScreen({state}: FindingsScreenProps): React.JSX.Element {
	if (state.findings.length === 0) return <Text>No drift findings: the registry agrees with the panes and the disk.</Text>;
	return (
		<Box flexDirection="column">
			{state.findings.map((f, i) => (
				<Text key={`${f.kind}-${i}`} inverse={i === state.ui.findingsCursor}>
					{f.kind.padEnd(17)} {f.sessionName ?? f.paneId ?? ''} {f.message}
				</Text>
			))}
		</Box>
	);
}
