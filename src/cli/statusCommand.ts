import {formatResumeState, type LiveStatus, type Pane, type SessionRecord, type StatusDetection} from '../domain/types.js';
import {EXIT} from '../domain/exitCodes.js';
import {messageOf} from '../domain/result.js';
import {selectMuxFor} from '../mux/select.js';
import type {Multiplexer} from '../mux/types.js';
import type {SessionLive} from '../store/state.js';
import {createRefreshPipeline} from '../sync/pipeline.js';
import type {LiveSnapshot} from '../sync/snapshot.js';
import {snapshotTable} from '../system/processes.js';
import {parkedExtra} from '../registry/extra.js';
import {formatBytes} from '../actions/format.js';
import type {Command} from './commands.js';
import {out, outJson, shortPath, table} from './output.js';
import type {World} from '../world/world.js';
import {LOCAL_HOST} from '../config/hosts.js';
import type {HostStatus} from '../remote/client.js';
import {gatherHosts, type GatheredHost} from '../remote/gather.js';
import {chosenHost} from './hostActions.js';

/**
 * The stable shape of `mam-tui status --json` (documented in the README). `version` changes only
 * when a field is removed or changes meaning; new fields may appear at any time.
 */
export interface StatusJson {
	readonly version: 1;
	readonly registry: string;
	readonly sessions: readonly StatusSession[];
	/** The backend in use and how it is doing. */
	readonly mux: StatusMux;
	/** Every pane the backend lists (empty when it could not be reached). */
	readonly panes: readonly StatusPane[];
	/** Ids of panes that run a known agent but belong to no session. */
	readonly untrackedPanes: readonly string[];
	/** What waits for the user: every session (or untracked agent pane) whose agent is blocked, most urgent first. */
	readonly attention: readonly StatusAttention[];
	/**
	 * The other machines of config.yaml's `hosts:` and how each is reached. Their sessions, panes
	 * and attention are in the lists above, each item with its `host`; this machine's say `local`.
	 */
	readonly hosts: readonly StatusHost[];
}

/** One configured host: `up` (with the round trip), `connecting`, or `down` and why. */
export interface StatusHost {
	readonly name: string;
	readonly state: HostStatus['state'];
	readonly rttMs: number | null;
	readonly message: string;
	readonly since: string;
}

/** How a live status was read: the evidence a detector went by (`src/adapters/status`). */
export interface StatusEvidenceJson {
	/** `record` (the agent's own file), `osc` (its state report), `title`, `screen`, `mux` (herdr), `none`. */
	readonly source: StatusDetection['source'];
	/** One line: `sessions/2802.json says "waiting" (permission prompt)`. */
	readonly evidence: string;
	/** From a documented UI never seen for real (agy, hermes, grok). */
	readonly unverified?: boolean;
	/** On herdr, when the agent's record overrode it: what herdr said. */
	readonly herdr?: {readonly status: string; readonly evidence: string};
}

export interface StatusAttention {
	/** The session, or null for an agent pane outside every session. */
	readonly session: string | null;
	readonly paneId: string;
	readonly agent: string | null;
	readonly status: 'blocked';
	readonly evidence: string;
}

export interface StatusMux {
	readonly kind: string | null;
	readonly ok: boolean;
	readonly message: string;
}

export interface StatusSession {
	readonly name: string;
	readonly agent: string;
	readonly status: SessionRecord['status'];
	readonly cwd: string;
	readonly mux: string | null;
	readonly paneId: string | null;
	readonly agentSessionId: string | null;
	readonly epoch: string;
	readonly createdAt: string;
	readonly updatedAt: string;
	/** `yes`, or `no: <reason>` / `unknown: <reason>`; null when not computed. */
	readonly resumeState: string | null;
	/** A parked row only: when it was parked, the memory freed, and how long it had been idle. */
	readonly parked?: {readonly at: string; readonly freedBytes: number; readonly idleSeconds: number};
	/** herdr's working/blocked/idle/done, `unknown` (tmux, or mux unreachable), or exited/stopped. */
	readonly liveStatus?: LiveStatus;
	/** The pane the session was found in right now (may differ from `paneId` after a herdr move). */
	readonly livePaneId?: string | null;
	/** Pids of that pane's process tree, root first. */
	readonly pids?: readonly number[];
	/** How `liveStatus` was read, while the agent runs in its pane; null otherwise. */
	readonly liveEvidence?: StatusEvidenceJson | null;
}

