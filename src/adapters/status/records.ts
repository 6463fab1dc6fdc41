import path from 'node:path';
import type {AgentId, ProcessRef} from '../../domain/types.js';
import {claudeAdapter, liveRecordOf} from '../claude.js';
import type {AdapterContext} from '../types.js';
import type {AgentRecord} from './types.js';

/**
 * The agent's own live record of its state, for the agent process in a pane's tree (root
 * first). Only claude keeps one (`sessions/<pid>.json`, read through the claude adapter's
 * parser); for every other agent there is none. Read-only; one small file per claude pane.
 */
export function readAgentRecord(agent: AgentId, ctx: AdapterContext, tree: readonly ProcessRef[]): AgentRecord | undefined {
	if (agent !== 'claude') return undefined;
	for (const proc of tree) {
		if (!claudeAdapter.matchesProcess(proc)) continue;
		const record = liveRecordOf(ctx, proc);
		if (!record?.status) continue;
		return {
			file: path.join(path.basename(path.dirname(record.file)), path.basename(record.file)),
			status: record.status,
			...(record.waitingFor ? {waitingFor: record.waitingFor} : {}),
		};
	}
	return undefined;
}
