// Which conversation each live claude process is on: its live-session record, argv, or the
// transcript it holds open (README "In use").

import fs from 'node:fs';
import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';
import {agentProcessesOf, flagValue, idsUse, openFilesOf, projectUse, type LiveUse} from '../common/liveEvidence.js';
import {str} from '../common/jsonl.js';
import {parseJsonLine} from '../common/lines.js';
import {listDir, lstatOrUndefined, realpathOrUndefined} from '../common/paths.js';
import {type InRefresh, memo, memoKind} from '../common/refresh.js';
import {runsProgram} from '../common/programs.js';
import type {AdapterContext} from '../types.js';
import {claudeRoot, readTranscript} from './transcripts.js';

const LIVE_RECORDS = memoKind<ReturnType<typeof liveRecords>>('claude:live');

/** How claude shows in `ps` (the adapter's `processNames`). */
export const CLAUDE_PROGRAMS = ['claude', 'claude-code'] as const;

/** Is `proc` claude (by name, or node running its package)? The adapter's `matchesProcess`; here so live evidence needs no import of the adapter. */
export function isClaudeProcess(proc: ProcessRef): boolean {
	return runsProgram(proc, CLAUDE_PROGRAMS, ['@anthropic-ai/claude-code/']);
}

/** A live-session record `sessions/<pid>.json` (FORMATS 10). */
export interface LiveRecord {
	readonly file: string;
	readonly pid: number;
	readonly sessionId: string;
	readonly procStart: string | undefined;
	/** `idle`, `busy`, `waiting` (2.1.x); absent in older records. */
	readonly status?: string;
	/** With `waiting`: what it waits for (`permission prompt`). */
	readonly waitingFor?: string;
}

/** One record file; legacy `pid-<n>.json` and anything unreadable is no record. */
function parseLiveRecord(file: string, name: string): LiveRecord | undefined {
	if (!/^\d+\.json$/.test(name)) return undefined;
	let record: Record<string, unknown> | undefined;
	try {
		record = parseJsonLine(fs.readFileSync(file, 'utf8').replace(/\n/g, ' '));
	} catch {
		return undefined;
	}
	const pid = Number(record?.['pid'] ?? name.slice(0, -5));
	const sessionId = str(record, 'sessionId');
	const procStart = record?.['procStart'];
	if (!Number.isInteger(pid) || !sessionId) return undefined;
	const status = str(record, 'status');
	const waitingFor = str(record, 'waitingFor');
	return {
		file,
		pid,
		sessionId,
		procStart: procStart === undefined || procStart === null ? undefined : String(procStart),
		...(status ? {status} : {}),
		...(waitingFor ? {waitingFor} : {}),
	};
}

export function liveRecords(ctx: InRefresh, root: string): LiveRecord[] {
	const dir = path.join(root, 'sessions');
	const out: LiveRecord[] = [];
	for (const entry of listDir(dir, ctx)) {
		if (!entry.isFile()) continue;
		const record = parseLiveRecord(path.join(dir, entry.name), entry.name);
		if (record) out.push(record);
	}
	return out;
}

/** Is `proc` the process the record names: same pid and, when recorded, the same start time (a reused pid is not). */
function recordMatches(record: LiveRecord, proc: ProcessRef): boolean {
	return record.pid === proc.pid && (record.procStart === undefined || String(proc.startTime) === record.procStart);
}

/** The process a live record names, when it still runs (same pid and, when recorded, same start time). */
export async function liveProcess(ctx: AdapterContext, record: LiveRecord): Promise<ProcessRef | undefined> {
	const proc = await ctx.processes.get(record.pid);
	return proc && recordMatches(record, proc) ? proc : undefined;
}

/**
 * The live record of the running claude process `proc` (`sessions/<pid>.json` under the config
 * folder, `CLAUDE_CONFIG_DIR` followed), only when its pid and `procStart` match the process:
 * a record left behind by an earlier process with the same pid says nothing about this one.
 */
export function liveRecordOf(ctx: AdapterContext, proc: ProcessRef): LiveRecord | undefined {
	const name = `${proc.pid}.json`;
	const file = path.join(claudeRoot(ctx), 'sessions', name);
	const record = lstatOrUndefined(file)?.isFile() ? parseLiveRecord(file, name) : undefined;
	return record && record.procStart !== undefined && recordMatches(record, proc) ? record : undefined;
}

const UUID_ARG = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const TRANSCRIPT_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** claude's background daemon and its spare workers (`claude --bg`): not on any one conversation. */
function isClaudeService(argv: readonly string[]): boolean {
	return argv.includes('--bg-pty-host') || argv.includes('--bg-spare') || (argv.includes('daemon') && !argv.includes('--session-id'));
}

/**
 * Which conversation each live claude process is on: its live record `sessions/<pid>.json` (same
 * pid and start time), else argv (`--resume ID`, `-r ID`, `--session-id ID`), else a transcript it
 * holds open, else its project folder (nothing says which of its conversations: all of them).
 */
export async function claudeLiveUses(ctx: AdapterContext, procs?: readonly ProcessRef[]): Promise<LiveUse[]> {
	const root = claudeRoot(ctx);
	const records = new Map<number, LiveRecord>();
	for (const record of memo(ctx, LIVE_RECORDS.of(root), () => liveRecords(ctx, root))) records.set(record.pid, record);
	const recorded = (proc: ProcessRef) => {
		const record = records.get(proc.pid);
		return record !== undefined && (record.procStart === undefined || record.procStart === String(proc.startTime));
	};
	// A process its live record names is claude whatever its name looks like (pid and start time match).
	const mine = (await agentProcessesOf(ctx, isClaudeProcess, procs, {root: claudeRoot(ctx), rootOf: claudeRoot}, recorded)).filter(
		p => !isClaudeService(p.argv),
	);
	if (mine.length === 0) return [];
	const open = await openFilesOf(
		ctx,
		mine.map(p => p.pid),
	);
	const projects = path.join(realpathOrUndefined(root) ?? root, 'projects') + path.sep;
	return mine.map(proc => {
		const record = records.get(proc.pid);
		if (record && recorded(proc)) return idsUse(proc, [record.sessionId], `live session record ${record.file}`);
		const named = flagValue(proc.argv, ['--resume', '-r', '--session-id'], UUID_ARG);
		if (named) return idsUse(proc, [named], `argv names ${named}`);
		const held = (open.get(proc.pid) ?? []).filter(f => f.startsWith(projects)).flatMap(f => TRANSCRIPT_NAME.exec(path.basename(f))?.[1] ?? []);
		if (held.length > 0) return idsUse(proc, held, `holds its transcript open`);
		return projectUse(proc, 'claude');
	});
}

/** The folders a conversation's transcripts record (for the project rule). */
export function transcriptCwds(ctx: InRefresh, files: readonly string[], id: string): string[] {
	return [...new Set(files.flatMap(f => readTranscript(ctx, f, id).cwd ?? []))];
}