export interface StatusProcess {
	readonly pid: number;
	readonly ppid: number;
	readonly startTime: number;
	readonly name: string;
	readonly argv: readonly string[];
}

export interface StatusPane {
	readonly id: string;
	readonly mux: string;
	readonly agent: string | null;
	readonly agentStatus: string;
	readonly agentSessionId: string | null;
	readonly cwd: string | null;
	readonly title: string | null;
	readonly shellPid: number | null;
	readonly pids: readonly number[];
	readonly processes: readonly StatusProcess[];
	readonly isSelf: boolean;
	/** The session living in this pane, if any. */
	readonly session: string | null;
	/** The agent's status as the detectors read it, with its evidence; null for panes without a known agent. */
	readonly liveStatus: {readonly status: StatusDetection['status']} & StatusEvidenceJson | null;
}

function evidenceJson(d: StatusDetection): StatusEvidenceJson {
	return {source: d.source, evidence: d.evidence, ...(d.unverified ? {unverified: true} : {}), ...(d.overrides ? {herdr: d.overrides} : {})};
}

/** The detection behind a row's live status: only while its agent runs in the pane (else the status is exited/stopped). */
function rowDetection(live: SessionLive | undefined): StatusDetection | undefined {
	const pane = live?.pane;
	const detection = pane?.detection;
	if (!live || !pane || !detection) return undefined;
	// The snapshot shows the detection's status, or herdr's own word where herdr was the source.
	return live.liveStatus === (detection.source === 'mux' ? pane.agentStatus : detection.status) ? detection : undefined;
}

export function toStatusSession(s: SessionRecord, live?: SessionLive): StatusSession {
	const detection = rowDetection(live);
	const parked = s.status === 'parked' ? parkedExtra.read(s.extra) : undefined;
	return {
		name: s.name,
		agent: s.agent,
		status: s.status,
		cwd: s.cwd,
		mux: s.mux,
		paneId: s.paneId,
		agentSessionId: s.agentSessionId,
		epoch: new Date(s.epoch).toISOString(),
		createdAt: new Date(s.createdAt).toISOString(),
		updatedAt: new Date(s.updatedAt).toISOString(),
		resumeState: live ? formatResumeState(live.resumeState) : null,
		...(live
			? {
					liveStatus: live.liveStatus,
					livePaneId: live.pane?.id ?? null,
					pids: live.pane?.processes.map(p => p.pid) ?? [],
					liveEvidence: detection ? evidenceJson(detection) : null,
				}
			: {}),
		...(parked ? {parked: {at: new Date(parked.at).toISOString(), freedBytes: parked.freedBytes, idleSeconds: parked.idleSeconds}} : {}),
	};
}

export function toStatusPane(pane: Pane, session: string | undefined): StatusPane {
	return {
		id: pane.id,
		mux: pane.mux,
		agent: pane.agent ?? null,
		agentStatus: pane.agentStatus,
		agentSessionId: pane.agentSessionId ?? null,
		cwd: pane.cwd ?? null,
		title: pane.title ?? null,
		shellPid: pane.shellPid ?? null,
		pids: pane.processes.map(p => p.pid),
		processes: pane.processes.map(p => ({pid: p.pid, ppid: p.ppid, startTime: p.startTime, name: p.name, argv: p.argv})),
		isSelf: pane.isSelf,
		session: session ?? null,
		liveStatus: pane.detection ? {status: pane.detection.status, ...evidenceJson(pane.detection)} : null,
	};
}

