import {afterEach, describe, expect, it} from 'vitest';
import {agyAdapter} from '../../src/adapters/agy.js';
import {buildAgyFixture} from '../adapters/fixtures/agy.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';

// The search index lists every conversation of every agent only for its facts (id, cwd, times,
// title, parent): `factsOnly` lets agy skip opening each conversation's own database.

const worlds: FixtureWorld[] = [];
afterEach(() => {
	for (const w of worlds.splice(0)) w.cleanup();
});

describe('discover with factsOnly (agy)', () => {
	it('lists the same conversations with the same facts, and leaves the resume state unread', async () => {
		const world = buildAgyFixture();
		worlds.push(world);
		const full = await agyAdapter.discover(world.ctx, {includeChildren: true});
		const facts = await agyAdapter.discover(world.ctx, {includeChildren: true, factsOnly: true});
		const strip = (cs: typeof full.conversations) => cs.map(({resumeState: _, ...c}) => c);
		expect(full.conversations.length).toBeGreaterThan(1);
		expect(strip(facts.conversations)).toEqual(strip(full.conversations));
		expect(full.conversations.some(c => c.resumeState.kind !== 'unknown')).toBe(true);
		expect(facts.conversations.every(c => c.resumeState.kind === 'unknown')).toBe(true);
	});
});
