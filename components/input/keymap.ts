import type {Mode} from '../../src/store/state.js';

/** What a key means, independent of which key it is. */
export type Command =
	| 'cursor.down'
	| 'cursor.up'
	| 'cursor.top'
	| 'cursor.bottom'
	| 'detail.scrollDown'
	| 'detail.scrollUp'
	| 'session.focus'
	| 'filter.start'
	| 'view.toggleFindings'
	| 'view.conversations'
	| 'conversations.scope'
	| 'conversations.all'
	| 'session.resume'
	| 'session.stop'
	| 'session.park'
	| 'session.purge'
	| 'finding.fix'
	| 'session.new'
	| 'row.mark'
	| 'conversation.adopt'
	| 'conversation.resume'
	| 'conversation.purge'
	| 'purge.undo'
	| 'view.trash'
	| 'trash.restore'
	| 'trash.empty'
	| 'app.refresh'
	| 'help.toggle'
	| 'notice.dismiss'
	| 'app.back'
	| 'app.quit';

/** The subset of Ink's Key this keymap reads. */
export interface KeyState {
	readonly upArrow?: boolean;
	readonly downArrow?: boolean;
	readonly pageUp?: boolean;
	readonly pageDown?: boolean;
	readonly return?: boolean;
	readonly escape?: boolean;
	readonly tab?: boolean;
	readonly backspace?: boolean;
	readonly delete?: boolean;
	readonly ctrl?: boolean;
	readonly meta?: boolean;
	readonly shift?: boolean;
}

export type NamedKey = 'upArrow' | 'downArrow' | 'pageUp' | 'pageDown' | 'return' | 'escape' | 'tab';

/** One way to press a command: a named key, or a typed character (optionally with ctrl). */
export interface Chord {
	readonly key?: NamedKey;
	readonly input?: string;
	readonly ctrl?: boolean;
}

/**
 * How a command treats keys that arrive in one chunk (key repeat, a busy moment, a paste: tmux
 * `send-keys -l jjj` is one read). The chunk is handled key by key, in the mode each key finds:
 * - `each`: runs once per key (`jjj` moves three rows; `/` then `api` types into the filter).
 * - `once`: runs for the first key and ends the chunk; the rest is dropped. Every command that
 *   acts (stop, purge, resume, adopt, fix, spawn, focus, quit) is `once`, so a pasted `ss` is one
 *   stop request at most, and a chunk never answers the confirmation it opened (`sy` asks, and
 *   waits for a `y` of its own).
 */
export type ChunkRule = 'each' | 'once';

export interface Binding {
	readonly command: Command;
	readonly chords: readonly Chord[];
	/** Modes where the binding is live. */
	readonly modes: readonly Mode[];
	readonly chunk: ChunkRule;
	readonly description: string;
	/** Short word for the status bar's hints, in the modes listed there; absent: `?` only. */
	readonly hint?: string;
}

/** The effective key table: the defaults with the user's `keys:` applied. */
export type Keymap = readonly Binding[];

const LISTS: readonly Mode[] = ['sessions', 'findings', 'conversations', 'trash'];

/**
 * The one key table, one binding per command in display order (a `Record<Command, …>`: a command
 * with no binding does not compile): the resolver, the help overlay, the status bar hints and the
 * README are generated from it. Destructive commands only open something (stop asks y/n; purge
 * opens the typed confirmation), and nothing is bound to ctrl+b, herdr's and tmux's prefix.
 */
