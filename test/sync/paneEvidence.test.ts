import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import {afterEach, describe, expect, it} from 'vitest';
import type {Pane, ProcessRef} from '../../src/domain/types.js';
import {DiscoveryCache} from '../../src/sync/discovery.js';
import {joinSnapshot} from '../../src/sync/snapshot.js';
import {createProcessTable, parseStat} from '../../src/system/processes.js';
import {buildClaudeFixture} from '../adapters/fixtures/claude.js';
import {projectSlug} from '../../src/adapters/claude.js';
import {claudeTranscript} from '../../src/demo/samples/claude.js';
import {asUserOf, spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {row} from './support.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {DiscoverQuery} from '../../src/adapters/types.js';

// The dashboard's drift (the live snapshot) adopts a pane from the same evidence as `drift --fix`.

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function procOf(held: HeldProcess): ProcessRef {
	const stat = parseStat(fs.readFileSync(`/proc/${held.pid}/stat`, 'utf8'));
	const argv = fs.readFileSync(`/proc/${held.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
	return {
		pid: held.pid,
		ppid: stat?.ppid ?? 1,
		startTime: stat?.startTime ?? 0,
		name: stat?.name ?? 'node',
		argv,
		cwd: fs.readlinkSync(`/proc/${held.pid}/cwd`),
	};
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

	it("a pane's evidence is read again when its agent writes in its folder, and kept while nothing changes", {timeout: 30_000}, async () => {
		const w = buildClaudeFixture();
		cleanups.push(() => w.cleanup());
		const [alpha] = w.cwds as [string, string];
		const tui = await spawnFileHolder([], 'claude', [], alpha, asUserOf(w));
		cleanups.push(() => tui.stop());
		const pane: Pane = {id: '%1', mux: 'tmux', cwd: alpha, agentStatus: 'unknown', processes: [procOf(tui)], isSelf: false};
		let changes = 0;
		const cache = new DiscoveryCache({ctx: {...w.ctx, processes: createProcessTable()}, onChange: () => (changes += 1)});
		cleanups.push(() => cache.close());
		const rows = [row({name: 'old', cwd: alpha, status: 'stopped', mux: 'tmux'})];
		const first = await cache.refresh(rows, {rescan: true, panes: [pane]});
		expect(first.paneEvidence?.get('%1')?.recent).toEqual([]);
		const again = await cache.refresh(rows, {rescan: true, panes: [pane]});
		expect(again.paneEvidence).toBe(first.paneEvidence);
		// The TUI starts a conversation: its transcript appears in the folder's project directory.
		const id = crypto.randomUUID();
		fs.writeFileSync(path.join(w.home, '.claude', 'projects', projectSlug(alpha), `${id}.jsonl`), claudeTranscript(id, alpha, Date.now() + 1000, 'new work'));
		const deadline = Date.now() + 10_000;
		while (changes === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
		const after = await cache.refresh(rows, {rescan: true, panes: [pane]});
		expect(after.paneEvidence?.get('%1')?.recent).toEqual([id]);
	});
	it(
		"a pane in a registered cwd takes its folder's conversations from the cache's own read of it (one discovery), and finds what it finds alone",
		{timeout: 30_000},
		async () => {
			const w = buildClaudeFixture();
			cleanups.push(() => w.cleanup());
			const [alpha] = w.cwds as [string, string];
			const tui = await spawnFileHolder([], 'claude', [], alpha, asUserOf(w));
			cleanups.push(() => tui.stop());
			const id = crypto.randomUUID();
			fs.writeFileSync(path.join(w.home, '.claude', 'projects', projectSlug(alpha), `${id}.jsonl`), claudeTranscript(id, alpha, Date.now() + 1000, 'new work'));
			const pane: Pane = {id: '%1', mux: 'tmux', cwd: alpha, agentStatus: 'unknown', processes: [procOf(tui)], isSelf: false};
			const asked: string[] = [];
			const claude = {
				...ADAPTERS.claude,
				discover: (ctx: Parameters<typeof ADAPTERS.claude.discover>[0], query?: DiscoverQuery) => {
					asked.push(query?.cwd ?? '');
					return ADAPTERS.claude.discover(ctx, query);
				},
			};
			const adapters = {...ADAPTERS, claude};
			const ctx = {...w.ctx, processes: createProcessTable()};
			const rows = [row({name: 'old', cwd: alpha, status: 'stopped', mux: 'tmux'})];
			const shared = await new DiscoveryCache({ctx, adapters, once: true}).refresh(rows, {rescan: true, panes: [pane]});
			expect(asked.filter(cwd => cwd === alpha)).toHaveLength(1);
			const alone = await new DiscoveryCache({ctx, adapters, once: true}).refresh([], {rescan: true, panes: [pane]});
			expect(shared.paneEvidence?.get('%1')?.recent).toEqual([id]);
			expect(shared.paneEvidence).toEqual(alone.paneEvidence);
		},
	);
});
