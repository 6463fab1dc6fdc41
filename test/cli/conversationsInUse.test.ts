import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest';
import type {ConversationsJson} from '../../src/cli/conversationsCommand.js';
import {buildGeminiFixture} from '../adapters/fixtures/gemini.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {asUserOf, spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {runCli} from '../helpers/cli.js';

// Issue 18 item 7: `conversations --json` said `yes` for a conversation a live TUI is on.

let w: FixtureWorld;
let callerHome: string;
let held: HeldProcess[] = [];

beforeAll(() => {
	w = buildGeminiFixture();
	callerHome = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-conv-use-'));
});

afterEach(async () => {
	for (const h of held) await h.stop();
	held = [];
});

afterAll(() => {
	w.cleanup();
	fs.rmSync(callerHome, {recursive: true, force: true});
});

const states = async (): Promise<Map<string, string>> => {
	const run = await runCli(['conversations', '--json', '--agent', 'gemini', '--home', w.home], {HOME: callerHome});
	expect(run.exitCode).toBe(0);
	return new Map((JSON.parse(run.stdout) as ConversationsJson).conversations.map(c => [c.id, c.resumeState]));
};

describe('conversations and the in-use rule', {timeout: 60_000}, () => {
	it("a plain gemini TUI's project reads `no: in use`, another project's does not", async () => {
		const [alpha] = w.cwds as [string, string];
		expect((await states()).get(w.ids.target)).toBe('yes');
		const tui = await spawnFileHolder([], 'gemini', [], alpha, asUserOf(w));
		held.push(tui);
		const now = await states();
		for (const id of [w.ids.target, w.ids.sibling])
			expect(now.get(id)).toMatch(new RegExp(`^no: in use by pid ${tui.pid} \\(.*keeps no record of which conversation`));
		expect(now.get(w.ids.foreign)).toBe('yes');
	});
});
