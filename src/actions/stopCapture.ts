import type {AgentAdapter} from '../adapters/types.js';
import type {Pane, ProcessRef, SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import {recordedProcesses} from '../registry/extra.js';
import {pidIndex, processTree} from '../system/processes.js';
import {sameProcess, slim, type StopRun} from './stopRun.js';
import type {ActionDeps} from './types.js';

// Step 0 of a stop (SPEC 6.2): capture the session's process tree with start times, and the
// checks every later step makes against it (does the pane still hold that tree?).

/** Shells a pane or a tool starts; their child is the work, not the shell. */
export const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'tcsh', 'csh', 'nu']);
/**
 * The agent in the captured tree: the adapter's process, else (under a shell) the shell's first
 * child, else a non-shell root. Undefined when the pane only holds a shell: nothing to stop there.
 */
export function pickAgentProcess(adapter: AgentAdapter, tree: readonly ProcessRef[]): ProcessRef | undefined {
	const matching = tree.find(p => adapter.matchesProcess(p));
	if (matching) return matching;
	const root = tree[0];
	if (!root) return undefined;
	if (SHELLS.has(root.name)) return tree.find(p => p.ppid === root.pid);
	return root;
}

/** mam-tui itself and every ancestor: never signalled, whatever the captured tree says. */
function protectedPids(all: readonly ProcessRef[], selfPid: number): Set<number> {
	const byPid = pidIndex(all);
	const out = new Set<number>([selfPid]);
	let current = byPid.get(selfPid);
	while (current && current.ppid > 0 && !out.has(current.ppid)) {
		out.add(current.ppid);
		current = byPid.get(current.ppid);
	}
	return out;
}

/** The pane as the mux lists it now, or undefined when it is gone. */
export async function currentPane(mux: Multiplexer, paneId: string): Promise<Pane | undefined> {
	return (await mux.listPanes()).find(p => p.id === paneId);
}

/**
 * Does the pane still hold the process tree captured at step 0? Same root pid with the same start
 * time (a reused pane gets a new root), and not mam-tui's own pane.
 */
export async function paneHolds(run: StopRun, mux: Multiplexer, paneId: string, root: ProcessRef): Promise<{holds: boolean; gone: boolean; why?: string}> {
	const pane = await currentPane(mux, paneId);
	if (!pane) return {holds: false, gone: true};
	if (pane.isSelf) return {holds: false, gone: false, why: `pane ${paneId} is mam-tui's own pane`};
	const rootPid = pane.shellPid ?? pane.processes[0]?.pid;
	if (rootPid !== root.pid) return {holds: false, gone: false, why: `pane ${paneId} now runs another process (pid ${rootPid ?? '?'})`};
	if (!(await run.alive(root))) return {holds: false, gone: false, why: `pane ${paneId}'s pid ${root.pid} now belongs to another process`};
	return {holds: true, gone: false};
}

export interface Captured {
	readonly pane: Pane | undefined;
	/** The pane's root process (its shell, or the agent when the mux ran it directly). */
	readonly root: ProcessRef | undefined;
	readonly agent: ProcessRef | undefined;
	/** The pane's tree, root first. */
	readonly tree: readonly ProcessRef[];
	/** What a previous stop left alive (same pid and start time), outside the pane's tree. */
	readonly stale: readonly ProcessRef[];
	/** tree + stale: every process the stop may end. */
	readonly processes: readonly ProcessRef[];
	readonly protectedPids: ReadonlySet<number>;
}

export async function capture(deps: ActionDeps, adapter: AgentAdapter, session: SessionRecord, pane: Pane | undefined): Promise<Captured> {
	const all = await deps.processes.list();
	const guard = protectedPids(all, deps.selfPid ?? process.pid);
	const rootPid = pane ? (pane.shellPid ?? pane.processes[0]?.pid) : undefined;
	const tree = (rootPid === undefined ? [] : processTree(all, rootPid)).filter(p => !guard.has(p.pid)).map(slim);
	const byPid = pidIndex(all);
	// What an earlier stop recorded (one codec with drift's stale-process: the processes it offers to end are these).
	const stale = recordedProcesses(session)
		.filter(p => sameProcess(byPid.get(p.pid), p) && !tree.some(t => t.pid === p.pid) && !guard.has(p.pid))
		.map(slim);
	return {pane, root: tree[0], agent: pickAgentProcess(adapter, tree), tree, stale, processes: [...tree, ...stale], protectedPids: guard};
}

/** The agent and what it started: every captured process but the pane's shell (the user's, when the agent ran under one). */
export function agentSide(cap: Captured): ProcessRef[] {
	return cap.processes.filter(p => !(p.pid === cap.root?.pid && p.pid !== cap.agent?.pid));
}
