import {execFileSync} from 'node:child_process';
import fc from 'fast-check';
import {describe, expect, it} from 'vitest';
import {InvalidKeyError, toTmuxKey, validateKeys} from '../../src/mux/keys.js';
import {shellJoin, shellQuote} from '../../src/mux/shellQuote.js';

/** What a real POSIX shell makes of typed lines: the argv each would run (one shell for the batch). */
function shellArgvs(lines: readonly string[]): string[][] {
	const script = lines.map(line => `set -- ${line}; printf '%s\\0' "$#" "$@"`).join('\n');
	const out = execFileSync('/bin/sh', ['-c', script], {encoding: 'utf8'}).split('\0');
	const result: string[][] = [];
	for (let i = 0; i < out.length - 1;) {
		const count = Number(out[i]);
		result.push(out.slice(i + 1, i + 1 + count));
		i += 1 + count;
	}
	return result;
}

describe('shellQuote (PROTOCOL 9: what herdr types to run an argv)', () => {
	it('leaves the safe characters bare and quotes everything else', () => {
		expect(shellQuote('claude')).toBe('claude');
		expect(shellQuote('--resume=a/b:c@d%e+f.g_h-1')).toBe('--resume=a/b:c@d%e+f.g_h-1');
		expect(shellQuote('')).toBe("''");
		expect(shellQuote("it's")).toBe("'it'\\''s'");
		expect(shellQuote('a b;$(x)')).toBe("'a b;$(x)'");
	});

	it('round-trips any argv through a real shell unchanged', () => {
		const special = fc.constantFrom(...` '"\\$\`;&|<>(){}[]*?!#~=%@:,.-_+^\t`.split(''));
		const arg = fc
			.oneof(fc.string({unit: 'binary-ascii', maxLength: 30}), fc.string({unit: special, maxLength: 12}), fc.string({unit: 'grapheme', maxLength: 8}))
			.filter(a => !/[\0\r\n]/.test(a));
		const argv = fc.array(arg, {minLength: 1, maxLength: 5});
		fc.assert(
			fc.property(fc.array(argv, {minLength: 1, maxLength: 40}), batch => {
				expect(shellArgvs(batch.map(shellJoin))).toEqual(batch);
			}),
			{numRuns: 8},
		);
	});

	it('refuses what a typed line cannot carry', () => {
		expect(() => shellJoin([])).toThrow(/empty/);
		expect(() => shellJoin(['a\nrm -rf ~'])).toThrow(/line break/);
		expect(() => shellJoin(['a\0b'])).toThrow(/NUL/);
	});
});

describe('key names', () => {
	it.each([
		['Enter', 'Enter'],
		['enter', 'Enter'],
		['return', 'Enter'],
		['esc', 'Escape'],
		['ctrl+c', 'C-c'],
		['C-c', 'C-c'],
		['control+D', 'C-d'],
		['alt+x', 'M-x'],
		['shift+tab', 'BTab'],
		['f5', 'F5'],
		['semicolon', ';'],
		['double_quote', '"'],
		['+', '+'],
		['ctrl++', 'C-+'],
		['q', 'q'],
		['é', 'é'],
	])('%s → %s', (herdr, tmux) => {
		expect(toTmuxKey(herdr)).toBe(tmux);
	});

	it.each(['', 'enterr', 'hyper+x', 'ctrl+', 'f13', 'a\nb'])('rejects %j', key => {
		expect(() => toTmuxKey(key)).toThrow(InvalidKeyError);
	});

	it('validates a whole list before anything is sent', () => {
		expect(() => validateKeys(['Enter', 'nope'])).toThrow(/"nope"/);
	});
});
