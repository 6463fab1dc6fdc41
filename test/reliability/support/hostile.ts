import fc from 'fast-check';

/**
 * Payloads that would run a command if anything put them through a shell. Each one names the
 * canary file `marker`: if that file ever exists, something executed user input.
 */
export function shellPayloads(marker: string): string[] {
	return [
		`$(touch ${marker})`,
		`\`touch ${marker}\``,
		`;touch ${marker}`,
		`; touch ${marker};`,
		`| touch ${marker}`,
		`&& touch ${marker}`,
		`' ; touch ${marker} ; '`,
		`" ; touch ${marker} ; "`,
		`\ntouch ${marker}\n`,
		`x$(touch${'${IFS}'}${marker})`,
		// tmux expands formats in -c and -n values; #() would run a shell command.
		`#(touch ${marker})`,
		`##(touch ${marker})`,
	];
}

/** Ids and names no adapter may accept, and paths that must not escape or crash anything. */
export const HOSTILE_STRINGS: readonly string[] = [
	'',
	'.',
	'..',
	'../x',
	'../../../../etc/passwd',
	'a/b',
	'/etc/passwd',
	'./.',
	'a\\b',
	'-rf',
	'--help',
	'--',
	'*',
	'?',
	'[a-z]*',
	'~',
	'~root',
	'%s%n%x',
	'a b',
	' leading',
	'trailing ',
	'tab\there',
	'new\nline',
	'carriage\rreturn',
	'esc\u001b[31mred',
	'unit\u001fseparator',
	'#{pane_id}#S',
	'del\u007f',
	'ünïcödé',
	'😀-emoji',
	'\u202eright-to-left',
	'zero\u200bwidth',
	'ａｂｃ',
	'a'.repeat(300),
	'b'.repeat(10 * 1024),
	'x\0y',
	'\0',
	'NUL\0../..',
];

/** Fragments odd file names are made of (no `/`, no NUL: the file system refuses those). */
const NAME_FRAGMENTS = [
	'odd',
	' ',
	'ünï',
	'😀',
	'\n',
	'\t',
	'-rf',
	'*',
	'?',
	'[x]',
	'$(x)',
	'`x`',
	';',
	'..',
	'.hidden',
	'%s',
	'\\',
	"'",
	'"',
	'#',
	'.jsonl',
	'.json',
	'.db',
	'-wal',
] as const;

/** A file or folder name a user could have: any mix of odd fragments, at most 200 bytes. */
export const oddName: fc.Arbitrary<string> = fc
	.array(fc.constantFrom(...NAME_FRAGMENTS), {minLength: 1, maxLength: 6})
	.map(parts => `odd${parts.join('')}`)
	.filter(name => Buffer.byteLength(name) <= 200 && name !== '.' && name !== '..');

/** Strings that stress parsers: the fixed hostile list, shell payloads and random unicode. */
export function hostileString(marker: string): fc.Arbitrary<string> {
	return fc.oneof(
		fc.constantFrom(...HOSTILE_STRINGS),
		fc.constantFrom(...shellPayloads(marker)),
		fc.string({unit: 'binary', maxLength: 40}),
		fc.string({unit: 'grapheme', maxLength: 40}),
		fc.array(fc.constantFrom(...NAME_FRAGMENTS, '/', '../', '\0'), {maxLength: 8}).map(parts => parts.join('')),
	);
}
