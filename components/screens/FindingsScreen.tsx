import React from 'react';
import {Box, Text} from 'ink';
import type {Finding} from '../../src/domain/types.js';
import {describeFix} from '../../src/domain/fixText.js';
import {fit, printable} from '../format.js';
import {windowStart} from '../widgets/SessionTable.js';

export interface FindingsScreenProps {
	readonly findings: readonly Finding[];
	readonly cursor: number;
	readonly height: number;
	readonly width: number;
}

/** What `f` would do, in words: another machine's fix is made there. */
export function fixLine(finding: Finding): string {
	if (finding.host) return finding.host.fix ? `f: ${finding.host.fix} (on ${finding.host.name})` : 'no automatic fix';
	return finding.fix ? `f: ${describeFix(finding.fix)}` : 'no automatic fix';
}

/** The row or pane a finding is about; another machine's pane with its host's name. */
function findingTarget(finding: Finding): string {
	if (finding.sessionName !== undefined) return finding.sessionName;
	if (finding.paneId === undefined) return '';
	return finding.host ? `${finding.host.name}:${finding.paneId}` : finding.paneId;
}

export function FindingsScreen({findings, cursor, height, width}: FindingsScreenProps): React.JSX.Element {
	if (findings.length === 0) return <Text>No drift findings: the registry agrees with the panes and the disk.</Text>;
	const selected = findings[Math.min(cursor, findings.length - 1)];
	const listHeight = Math.max(3, height - 6);
	const start = windowStart(cursor, listHeight, findings.length);
	return (
		<Box flexDirection="column">
			{findings.slice(start, start + listHeight).map((f, i) => (
				<Text key={`${f.kind}-${start + i}`} inverse={start + i === cursor} wrap="truncate">
					{start + i === cursor ? '>' : ' '} {fit(f.kind, 16)} {fit(findingTarget(f), 16)} {fit(f.message, Math.max(10, width - 38))}
				</Text>
			))}
			{selected ? (
				<Box flexDirection="column" borderStyle="single" borderDimColor paddingX={1}>
					<Text>{printable(selected.message)}</Text>
					{selected.evidence.slice(0, 3).map((e, i) => (
						<Text key={i} dimColor wrap="truncate">
							{printable(`  ${e}`)}
						</Text>
					))}
					{selected.candidates ? <Text wrap="truncate">{printable(`candidates: ${selected.candidates.join(', ')}`)}</Text> : null}
					<Text color={selected.fix || selected.host?.fix ? 'green' : 'yellow'} wrap="truncate">
						{printable(`${fixLine(selected)}${selected.offer ? ` · ${selected.offer}` : ''}`)}
					</Text>
				</Box>
			) : null}
		</Box>
	);
}
