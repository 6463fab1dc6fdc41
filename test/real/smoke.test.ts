import {describe, expect, it} from 'vitest';
import {DEFAULT_REPLY, REAL_AGENTS, startTui, useRealWorld, waitForConversation} from './support/harness.js';

interface StatusPane {
	readonly id: string;
	readonly agent: string | null;
	readonly cwd: string;
}

/**
 * Each real TUI starts in a pane of a private tmux server, answers a prompt from the stand-in
 * model and writes its conversation; the built mam-tui, pointed at that world, lists the
 * conversation and sees the pane as that agent's.
 */
describe('real agents: smoke', () => {
	const real = useRealWorld();

	it.each(REAL_AGENTS)('%s starts, answers, writes its conversation, and mam-tui lists both', async agent => {
		const tui = await startTui(real.world, agent, real.world.alpha);
		const prompt = `smoke test for ${agent}: say hello`;
		await tui.prompt(prompt);
		await tui.waitForScreen(/Hello from the stand-in model\./, 90_000);
		const id = await waitForConversation(real.world, agent, real.world.alpha, {containing: DEFAULT_REPLY});
		expect(real.model.requests().some(r => r.lastUserText.includes(prompt))).toBe(true);

		const conversations = await real.world.mamTui(['conversations', '--json', '--agent', agent]);
		expect(conversations.exitCode, conversations.stderr).toBe(0);
		const listed = (JSON.parse(conversations.stdout) as {conversations: Array<{agent: string; id: string; cwd: string}>}).conversations;
		expect(listed).toContainEqual(expect.objectContaining({agent, id, cwd: real.world.alpha}));

		const status = await real.world.mamTui(['status', '--json']);
		expect(status.exitCode, status.stderr).toBe(0);
		const panes = (JSON.parse(status.stdout) as {panes: StatusPane[]}).panes;
		expect(panes.find(p => p.id === tui.paneId)).toMatchObject({agent, cwd: real.world.alpha});

		await tui.close();
	});
});
