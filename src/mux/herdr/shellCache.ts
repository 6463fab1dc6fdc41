import fs from 'node:fs';
import path from 'node:path';
import type {ProcessRef} from '../../domain/types.js';
import type {Logger} from '../../system/logger.js';
import {pidIndex} from '../../system/processes.js';

/**
 * A terminal's shell as an earlier mam-tui process learned it from `pane.process_info`, with the
 * identity of the shell and of its parent (the herdr server) at that time.
 */
export interface RememberedShell {
	readonly terminalId: string;
	readonly pid: number;
	readonly startTime: number;
	readonly ppid: number;
	readonly parentStartTime: number;
}

/**
 * Shell pids kept between mam-tui processes. herdr's snapshot carries no pids, so a process
 * that starts cold (`mam-tui status`) would make one `pane.process_info` call per pane: 500 panes,
 * 500 connections, every time. The entries are hints: `trusted` keeps only those whose shell is
 * still the same process (pid and start time) under the same parent (pid and start time), so a
 * restarted herdr, a reused pid or a hand-edited file never maps a terminal to another process.
 */
export interface ShellCache {
	/** Entries saved for this socket (unchecked). */
	load(socketPath: string): readonly RememberedShell[];
	/** Replace this socket's entries. Failures are logged, never thrown: the cache is only a hint. */
	save(socketPath: string, shells: readonly RememberedShell[]): void;
}

const VERSION = 1;
/** Bounds so a corrupt or hostile file cannot make us hold or write without limit. */
const MAX_SOCKETS = 16;
const MAX_SHELLS = 10_000;
const TERMINAL_ID = /^[A-Za-z0-9_:.-]{1,128}$/;

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

function parseShell(value: unknown): RememberedShell | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const v = value as Record<string, unknown>;
	const {terminalId, pid, startTime, ppid, parentStartTime} = v;
	if (typeof terminalId !== 'string' || !TERMINAL_ID.test(terminalId)) return undefined;
	if (!isCount(pid) || !isCount(ppid) || !isCount(startTime) || !isCount(parentStartTime)) return undefined;
	return {terminalId, pid, startTime, ppid, parentStartTime};
}

type Sockets = Record<string, readonly RememberedShell[]>;

function readSockets(file: string): Sockets {
	let body: unknown;
	try {
		body = JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch {
		return {};
	}
	if (typeof body !== 'object' || body === null) return {};
	const {version, sockets} = body as Record<string, unknown>;
	if (version !== VERSION || typeof sockets !== 'object' || sockets === null) return {};
	const out: Sockets = {};
	for (const [socket, list] of Object.entries(sockets).slice(0, MAX_SOCKETS)) {
		if (!Array.isArray(list)) continue;
		out[socket] = list
			.slice(0, MAX_SHELLS)
			.map(parseShell)
			.filter((s): s is RememberedShell => s !== undefined);
	}
	return out;
}

/** The cache in one JSON file, rewritten atomically (temp file, then rename). */
export function fileShellCache(file: string, logger?: Logger): ShellCache {
	return {
		load: socketPath => readSockets(file)[socketPath] ?? [],
		save(socketPath, shells) {
			const tmp = `${file}.${process.pid}.tmp`;
			try {
				const others = Object.entries(readSockets(file)).filter(([socket]) => socket !== socketPath);
				const sockets = Object.fromEntries([[socketPath, shells.slice(0, MAX_SHELLS)], ...others.slice(0, MAX_SOCKETS - 1)]);
				fs.mkdirSync(path.dirname(file), {recursive: true, mode: 0o700});
				fs.writeFileSync(tmp, JSON.stringify({version: VERSION, sockets}), {mode: 0o600});
				fs.renameSync(tmp, file);
			} catch (error) {
				fs.rmSync(tmp, {force: true});
				logger?.warn('could not save the herdr shell cache', error);
			}
		},
	};
}

/** The remembered shells that are still the same processes under the same parent, by terminal id. */
export function trusted(shells: readonly RememberedShell[], table: readonly ProcessRef[]): Map<string, RememberedShell> {
	const byPid = pidIndex(table);
	const out = new Map<string, RememberedShell>();
	for (const shell of shells) {
		const proc = byPid.get(shell.pid);
		const parent = byPid.get(shell.ppid);
		if (proc?.startTime !== shell.startTime || proc.ppid !== shell.ppid || parent?.startTime !== shell.parentStartTime) continue;
		out.set(shell.terminalId, shell);
	}
	return out;
}

/** The same shells in the same order (what was saved, against what would be saved now). */
export function sameShells(a: readonly RememberedShell[], b: readonly RememberedShell[]): boolean {
	if (a.length !== b.length) return false;
	return a.every((x, i) => {
		const y = b[i];
		return (
			y !== undefined &&
			x.terminalId === y.terminalId &&
			x.pid === y.pid &&
			x.startTime === y.startTime &&
			x.ppid === y.ppid &&
			x.parentStartTime === y.parentStartTime
		);
	});
}
