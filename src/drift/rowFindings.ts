import type {AgentId, Finding, Pane, SessionRecord} from '../domain/types.js';
import {reportedId, runsAgent} from '../domain/paneAgent.js';
import {staleProcesses} from './stale.js';
import {unpinnedFinding, type CandidateVerdict} from './unpinned.js';
import {
	carriesPin,
	firstPaneCarrying,
	describePane,
	describeProcess,
	describeRow,
	isActive,
	listSome,
	pinHolders,
	rowPane,
	sameMux,
	validId,
	byPaneId,
	type DriftWorld,
} from './world.js';

// The findings about one registry row (SPEC 5): pane-gone, agent-exited, pin-changed,
// artifact-missing and unpinned for a running row; stopped-but-live, stale-process and
// artifact-missing for a stopped one. detect.ts decides which rows are judged again.

export type Verdicts = ReadonlyMap<number, {row: SessionRecord; verdict: CandidateVerdict}>;
export type Contested = ReadonlyMap<string, readonly string[]>;

/** Where a running row's pane stands. `unknown`: not ours to judge (mux unreachable, another mux, our own pane). */
export type PaneState =
	{readonly kind: 'unknown'} | {readonly kind: 'gone'} | {readonly kind: 'exited'; readonly pane: Pane} | {readonly kind: 'live'; readonly pane: Pane};

export function paneState(world: DriftWorld, row: SessionRecord, agent: AgentId): PaneState {
	if (world.panes === null || !sameMux(world, row)) return {kind: 'unknown'};
	const pane = rowPane(world, row);
	if (!pane) return {kind: 'gone'};
	if (pane.isSelf) return {kind: 'unknown'};
	return runsAgent(pane, agent, world.agents) ? {kind: 'live', pane} : {kind: 'exited', pane};
}

export function muxName(world: DriftWorld): string {
	return world.input.mux ?? 'mux';
}

export function rowRef(row: SessionRecord): Pick<Finding, 'sessionId' | 'sessionName' | 'sessionVersion'> {
	return {sessionId: row.id, sessionName: row.name, sessionVersion: row.version};
}

function paneGone(world: DriftWorld, row: SessionRecord, agent: AgentId): Finding {
	const mux = muxName(world);
	const elsewhere =
		row.agentSessionId === null
			? []
			: [...(world.panes?.values() ?? [])]
					.sort(byPaneId)
					.filter(p => !p.isSelf && carriesPin(world, p, agent, row.agentSessionId as string))
					.map(p => `${mux}: its conversation ${row.agentSessionId} runs in pane ${p.id}`);
	return {
		kind: 'pane-gone',
		...rowRef(row),
		...(row.paneId ? {paneId: row.paneId} : {}),
		message:
			row.paneId === null
				? `${row.name} is marked running but has no pane recorded`
				: `${row.name} is marked running, but its pane ${row.paneId} no longer exists`,
		evidence: [
			describeRow(row),
			`${mux}: ${row.paneId === null ? 'no pane to look for' : `no pane ${row.paneId}`} among ${world.panes?.size ?? 0} panes`,
			...elsewhere,
		],
		fix: {type: 'mark-stopped', sessionId: row.id, clearPane: true},
	};
}

function agentExited(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane): Finding {
	return {
		kind: 'agent-exited',
		...rowRef(row),
		paneId: pane.id,
		message: `${row.name}'s pane ${pane.id} is still open, but ${world.agents[agent].label} no longer runs in it`,
		evidence: [describeRow(row), describePane(world, pane)],
		// The pane stays recorded: resume may reuse it while it still holds a shell (SPEC 6.1).
		fix: {type: 'mark-stopped', sessionId: row.id},
	};
}

function pinChanged(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane): Finding | undefined {
	const pin = row.agentSessionId;
	const reported = reportedId(pane, agent);
	if (pin === null || reported === undefined || reported === pin) return undefined;
	const owner = world.input.sessions.find(o => o.id !== row.id && isActive(o) && o.agent === row.agent && o.agentSessionId === reported);
	const valid = validId(world, agent, reported);
	const base: Finding = {
		kind: 'pin-changed',
		...rowRef(row),
		paneId: pane.id,
		message: `${muxName(world)} reports conversation ${reported} in ${row.name}'s pane, but the row is pinned to ${pin}`,
		evidence: [
			describeRow(row),
			describePane(world, pane),
			...(valid ? [] : [`${JSON.stringify(reported)} is not a valid ${agent} id: not re-pinned`]),
			...(owner ? [`${reported} is already pinned by ${owner.name}: not re-pinned`] : []),
		],
	};
	return valid && !owner ? {...base, fix: {type: 'repin', sessionId: row.id, from: pin, to: reported}} : base;
}

