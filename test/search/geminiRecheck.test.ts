import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {geminiAdapter} from '../../src/adapters/gemini.js';
import {signatureOf} from '../../src/adapters/common/messageRead.js';
import {buildGeminiFixture, geminiRoot} from '../adapters/fixtures/gemini.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';

// A search hit is re-checked at its source before it is shown (issue 29). For gemini that used to
// list every project's chats folder (and every sub-agent folder in them) for each hit: the
// cursor now names the chat's files, and an unchanged chat is confirmed by a few stats.

const worlds: FixtureWorld[] = [];
afterEach(() => {
	vi.restoreAllMocks();
	for (const w of worlds.splice(0)) w.cleanup();
});

function fixture(): FixtureWorld {
	const world = buildGeminiFixture();
	worlds.push(world);
	return world;
}

describe('gemini messages: the re-check of a hit', () => {
	it('confirms an unchanged chat without listing any folder', async () => {
		const world = fixture();
		const first = await geminiAdapter.messages(world.ctx, world.ids.target, undefined);
		expect(first?.messages.length).toBeGreaterThan(0);
		const listings = vi.spyOn(fs, 'readdirSync');
		const again = await geminiAdapter.messages(world.ctx, world.ids.target, first?.cursor);
		expect(again?.messages).toEqual([]);
		expect(again?.restart).toBe(false);
		expect(listings).not.toHaveBeenCalled();
	});

	it('reads the chat again when one of its files changed, and says gone when its files are', async () => {
		const world = fixture();
		const first = await geminiAdapter.messages(world.ctx, world.ids.foreign, undefined);
		const state = JSON.parse(first?.cursor ?? '{}') as {state?: {files?: string[]}};
		const files = state.state?.files ?? [];
		expect(files.length).toBe(1);
		const file = path.join(geminiRoot(world.home), files[0] ?? '');
		const record = {id: 'zz-added', timestamp: new Date().toISOString(), type: 'user', content: [{text: 'an added quokkaword'}]};
		fs.appendFileSync(file, `${JSON.stringify(record)}\n`);
		const changed = await geminiAdapter.messages(world.ctx, world.ids.foreign, first?.cursor);
		expect(changed?.messages.map(m => m.text)).toContain('an added quokkaword');
		fs.rmSync(file);
		expect(await geminiAdapter.messages(world.ctx, world.ids.foreign, first?.cursor)).toBeUndefined();
	});

	it("does not trust a cursor that names a file outside gemini's folder", async () => {
		const world = fixture();
		const first = await geminiAdapter.messages(world.ctx, world.ids.foreign, undefined);
		const cursor = JSON.parse(first?.cursor ?? '{}') as {sig: string; state: {files: string[]}};
		// A file outside gemini's folder, with a signature that matches it: still not trusted.
		const foreignFile = path.join(world.home, '..', 'elsewhere.jsonl');
		fs.writeFileSync(foreignFile, '{}\n');
		const rel = path.relative(geminiRoot(world.home), foreignFile);
		const outside = {sig: signatureOf([foreignFile, path.dirname(foreignFile)]), state: {...cursor.state, files: [rel]}};
		const listings = vi.spyOn(fs, 'readdirSync');
		const read = await geminiAdapter.messages(world.ctx, world.ids.foreign, JSON.stringify(outside));
		// Looked for by its id and read whole again, as a chat whose files changed.
		expect(listings).toHaveBeenCalled();
		expect(read?.restart).toBe(true);
		expect(read?.messages.map(m => m.text)).toContain('hello beta');
	});
});
