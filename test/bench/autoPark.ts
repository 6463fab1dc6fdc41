import {newMemory, sampleCandidates} from '../../src/ui/autoPark.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import type {SessionRecord} from '../../src/domain/types.js';
import {session} from '../components/fixtures.js';
import type {AppState, SessionLive} from '../../src/store/state.js';

/**
 * Auto-park's bookkeeping: once a minute it samples the dashboard's rows (no I/O). Measured as
 * the CPU time of one sample over `sessions` running rows, every one a candidate (the worst
 * case: all idle, all listed), as a share of the minute between samples.
 */
export function measureAutoPark(sessions: number, samples = 2000): {perSampleMs: number; percent: number} {
	const rows: SessionRecord[] = Array.from({length: sessions}, (_, i) => session({name: `s${i}`, cwd: '/p'}));
	const live: Record<string, SessionLive> = Object.fromEntries(rows.map(r => [r.name, {liveStatus: 'idle'} as SessionLive]));
	const state: Pick<AppState, 'sessions' | 'live'> = {sessions: rows, live};
	const config = {...DEFAULT_CONFIG.park, agents: ['claude' as const]};
	const memory = newMemory();
	const start = process.cpuUsage();
	for (let i = 0; i < samples; i++) sampleCandidates(state, config, memory, i * 60_000);
	const used = process.cpuUsage(start);
	const perSampleMs = (used.user + used.system) / 1000 / samples;
	return {perSampleMs, percent: (perSampleMs / 60_000) * 100};
}
