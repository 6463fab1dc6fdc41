import fs from 'node:fs';

/** Switch to the alternate screen and put the cursor home (xterm's 1049: saves the cursor too). */
export const ENTER_ALTERNATE_SCREEN = '\u001B[?1049h\u001B[H';
/** Show the cursor (Ink hides it) and return to the primary screen, restoring the cursor. */
export const LEAVE_ALTERNATE_SCREEN = '\u001B[?25h\u001B[?1049l';

/** The signals that end the dashboard; each one gives the terminal back before the process goes. */
export const ENDING_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;

export interface FullScreen {
	/** Give the terminal back (idempotent): the primary screen as it was, the cursor shown. */
	leave(): void;
	/** The signal that asked the dashboard to end, if one did. */
	readonly signalled: () => NodeJS.Signals | undefined;
}

/**
 * Take the whole terminal the way lazygit or htop do: the dashboard draws on the alternate screen,
 * so the shell's output above it is untouched and no frame is left in the scrollback. Every exit
 * path gives the terminal back: `leave()` after Ink unmounted (q, ctrl+c, an error Ink caught),
 * `onSignal` for SIGTERM/SIGHUP/SIGINT (the caller unmounts, then leaves), and a synchronous write
 * in 'exit' for a crash that skips both. Not a terminal: nothing is written.
 */
export function enterFullScreen(stdout: NodeJS.WriteStream, onSignal: (signal: NodeJS.Signals) => void): FullScreen {
	let left = !stdout.isTTY;
	let signalled: NodeJS.Signals | undefined;
	const write = (text: string) => {
		try {
			// Synchronous: on 'exit' and after a signal there is no later tick to flush an async write.
			fs.writeSync('fd' in stdout && typeof stdout.fd === 'number' ? stdout.fd : 1, text);
		} catch {
			// The terminal is gone (SIGHUP): nothing is left to restore.
		}
	};
	const onExit = () => leave();
	const handleSignal = (signal: NodeJS.Signals) => {
		signalled ??= signal;
		// A hung-up terminal fails every write; the cleanup after the signal must not crash on one.
		stdout.on('error', () => {});
		onSignal(signal);
	};
	function leave(): void {
		process.off('exit', onExit);
		for (const signal of ENDING_SIGNALS) process.off(signal, handleSignal);
		if (left) return;
		left = true;
		write(LEAVE_ALTERNATE_SCREEN);
	}
	if (!left) write(ENTER_ALTERNATE_SCREEN);
	process.on('exit', onExit);
	for (const signal of ENDING_SIGNALS) process.on(signal, handleSignal);
	return {leave, signalled: () => signalled};
}
