import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {projectSlug} from '../../src/adapters/claude.js';
import {installStandin} from '../../src/demo/installStandin.js';
import {writeSampleData, PROJECTS, type SampleData} from '../../src/demo/sampleData.js';
import {Registry} from '../../src/registry/registry.js';
import {hashWorld} from '../adapters/fixtures/hashWorld.js';
import {tempDir} from '../helpers/tmp.js';
import {alive, BUILT_STANDIN, CLI, E2eTmux, processesWithin, startTimeOf, type Screen} from './support/tmuxScreen.js';
import {eventually} from '../helpers/poll.js';

/**
 * The built `mam-tui` dashboard in a real tmux window (120×40), driven by send-keys and read by
 * capture-pane: a stop that has to escalate to SIGKILL, and a purge confirmed by typing the name,
 * both checked against the process table and the disk.
 */

let tmp: ReturnType<typeof tempDir>;
let tmux: E2eTmux;
let screen: Screen;
let sample: SampleData;
let home: string;
let registryFile: string;
let bin: string;
/** The stand-in that ignores /exit, SIGTERM and SIGHUP. */
let immortal: {pid: number; startTime: number; paneId: string};

function registry<T>(read: (r: Registry) => T): T {
	const r = Registry.open(registryFile);
	try {
		return read(r);
	} finally {
		r.close();
	}
}

