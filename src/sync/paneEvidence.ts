import {memo, memoKind} from '../adapters/common/refresh.js';
import type {AdapterContext, AgentAdapter, DiscoverResult} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {agentProcesses, paneAgent} from '../domain/paneAgent.js';
import type {AgentId, Pane, SessionRecord} from '../domain/types.js';
import {bootSeconds, processStartMs} from '../system/procTime.js';
import type {PaneEvidence} from '../drift/input.js';

/** One adapter's discovery of one cwd, shared by the discovery cache and the panes in that cwd. */
const DISCOVERED = memoKind<Promise<DiscoverResult>>('pane-evidence:discover');

/** The machine's boot time, read once per refresh and shared by every pane's start time. */
const BOOT = memoKind<number | null>('pane-evidence:boot').of();

/** The adapters mam-tui knows (all of them; the pane's agent is judged among every known agent). */
type Adapters = Readonly<Partial<Record<AgentId, AgentAdapter>>>;

/**
 * Which conversation one pane's agent process is on, from the agent's own evidence (its live
 * record, argv, files it holds open); when nothing names one, the conversations of its folder
 * written since it started. Never "the newest".
 */
export async function paneEvidence(pane: Pane, adapters: Adapters, ctx: AdapterContext): Promise<PaneEvidence | undefined> {
	// Which agent: the one rule (domain/paneAgent.ts); the evidence is read off its processes.
	const agent = paneAgent(pane, adapters);
	const adapter = agent === undefined ? undefined : adapters[agent];
	if (agent === undefined || !adapter) return undefined;
	const procs = agentProcesses(pane, agent, adapters);
	const root = procs[0];
	if (!root) return undefined;
	const startedAt = processStartMs(root.startTime, memo(ctx, BOOT, bootSeconds));
	const base = {agent, ...(startedAt !== undefined ? {startedAt} : {})};
	if (!adapter.liveUses) return {...base, ids: [], seen: [`${adapter.label} keeps no evidence mam-tui can read of which conversation it is on`]};
	let uses;
	try {
		uses = await adapter.liveUses(ctx, procs);
	} catch (error) {
		return {...base, ids: [], seen: [`${adapter.label} evidence could not be read: ${messageOf(error)}`]};
	}
	const seen = uses.map(u => `pid ${u.pid}: ${u.reason}`);
	const named = [...new Set(uses.flatMap(u => (u.claim.kind === 'ids' ? u.claim.ids : [])))].filter(id => adapter.idPattern.test(id));
	const cwd = root.cwd ?? pane.foregroundCwd ?? pane.cwd;
	if (named.length > 0) return {...base, ids: await parentsOnly(adapter, ctx, named, cwd), seen};
	if (cwd === undefined || startedAt === undefined) return {...base, ids: [], seen};
	try {
		const listed = await discoverCwd(adapter, ctx, cwd);
		// Written since the process started: a conversation it created, or one it resumed and wrote to.
		const recent = listed.conversations.filter(c => c.updatedAt >= startedAt && c.parentId === undefined).map(c => c.id);
		return {
			...base,
			ids: [],
			recent: recent.sort(),
			seen: [...seen, `${recent.length} ${adapter.label} conversation(s) in ${cwd} written since the process started`],
		};
	} catch (error) {
		return {...base, ids: [], seen: [...seen, `${adapter.label} discovery failed: ${messageOf(error)}`]};
	}
}

/**
 * The agent's conversations of `cwd` (parents only), asked once per refresh however many ask:
 * the discovery cache's read of a registry cwd and the evidence of every pane in that folder.
 */
export function discoverCwd(adapter: AgentAdapter, ctx: AdapterContext, cwd: string): Promise<DiscoverResult> {
	return memo(ctx, DISCOVERED.of(adapter.id, cwd), () => adapter.discover(ctx, {cwd, includeChildren: false}));
}