function artifactMissing(world: DriftWorld, row: SessionRecord): Finding | undefined {
	const verdict = world.input.facts.get(row.id)?.verify;
	if (row.agentSessionId === null || verdict?.kind !== 'no') return undefined;
	return {
		kind: 'artifact-missing',
		...rowRef(row),
		...(row.paneId ? {paneId: row.paneId} : {}),
		message: `${row.name} is pinned to ${row.agentSessionId}, but no resumable conversation exists for it: ${verdict.reason}`,
		evidence: [describeRow(row), `${row.agent} adapter: verify(${row.agentSessionId}) says no — ${verdict.reason}`],
		offer: `forget the row ${row.name} (its audit history stays)`,
	};
}

function runningFindings(world: DriftWorld, row: SessionRecord, agent: AgentId, verdicts: Verdicts, contested: Contested): Finding[] {
	const state = paneState(world, row, agent);
	const missing = artifactMissing(world, row);
	const also = missing ? [missing] : [];
	if (state.kind === 'gone') return [paneGone(world, row, agent), ...also];
	if (state.kind === 'exited') return [agentExited(world, row, agent, state.pane), ...also];
	const pane = state.kind === 'live' ? state.pane : undefined;
	const changed = pane ? pinChanged(world, row, agent, pane) : undefined;
	if (changed) return [changed];
	// A live (or possibly live) agent may not have written its first message yet: a missing
	// artifact only means something once the agent is gone.
	const verdict = verdicts.get(row.id)?.verdict;
	return verdict ? [unpinnedFinding(world, row, agent, pane, verdict, contested)] : [];
}

/** The live pane a stopped row's agent runs in: its own pane (unless it runs another conversation), or one carrying its pin. */
function livePaneOf(world: DriftWorld, row: SessionRecord, agent: AgentId): Pane | undefined {
	if (world.panes === null) return undefined;
	const own = sameMux(world, row) ? rowPane(world, row) : undefined;
	if (own && !own.isSelf && runsAgent(own, agent, world.agents)) return own;
	const pin = row.agentSessionId;
	if (pin === null) return undefined;
	// A pin held twice (duplicate-pin) does not say which row the pane is: leave it to the user.
	if (pinHolders(world, row.agent, pin) > 1) return undefined;
	return firstPaneCarrying(world, agent, pin);
}

function stoppedFindings(world: DriftWorld, row: SessionRecord, agent: AgentId): Finding[] {
	const pane = livePaneOf(world, row, agent);
	if (pane) {
		return [
			{
				kind: 'stopped-but-live',
				...rowRef(row),
				paneId: pane.id,
				message: `${row.name} is marked ${row.status}, but ${world.agents[agent].label} runs in pane ${pane.id}`,
				evidence: [describeRow(row), describePane(world, pane)],
				fix: {
					type: 'mark-running',
					sessionId: row.id,
					paneId: pane.id,
					...(world.input.mux ? {mux: world.input.mux} : {}),
					...(pane.server ? {server: pane.server} : {}),
				},
			},
		];
	}
	const found: Finding[] = [];
	const stale = staleProcesses(world, row, agent);
	if (stale.length > 0) {
		const pids = stale.map(s => s.proc.pid);
		found.push({
			kind: 'stale-process',
			...rowRef(row),
			message: `${row.name} is stopped, but ${stale.length === 1 ? 'a process' : `${stale.length} processes`} of it still run${stale.length === 1 ? 's' : ''}: pid ${listSome(pids.map(String))}`,
			evidence: [describeRow(row), ...stale.map(s => `process table: ${describeProcess(s.proc)} — ${s.why}`)],
			offer: `stop escalation: SIGKILL pid ${pids.join(', ')} (only if pid and start time still match)`,
		});
	}
	const missing = artifactMissing(world, row);
	if (missing) found.push(missing);
	return found;
}

export function rowFindings(world: DriftWorld, row: SessionRecord, agent: AgentId, verdicts: Verdicts, contested: Contested): Finding[] {
	if (row.status === 'running') return runningFindings(world, row, agent, verdicts, contested);
	// A parked row is a stopped one that knows where to wake: drift sees its agent started again by
	// hand (stopped-but-live) and its conversation vanishing (artifact-missing) alike.
	if (row.status === 'stopped' || row.status === 'parked') return stoppedFindings(world, row, agent);
	return [];
}
