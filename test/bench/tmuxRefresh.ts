import os from 'node:os';
import {AGENT_IDS} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {createTmuxMux} from '../../src/mux/tmux.js';
import {createStatusProbe} from '../../src/sync/liveStatus.js';
import {paneAgent} from '../../src/domain/paneAgent.js';
import {realExec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import type {PrivateTmux} from '../support/privateTmux.js';
import {sleep, summarize, type Summary} from './stats.js';
import type {BenchWorld} from './world.js';

/** What one tmux refresh (listing + status of every agent pane) cost, over a run where some panes print each second. */
export interface TmuxRefreshCost {
	readonly refreshes: number;
	readonly panes: number;
	/** Panes that printed before each refresh (typed into by the bench). */
	readonly changedPerRefresh: number;
	/** tmux commands per refresh (list-panes + one capture per changed pane), max over the run. */
	readonly commandsMax: number;
	/** Screens read per refresh, max over the run. */
	readonly readsMax: number;
	/** tmux processes started per refresh, max over the run (0: everything went down the control client). */
	readonly processesMax: number;
	/** Refreshes that read a screen no pane had printed to since the last read. */
	readonly overBudget: number;
	readonly ms: Summary;
}

/**
 * `seconds` rounds: `perSecond` random agent panes print (a typed key, echoed by the tty), then
 * one refresh as the dashboard does it: list the panes through the control client and read the
 * agents' statuses, which reads again only the screens of panes that printed.
 */
export async function measureTmuxRefresh(world: BenchWorld, tmux: PrivateTmux, seconds: number, perSecond = 5): Promise<TmuxRefreshCost> {
	const env = world.env();
	const processes = createProcessTable();
	const ctx: AdapterContext = {home: world.home, ownHome: true, env, exec: realExec, processes, now: Date.now, tmpDir: os.tmpdir()};
	const mux = createTmuxMux({server: {socketName: tmux.name}, exec: realExec, processes, env, pollMs: 1000, control: true});
	const probe = createStatusProbe({ctx, mux, agentOf: pane => paneAgent(pane, ADAPTERS)});
	try {
		// Warm: the first listing attaches the client and reads every screen once.
		await probe.detect(await mux.listPanes());
		await sleep(500);
		await probe.detect(await mux.listPanes());
		const agentPanes = (await mux.listPanes()).filter(p => !p.isSelf && paneAgent(p, ADAPTERS) !== undefined).map(p => p.id);
		const times: number[] = [];
		let commandsMax = 0;
		let readsMax = 0;
		let processesMax = 0;
		let overBudget = 0;
		for (let round = 0; round < seconds; round++) {
			const changed = new Set<string>();
			while (changed.size < Math.min(perSecond, agentPanes.length)) changed.add(agentPanes[Math.floor(Math.random() * agentPanes.length)] ?? '');
			// The bench's own tmux processes, not mam-tui's: they are not counted.
			for (const id of changed) await tmux.run(['send-keys', '-t', id, '-l', 'x']);
			await sleep(1000 - 50 * changed.size);
			const before = {...mux.cost};
			const t0 = performance.now();
			await probe.detect(await mux.listPanes());
			times.push(performance.now() - t0);
			const commands = mux.cost.commands - before.commands;
			const reads = mux.cost.screenReads - before.screenReads;
			commandsMax = Math.max(commandsMax, commands);
			readsMax = Math.max(readsMax, reads);
			processesMax = Math.max(processesMax, mux.cost.processes - before.processes);
			if (reads > changed.size) overBudget += 1;
		}
		return {refreshes: seconds, panes: agentPanes.length, changedPerRefresh: perSecond, commandsMax, readsMax, processesMax, overBudget, ms: summarize(times)};
	} finally {
		await mux.dispose();
	}
}

/**
 * The tmux twin of the herdr world's registry: one running session per tmux pane, of the agent
 * that pane runs, pinned to one of that agent's conversations (the herdr world's rows live in
 * herdr panes, so on tmux every one of them would be judged exited and checked on disk).
 */
export async function writeTmuxRegistry(world: BenchWorld, tmux: PrivateTmux, file: string): Promise<number> {
	const listed = await tmux.run(['list-panes', '-a', '-F', '#{pane_id} #{pane_current_command} #{pane_start_command}']);
	const panes = listed.stdout
		.trim()
		.split('\n')
		.map(line => line.split(' '));
	const pins = new Map(AGENT_IDS.map(agent => [agent, world.sessions.filter(s => s.agent === agent && s.agentSessionId !== null).map(s => s.agentSessionId)]));
	const registry = Registry.open(file);
	let count = 0;
	try {
		registry.transaction(() => {
			for (const [id = '', , ...command] of panes) {
				const agent = AGENT_IDS.find(a => new RegExp(`/bin/${a}\\b`).test(command.join(' ')));
				if (!agent) continue;
				registry.insert({
					name: `tmux-${agent}-${id.slice(1)}`,
					agent,
					cwd: world.cwds[count % world.cwds.length] ?? world.base,
					status: 'running',
					epoch: 0,
					agentSessionId: pins.get(agent)?.shift() ?? null,
					mux: 'tmux',
					paneId: id,
				});
				count += 1;
			}
		});
	} finally {
		registry.close();
	}
	return count;
}
