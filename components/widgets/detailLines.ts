import type {AuditRecord, Finding, SessionRecord} from '../../src/domain/types.js';
import type {SessionDetail, SessionLive} from '../../src/store/state.js';
import type {TokenUsage} from '../../src/domain/usage.js';
import {usageLine} from '../../src/domain/usage.js';
import {planSize, planTotal, printable, resumeText, shortenPath} from '../format.js';

/** One screen line of a panel, already cut to the panel's width. */
export interface PanelLine {
	readonly text: string;
	readonly color?: string;
	readonly bold?: boolean;
	readonly dim?: boolean;
}

type Style = Omit<PanelLine, 'text'>;

/**
 * Hard-wrap `text` to `width` columns, continuation lines indented: a long path is shown in full
 * over several lines, never cut at the panel edge.
 */
export function wrapLine(raw: string, width: number, style: Style = {}, indent = '    '): PanelLine[] {
	const text = printable(raw);
	const room = Math.max(8, width);
	if (text.length <= room) return [{text, ...style}];
	const lines: PanelLine[] = [{text: text.slice(0, room), ...style}];
	const rest = Math.max(4, room - indent.length);
	for (let i = room; i < text.length; i += rest) lines.push({text: indent + text.slice(i, i + rest), ...style});
	return lines;
}

function clock(ms: number): string {
	return new Date(ms).toTimeString().slice(0, 8);
}

export interface DetailInput {
	readonly session: SessionRecord;
	readonly live?: SessionLive;
	/** The loaded detail, when it is this session's. */
	readonly detail: SessionDetail | null;
	readonly findings: readonly Finding[];
	readonly home: string;
	/** Tokens the pinned conversation used, as its agent recorded them (absent: unknown). */
	readonly usage?: TokenUsage | undefined;
	/** The tokens were not read yet: the search index reads them, from the first time the conversations view opens. */
	readonly usageUnread?: boolean;
	/** The row's host is not up (components/format.ts hostAway): the row is as it last reported. */
	readonly away?: string;
}

/** Every line of the detail panel at `width`: ids, pane, resume, findings, processes, artifacts, output, history. */
export function detailLines({session, live, detail, findings, home, usage, usageUnread, away}: DetailInput, width: number): PanelLine[] {
	const current = detail && detail.name === session.name ? detail : null;
	const out: PanelLine[] = [];
	const add = (text: string, style: Style = {}) => out.push(...wrapLine(text, width, style));
	const heading = (text: string) => out.push({text, bold: true});
	add(`${session.name} · ${session.agent} · ${session.status}`, {bold: true});
	if (away) add(`${session.host ?? 'the host'} ${away}. Shown as it last reported; its actions wait until it is back.`, {color: 'yellow'});
	add(`id ${session.agentSessionId ?? '(not pinned yet)'}`);
	add(`cwd ${shortenPath(session.cwd, home)}`);
	add(`pane ${session.paneId ?? '—'}${session.mux ? ` (${session.mux})` : ''}`);
	if (live?.pane?.detection) add(`status ${live.liveStatus}: ${live.pane.detection.evidence}`);
	add(`resume: ${resumeText(live?.resumeState)}`);
	// `—` says the agent recorded none: before the index read them, say that instead.
	// A host's conversation is in that machine's index: this one's would answer `—` for it.
	if (session.agentSessionId && session.host !== undefined) add(`tokens are counted on ${session.host} (mam-tui search there)`);
	else if (session.agentSessionId) add(`tokens ${usageUnread ? 'not read yet (c reads them)' : usageLine(usage)}`);
	if (current?.resumeCommand) add(`  $ ${current.resumeCommand.join(' ')}`, {dim: true});
	if (!current) add('loading…', {dim: true});
	if (current?.error) add(current.error, {color: 'red'});
	if (findings.length > 0) {
		heading(`findings (${findings.length})`);
		for (const f of findings) add(`  ! ${f.kind}: ${f.message}`, {color: 'red'});
	}
	if (current && current.processes.length > 0) {
		heading(`processes (${current.processes.length})`);
		for (const p of current.processes) {
			const start = p.startedAt === undefined ? '--:--:--' : clock(p.startedAt);
			add(`  ${'  '.repeat(Math.min(p.depth, 6))}${p.pid} ${start} ${p.command}`);
		}
	}
	if (current?.plan) {
		heading(`artifacts (${planTotal(current.plan.lines.length, current.plan.totalBytes)})`);
		for (const line of current.plan.lines) {
			add(`  ${line.description}: ${planSize(line)}`);
			add(`    ${shortenPath(line.path, home)}`, {dim: true});
		}
		if (current.plan.descendants.length > 0) add(`  + ${current.plan.descendants.length} child session(s): ${current.plan.descendants.join(', ')}`);
	}
	if (current?.output !== undefined) {
		const lines = current.output.replace(/\s+$/, '').split('\n');
		heading(`recent output (last ${lines.length} lines)`);
		for (const line of lines) add(`  ${line}`, {dim: true});
	}
	if (current && current.audit.length > 0) {
		heading(`history (${current.audit.length})`);
		for (const a of current.audit) add(`  ${clock(a.at)} ${a.action}${a.step ? `/${a.step}` : ''} ${a.outcome}${auditWhy(a)}`);
	}
	return out;
}

/** A step's own words, when it left some (why a stop typed nothing, which pane it closed). */
function auditWhy(record: AuditRecord): string {
	const message = record.detail['message'];
	return typeof message === 'string' && message !== '' ? `: ${message}` : '';
}

/** The first line shown: the asked scroll, kept so the last page is full. */
export function clampScroll(scroll: number, total: number, room: number): number {
	return Math.max(0, Math.min(scroll, total - room));
}
