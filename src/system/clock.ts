/**
 * Milliseconds on a monotonic clock, as `performance.now()` gives but from another origin: compare
 * only with other readings of this clock. The global `performance` loads a dozen perf_hooks
 * modules on first use, about 2 ms of every start.
 */
export function monotonicMs(): number {
	return Number(process.hrtime.bigint()) / 1e6;
}
