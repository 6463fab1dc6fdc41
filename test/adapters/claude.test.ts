import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {claudeAdapter, projectSlug} from '../../src/adapters/claude.js';
import {subAgentsIn} from '../../src/adapters/claude/transcripts.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import {snapshotTable} from '../../src/system/processes.js';
import {removeLines} from '../../src/adapters/common/lines.js';
import {createProcessTable} from '../../src/system/processes.js';
import {spawnArgvHolder, type HeldProcess} from '../support/holders.js';
import {buildClaudeFixture, claudeTranscript} from './fixtures/claude.js';
import {claudeSubagentTranscript} from '../../src/demo/samples/claude.js';
import type {FixtureWorld} from './fixtures/types.js';
import {fixtureContext, makeTempLayout, writeFile, type TempLayout} from './fixtures/world.js';
import {purgeNow} from '../helpers/purge.js';

const SAMPLES = '/work/shared/agents/samples/claude';

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function world(): FixtureWorld {
	const w = buildClaudeFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

function layout(): TempLayout {
	const l = makeTempLayout('claude-x');
	cleanups.push(() => l.cleanup());
	return l;
}

async function holder(args: readonly string[]): Promise<HeldProcess> {
	const h = await spawnArgvHolder(args);
	cleanups.push(() => h.stop());
	return h;
}

describe('claude sub-agents inside a refresh (names listed once, links never followed)', () => {
	it('inUse counts nested and legacy sub-agents, and none reached through a link, as it does alone', async () => {
		const l = layout();
		const [alpha = ''] = l.cwds;
		const dir = path.join(l.home, '.claude', 'projects', projectSlug(alpha));
		const id = 'a1b2c3d4-0000-4000-8000-000000000001';
		const other = 'a1b2c3d4-0000-4000-8000-000000000002';
		const at = Date.now() - 60_000;
		writeFile(path.join(dir, `${id}.jsonl`), claudeTranscript(id, alpha, at, 'hello'));
		writeFile(path.join(dir, id, 'subagents', 'agent-a1.jsonl'), claudeSubagentTranscript(id, 'a1', alpha, at + 10));
		writeFile(path.join(dir, 'agent-b2.jsonl'), claudeSubagentTranscript(id, 'b2', alpha, at + 20));
		// A legacy sidechain name that is a link to a transcript elsewhere: not this folder's.
		writeFile(path.join(l.base, 'elsewhere', 'agent-c3.jsonl'), claudeSubagentTranscript(id, 'c3', alpha, at + 30));
		fs.symlinkSync(path.join(l.base, 'elsewhere', 'agent-c3.jsonl'), path.join(dir, 'agent-c3.jsonl'));
		// A conversation whose folder is a link to a folder of sub-agents elsewhere.
		writeFile(path.join(dir, `${other}.jsonl`), claudeTranscript(other, alpha, at, 'other'));
		writeFile(path.join(l.base, 'linked', 'subagents', 'agent-d4.jsonl'), claudeSubagentTranscript(other, 'd4', alpha, at + 40));
		fs.symlinkSync(path.join(l.base, 'linked'), path.join(dir, other));
		const held = await Promise.all(['agent-a1', 'agent-b2', 'agent-c3', 'agent-d4'].map(name => holder([name])));
		const [a1, b2, c3, d4] = held.map(h => h.pid);
		const pids = async (ctx: Parameters<typeof claudeAdapter.inUse>[0], of: string) => (await claudeAdapter.inUse(ctx, of)).map(h => h.pid);
		const alone = fixtureContext(l);
		const refresh = {...fixtureContext(l), refresh: createRefresh(), processes: snapshotTable(alone.processes)};
		for (const ctx of [alone, refresh]) {
			const own = await pids(ctx, id);
			expect(own).toEqual(expect.arrayContaining([a1, b2]));
			expect(own).not.toContain(c3);
			expect(await pids(ctx, other)).not.toContain(d4);
		}
	});
});

describe('claude sub-agent counts (discover)', () => {
	it('count what artifacts finds: a real folder of sub-agents, not one reached through a link', async () => {
		const l = layout();
		const [alpha = ''] = l.cwds;
		const dir = path.join(l.home, '.claude', 'projects', projectSlug(alpha));
		const at = Date.now() - 60_000;
		const [real, linked] = ['c1b2c3d4-0000-4000-8000-000000000001', 'c1b2c3d4-0000-4000-8000-000000000002'];
		writeFile(path.join(dir, `${real}.jsonl`), claudeTranscript(real, alpha, at, 'real'));
		writeFile(path.join(dir, real, 'subagents', 'agent-e1.jsonl'), claudeSubagentTranscript(real, 'e1', alpha, at + 10));
		// `<linked>/subagents` is a link to a folder of sub-agent transcripts kept elsewhere.
		writeFile(path.join(dir, `${linked}.jsonl`), claudeTranscript(linked, alpha, at + 20, 'linked'));
		writeFile(path.join(l.base, 'elsewhere', 'subagents', 'agent-f2.jsonl'), claudeSubagentTranscript(linked, 'f2', alpha, at + 30));
		fs.mkdirSync(path.join(dir, linked));
		fs.symlinkSync(path.join(l.base, 'elsewhere', 'subagents'), path.join(dir, linked, 'subagents'));
		const ctx = fixtureContext(l);
		const {conversations} = await claudeAdapter.discover(ctx, {cwd: alpha});
		const count = (id: string) => conversations.find(c => c.id === id)?.childCount;
		expect([count(real), count(linked)]).toEqual([1, 0]);
		expect((await claudeAdapter.artifacts(ctx, linked)).descendants).toEqual([]);
	});
});

describe('claude verify inside a refresh (transcripts found by the folders names)', () => {
	it('answers as it does alone: copies in two folders, a moved one, a linked one, a folder named like one', async () => {
		const l = layout();
		const [alpha = '', beta = ''] = l.cwds;
		const projects = path.join(l.home, '.claude', 'projects');
		const dirA = path.join(projects, projectSlug(alpha));
		const dirB = path.join(projects, projectSlug(beta));
		const at = Date.now() - 60_000;
		const copied = 'b1b2c3d4-0000-4000-8000-000000000001';
		const moved = 'b1b2c3d4-0000-4000-8000-000000000002';
		const linked = 'b1b2c3d4-0000-4000-8000-000000000003';
		const folder = 'b1b2c3d4-0000-4000-8000-000000000004';
		// The same conversation in both folders; only beta's copy records beta as its cwd.
		writeFile(path.join(dirA, `${copied}.jsonl`), claudeTranscript(copied, alpha, at, 'first'));
		writeFile(path.join(dirB, `${copied}.jsonl`), claudeTranscript(copied, beta, at, 'second'));
		writeFile(path.join(dirB, `${moved}.jsonl`), claudeTranscript(moved, beta, at, 'moved'));
		// A transcript name that is a link to a real transcript elsewhere: never read through.
		writeFile(path.join(l.base, 'elsewhere', `${linked}.jsonl`), claudeTranscript(linked, alpha, at, 'linked'));
		fs.symlinkSync(path.join(l.base, 'elsewhere', `${linked}.jsonl`), path.join(dirA, `${linked}.jsonl`));
		fs.mkdirSync(path.join(dirA, `${folder}.jsonl`), {recursive: true});
		const asked: [string, string][] = [
			[copied, alpha],
			[copied, beta],
			[moved, alpha],
			[moved, beta],
			[linked, alpha],
			[folder, alpha],
		];
		const alone = fixtureContext(l);
		const answers = async (ctx: Parameters<typeof claudeAdapter.verify>[0]) => Promise.all(asked.map(([id, cwd]) => claudeAdapter.verify(ctx, id, cwd)));
		const expected = await answers(alone);
		expect(expected.map(a => a.kind)).toEqual(['yes', 'yes', 'no', 'yes', 'no', 'no']);
		expect(expected[4]).toEqual({kind: 'no', reason: 'no transcript on disk'});
		const refresh = {...fixtureContext(l), refresh: createRefresh(), processes: snapshotTable(alone.processes)};
		expect(await answers(refresh)).toEqual(expected);
	});
});

describe('claude sub-agents inside a refresh (found through the listings that name the id)', () => {
	it('are the ones found alone: nested in two folders, legacy sidechains, a file named like the id, another id', async () => {
		const l = layout();
		const [alpha = '', beta = ''] = l.cwds;
		const projects = path.join(l.home, '.claude', 'projects');
		const dirA = path.join(projects, projectSlug(alpha));
		const dirB = path.join(projects, projectSlug(beta));
		const at = Date.now() - 60_000;
		const parent = 'c1b2c3d4-0000-4000-8000-000000000001';
		const other = 'c1b2c3d4-0000-4000-8000-000000000002';
		const lone = 'c1b2c3d4-0000-4000-8000-000000000003';
		writeFile(path.join(dirA, `${parent}.jsonl`), claudeTranscript(parent, alpha, at, 'parent'));
		writeFile(path.join(dirA, parent, 'subagents', 'agent-a1.jsonl'), claudeSubagentTranscript(parent, 'a1', alpha, at));
		writeFile(path.join(dirB, parent, 'subagents', 'agent-b1.jsonl'), claudeSubagentTranscript(parent, 'b1', beta, at));
		// Legacy sidechains beside the transcripts, in a folder that has no folder named after the parent.
		writeFile(path.join(dirB, 'agent-b2.jsonl'), claudeSubagentTranscript(parent, 'b2', beta, at));
		writeFile(path.join(dirB, 'agent-b3.jsonl'), claudeSubagentTranscript(other, 'b3', beta, at));
		// A file named like an id is no sub-agent folder.
		writeFile(path.join(dirA, lone), 'not a folder');
		const root = path.join(l.home, '.claude');
		const alone = fixtureContext(l);
		const inRefresh = {...fixtureContext(l), refresh: createRefresh(), processes: snapshotTable(alone.processes)};
		const ids = [parent, other, lone, 'c1b2c3d4-0000-4000-8000-000000000009'];
		const expected = ids.map(id => subAgentsIn(alone, root, id));
		expect(expected.map(found => found.map(a => a.id).sort())).toEqual([['agent-a1', 'agent-b1', 'agent-b2'], ['agent-b3'], [], []]);
		expect(ids.map(id => subAgentsIn(inRefresh, root, id))).toEqual(expected);
	});
});

describe('claude project folders', () => {
	it('replace every non-alphanumeric UTF-16 unit with a dash', () => {
		expect(projectSlug('/Users/test/.hidden/file.txt')).toBe('-Users-test--hidden-file-txt');
		expect(projectSlug('/a/b_c d!é')).toBe('-a-b-c-d--');
		expect(projectSlug('/x/😀')).toBe('-x---');
	});

	it('long cwds are matched by the 200-character prefix and confirmed by the cwd inside the transcript', async () => {
		const l = layout();
		const stem = path.join(l.base, 'p', 'x'.repeat(120), 'y'.repeat(100));
		const mine = path.join(stem, 'mine');
		const other = path.join(stem, 'other');
		fs.mkdirSync(mine, {recursive: true});
		fs.mkdirSync(other, {recursive: true});
		const prefix = projectSlug(mine).slice(0, 200);
		expect(projectSlug(other).slice(0, 200)).toBe(prefix);
		const ids = [crypto.randomUUID(), crypto.randomUUID()];
		writeFile(path.join(l.home, '.claude', 'projects', `${prefix}-1abc2`, `${ids[0]}.jsonl`), claudeTranscript(ids[0] ?? '', mine, Date.now() - 1000, 'mine'));
		writeFile(path.join(l.home, '.claude', 'projects', `${prefix}-zz9`, `${ids[1]}.jsonl`), claudeTranscript(ids[1] ?? '', other, Date.now(), 'other'));
		const {conversations} = await claudeAdapter.discover(fixtureContext(l), {cwd: mine});
		expect(conversations.map(c => c.id)).toEqual([ids[0]]);
		expect(await claudeAdapter.verify(fixtureContext(l), ids[1] ?? '', mine)).toMatchObject({kind: 'no'});
	});

	it('CLAUDE_CONFIG_DIR applies only to the caller’s own home', async () => {
		const l = layout();
		const alt = path.join(l.base, 'alt-claude');
		const id = crypto.randomUUID();
		writeFile(path.join(alt, 'projects', projectSlug(l.cwds[0]), `${id}.jsonl`), claudeTranscript(id, l.cwds[0], Date.now(), 'relocated'));
		const env = {CLAUDE_CONFIG_DIR: alt};
		const own = await claudeAdapter.discover(fixtureContext(l, {ownHome: true, env}));
		expect(own.conversations.map(c => c.id)).toEqual([id]);
		const other = await claudeAdapter.discover(fixtureContext(l, {ownHome: false, env}));
		expect(other.conversations).toEqual([]);
	});
});

describe('claude against the real samples (Claude Code 2.1.197)', () => {
	it('finds the three conversations, the sub-agent, titles and the recorded cwds', async () => {
		const l = layout();
		fs.cpSync(SAMPLES, l.home, {recursive: true});
		const ctx = fixtureContext(l);
		const {conversations, problems} = await claudeAdapter.discover(ctx);
		expect(problems).toEqual([]);
		expect(conversations.map(c => c.id)).toEqual([
			'584e9fa8-4ea2-43bf-990a-069c804028fc',
			'ceb44537-64b3-472e-8ef8-3a4ee3715fad',
			'69e68769-2dbb-4664-996b-bc39e1d62900',
		]);
		const parent = conversations[0];
		expect(parent?.cwd).toBe('/tmp/mam-samples/run/projects/alpha');
		expect(parent?.childCount).toBe(1);
		expect(parent?.title).toBe('please SPAWN_SUBAGENT now');
		expect(parent?.createdAt).toBe(Date.parse('2026-11-30T06:21:26.388Z'));
		const plan = await claudeAdapter.artifacts(ctx, '584e9fa8-4ea2-43bf-990a-069c804028fc');
		expect(plan.descendants).toEqual(['agent-a3848f31c29598c39']);
		const cwdGone = !fs.existsSync('/tmp/mam-samples/run/projects/alpha');
		if (cwdGone) expect(parent?.resumeState).toEqual({kind: 'no', reason: 'cwd /tmp/mam-samples/run/projects/alpha no longer exists'});
	});
});

describe('claude in-use signals', {timeout: 30_000}, () => {
	it('a live-session record counts only while its pid runs with the recorded start time', async () => {
		const w = world();
		const proc = await holder(['unrelated']);
		const ref = await createProcessTable().get(proc.pid);
		const record = path.join(w.roots[0] ?? '', 'sessions', `${proc.pid}.json`);
		writeFile(record, JSON.stringify({pid: proc.pid, sessionId: w.ids.target, cwd: w.cwds[0], procStart: String(ref?.startTime), kind: 'interactive'}));
		const holders = await claudeAdapter.inUse(w.ctx, w.ids.target);
		expect(holders).toEqual([expect.objectContaining({pid: proc.pid, reason: `live session record ${record}`})]);
		// Same pid, another start time: the pid was reused, the record is stale.
		writeFile(record, JSON.stringify({pid: proc.pid, sessionId: w.ids.target, procStart: String((ref?.startTime ?? 0) + 1)}));
		expect(await claudeAdapter.inUse(w.ctx, w.ids.target)).toEqual([]);
		const plan = await claudeAdapter.artifacts(w.ctx, w.ids.target);
		expect(
			plan.items
				.filter(i => i.description === 'stale live-session record')
				.map(i => path.basename(i.path))
				.sort(),
		).toEqual([`${process.pid}.json`, `${proc.pid}.json`].sort());
	});

	it('a live record is never planned for deletion', async () => {
		const w = world();
		const proc = await holder(['unrelated']);
		const ref = await createProcessTable().get(proc.pid);
		const record = path.join(w.roots[0] ?? '', 'sessions', `${proc.pid}.json`);
		writeFile(record, JSON.stringify({pid: proc.pid, sessionId: w.ids.target, procStart: ref?.startTime}));
		const plan = await claudeAdapter.artifacts(w.ctx, w.ids.target);
		expect(plan.items.map(i => i.path)).not.toContain(record);
	});
});

describe('claude purge details', () => {
	it('rewrites history.jsonl through a temp file and rename, every other line byte-identical', async () => {
		const w = world();
		const history = path.join(w.roots[0] ?? '', 'history.jsonl');
		// A last line without newline and an odd spacing must survive exactly.
		fs.appendFileSync(history, `{"display":"x",  "sessionId":"${w.ids.sibling}"}`);
		const before = fs.readFileSync(history, 'utf8').split(/(?<=\n)/);
		const inode = fs.statSync(history).ino;
		await purgeNow(claudeAdapter, w.ctx, w.ids.target);
		const after = fs.readFileSync(history, 'utf8');
		expect(after).toBe(before.filter(line => !line.includes(w.ids.target)).join(''));
		expect(fs.statSync(history).ino).not.toBe(inode);
		expect(fs.readdirSync(path.dirname(history)).filter(n => n.includes('.mam-'))).toEqual([]);
	});

	it('keeps pasted content another session still references, removes what only it referenced', async () => {
		const w = world();
		const pasteDir = path.join(w.roots[0] ?? '', 'paste-cache');
		const before = fs.readdirSync(pasteDir).sort();
		const plan = await claudeAdapter.artifacts(w.ctx, w.ids.target);
		const planned = plan.items.filter(i => i.description === 'pasted content').map(i => path.basename(i.path));
		expect(planned).toHaveLength(1);
		await purgeNow(claudeAdapter, w.ctx, w.ids.target);
		expect(fs.readdirSync(pasteDir).sort()).toEqual(before.filter(n => !planned.includes(n)));
	});

	it('never touches project memory, settings or another session’s per-session folders', async () => {
		const w = world();
		const root = w.roots[0] ?? '';
		await purgeNow(claudeAdapter, w.ctx, w.ids.target);
		expect(fs.existsSync(path.join(root, 'projects', projectSlug(w.cwds[0]), 'memory', 'MEMORY.md'))).toBe(true);
		for (const folder of ['tasks', 'file-history']) expect(fs.existsSync(path.join(root, folder, w.ids.sibling))).toBe(true);
		expect(fs.existsSync(path.join(root, 'debug', `${w.ids.sibling}.txt`))).toBe(true);
	});

	it('refuses to rewrite a shared file that is a symlink', () => {
		const l = layout();
		const real = path.join(l.base, 'elsewhere.jsonl');
		fs.writeFileSync(real, '{"sessionId":"a"}\n{"sessionId":"b"}\n');
		const link = path.join(l.home, '.claude', 'history.jsonl');
		fs.mkdirSync(path.dirname(link), {recursive: true});
		fs.symlinkSync(real, link);
		expect(() => removeLines(link, line => line.includes('"a"'), [path.join(l.home, '.claude')])).toThrow(/not a regular file/);
		expect(fs.readFileSync(real, 'utf8')).toBe('{"sessionId":"a"}\n{"sessionId":"b"}\n');
	});

	it('for the caller’s own home, plans and removes the per-session temp folder', async () => {
		const w = world();
		const uid = process.getuid?.() ?? 0;
		const tasks = path.join(w.ctx.tmpDir, `claude-${uid}`, projectSlug(w.cwds[0]), w.ids.target, 'tasks');
		writeFile(path.join(tasks, 'out.txt'), 'task output');
		const other = path.join(w.ctx.tmpDir, `claude-${uid}`, projectSlug(w.cwds[0]), w.ids.sibling, 'tasks', 'out.txt');
		writeFile(other, 'keep');
		const ctx = {...w.ctx, ownHome: true};
		const plan = await claudeAdapter.artifacts(ctx, w.ids.target);
		expect(plan.items.some(i => i.description === 'temp task output')).toBe(true);
		await purgeNow(claudeAdapter, ctx, w.ids.target);
		expect(fs.existsSync(path.dirname(tasks))).toBe(false);
		expect(fs.existsSync(other)).toBe(true);
		expect(await claudeAdapter.residual(ctx, w.ids.target)).toEqual([]);
	});

	it('a transcript with no real message yet is listed as not resumable', async () => {
		const l = layout();
		const id = crypto.randomUUID();
		const file = path.join(l.home, '.claude', 'projects', projectSlug(l.cwds[0]), `${id}.jsonl`);
		writeFile(
			file,
			`${JSON.stringify({type: 'queue-operation', operation: 'enqueue', timestamp: new Date().toISOString(), sessionId: id, cwd: l.cwds[0]})}\n{"torn`,
		);
		const {conversations} = await claudeAdapter.discover(fixtureContext(l));
		expect(conversations.map(c => [c.id, c.resumeState])).toEqual([[id, {kind: 'no', reason: 'no messages yet'}]]);
	});
});
