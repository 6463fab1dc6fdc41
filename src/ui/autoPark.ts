/**
 * Auto-park (issue 28), off unless `park.agents` in config.yaml names an agent. Once a minute it
 * looks at the store (no I/O): a running row of a listed agent whose live status was idle at
 * every sample for `idleMinutes` becomes a candidate, and at most `maxPerMinute` candidates are
 * handed to the park action, which checks everything again by the agent's own evidence (the
 * soak is `idleMinutes`) and audits each park. Each outcome is shown as a message.
 */
import type {ParkResult, ParkSelection, ParkOptions} from '../actions/park.js';
import type {Config} from '../config/config.js';
import type {AppState} from '../store/state.js';
import type {Logger} from '../system/logger.js';
import {messageOf} from '../domain/result.js';

export interface AutoParkDeps {
	readonly config: Config['park'];
	readonly getState: () => Pick<AppState, 'sessions' | 'live'>;
	readonly park: (selection: ParkSelection, options?: ParkOptions) => Promise<readonly ParkResult[]>;
	/** Shows one line to the user (`parked api-fix: idle 52 min, freed 812 MB`). */
	readonly notify: (level: 'ok' | 'info', text: string) => void;
	readonly now: () => number;
	readonly logger?: Logger;
	/** Between samples (default one minute). */
	readonly intervalMs?: number;
}

/** A row refused by the park action is not tried again before this. */
export const RETRY_AFTER_MS = 10 * 60_000;

/** What the sampler remembers between minutes: since when each row was seen idle, and when a park last refused it. */
export interface AutoParkMemory {
	readonly idleSince: Map<string, number>;
	readonly refusedAt: Map<string, number>;
}

export function newMemory(): AutoParkMemory {
	return {idleSince: new Map(), refusedAt: new Map()};
}

/**
 * One sample (pure but for `memory`): updates since when each listed agent's running row is idle
 * and returns, oldest idle first, the rows idle for `idleMinutes` and not recently refused.
 */
export function sampleCandidates(state: Pick<AppState, 'sessions' | 'live'>, config: Config['park'], memory: AutoParkMemory, now: number): string[] {
	const seen = new Set<string>();
	for (const row of state.sessions) {
		if (row.status !== 'running' || !config.agents.includes(row.agent)) continue;
		const live = Object.hasOwn(state.live, row.name) ? state.live[row.name] : undefined;
		if (live?.liveStatus !== 'idle') continue;
		seen.add(row.name);
		if (!memory.idleSince.has(row.name)) memory.idleSince.set(row.name, now);
	}
	for (const name of memory.idleSince.keys()) if (!seen.has(name)) memory.idleSince.delete(name);
	const due = config.idleMinutes * 60_000;
	return [...memory.idleSince]
		.filter(([name, since]) => now - since >= due && now - (memory.refusedAt.get(name) ?? -Infinity) >= RETRY_AFTER_MS)
		.sort((a, b) => a[1] - b[1])
		.map(([name]) => name);
}

function message(result: ParkResult): string {
	switch (result.outcome) {
		case 'parked':
			return `parked ${result.session}: idle ${Math.round(result.parked.idleSeconds / 60)} min, freed ${Math.round(result.parked.freedBytes / 1048576)} MB`;
		case 'refused':
			return `auto-park left ${result.session} running (${result.check}): ${result.why}`;
		case 'still-running':
			return `auto-park left ${result.session} running: ${result.why}`;
		case 'would-park':
			return `${result.session} would be parked`;
	}
}

/** Park the due rows, at most `maxPerMinute` parked in this round. */
export async function autoParkRound(deps: AutoParkDeps, memory: AutoParkMemory): Promise<readonly ParkResult[]> {
	const out: ParkResult[] = [];
	let parked = 0;
	for (const name of sampleCandidates(deps.getState(), deps.config, memory, deps.now())) {
		if (parked >= deps.config.maxPerMinute) break;
		const [result] = await deps.park({names: [name]}, {soakSeconds: deps.config.idleMinutes * 60});
		if (!result) continue;
		out.push(result);
		memory.idleSince.delete(name);
		if (result.outcome === 'parked') parked++;
		else memory.refusedAt.set(name, deps.now());
		deps.notify(result.outcome === 'parked' ? 'ok' : 'info', message(result));
	}
	return out;
}

/** Start sampling; nothing at all runs when no agent is listed. */
export function startAutoPark(deps: AutoParkDeps): {dispose(): Promise<void>} {
	if (deps.config.agents.length === 0) return {dispose: async () => {}};
	const memory = newMemory();
	let running: Promise<unknown> = Promise.resolve();
	let busy = false;
	const timer = setInterval(() => {
		if (busy) return;
		busy = true;
		running = autoParkRound(deps, memory)
			.catch((error: unknown) => deps.logger?.error(`auto-park failed: ${messageOf(error)}`))
			.finally(() => {
				busy = false;
			});
	}, deps.intervalMs ?? 60_000);
	timer.unref();
	return {
		async dispose() {
			clearInterval(timer);
			await running;
		},
	};
}