/** A process holding its own and a sub-agent's file names both: the sub-agent is not a candidate. */
async function parentsOnly(adapter: AgentAdapter, ctx: AdapterContext, ids: readonly string[], cwd: string | undefined): Promise<string[]> {
	if (ids.length < 2) return [...ids];
	try {
		const listed = await adapter.discover(ctx, {includeChildren: true, ...(cwd ? {cwd} : {})});
		const children = new Set(listed.conversations.filter(c => c.parentId !== undefined).map(c => c.id));
		const parents = ids.filter(id => !children.has(id));
		return parents.length > 0 ? parents.sort() : [...ids].sort();
	} catch {
		return [...ids].sort();
	}
}

/** One pane's agent processes (pid:start, in order) and the evidence last read for them. */
interface PaneLook {
	readonly processes: string;
	readonly evidence: PaneEvidence | undefined;
}

/** What tells the cache to read a pane's evidence again on a discovery tick. */
export interface EvidenceLook {
	/** A discovery tick (not a pane event). */
	readonly rescan: boolean;
	/** Did `agent`'s conversations of `cwd` change (seen by the folder watch, or found changed)? Absent: no watch, so every pane is read again on a tick. */
	readonly changed?: (agent: AgentId, cwd: string) => boolean;
}

/**
 * Pane evidence for the panes no pinned running row accounts for, kept across refreshes. A pane
 * is read again when its agent processes changed, or on a tick when its agent's conversations of
 * its folder changed (its agent wrote one there); otherwise it keeps its evidence (and the whole
 * map stays the same object while nothing changed, so drift keeps its findings), since reading
 * it costs a discovery of the pane's folder.
 */
export class PaneEvidenceCache {
	private last: {readonly looks: ReadonlyMap<string, PaneLook>; readonly value?: ReadonlyMap<string, PaneEvidence>} = {looks: new Map()};

	private readonly adapters: Adapters;

	constructor(adapters: Adapters) {
		this.adapters = adapters;
	}

	async update(ctx: AdapterContext, rows: readonly SessionRecord[], panes: readonly Pane[], look: EvidenceLook): Promise<ReadonlyMap<string, PaneEvidence>> {
		const accounted = new Set<string>();
		for (const r of rows) if (r.status === 'running' && r.agentSessionId !== null && r.paneId !== null) accounted.add(r.paneId);
		const asked = panes.filter(p => !p.isSelf && !accounted.has(p.id) && p.processes.length > 0);
		const looks = new Map<string, PaneLook>();
		let changed = asked.length !== this.last.looks.size || this.last.value === undefined;
		for (const pane of asked) {
			const processes = pane.processes.map(q => `${q.pid}:${q.startTime}`).join(',');
			const known = this.last.looks.get(pane.id);
			if (known && known.processes === processes && !(look.rescan && this.wrote(known, pane, look))) {
				looks.set(pane.id, known);
				continue;
			}
			let evidence: PaneEvidence | undefined;
			try {
				evidence = await paneEvidence(pane, this.adapters, ctx);
			} catch {
				evidence = undefined;
			}
			const same = known !== undefined && JSON.stringify(known.evidence) === JSON.stringify(evidence);
			if (!same) changed = true;
			looks.set(pane.id, {processes, evidence: same ? known.evidence : evidence});
		}
		const kept = this.last.value;
		if (!changed && kept) {
			this.last = {looks, value: kept};
			return kept;
		}
		const value = new Map<string, PaneEvidence>();
		for (const [id, known] of looks) if (known.evidence) value.set(id, known.evidence);
		this.last = {looks, value};
		return value;
	}

	/** May the pane's agent have written a conversation since its evidence was read? */
	private wrote(known: PaneLook, pane: Pane, look: EvidenceLook): boolean {
		if (!look.changed) return true;
		const agent = known.evidence?.agent;
		if (agent === undefined) return false;
		return [pane.processes[0]?.cwd, pane.foregroundCwd, pane.cwd].some(cwd => cwd !== undefined && look.changed?.(agent, cwd) === true);
	}
}
