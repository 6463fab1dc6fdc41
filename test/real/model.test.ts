import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from 'vitest';
import {REAL_AGENTS, type RealAgent, RUN_SHELL, SLOW_REPLY, SPAWN_SUBAGENT, startTui, SUBAGENT_TASK, useRealWorld} from './support/harness.js';
import {eventually} from '../helpers/poll.js';

/** Each TUI's working and approval markers (screens/README.md "Marker summary"). */
const WORKING: Readonly<Record<RealAgent, RegExp>> = {
	claude: /esc to interrupt/,
	codex: /esc to interrupt/,
	opencode: /esc interrupt/,
	gemini: /esc to cancel/,
	grok: /Ctrl\+c:cancel/,
	hermes: /msg=interrupt \u00b7/,
};
const APPROVAL: Readonly<Record<RealAgent, RegExp>> = {
	claude: /Do you want to proceed\?/,
	codex: /Would you like to run the following command\?/,
	opencode: /Permission required/,
	gemini: /Allow execution of/,
	// Its first option, selected, is "Yes, and don't ask again" (always-approve).
	grok: /Yes, proceed/,
	hermes: /Dangerous Command/,
};

/**
 * The stand-in model's behaviours, seen through each real TUI: a slow answer keeps the agent
 * working, RUN_SHELL makes it ask for approval (and run the command once approved), and
 * SPAWN_SUBAGENT makes it start a sub-agent through its own tool.
 */
describe('real agents: the stand-in model', () => {
	const real = useRealWorld({model: {slowMs: 4000}});

	it.each(REAL_AGENTS)('%s: slow answer, shell approval, sub-agent', async agent => {
		// opencode asks before a command only outside its project (its bash permission allows the rest).
		real.model.configure({shellWorkdir: agent === 'opencode' ? real.world.beta : undefined});
		const cwd = real.world.alpha;
		const tui = await startTui(real.world, agent, cwd);

		await tui.prompt(`${SLOW_REPLY} please, ${agent}`);
		await tui.waitForScreen(WORKING[agent], 30_000);
		await tui.waitForScreen(/Hello from the stand-in model\./, 60_000);
		expect(real.model.requests().some(r => r.lastUserText.includes(SLOW_REPLY))).toBe(true);

		await tui.prompt(`${RUN_SHELL} for ${agent}`);
		await tui.waitForScreen(APPROVAL[agent], 60_000);
		await tui.sendKeys('Enter');
		const written = path.join(agent === 'opencode' ? real.world.beta : cwd, 'hello-from-tool.txt');
		await eventually(`${agent} to run the approved command`, () => fs.existsSync(written), {timeoutMs: 60_000});
		expect(fs.existsSync(written)).toBe(true);

		await tui.prompt(`${SPAWN_SUBAGENT} for ${agent}`);
		const subAgentAsked = () => real.model.requests().some(r => r.lastUserText.includes(SUBAGENT_TASK));
		await eventually(`${agent} to start a sub-agent`, subAgentAsked, {timeoutMs: 60_000});
		expect(subAgentAsked()).toBe(true);
		await tui.quit(60_000);
	});
});