/** Blocked sessions first by name, then blocked agent panes outside every session. */
export function attentionOf(sessions: readonly SessionRecord[], snapshot: Pick<LiveSnapshot, 'live' | 'untracked'>): StatusAttention[] {
	const out: StatusAttention[] = [];
	for (const s of [...sessions].sort((a, b) => a.name.localeCompare(b.name))) {
		const live = snapshot.live[s.name];
		if (live?.liveStatus !== 'blocked' || !live.pane) continue;
		out.push({session: s.name, paneId: live.pane.id, agent: s.agent, status: 'blocked', evidence: rowDetection(live)?.evidence ?? live.pane.agentStatus});
	}
	for (const pane of snapshot.untracked) {
		if (pane.detection?.status !== 'blocked') continue;
		out.push({session: null, paneId: pane.id, agent: pane.agent ?? null, status: 'blocked', evidence: pane.detection.evidence});
	}
	return out;
}

/** Build the live snapshot once: the backend's panes, one discovery pass, the join. */
async function snapshotFor(world: World, sessions: readonly SessionRecord[]): Promise<LiveSnapshot> {
	// One moment, one pass over /proc: the backend's pane trees, the snapshot and every adapter's
	// in-use check share it (each used to read the whole process table again).
	const processes = snapshotTable(world.processes);
	let mux: Multiplexer | null = null;
	let problem: string | undefined;
	try {
		mux = await selectMuxFor({...world, processes}, {readShellCache: true});
	} catch (error) {
		problem = messageOf(error);
	}
	// status prints no conversations and no findings: reading every cwd's would be wasted.
	const pipeline = createRefreshPipeline({
		ctx: world.adapterContext(),
		mux,
		...(problem ? {muxProblem: problem} : {}),
		processes,
		logger: world.logger,
		now: world.now,
		once: true,
		conversations: false,
	});
	try {
		return await pipeline.refresh(sessions);
	} finally {
		pipeline.close();
		await mux?.dispose().catch((error: unknown) => world.logger.warn('mux dispose failed', messageOf(error)));
	}
}

function statusJson(world: World, sessions: readonly SessionRecord[], snapshot: LiveSnapshot): StatusJson {
	const owner = new Map<string, string>();
	for (const s of sessions) {
		const pane = snapshot.live[s.name]?.pane;
		if (pane && s.status !== 'purged') owner.set(pane.id, s.name);
	}
	return {
		version: 1,
		registry: world.registryPath,
		sessions: sessions.map(s => toStatusSession(s, snapshot.live[s.name])),
		mux: {
			kind: snapshot.mux?.kind ?? null,
			ok: snapshot.mux?.ok === true && snapshot.panes !== null,
			message: snapshot.mux?.message ?? snapshot.muxProblem ?? 'no multiplexer',
		},
		panes: (snapshot.panes ?? []).map(p => toStatusPane(p, owner.get(p.id))),
		untrackedPanes: snapshot.untracked.map(p => p.id),
		attention: attentionOf(sessions, snapshot),
		hosts: [],
	};
}

