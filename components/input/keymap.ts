import type {Mode} from '../../src/store/state.js';

/** What a key means, independent of which key it is. */
export type Command =
	| 'cursor.down'
	| 'cursor.up'
	| 'cursor.top'
	| 'cursor.bottom'
	| 'view.toggleFindings'
	| 'filter.start'
	| 'help.toggle'
	| 'app.quit';

/** The subset of Ink's Key this keymap reads. */
export interface KeyState {
	readonly upArrow?: boolean;
	readonly downArrow?: boolean;
	readonly return?: boolean;
	readonly escape?: boolean;
	readonly tab?: boolean;
	readonly ctrl?: boolean;
	readonly shift?: boolean;
}

export type NamedKey = 'upArrow' | 'downArrow' | 'return' | 'escape' | 'tab';

/** One way to press a command: a named key, or a typed character (optionally with ctrl). */
export interface Chord {
	readonly key?: NamedKey;
	readonly input?: string;
	readonly ctrl?: boolean;
}

export interface Binding {
	readonly command: Command;
	readonly chords: readonly Chord[];
	/** Modes where the binding is live. */
	readonly modes: readonly Mode[];
	/** For `?` and the README. */
	readonly keys: string;
	readonly description: string;
}

const LIST_MODES: readonly Mode[] = ['sessions', 'findings'];

/**
 * The one key table: the resolver, the help overlay and the README are all generated from it.
 * Nothing here is bound to ctrl+b (herdr's and tmux's prefix).
 */
export const BINDINGS: readonly Binding[] = [
	{command: 'cursor.down', chords: [{input: 'j'}, {key: 'downArrow'}], modes: LIST_MODES, keys: 'j / ↓', description: 'move down'},
	{command: 'cursor.up', chords: [{input: 'k'}, {key: 'upArrow'}], modes: LIST_MODES, keys: 'k / ↑', description: 'move up'},
	{command: 'cursor.top', chords: [{input: 'g'}], modes: LIST_MODES, keys: 'g', description: 'first row'},
	{command: 'cursor.bottom', chords: [{input: 'G'}], modes: LIST_MODES, keys: 'G', description: 'last row'},
	{command: 'filter.start', chords: [{input: '/'}], modes: LIST_MODES, keys: '/', description: 'filter by text (esc clears)'},
	{command: 'view.toggleFindings', chords: [{key: 'tab'}], modes: LIST_MODES, keys: 'tab', description: 'switch sessions ⇄ findings'},
	{command: 'help.toggle', chords: [{input: '?'}], modes: ['sessions', 'findings', 'help'], keys: '?', description: 'show or hide the keys'},
	{
		command: 'app.quit',
		chords: [{input: 'q'}, {input: 'c', ctrl: true}],
		modes: ['sessions', 'findings', 'help'],
		keys: 'q / ctrl+c',
		description: 'quit (never stops or kills anything)',
	},
];

function matches(chord: Chord, input: string, key: KeyState): boolean {
	if (chord.key) return key[chord.key] === true && !key.ctrl;
	if (chord.input === undefined) return false;
	return input === chord.input && Boolean(key.ctrl) === Boolean(chord.ctrl);
}

/** Pure: the command a keypress means in `mode`, or undefined. */
export function resolveCommand(mode: Mode, input: string, key: KeyState): Command | undefined {
	for (const binding of BINDINGS) {
		if (!binding.modes.includes(mode)) continue;
		if (binding.chords.some(chord => matches(chord, input, key))) return binding.command;
	}
	return undefined;
}
