import {afterEach, describe, expect, it, vi} from 'vitest';
import {errOut, out, outJson, table} from '../../src/cli/output.js';

describe('--json output', () => {
	const isTTY = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
	afterEach(() => {
		vi.restoreAllMocks();
		if (isTTY) Object.defineProperty(process.stdout, 'isTTY', isTTY);
		else delete (process.stdout as {isTTY?: boolean}).isTTY;
	});

	it('is indented on a terminal and one line when piped', () => {
		const writes: string[] = [];
		vi.spyOn(process.stdout, 'write').mockImplementation(chunk => (writes.push(String(chunk)), true));
		Object.defineProperty(process.stdout, 'isTTY', {value: true, configurable: true});
		outJson({version: 1, sessions: [{name: 'a'}]});
		Object.defineProperty(process.stdout, 'isTTY', {value: false, configurable: true});
		outJson({version: 1, sessions: [{name: 'a'}]});
		expect(writes).toEqual(['{\n  "version": 1,\n  "sessions": [\n    {\n      "name": "a"\n    }\n  ]\n}\n', '{"version":1,"sessions":[{"name":"a"}]}\n']);
	});
});

describe('text output', () => {
	afterEach(() => vi.restoreAllMocks());

	it('keeps its lines, and shows any other control character as ? (a refusal a host worded)', () => {
		const writes: string[] = [];
		vi.spyOn(process.stdout, 'write').mockImplementation(chunk => (writes.push(String(chunk)), true));
		vi.spyOn(process.stderr, 'write').mockImplementation(chunk => (writes.push(String(chunk)), true));
		out('devbox: refused\u001b]0;pwned\u0007\nsecond line');
		errOut('\u001b[2Jgone');
		expect(writes).toEqual(['devbox: refused?]0;pwned?\nsecond line\n', '?[2Jgone\n']);
	});
});

describe('text tables', () => {
	it("keep a name with a newline or an escape on its row, shown, never obeyed (a host's session names)", () => {
		const shown = table(
			['NAME', 'CWD'],
			[
				['a\ntouch CANARY', '/w\u001b]0;pwned\u0007'],
				['b', '/x'],
			],
		);
		expect(shown.split('\n')).toEqual(['NAME            CWD', 'a?touch CANARY  /w?]0;pwned?', 'b               /x']);
	});
});
