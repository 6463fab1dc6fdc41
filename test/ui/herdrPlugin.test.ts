import fs from 'node:fs';
import {describe, expect, it} from 'vitest';

const manifest = fs.readFileSync(new URL('../../src/mux/herdr/plugin/herdr-plugin.toml', import.meta.url), 'utf8');
const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string; bin: Record<string, string>};

/** The `key = value` lines of the TOML table that starts at `header` (or the top level). */
function table(header: string | null): Map<string, string> {
	const lines = manifest.split('\n').filter(l => l.trim() && !l.trim().startsWith('#'));
	const start = header === null ? 0 : lines.indexOf(header) + 1;
	const out = new Map<string, string>();
	for (const line of lines.slice(start)) {
		if (line.startsWith('[')) break;
		const match = /^(\w+)\s*=\s*(.+)$/.exec(line);
		if (match?.[1] && match[2]) out.set(match[1], match[2]);
	}
	return out;
}

describe('herdr plugin manifest', () => {
	it('has every required top-level key, with the package version', () => {
		const top = table(null);
		for (const key of ['id', 'name', 'version', 'min_herdr_version', 'description', 'platforms']) expect(top.has(key), key).toBe(true);
		expect(top.get('id')).toMatch(/^"[A-Za-z0-9.:_-]+"$/);
		expect(top.get('version')).toBe(`"${pkg.version}"`);
	});

	it('has a pane entrypoint that runs the mam-tui binary as an argv, in a split or popup', () => {
		const pane = table('[[panes]]');
		expect(pane.get('id')).toMatch(/^"[^."]+"$/);
		expect(pane.get('placement')).toMatch(/^"(split|popup)"$/);
		const argv = JSON.parse(pane.get('command') ?? '[]') as string[];
		expect(Object.keys(pkg.bin)).toContain(argv[0]);
	});
});
