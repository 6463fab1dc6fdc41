/**
 * herdr key names (PROTOCOL 4): single characters, named keys, and `ctrl+`/`alt+`/`shift+`
 * modifiers (`C-c` is an alias for `ctrl+c`). Both backends validate every key before sending
 * any, so a bad key list never leaves half a command typed.
 */

const NAMED: Readonly<Record<string, string>> = {
	enter: 'Enter',
	return: 'Enter',
	esc: 'Escape',
	escape: 'Escape',
	tab: 'Tab',
	backspace: 'BSpace',
	space: 'Space',
	up: 'Up',
	down: 'Down',
	left: 'Left',
	right: 'Right',
	home: 'Home',
	end: 'End',
	pageup: 'PageUp',
	pagedown: 'PageDown',
	delete: 'DC',
	insert: 'IC',
};

const PUNCTUATION: Readonly<Record<string, string>> = {
	minus: '-',
	plus: '+',
	comma: ',',
	period: '.',
	slash: '/',
	backslash: '\\',
	quote: "'",
	double_quote: '"',
	semicolon: ';',
	colon: ':',
	percent: '%',
	ampersand: '&',
	backtick: '`',
};

const MODIFIERS: Readonly<Record<string, string>> = {ctrl: 'C-', control: 'C-', alt: 'M-', shift: 'S-'};

/** Thrown for a key name neither backend knows; nothing has been sent. */
export class InvalidKeyError extends Error {
	constructor(key: string) {
		super(`invalid key ${JSON.stringify(key)}`);
		this.name = 'InvalidKeyError';
	}
}

/** The base key as tmux names it, or undefined when `name` is not a key. */
function baseKey(name: string): string | undefined {
	if ([...name].length === 1) return name;
	const lower = name.toLowerCase();
	const named = NAMED[lower] ?? PUNCTUATION[lower];
	if (named) return named;
	const fn = /^f([1-9]|1[0-2])$/.exec(lower);
	return fn ? `F${fn[1]}` : undefined;
}

/** One herdr key name as a tmux `send-keys` key name; throws InvalidKeyError. */
export function toTmuxKey(key: string): string {
	if (key.length === 0 || /[\0\r\n]/.test(key)) throw new InvalidKeyError(key);
	if ([...key].length === 1) return key;
	const alias = /^C-(.)$/.exec(key);
	if (alias) return `C-${alias[1]?.toLowerCase()}`;
	// `+` ending a chord (`ctrl++`) is the plus key, not a separator.
	const parts = key.endsWith('++') ? [...key.slice(0, -2).split('+'), '+'] : key.split('+');
	let prefix = '';
	for (const mod of parts.slice(0, -1)) {
		const m = MODIFIERS[mod.toLowerCase()];
		if (!m) throw new InvalidKeyError(key);
		prefix += m;
	}
	const base = baseKey(parts.at(-1) ?? '');
	if (base === undefined) throw new InvalidKeyError(key);
	if (prefix === 'S-' && base === 'Tab') return 'BTab';
	if (prefix.includes('C-') && base.length === 1) return `${prefix}${base.toLowerCase()}`;
	return `${prefix}${base}`;
}

/** Validate every key first (throws InvalidKeyError naming the first bad one). */
export function validateKeys(keys: readonly string[]): void {
	for (const key of keys) toTmuxKey(key);
}
