import type {DriftInput, SessionFacts} from '../drift/input.js';
import {cwdKey, pinKey} from './discoveryResult.js';
import type {JoinInputs} from './snapshot.js';

// The drift engine's input, built ONE way: the dashboard's snapshot and `mam-tui drift` (with or
// without --fix, refresh.ts `collectDriftInput`) both gather a refresh's facts and turn them into
// DriftInput here, so the CLI and the dashboard show the same findings for the same world.

/**
 * The facts of one refresh as the drift engine's input. Candidates for running unpinned rows are
 * every parent conversation of the row's cwd (any age: the engine applies the epoch rule itself
 * and says which it left out); pins are verified where the row's agent is not live.
 */
export function driftInputOf(inputs: JoinInputs): DriftInput {
	const facts = new Map<number, SessionFacts>();
	for (const row of inputs.sessions) {
		const real = inputs.realCwd?.(row.cwd);
		const found = inputs.discovery.byCwd.get(cwdKey(row.agent, row.cwd));
		const verify = row.agentSessionId === null ? undefined : inputs.discovery.verify.get(pinKey(row.agent, row.agentSessionId, row.cwd));
		const wantsCandidates = row.status === 'running' && row.agentSessionId === null;
		const candidates =
			wantsCandidates && found
				? found.ok
					? {ok: true as const, value: {conversations: found.conversations, problems: found.problems}}
					: {ok: false as const, error: found.error}
				: undefined;
		facts.set(row.id, {...(real ? {realCwd: real} : {}), ...(candidates ? {candidates} : {}), ...(verify ? {verify} : {})});
	}
	return {
		sessions: inputs.sessions,
		mux: inputs.muxKind,
		panes: inputs.panes,
		...(inputs.panes === null ? {muxProblem: inputs.muxProblem ?? inputs.health?.message ?? 'no multiplexer'} : {}),
		facts,
		processes: inputs.processes,
		...(inputs.discovery.paneEvidence ? {paneEvidence: inputs.discovery.paneEvidence} : {}),
	};
}