const DEFAULT_BINDINGS: Readonly<Record<Command, Omit<Binding, 'command'>>> = {
	'cursor.down': {chords: [{input: 'j'}, {key: 'downArrow'}], modes: LISTS, chunk: 'each', description: 'move down'},
	'cursor.up': {chords: [{input: 'k'}, {key: 'upArrow'}], modes: LISTS, chunk: 'each', description: 'move up'},
	'cursor.top': {chords: [{input: 'g'}], modes: LISTS, chunk: 'each', description: 'first row'},
	'cursor.bottom': {chords: [{input: 'G'}], modes: LISTS, chunk: 'each', description: 'last row'},
	'detail.scrollDown': {chords: [{input: 'J'}, {key: 'pageDown'}], modes: ['sessions'], chunk: 'each', description: 'scroll the detail panel down'},
	'detail.scrollUp': {chords: [{input: 'K'}, {key: 'pageUp'}], modes: ['sessions'], chunk: 'each', description: 'scroll the detail panel up'},
	'session.focus': {
		chords: [{key: 'return'}],
		modes: ['sessions'],
		chunk: 'once',
		description: "focus the session's pane in herdr or tmux (a parked one: wake it)",
		hint: 'focus',
	},
	'filter.start': {
		chords: [{input: '/'}],
		modes: ['sessions', 'conversations'],
		chunk: 'each',
		description: 'filter by text (esc clears); in conversations: titles, ids, cwd and message text',
		hint: 'filter',
	},
	'view.toggleFindings': {chords: [{key: 'tab'}], modes: ['sessions', 'findings'], chunk: 'each', description: 'switch sessions ⇄ findings', hint: 'findings'},
	'session.resume': {
		chords: [{input: 'r'}],
		modes: ['sessions'],
		chunk: 'once',
		description: 'resume the selected stopped session (a parked one: wake it where it was)',
		hint: 'resume',
	},
	'session.stop': {
		chords: [{input: 's'}],
		modes: ['sessions'],
		chunk: 'once',
		description: 'stop: shows the steps and asks y/n; then /exit, close the pane, SIGKILL (shown live)',
		hint: 'stop',
	},
	'session.park': {
		chords: [{input: 'z'}],
		modes: ['sessions'],
		chunk: 'once',
		description: 'park: asks y/n; an idle agent exits (its exit input only) to free its memory; enter or r wakes it',
		hint: 'park',
	},
	'session.purge': {
		chords: [{input: 'p'}],
		modes: ['sessions'],
		chunk: 'once',
		description: "purge: shows the plan; type the session's name to confirm",
		hint: 'purge',
	},
	'finding.fix': {chords: [{input: 'f'}], modes: ['findings'], chunk: 'once', description: "apply the selected finding's safe fix", hint: 'fix'},
	'session.new': {chords: [{input: 'n'}], modes: ['sessions'], chunk: 'once', description: 'new session: pick agent and cwd, spawn in a new pane', hint: 'new'},
	'view.conversations': {
		chords: [{input: 'c'}],
		modes: ['sessions', 'conversations'],
		chunk: 'each',
		description: 'conversations on disk (c again to leave)',
		hint: 'conversations',
	},
	'conversations.scope': {
		chords: [{input: 'A'}],
		modes: ['conversations'],
		chunk: 'each',
		description: "conversations: the registry's folders ⇄ every folder",
		hint: 'all folders',
	},
	'conversations.all': {
		chords: [{input: 'H'}],
		modes: ['conversations'],
		chunk: 'each',
		description: 'conversations: message search also lists sub-agent and headless runs (search --all)',
		hint: 'sub-agents',
	},
	'conversation.adopt': {chords: [{input: 'a'}], modes: ['conversations'], chunk: 'once', description: 'conversations: adopt into the registry', hint: 'adopt'},
	'conversation.resume': {chords: [{input: 'r'}], modes: ['conversations'], chunk: 'once', description: 'conversations: resume in a new pane', hint: 'resume'},
	'conversation.purge': {
		chords: [{input: 'p'}],
		modes: ['conversations'],
		chunk: 'once',
		description: 'conversations: purge (typed confirmation)',
		hint: 'purge',
	},
	'row.mark': {chords: [{input: ' '}], modes: ['sessions'], chunk: 'each', description: 'mark rows for a bulk stop, park or purge'},
	'purge.undo': {chords: [{input: 'u'}], modes: ['sessions', 'conversations'], chunk: 'once', description: 'undo the last purge (restore it from the trash)'},
	'view.trash': {
		chords: [{input: 'T'}],
		modes: ['sessions', 'trash'],
		chunk: 'each',
		description: "mam-tui's trash: purges that can be undone (T again to leave)",
	},
	'trash.restore': {
		chords: [{input: 'r'}],
		modes: ['trash'],
		chunk: 'once',
		description: 'trash: restore the selected purge (refuses to overwrite anything)',
		hint: 'restore',
	},
	'trash.empty': {
		chords: [{input: 'E'}],
		modes: ['trash'],
		chunk: 'once',
		description: 'trash: delete the selected purge for good (type `empty 1` to confirm)',
		hint: 'empty',
	},
	'app.refresh': {chords: [{input: 'R'}], modes: LISTS, chunk: 'once', description: 'refresh now'},
	'help.toggle': {chords: [{input: '?'}], modes: [...LISTS, 'help'], chunk: 'each', description: 'show or hide the keys', hint: 'keys'},
	'notice.dismiss': {chords: [{key: 'escape'}], modes: ['sessions'], chunk: 'each', description: 'dismiss the messages (errors stay until dismissed)'},
	'app.back': {
		chords: [{key: 'escape'}],
		modes: ['conversations', 'findings', 'trash', 'help'],
		chunk: 'each',
		description: 'back to the sessions list',
		hint: 'back',
	},
	'app.quit': {
		chords: [{input: 'q'}, {input: 'c', ctrl: true}],
		modes: [...LISTS, 'help'],
		chunk: 'once',
		description: 'quit (never stops or kills anything)',
		hint: 'quit',
	},
};

