/**
 * Quote one argument the way herdr does when it types a resume command into a fresh shell
 * (PROTOCOL 9): the safe characters `A-Za-z0-9_-./:@%+=` stay bare, anything else is wrapped in
 * single quotes with each `'` written as `'\''`. An empty argument becomes `''`.
 */
export function shellQuote(arg: string): string {
	if (arg.length > 0 && /^[A-Za-z0-9_\-./:@%+=]+$/.test(arg)) return arg;
	return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * An argv as one line a POSIX shell parses back into exactly that argv. Refuses what a
 * typed line cannot carry: NUL (ends a C string) and line breaks (would submit the line early).
 */
export function shellJoin(argv: readonly string[]): string {
	if (argv.length === 0) throw new Error('cannot run an empty command');
	for (const arg of argv) {
		if (/[\0\r\n]/.test(arg)) throw new Error(`argument ${JSON.stringify(arg.slice(0, 40))} contains a NUL or line break`);
	}
	return argv.map(shellQuote).join(' ');
}
