import {describe, expect, it} from 'vitest';
// @ts-expect-error: a plain .mjs build script (src/build), no type declarations
import {ansiToHtmlLines} from '../../src/build/ansiHtml.mjs';

describe('the screenshots’ capture → HTML step', () => {
	it('keeps colours, bold and inverse, escapes HTML, and pads every line to the terminal width', () => {
		const capture = '\u001B[1mmam <tui>\u001B[0m\n\u001B[7m> row\u001B[27m \u001B[31mno\u001B[39m\n';
		const lines = (ansiToHtmlLines as (capture: string, columns: number) => string[])(capture, 12);
		expect(lines).toHaveLength(2);
		expect(lines[0]).toContain('font-weight:bold">mam &lt;tui&gt;</span>');
		expect(lines[1]).toMatch(/color:#1d1f21;background:#d0d3d0">&gt; row<\/span>/);
		expect(lines[1]).toContain('color:#cc6666">no</span>');
		expect(lines[0]?.replace(/<[^>]+>/g, '').replace(/&(lt|gt|amp);/g, '_')).toHaveLength(12);
	});
});
