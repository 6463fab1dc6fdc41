import path from 'node:path';
import {InvalidKeyError, validateKeys} from './keys.js';
import {MuxError, type OpenPaneRequest} from './types.js';

/** Checks shared by both backends, so a bad request fails the same way before any I/O. */

/** Refuse an open request a terminal cannot carry: empty argv, NUL bytes, a relative cwd, bad env names. */
export function checkOpenRequest(request: OpenPaneRequest): void {
	if (request.argv.length === 0 || request.argv.some(a => typeof a !== 'string')) {
		throw new MuxError('cannot open a pane: the command is empty', 'invalid_argv');
	}
	if (request.argv.some(a => a.includes('\0'))) throw new MuxError('cannot open a pane: an argument contains a NUL byte', 'invalid_argv');
	if (!path.isAbsolute(request.cwd) || request.cwd.includes('\0')) {
		throw new MuxError(`cannot open a pane: cwd ${JSON.stringify(request.cwd)} is not an absolute path`, 'invalid_cwd');
	}
	for (const [key, value] of Object.entries(request.env ?? {})) {
		if (key.length === 0 || /[=\0]/.test(key) || value.includes('\0')) {
			throw new MuxError(`cannot open a pane: environment variable ${JSON.stringify(key)} is not valid`, 'invalid_env');
		}
	}
}

/** Key names are checked before anything is sent (herdr's `invalid_key` = nothing sent). */
export function checkKeys(keys: readonly string[]): void {
	try {
		validateKeys(keys);
	} catch (error) {
		if (error instanceof InvalidKeyError) throw new MuxError(`${error.message}; nothing was sent`, 'invalid_key');
		throw error;
	}
}

/** A sane line count for reads. */
export function checkLines(lines: number): number {
	if (!Number.isInteger(lines) || lines < 1) throw new MuxError(`cannot read ${lines} lines`, 'invalid_params');
	return Math.min(lines, 10_000);
}

/** The last `count` lines of `text`, without the blank rows below the cursor. */
export function lastLines(text: string, count: number): string {
	const rows = text.replace(/\s+$/, '').split('\n');
	return rows.slice(-count).join('\n');
}

/** Typing into, reading keys into or closing mam-tui's own pane would hurt the user; refuse it. */
export function ownPaneError(paneId: string, verb: string): MuxError {
	return new MuxError(`refusing to ${verb} pane ${paneId}: mam-tui itself runs there`, 'own_pane');
}
