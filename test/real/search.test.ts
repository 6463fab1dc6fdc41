import crypto from 'node:crypto';
import path from 'node:path';
import {describe, expect, it} from 'vitest';
import {
	DEFAULT_REPLY,
	grepHome,
	grepMamHome,
	purgeOnceSettled,
	REAL_AGENTS,
	type RealAgent,
	type RealWorld,
	startTui,
	useRealWorld,
	waitForConversation,
} from './support/harness.js';

// `mam-tui search` against conversations the real CLIs wrote: found by a word only their message
// bodies hold; not found once purged; found again after restore; after purge --hard no byte of
// the word is left under HOME or $MAM_HOME (the search index and the parse memo included).

const REPLY = /Hello from the stand-in model\./;
const MEMO_READ: ReadonlySet<RealAgent> = new Set(['claude', 'codex', 'gemini', 'grok']);

interface Hits {
	readonly hits: readonly {readonly agent: string; readonly id: string; readonly snippet: string}[];
}

async function converse(world: RealWorld, agent: RealAgent, cwd: string, text: string): Promise<string> {
	const tui = await startTui(world, agent, cwd);
	await tui.prompt(text);
	try {
		await tui.waitForScreen(REPLY, agent === 'gemini' ? 30_000 : 90_000);
	} catch (error) {
		if (agent !== 'gemini') throw error;
		// gemini now and then drops the Enter of its first prompt.
		await tui.sendKeys('Enter');
		await tui.waitForScreen(REPLY, 60_000);
	}
	const id = await waitForConversation(world, agent, cwd, {containing: DEFAULT_REPLY});
	await tui.quit();
	return id;
}

async function search(world: RealWorld, word: string): Promise<Hits> {
	const run = await world.mamTui(['search', word, '--json']);
	expect(run.exitCode, run.stdout + run.stderr).toBe(0);
	return JSON.parse(run.stdout) as Hits;
}

describe('real agents: search', () => {
	const real = useRealWorld();

	it.each(REAL_AGENTS)('%s', async agent => {
		const word = `srch${crypto.randomBytes(5).toString('hex')}`;
		const id = await converse(real.world, agent, real.world.alpha, `please think about ${word} today`);
		const found = await search(real.world, word);
		expect(found.hits.map(h => [h.agent, h.id])).toEqual([[agent, id]]);
		expect(found.hits[0]?.snippet).toContain(`[${word}]`);
		expect(await grepMamHome(real.world, word)).not.toEqual([]);
		// The search run read a file-based conversation through the parse memo: the prompt is in
		// it too. opencode and hermes keep theirs in sqlite stores, which the memo never holds.
		const inMemo = async () => (await grepMamHome(real.world, word)).filter(f => path.basename(f).startsWith('parse-memo.db'));
		if (MEMO_READ.has(agent)) expect(await inMemo()).not.toEqual([]);

		const purged = await purgeOnceSettled(real.world, ['--agent', agent, '--id', id]);
		expect(purged.exitCode, purged.stdout + purged.stderr).toBe(0);
		expect((await search(real.world, word)).hits).toEqual([]);

		const trash = JSON.parse((await real.world.mamTui(['trash', '--json'])).stdout) as {purges: {purgeId: string; conversation: string}[]};
		const entry = trash.purges.find(p => p.conversation === id);
		const restored = await real.world.mamTui(['restore', entry?.purgeId ?? '']);
		expect(restored.exitCode, restored.stdout + restored.stderr).toBe(0);
		expect((await search(real.world, word)).hits.map(h => h.id)).toEqual([id]);

		const hard = await purgeOnceSettled(real.world, ['--agent', agent, '--id', id, '--hard']);
		expect(hard.exitCode, hard.stdout + hard.stderr).toBe(0);
		// Erased by the purge itself, not by a later run pruning rows of files that are gone.
		expect(await inMemo()).toEqual([]);
		expect((await search(real.world, word)).hits).toEqual([]);
		expect(await grepHome(real.world, word)).toEqual([]);
		expect(await grepMamHome(real.world, word)).toEqual([]);
	});
});