function humanLines(world: World, body: StatusJson): string[] {
	const home = world.adapterContext().home;
	const lines: string[] = [];
	if (body.sessions.length === 0) {
		lines.push(`No sessions in ${world.registryPath}. Start one with \`mam-tui new --agent claude --cwd DIR\`, or run \`mam-tui\` for the dashboard.`);
	} else {
		const many = body.hosts.length > 0;
		const hostOf = (s: StatusSession) => String((s as StatusSession & {host?: string}).host ?? LOCAL_HOST);
		lines.push(
			table(
				[...(many ? ['HOST'] : []), 'NAME', 'AGENT', 'STATUS', 'PANE', 'PIN', 'CWD', 'LIVE', 'RESUME'],
				body.sessions.map(s => [
					...(many ? [hostOf(s)] : []),
					s.name,
					s.agent,
					s.parked ? `parked (${formatBytes(s.parked.freedBytes)} freed)` : s.status,
					s.livePaneId ?? s.paneId ?? '—',
					s.agentSessionId?.slice(0, 12) ?? '—',
					shortPath(s.cwd, home),
					s.liveStatus ?? '—',
					s.resumeState ?? '—',
				]),
			),
		);
	}
	const untracked = body.panes.filter(p => (p as StatusPane & {host?: string}).host !== undefined ? (p as StatusPane & {host?: string}).host === LOCAL_HOST && body.untrackedPanes.includes(p.id) : body.untrackedPanes.includes(p.id));
	if (untracked.length > 0) {
		lines.push('', 'Panes running an agent outside any session:');
		lines.push(
			table(
				['PANE', 'AGENT', 'LIVE', 'PIDS', 'CWD'],
				untracked.map(p => [p.id, p.agent ?? '?', p.agentStatus, p.pids.join(',') || '—', p.cwd ? shortPath(p.cwd, home) : '—']),
			),
		);
	}
	if (body.attention.length > 0) {
		lines.push('', `${body.attention.length} need${body.attention.length === 1 ? 's' : ''} you:`);
		for (const a of body.attention) lines.push(`  ${a.session ?? `pane ${a.paneId}`} (${a.agent ?? '?'}, ${a.paneId}): ${a.evidence}`);
	}
	const parked = body.sessions.filter(s => s.parked);
	if (parked.length > 0) lines.push('', `${parked.length} parked \u00b7 ${formatBytes(parked.reduce((sum, s) => sum + (s.parked?.freedBytes ?? 0), 0))} freed`);
	lines.push('', `mux: ${body.mux.kind ?? 'none'} ${body.mux.ok ? 'ok' : 'DOWN'} — ${body.mux.message}`);
	for (const h of body.hosts) lines.push(`host ${h.name}: ${h.state}${h.rttMs !== null ? ` (${h.rttMs} ms)` : ''} — ${h.message}`);
	return lines;
}

type Item = Record<string, unknown>;
const withHost = <T extends object>(items: readonly T[], host: string): Item[] => items.map(item => ({...item, host}));

/** This machine's status (unless `--host` names another) with every host's sessions, panes and attention merged in, local first. */
function mergeHosts(local: StatusJson | undefined, gathered: readonly GatheredHost[], registry: string): StatusJson {
	const remote = (pick: (view: NonNullable<GatheredHost['view']>) => readonly Item[]) => gathered.flatMap(g => (g.view ? withHost(pick(g.view), g.status.name) : []));
	return {
		version: 1,
		registry: local?.registry ?? registry,
		sessions: [...withHost(local?.sessions ?? [], LOCAL_HOST), ...remote(v => v.sessions)] as unknown as StatusSession[],
		mux: local?.mux ?? {kind: null, ok: false, message: 'not asked (--host)'},
		panes: [...withHost(local?.panes ?? [], LOCAL_HOST), ...remote(v => v.panes)] as unknown as StatusPane[],
		untrackedPanes: local?.untrackedPanes ?? [],
		attention: [...withHost(local?.attention ?? [], LOCAL_HOST), ...remote(v => v.attention)] as unknown as StatusAttention[],
		hosts: gathered.map(g => ({name: g.status.name, state: g.status.state, rttMs: g.status.rttMs, message: g.status.message, since: new Date(g.status.since).toISOString()})),
	};
}

export const statusCommand: Command = {
	name: 'status',
	summary: 'the sessions with their panes, live status and resume state; agent panes outside any session; the mux health; every configured host',
	usage: 'mam-tui status [--json] [--host NAME]',
	options: {},
	async run(world: World) {
		const only = chosenHost(world);
		const localOnly = world.options.host === LOCAL_HOST;
		const hosts = only ? [only] : localOnly ? [] : world.config.hosts;
		// The hosts are asked while this machine is looked at: a slow host costs at most its wait.
		const gathering = gatherHosts(hosts, {logger: world.logger});
		let local: StatusJson | undefined;
		if (!only) {
			const sessions = world.registry().list();
			local = {...statusJson(world, sessions, await snapshotFor(world, sessions)), hosts: []};
		}
		const body = mergeHosts(local, await gathering, world.registryPath);
		if (world.options.json) outJson(body);
		else out(humanLines(world, body).join('\n'));
		return EXIT.ok;
	},
};
