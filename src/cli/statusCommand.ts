import type {SessionRecord} from '../domain/types.js';
import {EXIT} from '../domain/exitCodes.js';
import {shortId} from '../domain/ids.js';
import {messageOf} from '../domain/result.js';
import {selectMuxFor} from '../mux/select.js';
import type {Multiplexer} from '../mux/types.js';
import {createRefreshPipeline} from '../sync/pipeline.js';
import type {LiveSnapshot} from '../sync/snapshot.js';
import {snapshotTable} from '../system/processes.js';
import {formatBytes} from '../actions/format.js';
import {settleInterruptedParks} from '../actions/park.js';
import {attentionOf, toStatusPane, toStatusSession, type StatusAttention, type StatusJson, type StatusPane, type StatusSession} from '../sync/statusJson.js';
import type {Command} from './commands.js';
import {out, outJson, shortPath, table} from './output.js';
import type {World} from '../world/world.js';
import {LOCAL_HOST} from '../config/hosts.js';
import {gatherHosts, type GatheredHost} from '../remote/gather.js';
import {chosenHost} from './hostActions.js';

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
					s.agentSessionId ? shortId(s.agentSessionId, 13) : '—',
					shortPath(s.cwd, home),
					s.liveStatus ?? '—',
					s.resumeState ?? '—',
				]),
			),
		);
	}
	const untracked = body.panes.filter(p => isUntracked(p as StatusPane & {host?: string}, body.untrackedPanes));
	if (untracked.length > 0) {
		const hostOf = (p: StatusPane) => (p as StatusPane & {host?: string}).host ?? LOCAL_HOST;
		const withHosts = body.hosts.length > 0;
		lines.push('', 'Panes running an agent outside any session:');
		lines.push(
			table(
				[...(withHosts ? ['HOST'] : []), 'PANE', 'AGENT', 'LIVE', 'PIDS', 'CWD'],
				untracked.map(p => [
					...(withHosts ? [hostOf(p)] : []),
					p.id,
					p.agent ?? '?',
					p.agentStatus,
					p.pids.join(',') || '—',
					p.cwd ? (hostOf(p) === LOCAL_HOST ? shortPath(p.cwd, home) : p.cwd) : '—',
				]),
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

/**
 * A pane running an agent that no session owns: this machine's by `untrackedPanes`; a host's
 * (its pane ids are its own) by what the host says of the pane: an agent, no session, not itself.
 */
function isUntracked(pane: StatusPane & {host?: string}, untrackedHere: readonly string[]): boolean {
	if (pane.host === undefined || pane.host === LOCAL_HOST) return untrackedHere.includes(pane.id);
	return pane.agent !== null && pane.session === null && !pane.isSelf;
}

type Item = Record<string, unknown>;
const withHost = <T extends object>(items: readonly T[], host: string): Item[] => items.map(item => ({...item, host}));

/** This machine's status (unless `--host` names another) with every host's sessions, panes and attention merged in, local first. */
function mergeHosts(local: StatusJson | undefined, gathered: readonly GatheredHost[], registry: string): StatusJson {
	const remote = (pick: (view: NonNullable<GatheredHost['view']>) => readonly Item[]) =>
		gathered.flatMap(g => (g.view ? withHost(pick(g.view), g.status.name) : []));
	return {
		version: 1,
		registry: local?.registry ?? registry,
		sessions: [...withHost(local?.sessions ?? [], LOCAL_HOST), ...remote(v => v.sessions)] as unknown as StatusSession[],
		mux: local?.mux ?? {kind: null, ok: false, message: 'not asked (--host)'},
		panes: [...withHost(local?.panes ?? [], LOCAL_HOST), ...remote(v => v.panes)] as unknown as StatusPane[],
		untrackedPanes: local?.untrackedPanes ?? [],
		attention: [...withHost(local?.attention ?? [], LOCAL_HOST), ...remote(v => v.attention)] as unknown as StatusAttention[],
		hosts: gathered.map(g => ({
			name: g.status.name,
			state: g.status.state,
			rttMs: g.status.rttMs,
			message: g.status.message,
			since: new Date(g.status.since).toISOString(),
		})),
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
			let sessions = world.registry().list();
			// A park whose mam-tui was killed is finished (or let go) before the rows are shown.
			if ((await settleInterruptedParks({registry: world.registry(), processes: world.processes, now: world.now, logger: world.logger}, sessions)).length > 0)
				sessions = world.registry().list();
			local = {...statusJson(world, sessions, await snapshotFor(world, sessions)), hosts: []};
		}
		const body = mergeHosts(local, await gathering, world.registryPath);
		if (world.options.json) outJson(body);
		else out(humanLines(world, body).join('\n'));
		return EXIT.ok;
	},
};

export type {StatusJson} from '../sync/statusJson.js';