export const DEFAULT_KEYMAP: Keymap = (Object.keys(DEFAULT_BINDINGS) as Command[]).map(command => ({command, ...DEFAULT_BINDINGS[command]}));

const NAMED_TEXT: Record<NamedKey, string> = {
	upArrow: '↑',
	downArrow: '↓',
	pageUp: 'pgup',
	pageDown: 'pgdn',
	return: 'enter',
	escape: 'esc',
	tab: 'tab',
};

/** How a chord is written in `?`, the hints, the README and config.yaml. */
export function chordText(chord: Chord): string {
	if (chord.key) return NAMED_TEXT[chord.key];
	const text = chord.input === ' ' ? 'space' : (chord.input ?? '');
	return chord.ctrl ? `ctrl+${text}` : text;
}

/** All of a binding's chords, e.g. `j / ↓`. */
export function keysText(binding: Binding): string {
	return binding.chords.map(chordText).join(' / ');
}

function matches(chord: Chord, input: string, key: KeyState): boolean {
	if (chord.key) return key[chord.key] === true && !key.ctrl;
	if (chord.input === undefined) return false;
	return input === chord.input && Boolean(key.ctrl) === Boolean(chord.ctrl);
}

/** Pure: the binding a keypress means in `mode`, or undefined. */
export function resolveBinding(mode: Mode, input: string, key: KeyState, keymap: Keymap = DEFAULT_KEYMAP): Binding | undefined {
	return keymap.find(binding => binding.modes.includes(mode) && binding.chords.some(chord => matches(chord, input, key)));
}

/** Pure: the command a keypress means in `mode`, or undefined. */
export function resolveCommand(mode: Mode, input: string, key: KeyState, keymap: Keymap = DEFAULT_KEYMAP): Command | undefined {
	return resolveBinding(mode, input, key, keymap)?.command;
}

/** A `keys:` entry that cannot be used; the message names the command and the key (exit 2). */
export class KeymapError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'KeymapError';
	}
}

