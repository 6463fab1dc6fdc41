import fs from 'node:fs';
import {describe, expect, it} from 'vitest';
import {HERDR_PROTOCOLS} from '../../src/mux/herdr/protocol.js';

/**
 * The herdr plugin manifest and the key binding the README shows, in the form herdr 0.9 takes
 * (PROTOCOL 13 and 14): required top-level keys, only the entry kinds herdr knows, argv commands,
 * a `min_herdr_version` no newer than the oldest herdr mam-tui speaks and no older than the
 * manifest's features need, and a `[[keys.command]]` of a type 0.9 accepts (no `plugin_pane`).
 */

const manifestText = fs.readFileSync(new URL('../../src/mux/herdr/plugin/herdr-plugin.toml', import.meta.url), 'utf8');
const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string; bin: Record<string, string>};

type Value = string | readonly string[] | boolean;
type Table = Readonly<Record<string, Value>>;
interface Toml {
	readonly top: Table;
	readonly arrays: Readonly<Record<string, readonly Table[]>>;
}

/**
 * The TOML subset these files use: comments, `[[name]]` headers, and `key = value` with a string,
 * boolean or array of strings (written as JSON would). Anything else fails the test, so the
 * manifest cannot drift into syntax this reader would misread.
 */
function parseToml(text: string): Toml {
	const top: Record<string, Value> = {};
	const arrays: Record<string, Record<string, Value>[]> = {};
	let current = top;
	for (const [index, raw] of text.split('\n').entries()) {
		const line = raw.trim();
		if (line === '' || line.startsWith('#')) continue;
		const header = /^\[\[([a-z_.]+)\]\]$/.exec(line);
		if (header?.[1]) {
			current = {};
			(arrays[header[1]] ??= []).push(current);
			continue;
		}
		const pair = /^([a-z_]+)\s*=\s*(.+)$/.exec(line);
		if (!pair?.[1] || !pair[2]) throw new Error(`line ${index + 1} is not TOML this test reads: ${raw}`);
		const value = JSON.parse(pair[2]) as unknown;
		const ok = typeof value === 'string' || typeof value === 'boolean' || (Array.isArray(value) && value.every(v => typeof v === 'string'));
		if (!ok) throw new Error(`line ${index + 1}: unexpected value ${pair[2]}`);
		if (pair[1] in current) throw new Error(`line ${index + 1}: ${pair[1]} set twice`);
		current[pair[1]] = value as Value;
	}
	return {top, arrays};
}

function version(text: Value | undefined): [number, number, number] {
	const match = typeof text === 'string' ? /^(\d+)\.(\d+)\.(\d+)$/.exec(text) : null;
	if (!match) throw new Error(`not a version: ${String(text)}`);
	return [Number(match[1]), Number(match[2]), Number(match[3])];
}

const atLeast = (a: [number, number, number], b: [number, number, number]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The first herdr release with each manifest entry kind (PROTOCOL 13: all of these are in 0.8.0). */
const ENTRY_SINCE: Readonly<Record<string, string>> = {
	build: '0.8.0',
	startup: '0.8.0',
	actions: '0.8.0',
	events: '0.8.0',
	panes: '0.8.0',
	link_handlers: '0.8.0',
};
const PLACEMENTS = ['overlay', 'popup', 'split', 'tab', 'zoomed'];
const CONTEXTS = ['workspace', 'tab', 'pane'];
/** `[[keys.command]]` types herdr 0.9 accepts (0.9.1 rejects `plugin_pane`). */
const KEY_TYPES = ['shell', 'pane', 'popup', 'plugin_action'];

const manifest = parseToml(manifestText);
const str = (table: Table | undefined, key: string): string => {
	const value = table?.[key];
	if (typeof value !== 'string') throw new Error(`${key} is not a string`);
	return value;
};
const argv = (table: Table | undefined): readonly string[] => {
	const value = table?.['command'];
	if (!Array.isArray(value) || value.length === 0) throw new Error('command is not an argv array');
	return value as readonly string[];
};

describe('the herdr plugin manifest, as herdr 0.9 reads it', () => {
	it('has the required top-level keys, the package version and supported platforms', () => {
		for (const key of ['id', 'name', 'version', 'min_herdr_version', 'description']) expect(typeof manifest.top[key], key).toBe('string');
		expect(str(manifest.top, 'id')).toMatch(/^[A-Za-z0-9.:_-]+$/);
		expect(manifest.top['version']).toBe(pkg.version);
		expect(manifest.top['platforms']).toEqual(expect.arrayContaining(['linux']));
		for (const platform of manifest.top['platforms'] as string[]) expect(['linux', 'macos', 'windows']).toContain(platform);
	});

	it('uses only entry kinds herdr knows, and min_herdr_version is what they need and no newer than the oldest herdr mam-tui speaks', () => {
		const kinds = Object.keys(manifest.arrays);
		for (const kind of kinds) expect(Object.keys(ENTRY_SINCE), kind).toContain(kind);
		const min = version(manifest.top['min_herdr_version']);
		for (const kind of kinds) expect(atLeast(min, version(ENTRY_SINCE[kind]))).toBeGreaterThanOrEqual(0);
		// A herdr of every protocol mam-tui speaks may load it: 0.8 (protocol 20) is the oldest.
		const oldest = HERDR_PROTOCOLS[0]?.releases ?? '?';
		expect(atLeast(version(`${oldest}.0`), min)).toBeGreaterThanOrEqual(0);
		expect(manifestText).not.toMatch(/plugin_pane/);
	});

	it('has a dashboard pane that runs the mam-tui binary as an argv', () => {
		const pane = manifest.arrays['panes']?.find(p => p['id'] === 'dashboard');
		expect(str(pane, 'id')).not.toContain('.');
		expect(PLACEMENTS).toContain(str(pane, 'placement'));
		expect(argv(pane)).toEqual([Object.keys(pkg.bin)[0], '--mux', 'herdr']);
	});

	it('has an action that opens that pane, for a plugin_action key', () => {
		const action = manifest.arrays['actions']?.find(a => a['id'] === 'open');
		expect(str(action, 'title').length).toBeGreaterThan(0);
		for (const context of action?.['contexts'] as string[]) expect(CONTEXTS).toContain(context);
		expect(argv(action)).toEqual(['herdr', 'plugin', 'pane', 'open', '--plugin', str(manifest.top, 'id'), '--entrypoint', 'dashboard']);
	});

	it("the README's key binding is one herdr 0.9 accepts and names the plugin's action", () => {
		const blocks = [...readme.matchAll(/```toml\n([\s\S]*?)```/g)].map(m => m[1] ?? '').filter(b => b.includes('[[keys.command]]'));
		expect(blocks).toHaveLength(1);
		const keys = parseToml(blocks[0] ?? '').arrays['keys.command'] ?? [];
		expect(keys.length).toBeGreaterThan(0);
		for (const key of keys) {
			expect(KEY_TYPES).toContain(str(key, 'type'));
			expect(str(key, 'key')).toMatch(/\S/);
			if (key['type'] === 'plugin_action') {
				const [plugin, action] = [str(manifest.top, 'id'), str(key, 'command').slice(str(manifest.top, 'id').length + 1)];
				expect(str(key, 'command').startsWith(`${plugin}.`)).toBe(true);
				expect(manifest.arrays['actions']?.map(a => a['id'])).toContain(action);
			}
		}
		expect(readme).not.toMatch(/type = "plugin_pane"/);
	});
});
