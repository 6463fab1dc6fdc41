import type {Mode} from '../../src/store/state.js';

/** What a key means, independent of which key it is. */
export type Command =
	| 'cursor.down'
	| 'cursor.up'
	| 'cursor.top'
	| 'cursor.bottom'
	| 'session.focus'
	| 'filter.start'
	| 'view.toggleFindings'
	| 'view.conversations'
	| 'session.resume'
	| 'session.stop'
	| 'session.purge'
	| 'finding.fix'
	| 'session.new'
	| 'row.mark'
	| 'conversation.adopt'
	| 'conversation.resume'
	| 'conversation.purge'
	| 'purge.undo'
	| 'app.refresh'
	| 'help.toggle'
	| 'app.back'
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

const LISTS: readonly Mode[] = ['sessions', 'findings', 'conversations'];

/**
 * The one key table: the resolver, the help overlay and the README are all generated from it.
 * Destructive commands only open something (stop shows its steps live; purge opens the typed
 * confirmation), and nothing is bound to ctrl+b, herdr's and tmux's prefix.
 */
export const BINDINGS: readonly Binding[] = [
	{command: 'cursor.down', chords: [{input: 'j'}, {key: 'downArrow'}], modes: LISTS, keys: 'j / ↓', description: 'move down'},
	{command: 'cursor.up', chords: [{input: 'k'}, {key: 'upArrow'}], modes: LISTS, keys: 'k / ↑', description: 'move up'},
	{command: 'cursor.top', chords: [{input: 'g'}], modes: LISTS, keys: 'g', description: 'first row'},
	{command: 'cursor.bottom', chords: [{input: 'G'}], modes: LISTS, keys: 'G', description: 'last row'},
	{command: 'session.focus', chords: [{key: 'return'}], modes: ['sessions'], keys: 'enter', description: "focus the session's pane in herdr or tmux"},
	{command: 'filter.start', chords: [{input: '/'}], modes: ['sessions'], keys: '/', description: 'filter by text (esc clears)'},
	{command: 'view.toggleFindings', chords: [{key: 'tab'}], modes: ['sessions', 'findings'], keys: 'tab', description: 'switch sessions ⇄ findings'},
	{command: 'session.resume', chords: [{input: 'r'}], modes: ['sessions'], keys: 'r', description: 'resume the selected stopped session'},
	{command: 'session.stop', chords: [{input: 's'}], modes: ['sessions'], keys: 's', description: 'stop: /exit, then close the pane, then SIGKILL (shown live)'},
	{command: 'session.purge', chords: [{input: 'p'}], modes: ['sessions'], keys: 'p', description: "purge: shows the plan; type the session's name to confirm"},
	{command: 'finding.fix', chords: [{input: 'f'}], modes: ['findings'], keys: 'f', description: "apply the selected finding's safe fix"},
	{command: 'session.new', chords: [{input: 'n'}], modes: ['sessions'], keys: 'n', description: 'new session: pick agent and cwd, spawn in a new pane'},
	{command: 'view.conversations', chords: [{input: 'c'}], modes: ['sessions', 'conversations'], keys: 'c', description: 'conversations on disk for the known cwds (c again to leave)'},
	{command: 'conversation.adopt', chords: [{input: 'a'}], modes: ['conversations'], keys: 'a', description: 'conversations: adopt into the registry'},
	{command: 'conversation.resume', chords: [{input: 'r'}], modes: ['conversations'], keys: 'r', description: 'conversations: resume in a new pane'},
	{command: 'conversation.purge', chords: [{input: 'p'}], modes: ['conversations'], keys: 'p', description: 'conversations: purge (typed confirmation)'},
	{command: 'purge.undo', chords: [{input: 'u'}], modes: ['sessions', 'conversations'], keys: 'u', description: 'undo the last purge (restore it from the trash)'},
	{command: 'row.mark', chords: [{input: ' '}], modes: ['sessions'], keys: 'space', description: 'mark rows for a bulk stop or purge'},
	{command: 'app.refresh', chords: [{input: 'R'}], modes: LISTS, keys: 'R', description: 'refresh now'},
	{command: 'help.toggle', chords: [{input: '?'}], modes: [...LISTS, 'help'], keys: '?', description: 'show or hide the keys'},
	{command: 'app.back', chords: [{key: 'escape'}], modes: ['conversations', 'findings', 'help'], keys: 'esc', description: 'back to the sessions list'},
	{
		command: 'app.quit',
		chords: [{input: 'q'}, {input: 'c', ctrl: true}],
		modes: [...LISTS, 'help'],
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

/** The keys table as Markdown, for the README (kept equal by a test). */
export function keysMarkdown(): string {
	const rows = BINDINGS.map(b => `| \`${b.keys.replace(/ \/ /g, '` / `')}\` | ${b.description} |`);
	return ['| key | does |', '| --- | --- |', ...rows].join('\n');
}
