import {agentProcesses, reportedId, runsAgent} from '../domain/paneAgent.js';
import {isAgentId, type AgentId, type Conversation, type Pane, type ProcessRef, type SessionRecord} from '../domain/types.js';
import {ownPane} from './paneJoin.js';
import type {AgentKnowledge, DriftInput} from './input.js';

/** The input plus the indexes every rule needs; built once per detection. */
export interface DriftWorld {
	readonly input: DriftInput;
	readonly agents: AgentKnowledge;
	/** Live panes by id, self included (a row in mam-tui's own pane is not "gone"); null when unknown. */
	readonly panes: ReadonlyMap<string, Pane> | null;
	/** `pid:startTime` of every process inside a live pane: those are live, never "stale". */
	readonly paneProcessKeys: ReadonlySet<string>;
	/** The live panes sorted by id, once (rules that scan panes for a pin look in this order). */
	readonly sortedPanes: readonly Pane[];
	/**
	 * Per pane and agent: the ids the pane carries for that agent (its reported id and every argv
	 * element of its agent processes), or null when the agent does not run there. Filled on first
	 * ask: the pin rules ask it for every row × pane pair (500 × 500), which must be a lookup.
	 */
	readonly carried: WeakMap<Pane, Map<AgentId, ReadonlySet<string> | null>>;
	/** Per agent: each pin to the first pane (by id, not mam-tui's own) carrying it. Built on first ask. */
	readonly firstCarrier: Map<AgentId, ReadonlyMap<string, Pane>>;
	/** Per agent: the pins of its active rows. Built on first ask. */
	readonly activePins: Map<AgentId, ReadonlySet<string>>;
	/** Active rows by recorded pane id. */
	readonly rowsByPane: ReadonlyMap<string, readonly SessionRecord[]>;
	/** How many active rows hold each `agent\0pin`. Built on first ask (in a box, so copies of the world share it). */
	readonly pinCounts: {value?: ReadonlyMap<string, number>};
	/** Each row's own pane (null: none), filled on first ask: every rule asks it, for every row. */
	readonly rowPanes: Map<SessionRecord, Pane | null>;
	/** The process table outside every live pane, indexed (stale.ts). Built on first ask (in a box, so copies of the world share it). */
	readonly outside: {value?: OutsidePanes};
	/** The pin-independent candidate screens (unpinned.ts): the drift memo's, kept across detections; else this detection's. */
	readonly screens: Screens;
}

/** The process table minus every live pane's processes, indexed by key and by argv element. */
export interface OutsidePanes {
	readonly table: readonly ProcessRef[];
	/** Processes outside every live pane, by `pid:startTime`. */
	readonly byKey: ReadonlyMap<string, readonly ProcessRef[]>;
	/** The same processes, by each element of their argv. */
	readonly byArg: ReadonlyMap<string, readonly ProcessRef[]>;
}

/** Why a conversation is left out for a row, before other rows' pins (its text is made only when shown). */
export type Exclusion = 'elsewhere' | 'older' | 'child' | 'invalid';

/** One conversation's screen for one row: left out (`why`) or a candidate. */
export type Screened = readonly {readonly conv: Conversation; readonly why?: Exclusion}[];

/**
 * Screens per conversation list (the discovery cache hands the same array while a cwd is
 * unchanged), then per agent, row cwd, epoch and real cwd (`unpinned.ts`).
 */
export type Screens = WeakMap<readonly Conversation[], Map<string, Screened>>;

/** `screens`: the drift memo's, when the caller keeps one (`createDriftMemo`); else new, for this detection. */
export function buildWorld(input: DriftInput, agents: AgentKnowledge, screens: Screens = new WeakMap()): DriftWorld {
	const panes = input.panes === null ? null : new Map(input.panes.map(p => [p.id, p]));
	const paneProcessKeys = new Set((input.panes ?? []).flatMap(p => p.processes.map(processKey)));
	const sortedPanes = [...(panes?.values() ?? [])].sort(byPaneId);
	const rowsByPane = new Map<string, SessionRecord[]>();
	for (const row of input.sessions) {
		if (!isActive(row) || row.paneId === null) continue;
		const list = rowsByPane.get(row.paneId);
		if (list) list.push(row);
		else rowsByPane.set(row.paneId, [row]);
	}
	return {
		input,
		agents,
		panes,
		paneProcessKeys,
		sortedPanes,
		carried: new WeakMap(),
		firstCarrier: new Map(),
		activePins: new Map(),
		rowsByPane,
		pinCounts: {},
		rowPanes: new Map(),
		outside: {},
		screens,
	};
}