describe('the built dashboard in tmux, driven by keys', {timeout: 90_000}, () => {
	beforeAll(async () => {
		tmp = tempDir('mam-e2e-');
		home = path.join(tmp.dir, 'home');
		const state = path.join(tmp.dir, 'state');
		bin = path.join(tmp.dir, 'bin');
		const work = path.join(home, 'src');
		sample = writeSampleData(home, work);
		fs.mkdirSync(path.join(home, '.config', 'mam'), {recursive: true});
		fs.writeFileSync(path.join(home, '.config', 'mam', 'config.yaml'), 'stop:\n  graceSeconds: 2\n  killWaitSeconds: 1\n');
		installStandin({binDir: bin, name: 'claude', options: {ignoreExit: true, ignoreSignals: true}, script: BUILT_STANDIN});
		const sock = path.join(tmp.dir, 'sock');
		fs.mkdirSync(sock);
		tmux = new E2eTmux({
			PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
			HOME: home,
			MAM_HOME: state,
			TMUX_TMPDIR: sock,
			LANG: 'C.UTF-8',
			NO_COLOR: '1',
		});
		await tmux.start();

		const paneId = await tmux.openWindow('immortal', ['claude', '--resume', sample.ids.claudeLive], {cwd: path.join(work, PROJECTS.claude)});
		const pid = await tmux.panePid(paneId);
		await eventually('the stand-in to start', () => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path.join(bin, 'claude')), {timeoutMs: 20_000});
		immortal = {pid, startTime: startTimeOf(pid), paneId};

		registryFile = path.join(state, 'registry.db');
		const now = Date.now();
		registry(r => {
			r.insert({
				name: 'immortal',
				agent: 'claude',
				cwd: path.join(work, PROJECTS.claude),
				mux: 'tmux',
				paneId,
				agentSessionId: sample.ids.claudeLive,
				status: 'running',
				epoch: now - 3_600_000,
			});
			r.insert({
				name: 'old-claude',
				agent: 'claude',
				cwd: path.join(work, PROJECTS.claude),
				agentSessionId: sample.ids.claudeOld,
				status: 'stopped',
				epoch: now - 30 * 3_600_000,
			});
			r.insert({
				name: 'old-codex',
				agent: 'codex',
				cwd: path.join(work, PROJECTS.codex),
				agentSessionId: sample.ids.codexOld,
				status: 'stopped',
				epoch: now - 30 * 3_600_000,
			});
			r.insert({
				name: 'old-hermes',
				agent: 'hermes',
				cwd: path.join(work, PROJECTS.hermes),
				agentSessionId: sample.ids.hermesDone,
				status: 'stopped',
				epoch: now - 30 * 3_600_000,
			});
		});

		const dash = await tmux.openWindow('dashboard', [process.execPath, CLI, '--mux', 'tmux', '--tmux-socket', tmux.name], {cwd: tmp.dir});
		screen = tmux.screen(dash);
		await screen.waitFor(s => s.includes('old-hermes') && /tmux ok/.test(s), 'the dashboard with its sessions');
	}, 90_000);

	afterAll(async () => {
		if (immortal && alive(immortal.pid, immortal.startTime)) process.kill(immortal.pid, 'SIGKILL');
		await tmux?.kill();
		tmp?.dispose();
	});

	it('s on a stand-in that ignores /exit, SIGTERM and SIGHUP escalates to SIGKILL: shown live, and the process is really gone', async () => {
		await screen.selectSession('immortal');
		await screen.press('s');
		const asked = await screen.waitFor('Stop immortal?', 'the stop confirmation');
		expect(asked).toContain('wait up to 2s');
		expect(processesWithin(path.join(bin, 'claude')).length).toBe(1);
		await screen.press('y');
		await screen.waitFor(/stop immortal .*1 exit input/, 'step 1 shown live');
		const done = await screen.waitFor('stop immortal: ended by sigkill', 'the stop to end by SIGKILL', {timeoutMs: 40_000});
		expect(done).toMatch(/✓ stop immortal: ended by sigkill \(✗1 ✗2 ✓3\)/);

		expect(alive(immortal.pid, immortal.startTime)).toBe(false);
		expect(processesWithin(path.join(bin, 'claude'))).toEqual([]);
		const panes = await tmux.runOk(['list-panes', '-a', '-F', '#{pane_id}']);
		expect(panes.split('\n')).not.toContain(immortal.paneId);
		registry(r => {
			expect(r.get('immortal')?.status).toBe('stopped');
			const stop = r.auditLog('immortal').find(a => a.action === 'stop' && a.step === null);
			expect(stop?.detail).toMatchObject({endedBy: 'sigkill', survivors: []});
		});
	});

	it('p shows the plan; a wrong name cancels; the right name deletes exactly that conversation and its sub-agents', async () => {
		const target = sample.conversations.find(c => c.id === sample.ids.claudeOld);
		expect(target?.children?.length).toBe(2);
		const excluded = [sample.ids.claudeOld, ...(target?.children ?? [])];
		const othersBefore = hashWorld(home, excluded);
		const transcript = path.join(home, '.claude', 'projects', projectSlug(target?.cwd ?? ''), `${sample.ids.claudeOld}.jsonl`);
		const sessionDir = transcript.replace(/\.jsonl$/, '');
		expect(fs.existsSync(transcript) && fs.existsSync(sessionDir)).toBe(true);

		await screen.selectSession('old-claude');
		await screen.press('p');
		const plan = await screen.waitFor('Type old-claude and press enter', 'the purge plan');
		expect(plan).toContain('2 child session(s)');
		// the description with its size, the whole path on the line under it
		expect(plan).toMatch(/transcript: [\d.]+ KiB\s*║\n║\s+~\/\.claude\/projects\//);
		await screen.type('old-claud');
		await screen.press('Enter');
		await screen.waitFor('purge cancelled', 'a wrong name to cancel');
		expect(fs.existsSync(transcript)).toBe(true);

		await screen.press('p');
		await screen.waitFor('Type old-claude and press enter', 'the purge plan again');
		await screen.type('old-claude');
		await screen.press('Enter');
		await screen.waitFor('purged old-claude', 'the purge to finish');

		expect(fs.existsSync(transcript)).toBe(false);
		expect(fs.existsSync(sessionDir)).toBe(false);
		expect(fs.readFileSync(path.join(home, '.claude', 'history.jsonl'), 'utf8')).not.toContain(sample.ids.claudeOld);
		expect(hashWorld(home, excluded)).toEqual(othersBefore);
		registry(r => {
			expect(r.get('old-claude')?.status).toBe('purged');
			expect(r.get('old-codex')?.status).toBe('stopped');
		});
	});

	it('q quits (exit 0) and leaves the panes alone', async () => {
		const panesBefore = (await tmux.runOk(['list-panes', '-a', '-F', '#{pane_id} #{pane_dead}'])).trim();
		await screen.press('q');
		expect(await tmux.waitExit(screen.paneId)).toBe(0);
		const panesAfter = (await tmux.runOk(['list-panes', '-a', '-F', '#{pane_id} #{pane_dead}'])).trim();
		expect(panesAfter).toBe(panesBefore.replace(`${screen.paneId} 0`, `${screen.paneId} 1`));
	});
});
