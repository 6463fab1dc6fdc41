import fs from 'node:fs';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {claudeAdapter} from '../../src/adapters/claude.js';
import {codexAdapter} from '../../src/adapters/codex.js';
import {opencodeAdapter} from '../../src/adapters/opencode.js';
import type {AgentAdapter} from '../../src/adapters/types.js';
import {buildClaudeFixture} from './fixtures/claude.js';
import {buildCodexFixture} from './fixtures/codex.js';
import {buildOpencodeFixture} from './fixtures/opencode.js';
import type {FixtureWorld} from './fixtures/types.js';

let cleanups: (() => void)[] = [];
afterEach(() => {
	vi.restoreAllMocks();
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

// A store of thousands of conversations names a few dozen cwds: a discover asks whether each cwd
// exists once, not once per conversation (4,400 existsSync calls on the bench's first refresh).
describe('discover: one existsSync per cwd', () => {
	const cases: [AgentAdapter, () => FixtureWorld][] = [
		[claudeAdapter, buildClaudeFixture],
		[codexAdapter, buildCodexFixture],
		[opencodeAdapter, buildOpencodeFixture],
	];
	for (const [adapter, build] of cases) {
		it(adapter.id, async () => {
			const w = build();
			cleanups.push(() => w.cleanup());
			const asked = new Map<string, number>();
			const real = fs.existsSync;
			vi.spyOn(fs, 'existsSync').mockImplementation(p => {
				asked.set(String(p), (asked.get(String(p)) ?? 0) + 1);
				return real(p);
			});
			const {conversations} = await adapter.discover(w.ctx, {includeChildren: true});
			// The fixture has several conversations in one cwd, each with its resume state.
			const sharing = conversations.filter(c => c.cwd === w.cwds[0]);
			expect(sharing.length).toBeGreaterThan(1);
			expect(sharing.every(c => c.resumeState.kind !== undefined)).toBe(true);
			expect(asked.get(w.cwds[0]) ?? 0).toBeLessThanOrEqual(1);
		});
	}
});
