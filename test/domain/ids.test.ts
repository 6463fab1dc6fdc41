import {describe, expect, it} from 'vitest';
import {shortId} from '../../src/domain/ids.js';

// Ids the real CLIs made a few seconds apart (agents/samples/ids.tsv and a hermes run).
const CODEX = ['01a22b1d-8e49-79f2-a157-8e33808531cf', '01a22b1d-90ae-71a0-9666-6253868f587f', '01a22b1d-954c-7a13-a81b-788104a74bde'];
const OPENCODE = ['ses_dd4e25fb1ffeyF0AhyzQXbtj2O', 'ses_dd4e24f30ffe663KxF26UZ7WDq', 'ses_dd4e228f9ffevowPS6DmvvuzZv'];
const HERMES = ['20261207_173030_c3a0e9', '20261207_173031_5be21f'];
const CLAUDE = ['69e68769-2dbb-4664-996b-bc39e1d62900', 'ceb44537-64b3-472e-8ef8-3a4ee3715fad'];

describe('shortId', () => {
	it.each([
		['codex (UUIDv7)', CODEX],
		['opencode', OPENCODE],
		['hermes', HERMES],
		['claude (UUIDv4)', CLAUDE],
	])('tells apart %s ids made the same minute, in 9 characters', (_, ids) => {
		const short = ids.map(id => shortId(id, 9));
		for (const s of short) expect(s).toHaveLength(9);
		expect(new Set(short).size).toBe(ids.length);
	});

	it('keeps the start of a random id and the end of one that begins with its time, marking the cut', () => {
		expect(shortId(CLAUDE[0] as string, 9)).toBe('69e68769~');
		expect(shortId(CODEX[0] as string, 9)).toBe('~808531cf');
		expect(shortId(HERMES[0] as string, 9)).toBe('~0_c3a0e9');
		expect(shortId(OPENCODE[0] as string, 9)).toBe('~zQXbtj2O');
		// A cut at a separator does not show it.
		expect(shortId(CODEX[1] as string, 14)).toBe('~6253868f587f');
	});

	it('leaves an id that fits alone, and a UUID of another version is random from its start', () => {
		expect(shortId('abc', 9)).toBe('abc');
		expect(shortId('01a22b1d-8e49-49f2-a157-8e33808531cf', 9)).toBe('01a22b1d~');
	});
});
