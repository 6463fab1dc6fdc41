import fs from 'node:fs';

/**
 * Linux reports a process's start (field 22 of /proc/<pid>/stat) in clock ticks since boot, at
 * USER_HZ ticks per second: 100 on every Linux architecture mam-tui runs on.
 */
const TICKS_PER_SECOND = 100;

/**
 * `btime` of /proc/stat: boot time in whole seconds since the Unix epoch (null when unreadable).
 * Read by the caller once per refresh (its memo), and handed to `processStartMs`.
 */
export function bootSeconds(): number | null {
	try {
		const line = fs
			.readFileSync('/proc/stat', 'utf8')
			.split('\n')
			.find(l => l.startsWith('btime '));
		const value = Number(line?.slice(6));
		return Number.isFinite(value) && value > 0 ? value : null;
	} catch {
		return null;
	}
}

/**
 * When a process started, in ms since the Unix epoch, from its start time in ticks and the boot
 * time (`bootSeconds`); undefined when boot time is unknown. btime is rounded down to the second,
 * so this is at most a second early, never late: a conversation the process wrote is never dated
 * before it.
 */
export function processStartMs(startTicks: number, boot: number | null): number | undefined {
	if (boot === null || !Number.isFinite(startTicks) || startTicks <= 0) return undefined;
	return boot * 1000 + Math.floor((startTicks * 1000) / TICKS_PER_SECOND);
}
