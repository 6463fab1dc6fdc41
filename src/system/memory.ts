import fs from 'node:fs';

// How much memory a process tree holds, for park's "freed" figure (issue 28). PSS (proportional
// set size) splits each shared page among the processes that map it, so summing it over a tree
// does not count node's or a shared library's pages once per process the way RSS does. PSS comes
// from /proc/<pid>/smaps_rollup (Linux 4.14+); where that cannot be read, RSS from status.

export interface ProcessMemory {
	readonly pid: number;
	readonly bytes: number;
	readonly source: 'pss' | 'rss';
}

/** `Pss:  12345 kB` (smaps_rollup) or `VmRSS:  12345 kB` (status), in bytes; undefined when absent. */
export function kbField(text: string, field: string): number | undefined {
	const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
	return match ? Number(match[1]) * 1024 : undefined;
}

/** One process's memory, or undefined when it is gone (or a kernel thread, which has none). */
export function processMemory(pid: number, procRoot = '/proc'): ProcessMemory | undefined {
	try {
		const pss = kbField(fs.readFileSync(`${procRoot}/${pid}/smaps_rollup`, 'utf8'), 'Pss');
		if (pss !== undefined) return {pid, bytes: pss, source: 'pss'};
	} catch {
		// Not readable (another user's process, an old kernel): RSS below.
	}
	try {
		const rss = kbField(fs.readFileSync(`${procRoot}/${pid}/status`, 'utf8'), 'VmRSS');
		return rss === undefined ? undefined : {pid, bytes: rss, source: 'rss'};
	} catch {
		return undefined;
	}
}

/** The sum over `pids` (each read once), and whether any figure had to fall back to RSS. */
export function treeMemory(pids: readonly number[], procRoot = '/proc'): {readonly bytes: number; readonly source: 'pss' | 'rss' | 'none'} {
	let bytes = 0;
	let rss = false;
	let any = false;
	for (const pid of new Set(pids)) {
		const one = processMemory(pid, procRoot);
		if (!one) continue;
		any = true;
		bytes += one.bytes;
		if (one.source === 'rss') rss = true;
	}
	return {bytes, source: !any ? 'none' : rss ? 'rss' : 'pss'};
}
