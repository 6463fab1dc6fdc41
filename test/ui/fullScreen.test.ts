import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {ENDING_SIGNALS, ENTER_ALTERNATE_SCREEN, enterFullScreen, LEAVE_ALTERNATE_SCREEN} from '../../src/ui/fullScreen.js';
import {tempDir} from '../helpers/tmp.js';

/** A terminal stand-in: a file the sequences are written to, flagged as a TTY. */
function fakeTerminal(dir: string): {stream: NodeJS.WriteStream; written: () => string; close: () => void} {
	const file = path.join(dir, 'tty');
	const fd = fs.openSync(file, 'w');
	const stream = {isTTY: true, fd, on: () => stream} as unknown as NodeJS.WriteStream;
	return {stream, written: () => fs.readFileSync(file, 'utf8'), close: () => fs.closeSync(fd)};
}

let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(() => tmp?.dispose());

describe('the full screen gives the terminal back on every path', () => {
	it('a crash that skips every cleanup still leaves the alternate screen and shows the cursor (the exit listener)', () => {
		tmp = tempDir('mam-full-');
		const terminal = fakeTerminal(tmp.dir);
		const before = process.listeners('exit');
		const screen = enterFullScreen(terminal.stream, () => {});
		const added = process.listeners('exit').filter(l => !before.includes(l));
		expect(added).toHaveLength(1);
		// What Node runs as the process dies of an uncaught error.
		(added[0] as () => void)();
		expect(terminal.written()).toBe(ENTER_ALTERNATE_SCREEN + LEAVE_ALTERNATE_SCREEN);
		expect(LEAVE_ALTERNATE_SCREEN).toContain('\u001B[?25h');
		// Leaving again (the normal path after it) writes nothing more, and every listener is gone.
		screen.leave();
		expect(terminal.written()).toBe(ENTER_ALTERNATE_SCREEN + LEAVE_ALTERNATE_SCREEN);
		expect(process.listeners('exit').filter(l => !before.includes(l))).toEqual([]);
		terminal.close();
	});

	it('a signal asks the dashboard to end and is remembered; the caller then leaves', () => {
		tmp = tempDir('mam-full-');
		const terminal = fakeTerminal(tmp.dir);
		const asked: string[] = [];
		const screen = enterFullScreen(terminal.stream, signal => asked.push(signal));
		const listener = process.listeners('SIGHUP').at(-1) as (signal: NodeJS.Signals) => void;
		listener('SIGHUP');
		expect(asked).toEqual(['SIGHUP']);
		expect(screen.signalled()).toBe('SIGHUP');
		screen.leave();
		expect(terminal.written()).toBe(ENTER_ALTERNATE_SCREEN + LEAVE_ALTERNATE_SCREEN);
		for (const signal of ENDING_SIGNALS) expect(process.listeners(signal)).not.toContain(listener);
		terminal.close();
	});

	it('writes nothing when stdout is not a terminal', () => {
		tmp = tempDir('mam-full-');
		const terminal = fakeTerminal(tmp.dir);
		const notTty = {...terminal.stream, isTTY: false} as NodeJS.WriteStream;
		enterFullScreen(notTty, () => {}).leave();
		expect(terminal.written()).toBe('');
		terminal.close();
	});
});
