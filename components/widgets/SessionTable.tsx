import React from 'react';
import {Box, Text} from 'ink';
import type {SessionRecord} from '../../src/domain/types.js';
import {STATUS_COLOR, ACCENT} from '../theme.js';

export interface SessionTableProps {
	readonly rows: readonly SessionRecord[];
	readonly cursor: number;
	/** How many rows fit; only those render, so hundreds of sessions cost what one screen costs. */
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly marked: ReadonlySet<string>;
}

function fit(text: string, width: number): string {
	if (width <= 0) return '';
	if (text.length <= width) return text.padEnd(width);
	return `${text.slice(0, Math.max(0, width - 1))}…`;
}

function shorten(cwd: string, home: string): string {
	return cwd === home ? '~' : cwd.startsWith(`${home}/`) ? `~${cwd.slice(home.length)}` : cwd;
}

/** The first visible row, keeping the cursor on screen. */
export function windowStart(cursor: number, height: number, total: number): number {
	if (total <= height) return 0;
	const half = Math.floor(height / 2);
	return Math.max(0, Math.min(cursor - half, total - height));
}

interface Columns {
	readonly name: number;
	readonly agent: number;
	readonly status: number;
	readonly pane: number;
	readonly pin: number;
	readonly cwd: number;
}

/** Widths for the terminal: fixed narrow columns, the rest split between name and cwd. */
export function columnWidths(width: number): Columns {
	const agent = 9;
	const status = 8;
	const pane = width >= 100 ? 8 : 6;
	const pin = width >= 120 ? 10 : 0;
	const fixed = 2 + agent + status + pane + pin + 5;
	const flexible = Math.max(20, width - fixed - 1);
	const name = Math.max(10, Math.floor(flexible * 0.4));
	return {name, agent, status, pane, pin, cwd: Math.max(8, flexible - name)};
}

export function SessionTable({rows, cursor, height, width, home, marked}: SessionTableProps): React.JSX.Element {
	const cols = columnWidths(width);
	const start = windowStart(cursor, height, rows.length);
	const visible = rows.slice(start, start + height);
	const header = [fit('NAME', cols.name), fit('AGENT', cols.agent), fit('STATUS', cols.status), fit('PANE', cols.pane)];
	if (cols.pin) header.push(fit('PIN', cols.pin));
	header.push(fit('CWD', cols.cwd));
	return (
		<Box flexDirection="column">
			<Text bold>{`  ${header.join(' ')}`}</Text>
			{visible.map((row, i) => {
				const selected = start + i === cursor;
				const mark = marked.has(row.name) ? '*' : ' ';
				return (
					<Text key={row.id} inverse={selected}>
						<Text color={selected ? ACCENT : undefined}>{selected ? '>' : ' '}</Text>
						{mark}
						{fit(row.name, cols.name)} {fit(row.agent, cols.agent)}{' '}
						<Text color={STATUS_COLOR[row.status]}>{fit(row.status, cols.status)}</Text> {fit(row.paneId ?? '—', cols.pane)}
						{cols.pin ? ` ${fit(row.agentSessionId?.slice(0, 8) ?? '—', cols.pin)}` : ''} {fit(shorten(row.cwd, home), cols.cwd)}
					</Text>
				);
			})}
		</Box>
	);
}
