import type {KeyContext} from './commands.js';
import type {KeyState} from './keymap.js';
import {MODE_KEYS, TEXT_MODES, type KeyEvent} from './modeKeys.js';

/** A control character from a chunk as the key it is (Ink names keys only when they come alone). */
export function keyOfChar(ch: string): {readonly input: string; readonly key: KeyState} {
	const code = ch.codePointAt(0) ?? 0;
	if (ch === '\r' || ch === '\n') return {input: '', key: {return: true}};
	if (ch === '\t') return {input: '', key: {tab: true}};
	if (ch === '\u007F' || ch === '\b') return {input: '', key: {backspace: true}};
	if (code > 0 && code < 0x20) return {input: String.fromCodePoint(code + 0x60), key: {ctrl: true}};
	return {input: ch, key: {}};
}

const NAMED: readonly (keyof KeyState)[] = ['upArrow', 'downArrow', 'pageUp', 'pageDown', 'return', 'escape', 'tab', 'backspace', 'delete', 'ctrl', 'meta'];

/** A run of printable characters at the start of `text` (a text field takes it in one go). */
const TEXT_RUN = /^[^\u0000-\u001F\u007F]+/u;

/**
 * Every keypress goes through here. Ink hands over a run of plain characters that arrived in one
 * read as one `input` ("jjj"); it is taken apart and each key handled in the mode it finds, so
 * `jjj` moves three rows and `/api` opens the filter and types `api`. A handler that acts ends
 * the chunk (the keymap's `once` rule), so no chunk acts twice or answers a question it asked.
 */
export function routeInput(input: string, key: KeyState, ctx: KeyContext): void {
	const single = [...input].length <= 1 || NAMED.some(name => key[name] === true);
	if (single) {
		MODE_KEYS[ctx.store.getState().ui.mode]({input, key, chunked: false}, ctx);
		return;
	}
	let rest = input;
	while (rest.length > 0) {
		const mode = ctx.store.getState().ui.mode;
		let event: KeyEvent;
		const run = TEXT_MODES.has(mode) ? TEXT_RUN.exec(rest)?.[0] : undefined;
		if (run) {
			event = {input: run, key: {}, chunked: true};
			rest = rest.slice(run.length);
		} else {
			const ch = String.fromCodePoint(rest.codePointAt(0) ?? 0);
			rest = rest.slice(ch.length);
			event = {...keyOfChar(ch), chunked: true};
		}
		if (MODE_KEYS[mode](event, ctx) === 'end') return;
	}
}
