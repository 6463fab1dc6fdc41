import fs from 'node:fs';
import {parseStat} from '../system/processes.js';
import {SANDBOX_MARKER} from './sandbox.js';

// Finds every process the demo started — stand-ins in panes, their children, the ones that
// ignore SIGHUP and outlive their pane, the tmux server itself — by the marker variable they all
// inherited, and nothing else: a user's own shell that merely `cd`ed into the sandbox has no marker.

/** A process by pid and start time, so a reused pid is never signalled. */
export interface MarkedProcess {
	readonly pid: number;
	readonly startTime: number;
}

function startTimeOf(pid: number): number | undefined {
	try {
		return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTime;
	} catch {
		return undefined;
	}
}

function carriesMarker(pid: number, marker: string): boolean {
	try {
		return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker);
	} catch {
		// gone, or not ours to read
		return false;
	}
}

/** Live processes (not `self`) whose environment holds `MAM_DEMO_SANDBOX=<base>`. */
export function sandboxProcesses(base: string, self = process.pid): MarkedProcess[] {
	const marker = `${SANDBOX_MARKER}=${base}`;
	const found: MarkedProcess[] = [];
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) continue;
		const pid = Number(name);
		if (pid === self || !carriesMarker(pid, marker)) continue;
		const startTime = startTimeOf(pid);
		if (startTime !== undefined) found.push({pid, startTime});
	}
	return found;
}

/** SIGKILL `proc` if the pid still names the same process; false when it was already gone. */
function killIfSame(proc: MarkedProcess): boolean {
	if (startTimeOf(proc.pid) !== proc.startTime) return false;
	try {
		process.kill(proc.pid, 'SIGKILL');
		return true;
	} catch {
		return false;
	}
}

/** One pass: SIGKILL every marked process. Synchronous, for the last-resort exit handler. */
export function reapOnce(base: string): number {
	return sandboxProcesses(base).filter(killIfSame).length;
}

/**
 * SIGKILL marked processes until none is left (a dying stand-in may still start a child) or
 * `timeoutMs` passes; returns the pids still alive then.
 */
export async function reapSandbox(base: string, timeoutMs = 5000): Promise<number[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const left = sandboxProcesses(base);
		if (left.length === 0) return [];
		if (Date.now() > deadline) return left.map(p => p.pid);
		left.forEach(killIfSame);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}
