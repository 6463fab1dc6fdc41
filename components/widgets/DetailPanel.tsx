import React from 'react';
import {Box, Text} from 'ink';
import type {Finding, SessionRecord} from '../../src/domain/types.js';
import type {SessionDetail, SessionLive} from '../../src/store/state.js';
import {bytes, resumeText, shortenPath} from '../format.js';

export interface DetailPanelProps {
	readonly session: SessionRecord;
	readonly live?: SessionLive;
	readonly detail: SessionDetail | null;
	readonly findings: readonly Finding[];
	readonly home: string;
	/** Lines available; sections are cut to fit. */
	readonly height: number;
}

/**
 * Everything about the selected session: ids, pane, processes, artifacts, resume command, output, findings, audit.
 * Memoised: it renders again only when the selection, its live entry, its findings or the loaded detail change.
 */
export const DetailPanel = React.memo(function DetailPanel({session, live, detail, findings, home, height}: DetailPanelProps): React.JSX.Element {
	const current = detail && detail.name === session.name ? detail : null;
	const lines: React.JSX.Element[] = [];
	const add = (key: string, node: React.JSX.Element) => lines.push(<React.Fragment key={key}>{node}</React.Fragment>);
	add('name', <Text bold wrap="truncate">{`${session.name} · ${session.agent}`}</Text>);
	add('id', <Text wrap="truncate">{`id ${session.agentSessionId ?? '(not pinned yet)'}`}</Text>);
	add('cwd', <Text>{`cwd ${shortenPath(session.cwd, home)} · pane ${session.paneId ?? '—'}${session.mux ? ` (${session.mux})` : ''}`}</Text>);
	if (live?.pane?.detection) add('status', <Text wrap="truncate">{`status ${live.liveStatus}: ${live.pane.detection.evidence}`}</Text>);
	add('resume', <Text>{`resume: ${resumeText(live?.resumeState)}`}</Text>);
	if (current?.resumeCommand) add('cmd', <Text dimColor>{`  $ ${current.resumeCommand.join(' ')}`}</Text>);
	if (current?.error) add('err', <Text color="red">{current.error}</Text>);
	for (const f of findings) add(`f-${f.kind}`, <Text color="red">{`! ${f.kind}: ${f.message}`}</Text>);
	if (current && current.processes.length > 0) {
		add('ph', <Text bold>processes</Text>);
		for (const p of current.processes) add(`p-${p.pid}`, <Text>{`  ${p.pid} ${p.argv.join(' ') || p.name}`}</Text>);
	}
	if (current?.plan) {
		add('ah', <Text bold>{`artifacts (${bytes(current.plan.totalBytes)})`}</Text>);
		for (const [i, line] of current.plan.lines.entries()) {
			add(`a-${i}`, <Text>{`  ${line.description}: ${shortenPath(line.path, home)}${line.table ? ` [${line.table}${line.count === undefined ? '' : ` ×${line.count}`}]` : ''} ${bytes(line.bytes)}`}</Text>);
		}
	}
	if (current?.output) {
		add('oh', <Text bold>recent output</Text>);
		for (const [i, line] of current.output.split('\n').slice(-5).entries()) add(`o-${i}`, <Text dimColor>{`  ${line}`}</Text>);
	}
	if (current && current.audit.length > 0) {
		add('hh', <Text bold>history</Text>);
		for (const a of current.audit.slice(-5)) {
			add(`h-${a.id}`, <Text>{`  ${new Date(a.at).toTimeString().slice(0, 8)} ${a.action}${a.step ? `/${a.step}` : ''} ${a.outcome}`}</Text>);
		}
	}
	return (
		<Box flexDirection="column" borderStyle="single" borderDimColor paddingX={1}>
			{lines.slice(0, Math.max(1, height - 2))}
		</Box>
	);
});
