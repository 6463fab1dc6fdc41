import React from 'react';
import {Box, Text} from 'ink';
import type {TrashEmptyDialog, TrashRow} from '../../src/store/state.js';
import {age, bytes, fit} from '../format.js';
import {windowStart} from '../widgets/SessionTable.js';

export interface TrashScreenProps {
	/** null while the trash is being read. */
	readonly entries: readonly TrashRow[] | null;
	readonly cursor: number;
	/** The typed confirmation of `E`, while it is open. */
	readonly emptying: TrashEmptyDialog | null;
	readonly height: number;
	readonly width: number;
}

/**
 * mam-tui's trash: one row per purge (purge id, agent, conversation, age, size). `r` restores the
 * selected one, `E` deletes it for good after a typed confirmation. Renders only.
 */
export function TrashScreen({entries, cursor, emptying, height, width}: TrashScreenProps): React.JSX.Element {
	if (entries === null) return <Text dimColor>reading the trash…</Text>;
	if (entries.length === 0) return <Text>The trash is empty: no purge to undo.</Text>;
	const listHeight = Math.max(3, height - 4);
	const start = windowStart(cursor, listHeight, entries.length);
	return (
		<Box flexDirection="column">
			<Text dimColor wrap="truncate">{`  ${fit('purge id', 34)} ${fit('agent', 9)} ${fit('age', 6)} ${fit('size', 9)} conversation`}</Text>
			{entries.slice(start, start + listHeight).map((e, i) => (
				<Text key={e.purgeId} inverse={start + i === cursor} wrap="truncate">
					{start + i === cursor ? '>' : ' '} {fit(e.purgeId, 34)} {fit(e.agent, 9)} {fit(age(0, e.ageMs), 6)} {fit(bytes(e.bytes), 9)}{' '}
					{fit(`${e.label}${e.state === 'done' ? '' : ` (${e.state})`}`, Math.max(10, width - 64))}
				</Text>
			))}
			{emptying ? (
				<Box flexDirection="column" borderStyle="single" borderColor="red" paddingX={1}>
					<Text color="red">{`Delete ${emptying.purgeId} for good? It cannot be restored after this.`}</Text>
					<Text>{`Type ${emptying.expected} and press enter (esc cancels): ${emptying.typed}`}</Text>
				</Box>
			) : null}
		</Box>
	);
}
