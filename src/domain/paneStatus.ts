import type {LiveStatus, Pane} from './types.js';

/** The status a pane's agent shows: the detectors' reading, unless it only repeats the mux's (herdr's `done` stays `done`). */
export function paneStatus(pane: Pick<Pane, 'agentStatus' | 'detection'>): LiveStatus {
	return pane.detection && pane.detection.source !== 'mux' ? pane.detection.status : pane.agentStatus;
}
