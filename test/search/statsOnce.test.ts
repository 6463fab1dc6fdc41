import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {existsIn} from '../../src/adapters/common/messageRead.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {buildAgyFixture} from '../adapters/fixtures/agy.js';
import {buildGeminiFixture} from '../adapters/fixtures/gemini.js';
import {buildGrokBuildOnlyFixture, buildGrokFixture} from '../adapters/fixtures/grok.js';
import {buildOpencodeFixture} from '../adapters/fixtures/opencode.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {keepingReadConnections} from '../../src/system/sqliteRead.js';

// A full index build lists an agent's conversations, then reads each one's messages inside the
// same refresh, with one read connection per database (search.ts syncAgent). One refresh is one moment: the messages readers take the
// stat the listing took (existence checks, gemini's change signature) instead of a second one
// per file, list a folder once (opencode's databases), and read the same messages as alone.

const worlds: FixtureWorld[] = [];
afterEach(() => {
	vi.restoreAllMocks();
	for (const w of worlds.splice(0)) w.cleanup();
});

const builders = {
	gemini: buildGeminiFixture,
	agy: buildAgyFixture,
	grok: buildGrokFixture,
	'grok build': buildGrokBuildOnlyFixture,
	opencode: buildOpencodeFixture,
};

describe('messages inside a full sync refresh', () => {
	for (const [name, build] of Object.entries(builders)) {
		it(`${name}: stats and lists each file once per refresh, and reads what a read alone reads`, async () => {
			const world = build();
			worlds.push(world);
			const adapter = ADAPTERS[world.agent];
			await keepingReadConnections(async reads => {
				const ctx: AdapterContext = {...world.ctx, reads, refresh: createRefresh()};
				const listed = await adapter.discover(ctx, {includeChildren: true, factsOnly: true});
				expect(listed.conversations.length).toBeGreaterThan(0);
				const first = [];
				for (const c of listed.conversations) first.push(await adapter.messages(ctx, c.id, undefined));
				expect(first.some(r => (r?.messages.length ?? 0) > 0)).toBe(true);
				const stats = vi.spyOn(fs, 'statSync');
				const exists = vi.spyOn(fs, 'existsSync');
				const listings = vi.spyOn(fs, 'readdirSync');
				const again = [];
				for (const c of listed.conversations) again.push(await adapter.messages(ctx, c.id, undefined));
				expect(stats).not.toHaveBeenCalled();
				expect(exists).not.toHaveBeenCalled();
				expect(listings).not.toHaveBeenCalled();
				vi.restoreAllMocks();
				const alone = [];
				for (const c of listed.conversations) alone.push(await adapter.messages(world.ctx, c.id, undefined));
				expect(again).toEqual(alone);
				expect(first).toEqual(alone);
			});
		});
	}
});

describe('existsIn', () => {
	it('answers as fs.existsSync outside a refresh, a stat that fails included', () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-exists-'));
		try {
			const file = path.join(dir, 'a');
			fs.writeFileSync(file, 'x');
			// A path through a file: stat fails with ENOTDIR; one too long fails with ENAMETOOLONG.
			for (const p of [file, path.join(dir, 'missing'), path.join(file, 'below'), path.join(dir, 'n'.repeat(5000))])
				expect(existsIn({})(p)).toBe(fs.existsSync(p));
		} finally {
			fs.rmSync(dir, {recursive: true, force: true});
		}
	});
});