const NAMED_BY_TEXT: ReadonlyMap<string, NamedKey> = new Map([
	...Object.entries(NAMED_TEXT).map(([key, text]) => [text, key as NamedKey] as const),
	['up', 'upArrow'],
	['down', 'downArrow'],
	['escape', 'escape'],
	['return', 'return'],
	['pageup', 'pageUp'],
	['pagedown', 'pageDown'],
]);

/** `x`, `X`, `ctrl+x`, `space`, `enter`, `esc`, `tab`, `up`/`↑`, `down`/`↓`, `pgup`, `pgdn`. */
export function parseChord(text: string): Chord {
	const lower = text.toLowerCase();
	if (lower.startsWith('ctrl+') && text.length === 6) return {input: lower.slice(5), ctrl: true};
	if (lower === 'space') return {input: ' '};
	const named = NAMED_BY_TEXT.get(lower);
	if (named) return {key: named};
	if ([...text].length === 1 && text.codePointAt(0)! > 0x20 && text !== '\u007F') return {input: text};
	throw new KeymapError(`${JSON.stringify(text)} is not a key (one character, ctrl+<letter>, space, enter, esc, tab, up, down, pgup, pgdn)`);
}

function sameChord(a: Chord, b: Chord): boolean {
	return a.key === b.key && a.input === b.input && Boolean(a.ctrl) === Boolean(b.ctrl);
}

/** Refuse ctrl+b anywhere, and two commands on one key in a mode they share. */
function checkKeymap(keymap: Keymap): void {
	for (const binding of keymap) {
		if (binding.chords.some(c => c.ctrl && c.input === 'b')) {
			throw new KeymapError(`keys.${binding.command}: ctrl+b is refused: it is herdr's and tmux's prefix key`);
		}
	}
	for (const [i, a] of keymap.entries()) {
		for (const b of keymap.slice(i + 1)) {
			const mode = a.modes.find(m => b.modes.includes(m));
			if (!mode) continue;
			const chord = a.chords.find(ca => b.chords.some(cb => sameChord(ca, cb)));
			if (chord) throw new KeymapError(`keys: ${chordText(chord)} is bound to both ${a.command} and ${b.command} (in the ${mode} view)`);
		}
	}
}

/**
 * The defaults with `keys:` from config.yaml applied: each entry replaces the keys of one command.
 * An unknown command, a key that is not one, ctrl+b, or a key two commands would share is refused.
 */
export function keymapWith(overrides: Readonly<Record<string, readonly string[]>>): Keymap {
	const known = new Set<string>(DEFAULT_KEYMAP.map(b => b.command));
	for (const command of Object.keys(overrides)) {
		if (!known.has(command)) throw new KeymapError(`keys.${command}: no such command (${[...known].join(', ')})`);
	}
	const keymap = DEFAULT_KEYMAP.map(binding => {
		const keys = overrides[binding.command];
		if (!keys) return binding;
		if (keys.length === 0) throw new KeymapError(`keys.${binding.command}: give at least one key`);
		const chords = keys.map(text => {
			try {
				return parseChord(text);
			} catch (error) {
				throw new KeymapError(`keys.${binding.command}: ${(error as Error).message}`);
			}
		});
		return {...binding, chords};
	});
	checkKeymap(keymap);
	return keymap;
}

/** The keys table as Markdown, for the README (kept equal by a test). */
export function keysMarkdown(keymap: Keymap = DEFAULT_KEYMAP): string {
	const rows = keymap.map(b => `| \`${keysText(b).replace(/ \/ /g, '` / `')}\` | \`${b.command}\` | ${b.description} |`);
	return ['| key | command (for `keys:`) | does |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The status bar's hints for `mode`: `s stop · p purge · …`. */
export function hintsFor(mode: Mode, keymap: Keymap = DEFAULT_KEYMAP): string {
	return keymap
		.filter(b => b.hint && b.modes.includes(mode))
		.map(b => `${b.chords[0] ? chordText(b.chords[0]) : ''} ${b.hint}`)
		.join(' · ');
}
