import fs from 'node:fs';
import type {StandinOptions, StandinRecord} from '../../../src/demo/standin.js';
import type {SessionRecord} from '../../../src/domain/types.js';
import type {Multiplexer} from '../../../src/mux/types.js';
import {aliveWithStart, installTestStandin, readStandinRecords} from '../../support/standin.js';
import type {TestWorld} from './world.js';
import {eventually} from '../../helpers/poll.js';

export interface StartedAgent {
	readonly paneId: string;
	readonly record: StandinRecord;
	readonly session: SessionRecord;
	readonly recordFile: string;
}

let counter = 0;

/** Field 22 of /proc/<pid>/stat. */
export function startTimeOf(pid: number): number {
	const stat = readStat(pid);
	if (stat === undefined) throw new Error(`pid ${pid} is gone`);
	return stat;
}

function readStat(pid: number): number | undefined {
	try {
		const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
	} catch {
		return undefined;
	}
}

/**
 * Start a stand-in `claude` (with `options`) in a new pane and register it as a running session.
 * Resolves once the stand-in recorded itself (its pid and children are known).
 */
export async function startAgentInPane(world: TestWorld, mux: Multiplexer, options: Partial<StandinOptions> = {}, name?: string): Promise<StartedAgent> {
	counter += 1;
	const install = installTestStandin(`${world.dir}/agent-bin-${counter}`, 'claude', options);
	const paneId = await mux.openPane({argv: [install.file], cwd: world.project});
	const record = await eventually(`stand-in in pane ${paneId} to start`, () => readStandinRecords(install.recordFile)[0]);
	// The prompt is printed after the record; wait for it so typed input is not lost.
	await eventually('the stand-in prompt', async () => (await mux.readOutput(paneId, 20)).includes('to quit'));
	const session = world.registry.insert({
		name: name ?? `agent-${counter}`,
		agent: 'claude',
		cwd: world.project,
		mux: 'tmux',
		paneId,
		status: 'running',
		epoch: Date.now(),
	});
	return {paneId, record, session, recordFile: install.recordFile};
}

/** Every pid the stand-in reported (itself and its children), with start times, taken while alive. */
export function agentPids(agent: StartedAgent): Array<{pid: number; startTime: number}> {
	return [agent.record.pid, ...agent.record.childPids].flatMap(pid => {
		const startTime = readStat(pid);
		return startTime === undefined ? [] : [{pid, startTime}];
	});
}

/** SIGKILL whatever of `refs` is still alive (test cleanup; identity-checked). */
export function killLeftovers(refs: ReadonlyArray<{pid: number; startTime: number}>): void {
	for (const ref of refs) {
		if (aliveWithStart(ref.pid, ref.startTime)) {
			try {
				process.kill(ref.pid, 'SIGKILL');
			} catch {
				// gone meanwhile
			}
		}
	}
}
