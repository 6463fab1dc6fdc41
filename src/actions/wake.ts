/**
 * Wake (issue 28): a parked session is resumed where it was (tmux: its session, a new window;
 * herdr: a split in its tab) by the resume action and its checks (the exact conversation, never
 * the newest), then watched until its TUI takes input, and verified: the new pane's agent is on
 * the pinned conversation by the in-use evidence. Reports how long it took to be ready.
 */
import type {AgentAdapter} from '../adapters/types.js';
import type {ProcessRef, SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import {parkedExtra} from '../registry/extra.js';
import {processTree} from '../system/processes.js';
import {settleInterruptedParks} from './park.js';
import {resumeSession} from './resume.js';
import {adapterOf, audit} from './session.js';
import {pickAgentProcess} from './stopCapture.js';
import type {ActionDeps} from './types.js';

export interface WakeOptions {
	/** How long to wait for the TUI to take input (ms); default 60 s. */
	readonly readyTimeoutMs?: number;
	readonly sleep?: (ms: number) => Promise<void>;
}

export type WakeResult =
	| {
			readonly session: string;
			readonly outcome: 'woken';
			readonly paneId: string;
			readonly argv: readonly string[];
			readonly cwd: string;
			/** From opening the pane until the TUI showed an empty composer (null: not within the timeout). */
			readonly readyMs: number | null;
			/** The new pane's agent is on the pinned conversation (by the in-use evidence). */
			readonly verified: boolean;
			readonly notes: readonly string[];
	  }
	| {readonly session: string; readonly outcome: 'refused'; readonly kind: string; readonly why: string};

const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 200;
const realSleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** The agent process in the pane, once it started. */
async function agentIn(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, paneId: string): Promise<{agent?: ProcessRef; tree: readonly ProcessRef[]}> {
	const pane = (await mux.listPanes()).find(p => p.id === paneId);
	if (!pane) return {tree: []};
	const all = await deps.processes.list();
	const root = pane.shellPid ?? pane.processes[0]?.pid;
	const tree = root === undefined ? [] : processTree(all, root);
	const agent = pickAgentProcess(adapter, tree);
	return agent && adapter.matchesProcess(agent) ? {agent, tree} : {tree};
}

/** Ready: the agent runs and its screen shows an empty composer (an adapter with no reader: the agent runs). */
async function isReady(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, paneId: string): Promise<boolean> {
	const {agent} = await agentIn(deps, adapter, mux, paneId);
	if (!agent) return false;
	const read = adapter.exitInput.readScreen;
	if (!read) return true;
	try {
		return read(await mux.readOutput(paneId, 200)).kind === 'empty';
	} catch {
		return false;
	}
}

/** Wake one parked session. */
export async function wakeSession(deps: ActionDeps, given: SessionRecord, options: WakeOptions = {}): Promise<WakeResult> {
	// A park whose mam-tui was killed after the agent exited is finished first: then it wakes.
	const before = deps.registry.getById(given.id);
	if (before) await settleInterruptedParks(deps, [before]);
	const row = deps.registry.getById(given.id) ?? given;
	const refuse = (kind: string, why: string): WakeResult => {
		audit(deps, {session: row.name, action: 'wake', outcome: 'refused', detail: {kind, message: why}});
		return {session: row.name, outcome: 'refused', kind, why};
	};
	if (row.status !== 'parked') return refuse('not-parked', `${row.name} is ${row.status}, not parked`);
	const adapter = adapterOf(deps, row.agent);
	if (!adapter.ok) return refuse(adapter.error.kind, adapter.error.message);
	const parked = parkedExtra.read(row.extra);
	const startedAt = Date.now();
	const resumed = await resumeSession(deps, row, parked?.placement ? {placement: parked.placement} : {});
	if (!resumed.ok) return refuse(resumed.error.kind, resumed.error.message);
	const {paneId, argv, cwd} = resumed.value;
	const mux = await deps.mux();
	const sleep = options.sleep ?? realSleep;
	const deadline = startedAt + (options.readyTimeoutMs ?? READY_TIMEOUT_MS);
	let readyMs: number | null = null;
	for (;;) {
		if (await isReady(deps, adapter.value, mux, paneId)) {
			readyMs = Date.now() - startedAt;
			break;
		}
		if (Date.now() >= deadline) break;
		await sleep(POLL_MS);
	}
	const notes: string[] = [];
	if (readyMs === null) notes.push(`the TUI did not show an empty composer within ${Math.round((options.readyTimeoutMs ?? READY_TIMEOUT_MS) / 1000)} s`);
	const pin = row.agentSessionId as string;
	const {tree} = await agentIn(deps, adapter.value, mux, paneId);
	const inTree = new Set(tree.map(p => p.pid));
	const holders = await adapter.value.inUse(deps.context, pin).catch(() => []);
	const verified = holders.some(h => inTree.has(h.pid));
	if (!verified) notes.push(`no process of pane ${paneId} shows conversation ${pin} in use yet`);
	if (parked?.placement?.session) {
		const now = (await mux.listPanes()).find(p => p.id === paneId)?.placement?.session;
		if (now !== parked.placement.session) notes.push(`tmux session ${parked.placement.session} is gone; opened in ${now ?? 'another session'}`);
	}
	deps.registry.updateExtra(row.id, extra => parkedExtra.remove(extra));
	audit(deps, {session: row.name, action: 'wake', outcome: 'ok', detail: {paneId, argv, cwd, readyMs, verified, notes, parkedAt: parked?.at}});
	return {session: row.name, outcome: 'woken', paneId, argv, cwd, readyMs, verified, notes};
}

/** Which sessions a wake names: by name, or every parked one (optionally only those in `cwd`). */
export type WakeSelection = {readonly names: readonly string[]} | {readonly all: true; readonly cwd?: string};

export async function wakeSessions(deps: ActionDeps, selection: WakeSelection, options: WakeOptions = {}): Promise<readonly WakeResult[]> {
	if (!('names' in selection)) await settleInterruptedParks(deps);
	const rows =
		'names' in selection
			? selection.names.map(name => deps.registry.get(name) ?? name)
			: deps.registry.list().filter(r => r.status === 'parked' && (selection.cwd === undefined || r.cwd === selection.cwd));
	const out: WakeResult[] = [];
	for (const row of rows) {
		out.push(
			typeof row === 'string'
				? {session: row, outcome: 'refused', kind: 'not-found', why: `no session named ${JSON.stringify(row)}`}
				: await wakeSession(deps, row, options),
		);
	}
	return out;
}
