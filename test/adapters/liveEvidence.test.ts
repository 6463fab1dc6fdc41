import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {flagValue, projectUse, resolveFolder, usersOf, wordAfter, type LiveUse} from '../../src/adapters/common/liveEvidence.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {parseStat, snapshotTable} from '../../src/system/processes.js';
import {asUserOf, spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {buildClaudeFixture} from './fixtures/claude.js';
import {buildCodexFixture} from './fixtures/codex.js';
import {buildGeminiFixture} from './fixtures/gemini.js';
import {buildOpencodeFixture} from './fixtures/opencode.js';
import type {FixtureWorld} from './fixtures/types.js';

// README "In use": one rule, per agent. A process of the agent that keeps no evidence of which
// conversation it is on uses every conversation of its project folder, and only those.

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

const BUILDERS = {claude: buildClaudeFixture, codex: buildCodexFixture, opencode: buildOpencodeFixture, gemini: buildGeminiFixture};

function world(agent: keyof typeof BUILDERS): FixtureWorld {
	const w = BUILDERS[agent]();
	cleanups.push(() => w.cleanup());
	return w;
}

async function hold(p: Promise<HeldProcess>): Promise<HeldProcess> {
	const held = await p;
	cleanups.push(() => held.stop());
	return held;
}

const pids = async (agent: keyof typeof ADAPTERS, ctx: AdapterContext, id: string) =>
	(await ADAPTERS[agent].inUse(ctx, id)).map(h => h.pid).sort((a, b) => a - b);

function startTimeOf(pid: number): number {
	return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTime ?? 0;
}

describe.each(['claude', 'codex', 'opencode', 'gemini'] as const)('in use by project: %s', agent => {
	it("a TUI of the agent with no evidence uses every conversation of its folder, none of another's", {timeout: 30_000}, async () => {
		const w = world(agent);
		const [alpha, beta] = w.cwds as [string, string];
		const tui = await hold(spawnFileHolder([], agent, [], beta, asUserOf(w)));
		expect(await pids(agent, w.ctx, w.ids.foreign)).toEqual([tui.pid]);
		expect(await pids(agent, w.ctx, w.ids.target)).toEqual([]);
		// A TUI of another user's store (another HOME) in the same folder keeps its conversations elsewhere.
		const stranger = await hold(
			spawnFileHolder([], agent, [], alpha, {PATH: process.env['PATH'] ?? '/usr/bin', HOME: path.join(w.home, '..', 'someone-else')}),
		);
		expect(await pids(agent, w.ctx, w.ids.target)).not.toContain(stranger.pid);
		const inAlpha = await hold(spawnFileHolder([], agent, [], alpha, asUserOf(w)));
		for (const id of [w.ids.target, w.ids.sibling]) expect(await pids(agent, w.ctx, id)).toEqual([inAlpha.pid]);
		// Inside a refresh (one memo, one table) the answer is the same.
		const refresh: AdapterContext = {...w.ctx, refresh: createRefresh(), processes: snapshotTable(w.ctx.processes)};
		for (const id of [w.ids.foreign, w.ids.target, w.ids.sibling]) expect(await pids(agent, refresh, id)).toEqual(await pids(agent, w.ctx, id));
	});
});

describe('exact evidence narrows it to one conversation', () => {
	it('claude: the live record names the conversation (pid and start time must match); a record of a reused pid does not count', {timeout: 30_000}, async () => {
		const w = world('claude');
		const [alpha] = w.cwds as [string, string];
		const tui = await hold(spawnFileHolder([], 'claude', [], alpha, asUserOf(w)));
		const sessions = path.join(w.home, '.claude', 'sessions');
		fs.mkdirSync(sessions, {recursive: true});
		const record = path.join(sessions, `${tui.pid}.json`);
		fs.writeFileSync(
			record,
			JSON.stringify({pid: tui.pid, sessionId: w.ids.target, cwd: alpha, procStart: String(startTimeOf(tui.pid)), kind: 'interactive', status: 'idle'}),
		);
		expect(await pids('claude', w.ctx, w.ids.target)).toEqual([tui.pid]);
		expect(await pids('claude', w.ctx, w.ids.sibling)).toEqual([]);
		const uses = (await ADAPTERS.claude.liveUses?.(w.ctx)) ?? [];
		expect(uses.find(u => u.pid === tui.pid)?.claim).toEqual({kind: 'ids', ids: [w.ids.target]});
		// Another process start time: the record is stale, and the TUI falls back to its folder.
		fs.writeFileSync(record, JSON.stringify({pid: tui.pid, sessionId: w.ids.target, procStart: '1'}));
		expect(await pids('claude', w.ctx, w.ids.sibling)).toEqual([tui.pid]);
		// A legacy record name is not read.
		fs.rmSync(record);
		fs.writeFileSync(path.join(sessions, `pid-${tui.pid}.json`), JSON.stringify({pid: tui.pid, sessionId: w.ids.target}));
		expect((await ADAPTERS.claude.liveUses?.(w.ctx))?.find(u => u.pid === tui.pid)?.claim.kind).toBe('project');
	});

	it('gemini: `-r ID` is that session only; `-r latest` could be any of its project', {timeout: 30_000}, async () => {
		const w = world('gemini');
		const [alpha] = w.cwds as [string, string];
		const named = await hold(spawnFileHolder([], 'gemini', ['-r', w.ids.target], alpha, asUserOf(w)));
		expect(await pids('gemini', w.ctx, w.ids.target)).toEqual([named.pid]);
		expect(await pids('gemini', w.ctx, w.ids.sibling)).toEqual([]);
		const latest = await hold(spawnFileHolder([], 'gemini', ['-r', 'latest'], alpha, asUserOf(w)));
		expect(await pids('gemini', w.ctx, w.ids.sibling)).toEqual([latest.pid]);
	});

	it('codex: the app-server daemon is on no conversation; `resume ID` is on that one', {timeout: 30_000}, async () => {
		const w = world('codex');
		const [alpha] = w.cwds as [string, string];
		await hold(spawnFileHolder([], 'codex', ['app-server', '--listen', 'unix://'], alpha, asUserOf(w)));
		expect(await pids('codex', w.ctx, w.ids.target)).toEqual([]);
		const resumed = await hold(spawnFileHolder([], 'codex', ['resume', w.ids.sibling], alpha, asUserOf(w)));
		expect(await pids('codex', w.ctx, w.ids.sibling)).toEqual([resumed.pid]);
		expect(await pids('codex', w.ctx, w.ids.target)).toEqual([]);
	});
});

describe('the rule and its argv readers', () => {
	const use = (claim: LiveUse['claim']): LiveUse => ({pid: 7, startTime: 1, command: 'x', claim, reason: 'r'});

	it('matches ids, project folders and "any"', () => {
		expect(usersOf({}, [use({kind: 'ids', ids: ['a']})], {ids: ['b', 'a'], cwds: []})).toHaveLength(1);
		expect(usersOf({}, [use({kind: 'ids', ids: ['a']})], {ids: ['b'], cwds: ['/p']})).toHaveLength(0);
		expect(usersOf({}, [use({kind: 'project', cwd: '/p/', folder: resolveFolder('/p/')})], {ids: ['b'], cwds: ['/p']})).toHaveLength(1);
		expect(usersOf({}, [use({kind: 'project', cwd: '/q', folder: resolveFolder('/q')})], {ids: ['b'], cwds: ['/p']})).toHaveLength(0);
		expect(usersOf({}, [use({kind: 'any'})], {ids: ['b'], cwds: []})).toHaveLength(1);
	});

	it('a TUI in a linked folder holds the conversations of the folder the link names, and the reverse', () => {
		const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-link-'));
		try {
			const real = path.join(base, 'real');
			const link = path.join(base, 'link');
			fs.mkdirSync(real);
			fs.symlinkSync(real, link);
			const tui = (cwd: string) => projectUse({pid: 7, ppid: 1, startTime: 1, name: 'gemini', argv: ['gemini'], cwd}, 'gemini');
			expect(usersOf({}, [tui(link)], {ids: ['b'], cwds: [real]})).toHaveLength(1);
			expect(usersOf({}, [tui(real)], {ids: ['b'], cwds: [link]})).toHaveLength(1);
			expect(usersOf({}, [tui(path.join(base, 'other'))], {ids: ['b'], cwds: [link]})).toHaveLength(0);
		} finally {
			fs.rmSync(base, {recursive: true, force: true});
		}
	});

	it('reads flags and subcommand words', () => {
		const uuid = /^[0-9a-f-]{36}$/;
		const id = '0195d3a1-0000-7000-8000-000000000001';
		expect(flagValue(['claude', '--resume', id], ['--resume', '-r'], uuid)).toBe(id);
		expect(flagValue(['claude', `--resume=${id}`], ['--resume'], uuid)).toBe(id);
		expect(flagValue(['gemini', '-r', 'latest'], ['-r'], uuid)).toBeUndefined();
		expect(wordAfter(['codex', 'exec', 'resume', id], ['resume'], uuid)).toBe(id);
		expect(wordAfter(['codex', 'resume', '--last'], ['resume'], uuid)).toBeUndefined();
	});
});
