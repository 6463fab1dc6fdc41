import React, {useMemo} from 'react';
import {Box, Text} from 'ink';
import type {SessionRecord} from '../../src/domain/types.js';
import {shortId} from '../../src/domain/ids.js';
import type {SessionLive} from '../../src/store/state.js';
import {age, EMPTY_CELL, fit, LIVE_COLOR, memory, RESUME_COLOR, resumeText, shortenPath} from '../format.js';
import {parkedFreed} from '../../src/store/selectors.js';
import {ACCENT, STATUS_COLOR} from '../theme.js';

export interface SessionRow {
	readonly record: SessionRecord;
	readonly live?: SessionLive;
	readonly findings: number;
	/** The row's host is not up (hostAway): the row is greyed, its status the host's. */
	readonly away?: string;
}

export interface SessionTableProps {
	readonly rows: readonly SessionRow[];
	readonly cursor: number;
	/** How many rows fit; only those render, so hundreds of sessions cost what one screen costs. */
	readonly height: number;
	readonly width: number;
	readonly home: string;
	readonly marked: ReadonlySet<string>;
	readonly now: number;
	/** Hosts are configured: a HOST column shows each row's machine (`local` for this one). */
	readonly hosts?: boolean;
}

/** The first visible row, keeping the cursor on screen. */
export function windowStart(cursor: number, height: number, total: number): number {
	if (total <= height) return 0;
	const half = Math.floor(height / 2);
	return Math.max(0, Math.min(cursor - half, total - height));
}

export interface Columns {
	/** 0: no HOST column (no hosts configured). */
	readonly host: number;
	readonly name: number;
	readonly agent: number;
	readonly pane: number;
	readonly status: number;
	readonly resume: number;
	readonly pin: number;
	readonly age: number;
	readonly cwd: number;
}

/** Widths for the terminal: narrow fixed columns, the rest split between name and cwd; pin shows from 100 columns. */
export function columnWidths(width: number, hosts = false): Columns {
	const host = hosts ? 8 : 0;
	const agent = 8;
	const pane = width >= 120 ? 8 : 6;
	const status = 8;
	const resume = width >= 120 ? 22 : 11;
	const pin = width >= 100 ? 9 : 0;
	const ageWidth = 4;
	const gaps = pin ? 8 : 7;
	const fixed = 3 + (host ? host + 1 : 0) + agent + pane + status + resume + pin + ageWidth + gaps;
	const flexible = Math.max(24, width - fixed - 1);
	const name = Math.max(10, Math.min(28, Math.floor(flexible * 0.45)));
	return {host, name, agent, pane, status, resume, pin, age: ageWidth, cwd: Math.max(8, flexible - name)};
}

function statusOf(record: SessionRecord, live: SessionLive | undefined): {text: string; color: string} {
	if (record.status === 'purged') return {text: 'purged', color: STATUS_COLOR.purged};
	// A parked row has no live pane: it says so whatever the refresh found (a restart by hand is drift's).
	if (record.status === 'parked') return {text: 'parked', color: STATUS_COLOR.parked};
	if (live) return {text: live.liveStatus, color: LIVE_COLOR[live.liveStatus]};
	return {text: record.status, color: STATUS_COLOR[record.status]};
}

/** Memoised on the column widths: a keystroke does not rebuild the header. */
const Header = React.memo(function Header({cols}: {readonly cols: Columns}): React.JSX.Element {
	const cells = [
		...(cols.host ? [fit('HOST', cols.host)] : []),
		fit('NAME', cols.name),
		fit('AGENT', cols.agent),
		fit('PANE', cols.pane),
		fit('STATUS', cols.status),
		fit('RESUME', cols.resume),
	];
	if (cols.pin) cells.push(fit('PIN', cols.pin));
	cells.push(fit('AGE', cols.age), fit('CWD', cols.cwd));
	return <Text bold>{`   ${cells.join(' ')}`}</Text>;
});

interface RowProps {
	readonly record: SessionRecord;
	readonly live: SessionLive | undefined;
	readonly findings: number;
	readonly selected: boolean;
	readonly marked: boolean;
	readonly cols: Columns;
	readonly home: string;
	/** The age cell's text, not the clock: a clock tick that leaves it unchanged re-renders no row. */
	readonly age: string;
	readonly away: string | undefined;
}

/**
 * One table line. Memoised on plain props (the record, its live entry, flags, the age text): a
 * cursor move re-renders only the row it leaves and the row it lands on (plus the one scrolled
 * in), not every visible row.
 */
const Row = React.memo(function Row({record, live, findings, selected, marked, cols, home, age: ageText, away}: RowProps): React.JSX.Element {
	// A row of a host that is not up: greyed, its status the host's (`down`), the rest as last reported.
	const status = away ? {text: away.split(' ')[0] ?? 'down', color: 'gray'} : statusOf(record, live);
	const resume = away ? undefined : live?.resumeState;
	const freed = parkedFreed(record);
	return (
		<Text inverse={selected} wrap="truncate" dimColor={away !== undefined}>
			<Text color={selected ? ACCENT : undefined}>{selected ? '>' : ' '}</Text>
			{marked ? '*' : ' '}
			<Text color="red">{findings > 0 ? '!' : ' '}</Text>
			{cols.host ? `${fit(record.host ?? 'local', cols.host)} ` : ''}
			{fit(record.host === undefined ? record.name : record.name.slice(record.host.length + 1), cols.name)} {fit(record.agent, cols.agent)}{' '}
			{fit(freed !== undefined ? memory(freed) : (record.paneId ?? EMPTY_CELL), cols.pane)} <Text color={status.color}>{fit(status.text, cols.status)}</Text>{' '}
			<Text color={resume ? RESUME_COLOR[resume.kind] : undefined}>{fit(resumeText(resume), cols.resume)}</Text>
			{cols.pin ? ` ${fit(record.agentSessionId ? shortId(record.agentSessionId, cols.pin) : EMPTY_CELL, cols.pin)}` : ''} {fit(ageText, cols.age)}{' '}
			{fit(shortenPath(record.cwd, home), cols.cwd)}
		</Text>
	);
});

export function SessionTable({rows, cursor, height, width, home, marked, now, hosts = false}: SessionTableProps): React.JSX.Element {
	// One Columns object per width, so memoised rows see the same `cols` from frame to frame.
	const cols = useMemo(() => columnWidths(width, hosts), [width, hosts]);
	const start = windowStart(cursor, height, rows.length);
	const visible = rows.slice(start, start + height);
	return (
		<Box flexDirection="column">
			<Header cols={cols} />
			{visible.map((row, i) => (
				<Row
					key={row.record.id}
					record={row.record}
					live={row.live}
					findings={row.findings}
					selected={start + i === cursor}
					marked={marked.has(row.record.name)}
					cols={cols}
					home={home}
					age={age(row.record.createdAt, now)}
					away={row.away}
				/>
			))}
			{rows.length > height ? <Text dimColor>{`   ${start + 1}–${start + visible.length} of ${rows.length}`}</Text> : null}
		</Box>
	);
}