/** Panes in id order (every rule that lists panes lists them so). */
export function byPaneId(a: Pick<Pane, 'id'>, b: Pick<Pane, 'id'>): number {
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function processKey(proc: Pick<ProcessRef, 'pid' | 'startTime'>): string {
	return `${proc.pid}:${proc.startTime}`;
}

/** A row in the registry that still counts (purged rows are history). */
export function isActive(row: SessionRecord): boolean {
	return row.status !== 'purged';
}

/** The agent of a row, when this build knows it (a newer mam-tui may have written others). */
export function rowAgent(world: DriftWorld, row: SessionRecord): AgentId | undefined {
	return isAgentId(row.agent) && Object.hasOwn(world.agents, row.agent) ? row.agent : undefined;
}

/** True when the row's pane belongs to the backend we looked at (rows of another mux are not judged). */
export function sameMux(world: DriftWorld, row: SessionRecord): boolean {
	return row.mux === null || row.mux === world.input.mux;
}

export function validId(world: DriftWorld, agent: AgentId, id: string): boolean {
	return id.length > 0 && id.length <= 256 && world.agents[agent].idPattern.test(id);
}

/** The pane runs conversation `pin`: the mux reports it, or an agent process's argv names it. */
export function carriesPin(world: DriftWorld, pane: Pane, agent: AgentId, pin: string): boolean {
	return carriedIds(world, pane, agent)?.has(pin) === true;
}

/** Every id the pane carries for `agent` (see `carriesPin`), or null when the agent does not run there. */
export function carriedIds(world: DriftWorld, pane: Pane, agent: AgentId): ReadonlySet<string> | null {
	let perAgent = world.carried.get(pane);
	if (!perAgent) world.carried.set(pane, (perAgent = new Map()));
	let ids = perAgent.get(agent);
	if (ids === undefined) {
		// A session id on a pane whose agent is gone is a leftover, not a live conversation.
		if (!runsAgent(pane, agent, world.agents)) ids = null;
		else {
			const reported = reportedId(pane, agent);
			const procs = agentProcesses(pane, agent, world.agents);
			// The agent's own evidence (its live record, a file it holds open) names a conversation as surely as argv.
			const evidence = world.input.paneEvidence?.get(pane.id);
			const evident = evidence?.agent === agent ? evidence.ids : [];
			ids = new Set([...(reported === undefined ? [] : [reported]), ...procs.flatMap(proc => proc.argv), ...evident]);
		}
		perAgent.set(agent, ids);
	}
	return ids;
}

/** The first pane by id (never mam-tui's own) that carries `pin` for `agent`, from one index per agent. */
export function firstPaneCarrying(world: DriftWorld, agent: AgentId, pin: string): Pane | undefined {
	let index = world.firstCarrier.get(agent);
	if (!index) {
		const built = new Map<string, Pane>();
		for (const pane of world.sortedPanes) {
			if (pane.isSelf) continue;
			for (const id of carriedIds(world, pane, agent) ?? []) if (!built.has(id)) built.set(id, pane);
		}
		world.firstCarrier.set(agent, (index = built));
	}
	return index.get(pin);
}

/** The pins of `agent`'s active rows. */
export function activePinsOf(world: DriftWorld, agent: AgentId): ReadonlySet<string> {
	let pins = world.activePins.get(agent);
	if (!pins) {
		pins = new Set(world.input.sessions.filter(r => isActive(r) && r.agent === agent && r.agentSessionId !== null).map(r => r.agentSessionId as string));
		world.activePins.set(agent, pins);
	}
	return pins;
}

/** How many active rows of `agent` are pinned to `pin` (one count per pin, not a scan of every row per row). */
export function pinHolders(world: DriftWorld, agent: string, pin: string): number {
	let counts = world.pinCounts.value;
	if (!counts) {
		const built = new Map<string, number>();
		for (const r of world.input.sessions) {
			if (!isActive(r) || r.agentSessionId === null) continue;
			const key = `${r.agent}\0${r.agentSessionId}`;
			built.set(key, (built.get(key) ?? 0) + 1);
		}
		world.pinCounts.value = counts = built;
	}
	return counts.get(`${agent}\0${pin}`) ?? 0;
}

/** The best cwd for a pane's agent: the agent process's own, else the foreground's, else the pane's. */
export function paneAgentCwd(world: DriftWorld, pane: Pane, agent: AgentId): string | undefined {
	return agentProcesses(pane, agent, world.agents).find(p => p.cwd)?.cwd ?? pane.foregroundCwd ?? pane.cwd;
}

/** Paths compare without a trailing slash. */
export function samePath(a: string, b: string): boolean {
	if (a === b) return true;
	// Asked for every conversation of a busy cwd: a regex only when there is a slash to trim.
	const trim = (p: string) => (p.length > 1 && p.endsWith('/') ? p.replace(/\/+$/, '') : p);
	return trim(a) === trim(b);
}

const MAX_LISTED = 6;

/** At most a few items, then `… and N more`, so one finding stays readable. */
export function listSome(items: readonly string[]): string {
	const shown = items.slice(0, MAX_LISTED).join(', ');
	return items.length > MAX_LISTED ? `${shown} … and ${items.length - MAX_LISTED} more` : shown;
}

export function describeRow(row: SessionRecord): string {
	const pane = row.paneId === null ? 'no pane' : `pane ${row.paneId}${row.mux ? ` (${row.mux})` : ''}`;
	return `registry: ${row.name} is ${row.status}, ${pane}, pinned ${row.agentSessionId ?? '—'}, cwd ${row.cwd}`;
}

export function describeProcess(proc: ProcessRef): string {
	const argv = proc.argv.length > 0 ? proc.argv.join(' ') : proc.name;
	return `pid ${proc.pid} (start ${proc.startTime}) ${argv.length > 120 ? `${argv.slice(0, 120)}…` : argv}`;
}

export function describePane(world: DriftWorld, pane: Pane): string {
	const mux = world.input.mux ?? pane.mux;
	const agent = pane.agent === undefined ? 'no agent detected' : `agent ${pane.agent} (${pane.agentStatus})`;
	const session = pane.agentSessionId === undefined ? '' : `, session ${pane.agentSessionId}`;
	const procs = pane.processes.length === 0 ? 'no process tree' : `processes ${listSome(pane.processes.map(p => `${p.name}(${p.pid})`))}`;
	return `${mux}: pane ${pane.id} has ${agent}${session}, ${procs}`;
}

/** The row's own pane by the one join (registry/paneJoin.ts): same id, backend and server. */
export function rowPane(world: DriftWorld, row: SessionRecord): Pane | undefined {
	if (world.panes === null) return undefined;
	let pane = world.rowPanes.get(row);
	if (pane === undefined) world.rowPanes.set(row, (pane = ownPane(row, world.panes, world.input.mux, world.agents) ?? null));
	return pane ?? undefined;
}
