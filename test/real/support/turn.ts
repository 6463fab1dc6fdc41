import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {Registry} from '../../../src/registry/registry.js';
import {startTui, useRealWorld, waitForConversation, type RealAgent, type RealWorld, type RealWorldUse, type Tui} from './harness.js';

/**
 * What the stop and park tests share: a world whose shell commands run outside both projects, a
 * turn (a prompt, the stand-in model's reply, its conversation on disk), a pane registered as a
 * running session, and whether a pid is still alive.
 */

/** The stand-in model's reply to a "say hello" prompt. */
export const HELLO = /Hello from the stand-in model\./;

/** {@link useRealWorld} with the model's shell commands run in a folder outside both projects (opencode asks before a command runs there). */
export function useRealWorldOutside(): RealWorldUse & {readonly outside: string} {
	let outside = '';
	const real = useRealWorld({
		model: () => {
			outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-outside-')));
			return {shellWorkdir: outside};
		},
		after: () => {
			if (outside) fs.rmSync(outside, {recursive: true, force: true});
		},
	});
	return {
		get model() {
			return real.model;
		},
		get world() {
			return real.world;
		},
		get outside() {
			return outside;
		},
	};
}

/**
 * Send a prompt and wait for the model's reply on screen. Under load gemini sometimes still
 * drops the Enter after the harness's pause (the prompt stays in its composer): press Enter once
 * more then, which an agent ignores on an empty composer.
 */
export async function ask(tui: Tui, text: string, reply: RegExp): Promise<void> {
	await tui.prompt(text);
	try {
		await tui.waitForScreen(reply, 20_000);
	} catch {
		await tui.sendKeys('Enter');
		await tui.waitForScreen(reply, 90_000);
	}
}

/** A TUI started in the world's alpha project that answered `prompt`, and the id of that conversation on disk. */
export async function turn(world: RealWorld, agent: RealAgent, prompt: string): Promise<{tui: Tui; id: string}> {
	const tui = await startTui(world, agent, world.alpha);
	await ask(tui, prompt, HELLO);
	const id = await waitForConversation(world, agent, world.alpha, {containing: prompt, timeoutMs: 30_000});
	return {tui, id};
}

let counter = 0;

/** Register the pane as a running session, as `mam-tui new` or an adoption would; `kind` goes into its name. */
export function registerPane(world: RealWorld, tui: Tui, kind: string, agentSessionId?: string): string {
	const name = `${tui.agent}-${kind}-${++counter}`;
	const registry = Registry.open(world.registry);
	try {
		registry.insert({
			name,
			agent: tui.agent,
			cwd: tui.cwd,
			mux: 'tmux',
			paneId: tui.paneId,
			status: 'running',
			epoch: Date.now() - 60_000,
			...(agentSessionId ? {agentSessionId} : {}),
		});
	} finally {
		registry.close();
	}
	return name;
}

/** The process runs: an exited one waiting to be reaped (this machine's init reaps orphans slowly) does not. */
export function isAlive(pid: number | undefined): boolean {
	if (pid === undefined) return false;
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
	} catch {
		return false;
	}
}
