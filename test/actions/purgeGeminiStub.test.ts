import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {geminiAdapter, geminiStubs, removeGeminiStubs} from '../../src/adapters/gemini.js';
import {buildGeminiFixture} from '../adapters/fixtures/gemini.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';

/** gemini 0.61's resume stub (REAL.md surprise 12, issue 18 item 5). */

let fx: FixtureWorld | undefined;
afterEach(() => fx?.cleanup());

/** The main chat files of `id` (named `session-<minute>-<id8>.jsonl`). */
function mainChats(home: string, id: string): string[] {
	const out: string[] = [];
	const walk = (d: string) => {
		for (const e of fs.readdirSync(d, {withFileTypes: true})) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.name.startsWith('session-') && e.name.endsWith(`-${id.slice(0, 8)}.jsonl`)) out.push(p);
		}
	};
	walk(home);
	return out;
}

describe('gemini resume stub', () => {
	it('finds the header-only file beside the real one and removes only it; the conversation still verifies', async () => {
		fx = buildGeminiFixture();
		const id = fx.ids.target;
		// The fixture's target was resumed a minute later once already: it has one stub of gemini's own.
		const before = mainChats(fx.home, id);
		const fixtureStubs = geminiStubs(fx.ctx, id);
		expect(fixtureStubs).toHaveLength(1);
		const real = before.find(f => !fixtureStubs.includes(f));
		if (!real) throw new Error('fixture has no main chat for the target');
		// What gemini -r writes in a later minute: a header (and no message).
		const stub = path.join(path.dirname(real), `session-2099-01-01T00-00-${id.slice(0, 8)}.jsonl`);
		fs.writeFileSync(
			stub,
			`${JSON.stringify({sessionId: id, projectHash: 'x', startTime: '2099-01-01T00:00:00.000Z', lastUpdated: '2099-01-01T00:00:00.000Z', kind: 'main'})}\n`,
		);
		expect(geminiStubs(fx.ctx, id).sort()).toEqual([...fixtureStubs, stub].sort());
		expect([...((await geminiAdapter.guardConversation?.(fx.ctx, id)) ?? [])].sort()).toEqual([...fixtureStubs, stub].sort());
		expect(fs.existsSync(stub)).toBe(false);
		expect(mainChats(fx.home, id).sort()).toEqual(before.filter(f => !fixtureStubs.includes(f)).sort());
		expect(fs.existsSync(real)).toBe(true);
		expect(await geminiAdapter.verify(fx.ctx, id)).toEqual({kind: 'yes'});
	});

	it('never takes the only file of a conversation for a stub', () => {
		fx = buildGeminiFixture();
		const id = fx.ids.sibling;
		const [real] = mainChats(fx.home, id);
		if (!real) throw new Error('fixture has no main chat for the sibling');
		fs.writeFileSync(
			real,
			`${JSON.stringify({sessionId: id, projectHash: 'x', startTime: '2099-01-01T00:00:00.000Z', lastUpdated: '2099-01-01T00:00:00.000Z', kind: 'main'})}\n`,
		);
		expect(geminiStubs(fx.ctx, id)).toEqual([]);
		expect(removeGeminiStubs(fx.ctx, id)).toEqual([]);
		expect(fs.existsSync(real)).toBe(true);
	});
});
