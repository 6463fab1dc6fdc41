import {detectStatus, type StatusEvidence} from '../adapters/status/index.js';
import {readAgentRecord} from '../adapters/status/records.js';
import type {AdapterContext} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import type {AgentId, AgentStatus, DetectedStatus, Pane, StatusDetection} from '../domain/types.js';
import type {Multiplexer, PaneScreen} from '../mux/types.js';
import type {Logger} from '../system/logger.js';

/** Reads each agent pane's status from its evidence (src/adapters/status) and puts it on the pane. */
export interface StatusProbe {
	/**
	 * The panes, each that runs a known agent carrying its `detection` (also as its `agentStatus`
	 * where the mux reports none of its own). A pane whose listing and detection did not change comes back as the same
	 * object, so the rows showing it stay unchanged. Never rejects: evidence that cannot be read
	 * is left out.
	 */
	detect(panes: readonly Pane[] | null): Promise<readonly Pane[] | null>;
}

export interface StatusProbeDeps {
	readonly ctx: AdapterContext;
	/** The panes' backend: what it can (`can`) decides which evidence is read. Null: no backend, nothing to read. */
	readonly mux: Pick<Multiplexer, 'readScreens' | 'can'> | null;
	/** The known agent a pane runs (the snapshot's own answer, so both agree). */
	readonly agentOf: (pane: Pane) => AgentId | undefined;
	readonly logger?: Logger;
}

/** Where the mux reports no status, the detection is the pane's status too; that field has no `exited`. */
function asAgentStatus(status: DetectedStatus): AgentStatus {
	return status === 'exited' ? 'unknown' : status;
}

function sameDetection(a: StatusDetection | undefined, b: StatusDetection): boolean {
	return a !== undefined && a.status === b.status && a.source === b.source && a.evidence === b.evidence && a.overrides?.status === b.overrides?.status;
}

export function createStatusProbe(deps: StatusProbeDeps): StatusProbe {
	/** Per pane id: the listed pane last seen and what it became. */
	const last = new Map<string, {readonly input: Pane; readonly output: Pane}>();
	/** The last answer: handed back whole when every pane in it is unchanged (drift keeps its work per panes array). */
	let lastOut: readonly Pane[] | undefined;

	const reportsStatus = deps.mux?.can.reportsAgentStatus === true;

	const screensOf = async (panes: readonly Pane[]): Promise<ReadonlyMap<string, PaneScreen>> => {
		const ids = panes.map(p => p.id);
		if (ids.length === 0 || !deps.mux?.can.readsScreens || !deps.mux.readScreens) return new Map();
		try {
			return await deps.mux.readScreens(ids);
		} catch (error) {
			deps.logger?.debug('reading screens for status failed', messageOf(error));
			return new Map();
		}
	};

	const evidenceOf = (pane: Pane, agent: AgentId, screen: PaneScreen | undefined): StatusEvidence => {
		const record = readAgentRecord(agent, deps.ctx, pane.processes);
		// A mux that reports status reads title and screen itself (herdr); only the agent's own record is added.
		if (reportsStatus) return record ? {record} : {};
		return {
			...(record ? {record} : {}),
			...(screen?.osc !== undefined ? {osc: screen.osc} : {}),
			...(pane.title ? {title: pane.title} : {}),
			...(screen ? {screen: screen.text} : {}),
		};
	};

	return {
		async detect(panes) {
			if (!panes) return panes;
			const agents = new Map<string, AgentId>();
			for (const pane of panes) {
				const agent = pane.isSelf ? undefined : deps.agentOf(pane);
				if (agent) agents.set(pane.id, agent);
			}
			const screens = await screensOf(panes.filter(p => agents.has(p.id)));
			const seen = new Set<string>();
			const out = panes.map(pane => {
				const agent = agents.get(pane.id);
				if (!agent) return pane;
				seen.add(pane.id);
				let found: StatusDetection;
				try {
					found = detectStatus(agent, evidenceOf(pane, agent, screens.get(pane.id)), reportsStatus ? {status: pane.agentStatus} : undefined);
				} catch (error) {
					// A detector bug must not take the listing down: the pane keeps what the mux said.
					deps.logger?.warn('status detection failed', messageOf(error));
					return pane;
				}
				const before = last.get(pane.id);
				if (before && before.input === pane && sameDetection(before.output.detection, found)) return before.output;
				const next: Pane = {...pane, detection: found, ...(reportsStatus ? {} : {agentStatus: asAgentStatus(found.status)})};
				last.set(pane.id, {input: pane, output: next});
				return next;
			});
			for (const id of last.keys()) if (!seen.has(id)) last.delete(id);
			if (lastOut && lastOut.length === out.length && out.every((pane, i) => pane === lastOut?.[i])) return lastOut;
			lastOut = out;
			return out;
		},
	};
}
