/** How `eventually` polls. */
export interface PollOptions {
	/** Give up after this long (ms). */
	readonly timeoutMs?: number;
	/** Wait this long between two checks (ms). */
	readonly everyMs?: number;
	/**
	 * Treat a check that throws as "not yet" (a socket not listening yet, a file half written);
	 * the last error is named when the deadline passes. Otherwise the first error fails at once.
	 */
	readonly retryErrors?: boolean;
}

/**
 * Check until `check` gives a value (anything but undefined or false), and return it; fail with
 * `what` once the deadline passes. The one poll of the tests: a test waits for a state to be
 * reached, never for a fixed time.
 */
export async function eventually<T>(
	what: string,
	check: () => T | undefined | false | Promise<T | undefined | false>,
	{timeoutMs = 15_000, everyMs = 50, retryErrors = false}: PollOptions = {},
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const value = await check();
			if (value !== undefined && value !== false) return value;
		} catch (error) {
			if (!retryErrors) throw error;
			last = error;
		}
		if (Date.now() > deadline) {
			throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : ` (last error: ${String(last)})`}`);
		}
		await new Promise(resolve => setTimeout(resolve, everyMs));
	}
}
