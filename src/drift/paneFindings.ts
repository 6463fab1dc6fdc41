import type {AgentId, Finding, Pane, SessionRecord} from '../domain/types.js';
import {paneAgent, reportedId} from '../domain/paneAgent.js';
import type {PaneEvidence} from './input.js';
import {muxName, rowRef} from './rowFindings.js';
import {activePinsOf, carriedIds, describePane, describeRow, isActive, listSome, paneAgentCwd, rowPane, validId, type DriftWorld} from './world.js';

// The findings about panes and pins rather than one row (SPEC 5): duplicate-pin, untracked-pane
// and status-disagrees. They depend on the rows, panes and evidence only, so the live view keeps
// them while those are unchanged.

function duplicatePins(world: DriftWorld): Finding[] {
	const groups = new Map<string, SessionRecord[]>();
	for (const row of world.input.sessions) {
		if (!isActive(row) || row.agentSessionId === null) continue;
		const key = `${row.agent}\0${row.agentSessionId}`;
		groups.set(key, [...(groups.get(key) ?? []), row]);
	}
	return [...groups.values()]
		.filter(rows => rows.length > 1)
		.map(unsorted => {
			const rows = [...unsorted].sort((a, b) => a.id - b.id);
			const first = rows[0] as SessionRecord;
			const names = rows.map(r => r.name);
			return {
				kind: 'duplicate-pin',
				...rowRef(first),
				message: `${listSome(names)} are all pinned to ${first.agent} conversation ${first.agentSessionId}; only one can own it`,
				evidence: rows.map(describeRow),
			};
		});
}

/** Does a registry row account for this pane (by pane id, or because the pane carries its pin)? */
function tracked(world: DriftWorld, pane: Pane, agent: AgentId): boolean {
	// By index (pins of the agent's rows; rows recorded on this pane), not a scan of every row per pane.
	const pins = activePinsOf(world, agent);
	for (const id of carriedIds(world, pane, agent) ?? []) if (pins.has(id)) return true;
	// The one join: a row of another server, or a stopped row whose old pane runs something else now, is not this pane's.
	return (world.rowsByPane.get(pane.id) ?? []).some(row => row.agent === agent && rowPane(world, row) === pane);
}

function untrackedPane(world: DriftWorld, pane: Pane): Finding | undefined {
	const agent = paneAgent(pane, world.agents);
	if (pane.isSelf || agent === undefined || tracked(world, pane, agent)) return undefined;
	const cwd = paneAgentCwd(world, pane, agent);
	const reported = reportedId(pane, agent);
	const evidence = world.input.paneEvidence?.get(pane.id);
	const own = evidence?.agent === agent ? evidence : undefined;
	const label = world.agents[agent].label;
	const base: Finding = {
		kind: 'untracked-pane',
		paneId: pane.id,
		message: `${muxName(world)} pane ${pane.id} runs ${label}, but no session row references it`,
		evidence: [
			describePane(world, pane),
			...(own?.seen ?? []).map(line => `${agent} evidence: ${line}`),
			...(cwd ? [] : ['no cwd known for the pane: cannot adopt it']),
		],
	};
	if (cwd === undefined) return base;
	const pick = adoptedPin(world, agent, reported, own);
	const claimedBy = (id: string) => world.input.sessions.find(r => isActive(r) && r.agent === agent && r.agentSessionId === id)?.name;
	if (pick.kind === 'several') {
		const free = pick.ids.filter(id => claimedBy(id) === undefined);
		return {
			...base,
			message: `${muxName(world)} pane ${pane.id} runs ${label} on one of ${listSome(free)}; pick which`,
			candidates: free,
			offer: `mam-tui adopt --pane ${pane.id} --agent ${agent} --id <one of the candidates>`,
		};
	}
	const waits = pick.kind === 'none' ? ` (it is pinned once ${label} writes its conversation in ${cwd})` : '';
	return {
		...base,
		...(waits ? {message: `${base.message}${waits}`} : {}),
		...(pick.kind === 'one' ? {candidates: [pick.id]} : {}),
		fix: {
			type: 'adopt-pane',
			paneId: pane.id,
			agent,
			cwd,
			...(pick.kind === 'one' ? {agentSessionId: pick.id} : {}),
			...(world.input.mux ? {mux: world.input.mux} : {}),
			...(own?.startedAt !== undefined ? {epoch: own.startedAt} : {}),
			...(pane.server ? {server: pane.server} : {}),
		},
	};
}

type AdoptedPin = {readonly kind: 'one'; readonly id: string} | {readonly kind: 'several'; readonly ids: readonly string[]} | {readonly kind: 'none'};

/** The conversation an adopted pane is pinned to: the mux's word, else the agent's evidence, else the only one written since it started. */
function adoptedPin(world: DriftWorld, agent: AgentId, reported: string | undefined, evidence: PaneEvidence | undefined): AdoptedPin {
	if (reported !== undefined && validId(world, agent, reported)) return {kind: 'one', id: reported};
	const named = (evidence?.ids ?? []).filter(id => validId(world, agent, id));
	const pool = named.length > 0 ? named : (evidence?.recent ?? []).filter(id => validId(world, agent, id));
	// A conversation another row owns is not this pane's (unless the evidence names it: then the pane is tracked).
	const free = named.length > 0 ? pool : pool.filter(id => !activePinsOf(world, agent).has(id));
	if (free.length === 1) return {kind: 'one', id: free[0] as string};
	if (free.length > 1) return {kind: 'several', ids: free};
	return {kind: 'none'};
}

/**
 * herdr reads the screen and is known to get claude wrong (herdr #3414, #3993, #4009). Where the
 * agent's own live record says otherwise, the dashboard shows the agent's word (the pane's
 * detection keeps herdr's in `overrides`); this finding says so with both pieces of evidence.
 * Info only, no fix: nothing in the registry is wrong. herdr's `unknown` is no disagreement.
 */
export function statusDisagreements(world: DriftWorld): Finding[] {
	const out: Finding[] = [];
	for (const pane of world.sortedPanes) {
		const detection = pane.detection;
		const herdr = detection?.overrides;
		if (pane.isSelf || !detection || !herdr || herdr.status === 'unknown') continue;
		const row = world.rowsByPane.get(pane.id)?.[0];
		out.push({
			kind: 'status-disagrees',
			level: 'info',
			paneId: pane.id,
			...(row ? {sessionId: row.id, sessionName: row.name} : {}),
			message: `${pane.agent ?? 'the agent'} in pane ${pane.id} says ${detection.status}, herdr says ${herdr.status}: the agent's own record is shown`,
			evidence: [detection.evidence, herdr.evidence],
		});
	}
	return out;
}

/** Every finding that is not one row's own, in SPEC 5 order within each kind. */
export function paneFindings(world: DriftWorld): Finding[] {
	return [...duplicatePins(world), ...world.sortedPanes.flatMap(pane => untrackedPane(world, pane) ?? []), ...statusDisagreements(world)];
}
