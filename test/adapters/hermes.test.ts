import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import '../support/sqliteUri.js';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {hermesAdapter, hermesRootFor} from '../../src/adapters/hermes.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import {realExec} from '../../src/system/exec.js';
import {snapshotTable} from '../../src/system/processes.js';
import {spawnArgvHolder, spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {buildHermesFixture, createHermesStore, hermesId, hermesSql, insertHermesSession} from './fixtures/hermes.js';
import {expectTargetedMatchesIndex} from './fixtures/directLookups.js';
import type {FixtureWorld} from './fixtures/types.js';
import {missingBinaryExec, type ExecCall} from './fixtures/world.js';
import {purgeNow} from '../helpers/purge.js';

// These tests start real processes and sqlite writers; on a loaded machine they need more than
// vitest's 5 s default. A ceiling, not a timing assertion.
vi.setConfig({testTimeout: 30_000});

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function world(): FixtureWorld {
	const w = buildHermesFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

async function held(p: Promise<HeldProcess>): Promise<HeldProcess> {
	const h = await p;
	cleanups.push(() => h.stop());
	return h;
}

const rootOf = (w: FixtureWorld) => path.join(w.home, '.hermes');

function query<T>(file: string, sql: string, ...params: unknown[]): T[] {
	const db = new Database(file, {readonly: true});
	try {
		return db.prepare(sql).all(...params) as T[];
	} finally {
		db.close();
	}
}

function sessionRows(w: FixtureWorld): {id: string; parent_session_id: string | null}[] {
	return query(path.join(rootOf(w), 'state.db'), 'SELECT id, parent_session_id FROM sessions ORDER BY id');
}

/** A `hermes` on PATH that records each call (argv and HERMES_HOME) and exits with `exitCode`. */
function fakeHermes(exitCode = 0): {env: Record<string, string>; calls: () => {argv: string[]; home: string}[]} {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-hermes-bin-'));
	cleanups.push(() => fs.rmSync(dir, {recursive: true, force: true}));
	const log = path.join(dir, 'calls.jsonl');
	const script = path.join(dir, 'hermes');
	fs.writeFileSync(
		script,
		[
			`#!${process.execPath}`,
			"const fs = require('node:fs');",
			`fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({argv: process.argv.slice(2), home: process.env.HERMES_HOME}) + '\\n');`,
			exitCode === 0 ? '' : "process.stderr.write('a turn is executing');",
			`process.exit(${exitCode});`,
		].join('\n'),
		{mode: 0o755},
	);
	return {
		env: {PATH: `${dir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`},
		calls: () =>
			fs.existsSync(log)
				? fs
						.readFileSync(log, 'utf8')
						.trim()
						.split('\n')
						.map(l => JSON.parse(l) as {argv: string[]; home: string})
				: [],
	};
}

describe('hermes lineage', () => {
	it('a compression continuation and delegate runs belong to the root; discovery lists the root only', async () => {
		const w = world();
		const {conversations} = await hermesAdapter.discover(w.ctx, {cwd: w.cwds[0]});
		const ids = conversations.map(c => c.id);
		expect(ids).toContain(w.ids.target);
		for (const child of w.ids.targetDescendants) expect(ids).not.toContain(child);
		const target = conversations.find(c => c.id === w.ids.target);
		expect(target?.childCount).toBe(2);
		// The conversation's tail lives in the continuation: it is newer than the root's own rows.
		const cont = w.sessions.find(s => s.parentId === w.ids.target && s.createdAt > (target?.createdAt ?? 0) + 60);
		expect(target?.updatedAt).toBeGreaterThan(cont?.createdAt ?? Infinity);
	});

	it('purge takes the continuation chain and the sub-agents; /branch and reset children stay, unlinked as hermes does', async () => {
		const w = world();
		const root = rootOf(w);
		const [alpha] = w.cwds;
		const cont = w.sessions.find(s => s.parentId === w.ids.target && s.id !== w.ids.verifiableChild)?.id ?? '';
		const branch = hermesId(w.epoch + 3_000);
		const reset = hermesId(w.epoch + 3_100);
		insertHermesSession(root, {id: branch, startedAt: w.epoch + 3_000, cwd: alpha, parentId: w.ids.target, modelConfig: {_branched_from: w.ids.target}});
		insertHermesSession(root, {id: reset, startedAt: w.epoch + 3_100, cwd: alpha, parentId: cont, modelConfig: {_reset_from: cont}});
		const plan = await hermesAdapter.artifacts(w.ctx, w.ids.target);
		expect([...plan.descendants].sort()).toEqual([...w.ids.targetDescendants].sort());
		expect(plan.items.some(i => i.description.includes('branch/reset'))).toBe(true);
		const outcome = await purgeNow(hermesAdapter, w.ctx, w.ids.target);
		expect(outcome.warnings.join('\n')).toMatch(/hermes could not run/);
		const rows = sessionRows(w);
		expect(rows.map(r => r.id).sort()).toEqual([w.ids.sibling, w.ids.old, branch, reset].sort());
		expect(rows.find(r => r.id === branch)?.parent_session_id).toBeNull();
		expect(rows.find(r => r.id === reset)?.parent_session_id).toBeNull();
		const state = path.join(root, 'state.db');
		for (const table of ['messages', 'session_model_usage']) {
			const left = query<{session_id: string}>(state, `SELECT DISTINCT session_id FROM ${table}`).map(r => r.session_id);
			expect(left.sort()).toEqual([w.ids.sibling, w.ids.old, branch, reset].sort());
		}
		expect(query(state, 'SELECT * FROM async_delegations')).toEqual([]);
		expect(fs.existsSync(path.join(root, 'terminal-sessions', 'pts-3.json'))).toBe(false);
		expect(fs.existsSync(path.join(root, 'terminal-sessions', 'pts-4.json'))).toBe(true);
		// The branch keeps its `_branched_from` marker (hermes keeps it too): reported, not deleted.
		expect(await hermesAdapter.residual(w.ctx, w.ids.target)).toEqual([`${state} table sessions: 1 row`]);
		expect(await hermesAdapter.verify(w.ctx, branch, alpha)).toEqual({kind: 'yes'});
	});

	it('a reset child is its own conversation in discovery', async () => {
		const w = world();
		const id = hermesId(w.epoch + 4_000);
		insertHermesSession(rootOf(w), {id, startedAt: w.epoch + 4_000, cwd: w.cwds[0], parentId: w.ids.sibling, modelConfig: {_reset_from: w.ids.sibling}});
		const {conversations} = await hermesAdapter.discover(w.ctx, {cwd: w.cwds[0]});
		expect(conversations.find(c => c.id === id)?.parentId).toBeUndefined();
		expect((await hermesAdapter.artifacts(w.ctx, w.ids.sibling)).descendants).toEqual([]);
	});
});

describe('hermes sessions delete', () => {
	it('runs `hermes sessions delete <id> --yes` for the continuation, then the root, in the store home; then deletes what is left', async () => {
		const w = world();
		const fake = fakeHermes(0);
		const ctx = {...w.ctx, exec: realExec, env: fake.env};
		const plan = await hermesAdapter.artifacts(ctx, w.ids.target);
		const outcome = await purgeNow(hermesAdapter, ctx, w.ids.target);
		const cont = w.sessions.find(s => s.parentId === w.ids.target && s.id !== w.ids.verifiableChild)?.id ?? '';
		expect(fake.calls()).toEqual([
			{argv: ['sessions', 'delete', cont, '--yes'], home: rootOf(w)},
			{argv: ['sessions', 'delete', w.ids.target, '--yes'], home: rootOf(w)},
		]);
		expect(outcome.warnings).toEqual([]);
		expect(new Set(outcome.removed.map(i => `${i.kind} ${i.path} ${i.table ?? ''}`))).toEqual(
			new Set(plan.items.map(i => `${i.kind} ${i.path} ${i.table ?? ''}`)),
		);
		expect(await hermesAdapter.residual(ctx, w.ids.target)).toEqual([]);
	});

	it('when hermes refuses (a turn is executing), nothing else is deleted', async () => {
		const w = world();
		const fake = fakeHermes(1);
		const ctx = {...w.ctx, exec: realExec, env: fake.env};
		const before = w.snapshotOthers([]);
		const outcome = await purgeNow(hermesAdapter, ctx, w.ids.target);
		expect(outcome.removed).toEqual([]);
		expect(outcome.warnings.join('\n')).toMatch(/hermes refused to delete .*a turn is executing; nothing else was deleted/);
		expect(w.snapshotOthers([])).toEqual(before);
	});

	it('without the binary it deletes directly and says so', async () => {
		const w = world();
		const calls: ExecCall[] = [];
		const outcome = await purgeNow(hermesAdapter, {...w.ctx, exec: missingBinaryExec(calls)}, w.ids.target);
		expect(calls.map(c => c.args)).toEqual([['sessions', 'delete', expect.any(String), '--yes']]);
		expect(calls[0]?.options?.env?.['HERMES_HOME']).toBe(rootOf(w));
		expect(outcome.warnings).toEqual([expect.stringMatching(/hermes could not run/)]);
		expect((await hermesAdapter.verify(w.ctx, w.ids.target)).kind).toBe('no');
	});
});

describe('hermes stores', () => {
	it('purges through the FTS5 triggers of a store that has them', async () => {
		const w = world();
		const home = path.join(w.home, '.hermes', 'profiles', 'search');
		createHermesStore(home, {fts: true});
		const a = hermesId(w.epoch + 5_000);
		const b = hermesId(w.epoch + 5_100);
		insertHermesSession(home, {id: a, startedAt: w.epoch + 5_000, cwd: w.cwds[0], turns: 3});
		insertHermesSession(home, {id: b, startedAt: w.epoch + 5_100, cwd: w.cwds[0]});
		const outcome = await purgeNow(hermesAdapter, w.ctx, a);
		expect(outcome.warnings.filter(x => !/hermes could not run/.test(x))).toEqual([]);
		const db = new Database(path.join(home, 'state.db'));
		try {
			expect(() => db.prepare("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").run()).not.toThrow();
			const hits = db.prepare("SELECT m.session_id AS id FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE messages_fts MATCH 'hello'").all() as {
				id: string;
			}[];
			expect(new Set(hits.map(h => h.id))).toEqual(new Set([b]));
		} finally {
			db.close();
		}
		// The other stores were not touched.
		expect(await hermesAdapter.verify(w.ctx, w.ids.target)).toEqual({kind: 'yes'});
	});

	it("erases a conversation's words from the prompt history, the logs and the FTS index segments; a prompt another conversation shares stays", async () => {
		const w = world();
		const home = path.join(w.home, '.hermes', 'profiles', 'words');
		createHermesStore(home);
		const a = hermesId(w.epoch + 6_000);
		const b = hermesId(w.epoch + 6_100);
		insertHermesSession(home, {id: a, startedAt: w.epoch + 6_000, cwd: w.cwds[0], turns: 2});
		insertHermesSession(home, {id: b, startedAt: w.epoch + 6_100, cwd: w.cwds[0]});
		// One prompt both typed (`/help`-like repeats are common): it names neither session.
		for (const id of [a, b])
			hermesSql(home, "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'run the tests zebraword', 1)", id);
		fs.appendFileSync(path.join(home, '.hermes_history'), '\n# 2026-12-03 12:00:00.000000\n+run the tests zebraword\n');
		fs.appendFileSync(path.join(home, 'logs', 'errors.log'), `2026-12-03 12:00:00,000 WARNING [${a}] tools.registry: something\nunrelated line\n`);
		hermesSql(home, "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'assistant', 'quokkaword only in a', 2)", a);
		const history = path.join(home, '.hermes_history');
		const plan = await hermesAdapter.artifacts(w.ctx, a);
		expect(plan.items.filter(i => i.kind === 'lines').map(i => [path.relative(home, i.path), i.count])).toEqual([
			['.hermes_history', 2],
			['logs/agent.log', 2],
			['logs/errors.log', 1],
		]);
		expect(plan.kept).toEqual([{path: history, reason: expect.stringMatching(/^1 prompt text\(s\) another conversation also has stay/)}]);

		await hermesAdapter.purge(w.ctx, plan);
		const text = fs.readFileSync(history, 'utf8');
		expect(text).not.toContain(a);
		expect(text).toContain(`+hello 0 from ${b}`);
		expect(text).toContain('+run the tests zebraword');
		expect(fs.readFileSync(path.join(home, 'logs', 'agent.log'), 'utf8')).not.toContain(a);
		expect(fs.readFileSync(path.join(home, 'logs', 'errors.log'), 'utf8')).toBe('unrelated line\n');
		// Merged and rebuilt: the words of `a` alone are in no byte of the database or its WAL.
		for (const file of [path.join(home, 'state.db'), path.join(home, 'state.db-wal')]) {
			if (fs.existsSync(file)) expect(fs.readFileSync(file).includes('quokkaword'), file).toBe(false);
		}
		expect(fs.readFileSync(path.join(home, 'state.db')).includes('zebraword')).toBe(true);
	});

	it("HERMES_HOME and HERMES_DATA_DIR_SUFFIX apply only to the caller's own home; a profile home means its root", () => {
		const w = world();
		const env = {HERMES_HOME: '/srv/hermes'};
		expect(hermesRootFor({...w.ctx, env})).toBe(path.join(w.home, '.hermes'));
		expect(hermesRootFor({...w.ctx, env, ownHome: true})).toBe('/srv/hermes');
		expect(hermesRootFor({...w.ctx, env: {HERMES_HOME: '/srv/hermes/profiles/work'}, ownHome: true})).toBe('/srv/hermes');
		expect(hermesRootFor({...w.ctx, env: {HERMES_DATA_DIR_SUFFIX: '-dev'}, ownHome: true})).toBe(path.join(w.home, '.hermes-dev'));
		expect(hermesRootFor({...w.ctx, env: {HERMES_DATA_DIR_SUFFIX: '/../x'}, ownHome: true})).toBe(path.join(w.home, '.hermes'));
	});

	it('a corrupt profile store is a problem for discovery, unknown for its sessions, and refuses a purge plan', async () => {
		const w = world();
		fs.writeFileSync(path.join(w.home, '.hermes', 'profiles', 'work', 'state.db'), 'not a database, only words and more words here');
		const {conversations, problems} = await hermesAdapter.discover(w.ctx);
		expect(problems.join('\n')).toMatch(/profiles\/work\/state\.db: not a sqlite database/);
		expect(conversations.map(c => c.id)).toContain(w.ids.target);
		expect((await hermesAdapter.verify(w.ctx, w.ids.foreign)).kind).toBe('unknown');
		await expect(hermesAdapter.artifacts(w.ctx, w.ids.target)).rejects.toThrow(/cannot build the purge plan/);
	});

	it('resumes with hermes --resume <id>', () => {
		const w = world();
		expect(hermesAdapter.resume(w.ctx, w.ids.target).argv).toEqual(['hermes', '--resume', w.ids.target]);
	});
});

describe('hermes in use', () => {
	it('a live turn lease names its holder; an expired one does not', async () => {
		const w = world();
		const proc = await held(spawnArgvHolder(['hermes-worker']));
		const now = Date.now() / 1000;
		hermesSql(
			rootOf(w),
			'INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)',
			w.ids.sibling,
			`pid=${proc.pid};host=x`,
			now,
			now + 600,
		);
		expect((await hermesAdapter.inUse(w.ctx, w.ids.sibling)).map(h => [h.pid, h.reason])).toEqual([[proc.pid, `holds the lease of ${w.ids.sibling}`]]);
		// Inside a refresh the store's leases are read once for every id: the same holders.
		const inRefresh = () => ({...w.ctx, refresh: createRefresh({directLookups: 0}), processes: snapshotTable(w.ctx.processes)});
		const pids = async (ctx: typeof w.ctx, id: string) => (await hermesAdapter.inUse(ctx, id)).map(h => [h.pid, h.reason]);
		for (const id of [w.ids.target, w.ids.sibling, w.ids.old]) expect(await pids(inRefresh(), id)).toEqual(await pids(w.ctx, id));
		expect(await pids(inRefresh(), w.ids.sibling)).toEqual([[proc.pid, `holds the lease of ${w.ids.sibling}`]]);
		hermesSql(rootOf(w), 'UPDATE compression_locks SET expires_at = ? WHERE session_id = ?', now - 1, w.ids.sibling);
		expect(await hermesAdapter.inUse(w.ctx, w.ids.sibling)).toEqual([]);
		expect(await hermesAdapter.inUse(inRefresh(), w.ids.sibling)).toEqual([]);
	});

	it('holding the shared state.db counts only while the conversation is still open', async () => {
		const w = world();
		const holder = await held(spawnFileHolder([path.join(rootOf(w), 'state.db')]));
		expect(await hermesAdapter.inUse(w.ctx, w.ids.sibling)).toEqual([]);
		expect((await hermesAdapter.inUse(w.ctx, w.ids.target)).map(h => h.pid)).toEqual([holder.pid]);
	});
});

describe('hermes targeted lookups', () => {
	it('per-id queries answer verify and inUse exactly as the whole-store index does', async () => {
		const w = world();
		const root = rootOf(w);
		const base = w.epoch + 5_000;
		const ids = {
			empty: hermesId(base),
			noCwd: hermesId(base + 10),
			branch: hermesId(base + 20),
			gone: hermesId(base + 30),
			orphan: hermesId(base + 40),
			reset: hermesId(base + 50),
			resetChild: hermesId(base + 60),
		};
		// A session with no messages; a delegate with no cwd of its own (its parent's counts); a
		// /branch child (a conversation of its own); a child whose parent row is gone; a reset.
		insertHermesSession(root, {id: ids.empty, startedAt: base, cwd: w.cwds[0], turns: 0});
		insertHermesSession(root, {id: ids.noCwd, startedAt: base + 10, parentId: w.ids.target, source: 'subagent'});
		insertHermesSession(root, {id: ids.branch, startedAt: base + 20, cwd: w.cwds[1], parentId: w.ids.target, modelConfig: {_branched_from: w.ids.target}});
		insertHermesSession(root, {id: ids.gone, startedAt: base + 30, cwd: w.cwds[0]});
		insertHermesSession(root, {id: ids.orphan, startedAt: base + 40, parentId: ids.gone});
		hermesSql(root, 'DELETE FROM messages WHERE session_id = ?', ids.gone);
		hermesSql(root, 'DELETE FROM sessions WHERE id = ?', ids.gone);
		insertHermesSession(root, {
			id: ids.reset,
			startedAt: base + 50,
			cwd: w.cwds[0],
			endedAt: base + 55,
			endReason: 'session_reset',
			sessionKey: 'k1',
			turns: 0,
		});
		insertHermesSession(root, {id: ids.resetChild, startedAt: base + 60, cwd: w.cwds[0], parentId: ids.reset, sessionKey: 'k1'});
		await held(spawnArgvHolder([w.ids.targetDescendants[2] ?? w.ids.target]));
		await held(spawnFileHolder(w.holdPaths(w.ids.target)));
		const asked = [w.ids.target, ...w.ids.targetDescendants, w.ids.sibling, w.ids.foreign, w.ids.old, w.ids.absent, ...Object.values(ids)];
		await expectTargetedMatchesIndex(hermesAdapter, w.ctx, asked, [undefined, w.cwds[0], w.cwds[1]]);
		// The cases above are the ones a wrong lookup would get wrong.
		expect(await hermesAdapter.verify(w.ctx, ids.empty)).toEqual({kind: 'no', reason: 'the session holds no messages'});
		expect(await hermesAdapter.verify(w.ctx, ids.noCwd, w.cwds[0])).toEqual({kind: 'yes'});
		expect(await hermesAdapter.verify(w.ctx, w.ids.target, w.cwds[1])).toEqual({kind: 'no', reason: `belongs to ${w.cwds[0]}`});
		expect(await hermesAdapter.verify(w.ctx, ids.gone)).toEqual({kind: 'no', reason: `no hermes session ${ids.gone}`});
		expect(await hermesAdapter.verify(w.ctx, ids.reset)).toEqual({kind: 'no', reason: 'the session holds no messages'});
	});
});
