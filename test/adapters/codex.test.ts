import '../support/sqliteUri.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {codexAdapter, uuidV7Time} from '../../src/adapters/codex.js';
import {createRefresh, memoHas} from '../../src/adapters/common/refresh.js';
import {buildCodexFixture, codexRollout, rolloutRelPath, uuidV7, writeDb} from './fixtures/codex.js';
import {CODEX_STATE_SCHEMA} from './fixtures/codexSchema.js';
import {spawnArgvHolder} from '../support/holders.js';
import type {FixtureWorld} from './fixtures/types.js';
import {fixtureContext, makeTempLayout, writeFile, type TempLayout} from './fixtures/world.js';
import {purgeNow} from '../helpers/purge.js';
import {ROLLOUTS} from '../../src/adapters/codex/rollouts.js';
import {threadsNamedByProcesses} from '../../src/adapters/codex/threads.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import type {ProcessTable} from '../../src/system/processes.js';

const SAMPLES = '/work/shared/agents/samples/codex';

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

function world(): FixtureWorld {
	const w = buildCodexFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

function layout(): TempLayout {
	const l = makeTempLayout('codex-x');
	cleanups.push(() => l.cleanup());
	return l;
}

const listing = (dir: string) => fs.readdirSync(dir).sort();

describe('codex against the real samples (Codex CLI 0.171.0, rows in the WAL)', {timeout: 30_000}, () => {
	it('finds the three parents, the sub-agent thread and titles, without touching the files', async () => {
		const l = layout();
		fs.cpSync(SAMPLES, l.home, {recursive: true});
		const root = path.join(l.home, '.codex');
		const before = listing(root);
		const ctx = fixtureContext(l);
		const {conversations, problems} = await codexAdapter.discover(ctx);
		expect(problems).toEqual([]);
		expect(conversations.map(c => [c.id, c.title, c.childCount])).toEqual([
			['01a22b1d-954c-7a13-a81b-788104a74bde', 'please SPAWN_SUBAGENT now', 1],
			['01a22b1d-90ae-71a0-9666-6253868f587f', 'hello beta', 0],
			['01a22b1d-8e49-79f2-a157-8e33808531cf', 'hello alpha', 0],
		]);
		expect(conversations[0]?.cwd).toBe('/tmp/mam-samples/run/projects/alpha');
		const plan = await codexAdapter.artifacts(ctx, '01a22b1d-954c-7a13-a81b-788104a74bde');
		expect(plan.descendants).toEqual(['01a22b1d-95c2-7e62-9d85-e8ed2a286c2c']);
		// The spawn edge and both threads rows live only in the WAL of state_5.sqlite.
		expect(
			plan.items
				.filter(i => i.table === 'threads')
				.map(i => i.sessionId)
				.sort(),
		).toEqual(['01a22b1d-954c-7a13-a81b-788104a74bde', '01a22b1d-95c2-7e62-9d85-e8ed2a286c2c']);
		expect(listing(root)).toEqual(before);
	});
});

describe('codex in-use checks (real samples)', {timeout: 30_000}, () => {
	it('a process naming a sub-agent uses its parent even when only the state database records the spawn', async () => {
		const l = layout();
		fs.cpSync(SAMPLES, l.home, {recursive: true});
		const parent = '01a22b1d-954c-7a13-a81b-788104a74bde';
		const child = '01a22b1d-95c2-7e62-9d85-e8ed2a286c2c';
		// Strip the parent from the child's own first line: the spawn edge in state_5 is left.
		const rollout = path.join(l.home, '.codex/sessions/2026/11/30/rollout-2026-11-30T06-21-28-01a22b1d-95c2-7e62-9d85-e8ed2a286c2c.jsonl');
		const [first, ...rest] = fs.readFileSync(rollout, 'utf8').split('\n');
		const meta = JSON.parse(first ?? '{}') as {payload: Record<string, unknown>};
		delete meta.payload['parent_thread_id'];
		delete meta.payload['source'];
		fs.writeFileSync(rollout, [JSON.stringify(meta), ...rest].join('\n'));
		const ctx = fixtureContext(l);
		expect((await codexAdapter.artifacts(ctx, parent)).descendants).toEqual([child]);
		const holder = await spawnArgvHolder(['resume', child]);
		cleanups.push(() => void holder.stop());
		expect((await codexAdapter.inUse(ctx, parent)).map(h => h.pid)).toContain(holder.pid);
		expect((await codexAdapter.inUse(ctx, '01a22b1d-90ae-71a0-9666-6253868f587f')).map(h => h.pid)).not.toContain(holder.pid);
	});
});

describe('codex discovery rules', () => {
	it('a thread without a rollout is "no conversation yet", not an error', async () => {
		const l = layout();
		const id = uuidV7(Date.now());
		writeDb(path.join(l.home, '.codex', 'state_5.sqlite'), CODEX_STATE_SCHEMA, db => {
			db.prepare(
				"INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode) VALUES (?, '', 1, 1, 'cli', 'x', ?, '', 'ro', 'never')",
			).run(id, l.cwds[0]);
		});
		const ctx = fixtureContext(l);
		expect(await codexAdapter.discover(ctx)).toEqual({conversations: [], problems: []});
		expect(await codexAdapter.verify(ctx, id)).toMatchObject({kind: 'no'});
		expect(await codexAdapter.verify(ctx, uuidV7(Date.now()))).toEqual({
			kind: 'no',
			reason: 'no conversation yet (codex writes the rollout at the first prompt)',
		});
	});

	it('a rollout with no real message yet is listed as not resumable', async () => {
		const l = layout();
		const id = uuidV7(Date.now());
		writeFile(path.join(l.home, '.codex', rolloutRelPath(id, Date.now())), codexRollout({id, cwd: l.cwds[0], createdAt: Date.now(), prompt: '', empty: true}));
		const {conversations} = await codexAdapter.discover(fixtureContext(l));
		expect(conversations.map(c => c.resumeState)).toEqual([{kind: 'no', reason: 'no messages yet'}]);
	});

	it('finds rollouts by glob, whatever date folder local time put them in', async () => {
		const l = layout();
		const id = uuidV7(Date.now());
		const file = path.join(l.home, '.codex', 'sessions', '1999', '12', '31', path.basename(rolloutRelPath(id, Date.now())));
		writeFile(file, codexRollout({id, cwd: l.cwds[0], createdAt: Date.now(), prompt: 'late night'}));
		expect(await codexAdapter.verify(fixtureContext(l), id, l.cwds[0])).toEqual({kind: 'yes'});
	});

	it('verify looks in the date folders of the id first, on any clock, and globs every folder only when they hold nothing', async () => {
		const l = layout();
		const root = path.join(l.home, '.codex');
		// 23:30 UTC: a machine at UTC+2 files it under the next day; 00:30 UTC at UTC-10, the day before.
		const late = Date.UTC(2026, 10, 29, 23, 30);
		const early = Date.UTC(2026, 10, 29, 0, 30);
		const cases = [
			{id: uuidV7(late), folder: ['2026', '11', '30']},
			{id: uuidV7(early), folder: ['2026', '11', '28']},
			{id: uuidV7(late - 3_600_000), folder: ['2026', '11', '29']},
		];
		for (const c of cases) {
			writeFile(
				path.join(root, 'sessions', ...c.folder, `rollout-2026-11-29T23-30-00-${c.id}.jsonl`),
				codexRollout({id: c.id, cwd: l.cwds[0], createdAt: late, prompt: 'hi'}),
			);
		}
		const ctx = {...fixtureContext(l), refresh: createRefresh()};
		for (const c of cases) expect(await codexAdapter.verify(ctx, c.id, l.cwds[0])).toEqual({kind: 'yes'});
		// No index of every rollout was built for them.
		expect(memoHas(ctx, ROLLOUTS.of(root))).toBe(false);
		// Filed far from its date (moved by hand): found by the glob.
		const moved = uuidV7(late);
		writeFile(
			path.join(root, 'sessions', '2020', '01', '01', `rollout-2020-01-01T00-00-00-${moved}.jsonl`),
			codexRollout({id: moved, cwd: l.cwds[0], createdAt: late, prompt: 'hi'}),
		);
		expect(await codexAdapter.verify(ctx, moved, l.cwds[0])).toEqual({kind: 'yes'});
		expect(memoHas(ctx, ROLLOUTS.of(root))).toBe(true);
	});

	it('reads the time of a UUIDv7 id, and none from other versions', () => {
		expect(uuidV7Time(uuidV7(1_764_500_000_123))).toBe(1_764_500_000_123);
		expect(uuidV7Time('0199aa47-cd52-4b34-b8b8-86a86579b02a')).toBeUndefined();
		expect(uuidV7Time('not-a-uuid')).toBeUndefined();
	});

	it('takes the cwd from the rollout, not from threads.cwd (which a resume elsewhere rewrites)', async () => {
		const w = world();
		const db = new Database(path.join(w.roots[0] ?? '', 'state_5.sqlite'));
		db.prepare('UPDATE threads SET cwd = ? WHERE id = ?').run(w.cwds[1], w.ids.target);
		db.close();
		const {conversations} = await codexAdapter.discover(w.ctx, {cwd: w.cwds[0], since: w.epoch});
		expect(conversations.map(c => c.id)).toContain(w.ids.target);
		expect((await codexAdapter.verify(w.ctx, w.ids.target, w.cwds[1])).kind).toBe('no');
	});

	it('CODEX_HOME applies only to the caller’s own home', async () => {
		const l = layout();
		const alt = path.join(l.base, 'alt-codex');
		const id = uuidV7(Date.now());
		writeFile(path.join(alt, rolloutRelPath(id, Date.now())), codexRollout({id, cwd: l.cwds[0], createdAt: Date.now(), prompt: 'hi'}));
		const env = {CODEX_HOME: alt};
		expect((await codexAdapter.discover(fixtureContext(l, {ownHome: true, env}))).conversations.map(c => c.id)).toEqual([id]);
		expect((await codexAdapter.discover(fixtureContext(l, {ownHome: false, env}))).conversations).toEqual([]);
	});

	it('a corrupt state database is a problem; rollouts are still listed', async () => {
		const w = world();
		fs.writeFileSync(path.join(w.roots[0] ?? '', 'state_5.sqlite'), 'this is not a database, it is garbage'.repeat(200));
		const {conversations, problems} = await codexAdapter.discover(w.ctx);
		expect(problems).toEqual([expect.stringMatching(/state_5\.sqlite: not a sqlite database/)]);
		expect(conversations.map(c => c.id)).toContain(w.ids.target);
		await expect(codexAdapter.artifacts(w.ctx, w.ids.target)).rejects.toThrow(/not a sqlite database/);
	});
});

describe('codex purge details', () => {
	it('deletes the rows in every generation of a database (state_3 beside state_5)', async () => {
		const w = world();
		const old = path.join(w.roots[0] ?? '', 'state_3.sqlite');
		writeDb(old, CODEX_STATE_SCHEMA, db => {
			db.prepare(
				"INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode) VALUES (?, '', 1, 1, 'cli', 'x', ?, 'old gen', 'ro', 'never')",
			).run(w.ids.target, w.cwds[0]);
			db.prepare(
				"INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode) VALUES (?, '', 1, 1, 'cli', 'x', ?, 'old gen', 'ro', 'never')",
			).run(w.ids.sibling, w.cwds[0]);
		});
		const plan = await codexAdapter.artifacts(w.ctx, w.ids.target);
		expect(plan.items.some(i => i.path === old && i.table === 'threads')).toBe(true);
		await purgeNow(codexAdapter, w.ctx, w.ids.target);
		const db = new Database(old, {readonly: true});
		expect(db.prepare('SELECT id FROM threads').all()).toEqual([{id: w.ids.sibling}]);
		db.close();
		expect(await codexAdapter.residual(w.ctx, w.ids.target)).toEqual([]);
	});

	it("names the log database codex's own delete writes, and only when it runs", async () => {
		const w = world();
		const logs = path.join(w.roots[0] ?? '', 'logs_2.sqlite');
		const plan = await codexAdapter.artifacts(w.ctx, w.ids.target);
		expect(plan.changed?.[0]).toEqual({path: logs, reason: "changed by codex's own delete: its log database"});
		const planned = new Set(plan.items.filter(i => i.kind === 'rows').map(i => i.path));
		const unplanned = fs
			.readdirSync(w.roots[0] ?? '')
			.filter(n => /_\d+\.sqlite$/.test(n) && n !== 'logs_2.sqlite')
			.map(n => path.join(w.roots[0] ?? '', n))
			.filter(db => !planned.has(db));
		const staging = path.join(w.roots[0] ?? '', '.tmp');
		expect(plan.changed?.slice(1).map(c => c.path)).toEqual([...unplanned.sort().flatMap(db => [`${db}-wal`, `${db}-shm`]), staging]);
		expect(plan.changed?.at(-1)?.reason).toMatch(/its staging folder/);
		expect(plan.items.some(i => i.path === logs && i.kind === 'file')).toBe(false);
		await purgeNow(codexAdapter, w.ctx, w.ids.target);
		// Nothing of it left on disk: a second plan runs no delete and changes nothing.
		expect((await codexAdapter.artifacts(w.ctx, w.ids.target)).changed).toBeUndefined();
	});

	it('removes the queue rows the delete triggers add back', async () => {
		const w = world();
		await purgeNow(codexAdapter, w.ctx, w.ids.target);
		const db = new Database(path.join(w.roots[0] ?? '', 'queue_1.sqlite'), {readonly: true});
		expect(db.prepare('SELECT thread_id FROM queued_thread_revisions').all()).toEqual([{thread_id: w.ids.sibling}]);
		db.close();
	});

	it('removes the history and session index lines of the thread and its sub-agents only', async () => {
		const w = world();
		const root = w.roots[0] ?? '';
		await purgeNow(codexAdapter, w.ctx, w.ids.target);
		for (const name of ['history.jsonl', 'session_index.jsonl']) {
			const text = fs.readFileSync(path.join(root, name), 'utf8');
			expect(text).not.toContain(w.ids.target);
			expect(text).toContain(w.ids.sibling);
		}
	});
});

describe('codex threads named by processes', () => {
	it("inside a refresh (a view) takes the table's kept pass over open files; outside one (purge, resume) reads them now", async () => {
		const id = '11111111-2222-4333-8444-555555555555';
		const held = `/elsewhere/rollout-2026-01-02T03-04-05-${id}.jsonl`;
		const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-codex-named-'));
		try {
			const table: ProcessTable = {
				list: async () => [],
				get: async () => undefined,
				holders: async () => [],
				openFiles: async () => [],
				openFilesKept: async () => [{pid: 5, path: held}],
			};
			const ctx: AdapterContext = {
				home,
				ownHome: true,
				env: {},
				exec: async () => ({exitCode: 0, stdout: '', stderr: ''}),
				processes: table,
				now: Date.now,
				tmpDir: os.tmpdir(),
			};
			expect(await threadsNamedByProcesses({...ctx, refresh: createRefresh()})).toEqual(new Set([id]));
			expect(await threadsNamedByProcesses(ctx)).toEqual(new Set());
		} finally {
			fs.rmSync(home, {recursive: true, force: true});
		}
	});
});
