import React from 'react';
import {Box, Text} from 'ink';
import type {Finding, Fix} from '../../src/domain/types.js';
import {assertNever} from '../../src/domain/result.js';
import {fit} from '../format.js';
import {windowStart} from '../widgets/SessionTable.js';

export interface FindingsScreenProps {
	readonly findings: readonly Finding[];
	readonly cursor: number;
	readonly height: number;
	readonly width: number;
}

/** What `f` would do, in words. */
export function describeFix(fix: Fix | undefined): string {
	if (!fix) return 'no automatic fix';
	switch (fix.type) {
		case 'mark-stopped':
			return fix.clearPane ? 'f: mark stopped and forget the pane' : 'f: mark stopped';
		case 'mark-running':
			return `f: mark running in pane ${fix.paneId}`;
		case 'pin':
			return `f: pin ${fix.agentSessionId}`;
		case 'repin':
			return `f: re-pin ${fix.from} → ${fix.to}`;
		case 'adopt-pane':
			return `f: adopt pane ${fix.paneId} as a ${fix.agent} session`;
		default:
			return assertNever(fix);
	}
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
					{start + i === cursor ? '>' : ' '} {fit(f.kind, 16)} {fit(f.sessionName ?? f.paneId ?? '', 16)} {fit(f.message, Math.max(10, width - 38))}
				</Text>
			))}
			{selected ? (
				<Box flexDirection="column" borderStyle="single" borderDimColor paddingX={1}>
					<Text>{selected.message}</Text>
					{selected.evidence.slice(0, 3).map((e, i) => (
						<Text key={i} dimColor wrap="truncate">{`  ${e}`}</Text>
					))}
					{selected.candidates ? <Text wrap="truncate">{`candidates: ${selected.candidates.join(', ')}`}</Text> : null}
					<Text color={selected.fix ? 'green' : 'yellow'}>
						{describeFix(selected.fix)}
						{selected.offer ? ` · ${selected.offer}` : ''}
					</Text>
				</Box>
			) : null}
		</Box>
	);
}
