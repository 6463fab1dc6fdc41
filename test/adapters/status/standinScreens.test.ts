import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../../src/adapters/index.js';
import {detectStatus} from '../../../src/adapters/status/index.js';
import {statusRows, type StandinState} from '../../../src/demo/standin.js';
import {AGENT_IDS} from '../../../src/domain/types.js';
import {createTmuxMux} from '../../../src/mux/tmux.js';
import {createStatusProbe} from '../../../src/sync/liveStatus.js';
import {paneAgent} from '../../../src/domain/paneAgent.js';
import {createProcessTable} from '../../../src/system/processes.js';
import {realExec} from '../../../src/system/exec.js';
import {isolatedEnv, privateTmux} from '../../helpers/tmux.js';
import {disposeStandinScript, installTestStandin} from '../../support/standin.js';
import {eventually} from '../../helpers/poll.js';

afterAll(() => disposeStandinScript());

const STATES: readonly StandinState[] = ['idle', 'working', 'blocked'];
const screenOf = (agent: string, state: StandinState) => `stand-in (pid 1)\n${statusRows(agent, state).join('\n')}\n\n\n`;

describe('the demo stand-ins draw screens the detectors classify', () => {
	for (const agent of ['claude', 'codex', 'opencode', 'gemini', 'grok', 'hermes'] as const) {
		it(`${agent}: idle, working and blocked`, () => {
			for (const state of STATES) expect(detectStatus(agent, {screen: screenOf(agent, state)}).status).toBe(state);
		});
	}
	it('agy: working and blocked; idle stays unknown (its detector never guesses idle)', () => {
		for (const agent of AGENT_IDS.filter(a => a === 'agy')) {
			expect(detectStatus(agent, {screen: screenOf(agent, 'working')}).status).toBe('working');
			expect(detectStatus(agent, {screen: screenOf(agent, 'blocked')}).status).toBe('blocked');
			expect(detectStatus(agent, {screen: screenOf(agent, 'idle')}).status).toBe('unknown');
		}
	});

	it('live in tmux: a codex stand-in reports its state as OSC 7501; a typed "ask" line ends blocked', {timeout: 60_000}, async () => {
		const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-standin-status-')));
		const tmux = privateTmux();
		const mux = createTmuxMux({
			server: {socketName: tmux.name},
			exec: realExec,
			processes: createProcessTable(),
			env: isolatedEnv(),
			pollMs: 200,
			control: true,
		});
		try {
			const install = installTestStandin(path.join(dir, 'bin'), 'codex', {statusScreen: true, workMs: 300});
			await tmux.run(['new-session', '-d', '-s', 'keep', '--', 'sleep', '600']);
			const ctx = {home: dir, ownHome: false, env: {}, exec: realExec, processes: createProcessTable(), now: Date.now, tmpDir: dir};
			const probe = createStatusProbe({ctx, mux, agentOf: pane => paneAgent(pane, ADAPTERS)});
			const id = await mux.openPane({argv: [install.file], cwd: dir, env: {PATH: `${path.join(dir, 'bin')}:${process.env['PATH'] ?? ''}`}});
			const statusOf = async () => (await probe.detect(await mux.listPanes()))?.find(p => p.id === id)?.detection;
			await eventually('idle', async () => ((await statusOf())?.status === 'idle' ? true : undefined), {retryErrors: true});
			await mux.sendText(id, 'please ask first');
			await mux.sendKeys(id, ['Enter']);
			const blocked = await eventually(
				'blocked',
				async () => {
					const found = await statusOf();
					return found?.status === 'blocked' ? found : undefined;
				},
				{retryErrors: true},
			);
			expect(blocked.source).toBe('osc');
		} finally {
			await mux.dispose();
			await tmux.kill();
			fs.rmSync(dir, {recursive: true, force: true});
		}
	});
});
