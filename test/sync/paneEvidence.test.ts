import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import type {Pane, ProcessRef} from '../../src/domain/types.js';
import {DiscoveryCache} from '../../src/sync/discovery.js';
import {joinSnapshot} from '../../src/sync/snapshot.js';
import {createProcessTable, parseStat} from '../../src/system/processes.js';
import {buildClaudeFixture} from '../adapters/fixtures/claude.js';
import {asUserOf, spawnFileHolder, type HeldProcess} from '../support/holders.js';

// The dashboard's drift (the live snapshot) adopts a pane from the same evidence as `drift --fix`.

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function procOf(held: HeldProcess): ProcessRef {
	const stat = parseStat(fs.readFileSync(`/proc/${held.pid}/stat`, 'utf8'));
	const argv = fs.readFileSync(`/proc/${held.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
	return {pid: held.pid, ppid: stat?.ppid ?? 1, startTime: stat?.startTime ?? 0, name: stat?.name ?? 'node', argv, cwd: fs.readlinkSync(`/proc/${held.pid}/cwd`)};
}

describe('live snapshot: pane evidence', () => {
	it("an untracked claude pane is adopted pinned to its live record's conversation, epoch at the process start", {timeout: 30_000}, async () => {
		const w = buildClaudeFixture();
		cleanups.push(() => w.cleanup());
		const [alpha] = w.cwds as [string, string];
		const tui = await spawnFileHolder([], 'claude', [], alpha, asUserOf(w));
		cleanups.push(() => tui.stop());
		const proc = procOf(tui);
		const sessions = path.join(w.home, '.claude', 'sessions');
		fs.mkdirSync(sessions, {recursive: true});
		fs.writeFileSync(path.join(sessions, `${tui.pid}.json`), JSON.stringify({pid: tui.pid, sessionId: w.ids.target, procStart: String(proc.startTime)}));
		const pane: Pane = {id: '%1', mux: 'tmux', cwd: alpha, agentStatus: 'unknown', processes: [proc], isSelf: false, server: 'tmux:/s:1:2'};
		const cache = new DiscoveryCache({ctx: {...w.ctx, processes: createProcessTable()}, once: true});
		const discovery = await cache.refresh([], {rescan: true, panes: [pane]});
		const snap = joinSnapshot({
			at: 1,
			sessions: [],
			muxKind: 'tmux',
			health: {kind: 'tmux', ok: true, message: 'ok'},
			panes: [pane],
			discovery,
			processes: [proc],
			cwdExists: () => true,
		});
		const fix = snap.findings.find(f => f.kind === 'untracked-pane')?.fix;
		expect(fix).toMatchObject({type: 'adopt-pane', paneId: '%1', agentSessionId: w.ids.target, server: 'tmux:/s:1:2'});
		expect(fix && 'epoch' in fix ? fix.epoch : undefined).toBeLessThanOrEqual(Date.now());
	});
});
