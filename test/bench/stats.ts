import fs from 'node:fs';

/** A set of samples in one unit. */
export interface Summary {
	readonly n: number;
	readonly median: number;
	readonly p95: number;
	readonly min: number;
	readonly max: number;
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
function quantile(sorted: readonly number[], q: number): number {
	if (sorted.length === 0) return Number.NaN;
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
	return sorted[rank] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): Summary {
	const sorted = [...samples].sort((a, b) => a - b);
	return {n: sorted.length, median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN};
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
	const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
	// fields[0] is field 3; utime is field 14, stime field 15.
	return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** A /proc/<pid>/status field in kB (VmHWM: peak resident set size). */
export function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
	const line = fs
		.readFileSync(`/proc/${pid}/status`, 'utf8')
		.split('\n')
		.find(l => l.startsWith(`${field}:`));
	return Number(line?.split(/\s+/)[1] ?? Number.NaN);
}

export const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms));

/** Poll `check` every `everyMs` until it returns a value; throws with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs: number, everyMs = 5): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await sleep(everyMs);
	}
}

/** Busy and total jiffies of the whole machine, from the first line of /proc/stat. */
function machineJiffies(): {busy: number; total: number} {
	const cpu = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
	const total = cpu.reduce((sum, n) => sum + n, 0);
	// idle (4th) and iowait (5th) are the machine waiting.
	return {busy: total - (cpu[3] ?? 0) - (cpu[4] ?? 0), total};
}

/**
 * Wait until the whole machine has been quiet (busy below `busyShare` of its cores) for one
 * `windowMs`, at most `timeoutMs`; returns the seconds waited and the last window's busy share.
 * The fixtures start hundreds of stand-in agents (each a Node process booting for a few hundred
 * ms); timing mam-tui while they still boot would measure them.
 */
export async function waitForQuiet(busyShare = 0.15, windowMs = 1000, timeoutMs = 90_000): Promise<{seconds: number; busy: number; quiet: boolean}> {
	const start = Date.now();
	let busy = 1;
	while (Date.now() - start < timeoutMs) {
		const a = machineJiffies();
		await sleep(windowMs);
		const b = machineJiffies();
		busy = b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : 0;
		if (busy < busyShare) return {seconds: (Date.now() - start) / 1000, busy, quiet: true};
	}
	return {seconds: (Date.now() - start) / 1000, busy, quiet: false};
}
