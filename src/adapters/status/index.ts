import type {AgentId, AgentStatus, StatusDetection} from '../../domain/types.js';
import {claudeStatus} from './claude.js';
import {codexStatus} from './codex.js';
import {geminiStatus} from './gemini.js';
import {grokStatus} from './grok.js';
import {hermesStatus} from './hermes.js';
import {opencodeStatus} from './opencode.js';
import {detection, type StatusDetector, type StatusEvidence} from './types.js';
import {unverifiedStatus} from './unverified.js';

export type {AgentRecord, StatusEvidence} from './types.js';

/** One status detector per agent; adding an agent is a compile error here until it has one. */
export const STATUS_DETECTORS = {
	claude: claudeStatus,
	codex: codexStatus,
	opencode: opencodeStatus,
	gemini: geminiStatus,
	agy: unverifiedStatus,
	hermes: hermesStatus,
	grok: grokStatus,
} as const satisfies Record<AgentId, StatusDetector>;

/** What herdr said about the pane, when the pane is herdr's. */
export interface MuxSaid {
	readonly status: AgentStatus;
}

function herdrWord(status: AgentStatus): StatusDetection['status'] {
	// herdr's `done` is a finished turn the user has not looked at: the agent is idle.
	return status === 'done' ? 'idle' : status;
}

/**
 * The agent's status from its evidence, most trusted first: its own live record, its own state
 * reports (OSC 7501), the terminal title, the visible screen. On herdr (`mux` given) herdr's
 * status stands unless the agent's own record says otherwise (then the detection keeps what
 * herdr said in `overrides`); herdr's own screen reading replaces title and screen there.
 * Pure: same evidence, same answer.
 */
export function detectStatus(agent: AgentId, evidence: StatusEvidence, mux?: MuxSaid): StatusDetection {
	const detector: StatusDetector = STATUS_DETECTORS[agent];
	const unverified = detector.unverified;
	const record = evidence.record && detector.fromRecord?.(evidence.record);
	if (mux) {
		const herdr = herdrWord(mux.status);
		const said = `herdr agent_status ${JSON.stringify(mux.status)}`;
		if (record && record.status !== herdr) {
			return {...detection(record, 'record', unverified), overrides: {status: mux.status, evidence: said}};
		}
		return record ? detection(record, 'record', unverified) : {status: herdr, source: 'mux', evidence: said};
	}
	if (record) return detection(record, 'record', unverified);
	const osc = evidence.osc !== undefined ? detector.fromOsc?.(evidence.osc) : undefined;
	if (osc) return detection(osc, 'osc', unverified);
	const title = evidence.title !== undefined ? detector.fromTitle?.(evidence.title) : undefined;
	if (title) return detection(title, 'title', unverified);
	const screen = evidence.screen !== undefined ? detector.fromScreen?.(evidence.screen) : undefined;
	if (screen) return detection(screen, 'screen', unverified);
	return {status: 'unknown', source: 'none', evidence: nothingTold(evidence), ...(unverified ? {unverified: true} : {})};
}

function nothingTold(evidence: StatusEvidence): string {
	const looked = [
		evidence.record ? 'record' : '',
		evidence.osc !== undefined ? 'state report' : '',
		evidence.title ? 'title' : '',
		evidence.screen !== undefined ? 'screen' : '',
	].filter(Boolean);
	return looked.length > 0 ? `no marker in ${looked.join(', ')}` : 'nothing to read yet';
}
