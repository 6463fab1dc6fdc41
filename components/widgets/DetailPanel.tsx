import React from 'react';
import {Box, Text} from 'ink';
import {clampScroll, type PanelLine} from './detailLines.js';

export interface DetailPanelProps {
	/** Every line (from `detailLines`, wrapped to this panel's inner width). */
	readonly lines: readonly PanelLine[];
	/** The first line asked for (J/K, PgUp/PgDn); kept in range here. */
	readonly scroll: number;
	/** Lines available, border included. */
	readonly height: number;
}

/** Lines a panel of `height` shows, after its border and its scroll line. */
export function detailRoom(height: number): number {
	return Math.max(1, height - 3);
}

/**
 * Everything about the selected session: ids, pane, resume command, findings, process tree,
 * artifacts, recent output, history — scrolled, long paths wrapped rather than cut. Memoised:
 * it renders again only when its lines or its scroll change.
 */
export const DetailPanel = React.memo(function DetailPanel({lines, scroll, height}: DetailPanelProps): React.JSX.Element {
	const room = detailRoom(height);
	const first = clampScroll(scroll, lines.length, room);
	const shown = lines.slice(first, first + room);
	const more = lines.length > room;
	return (
		<Box flexDirection="column" borderStyle="single" borderDimColor paddingX={1} height={height}>
			{shown.map((line, i) => (
				<Text key={first + i} wrap="truncate" bold={line.bold} dimColor={line.dim} color={line.color}>
					{line.text}
				</Text>
			))}
			{more ? <Text dimColor>{`${first + 1}–${first + shown.length} of ${lines.length} · J/K or PgDn/PgUp scroll`}</Text> : null}
		</Box>
	);
});
