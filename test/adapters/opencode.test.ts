import '../support/sqliteUri.js';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {opencodeAdapter} from '../../src/adapters/opencode.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {realExec, type Exec} from '../../src/system/exec.js';
import {asUserOf, spawnArgvHolder, spawnFileHolder} from '../support/holders.js';
import {buildOpencodeFixture, opencodeId, writeOpencodeDb, type OcSession} from './fixtures/opencode.js';
import {expectTargetedMatchesIndex} from './fixtures/directLookups.js';
import type {FixtureWorld} from './fixtures/types.js';
import {fixtureContext, makeTempLayout, type TempLayout} from './fixtures/world.js';
import {purgeNow} from '../helpers/purge.js';

const SAMPLES = '/work/shared/agents/samples/opencode';
const SAMPLE = {
	alpha: 'ses_dd4e25fb1ffeyF0AhyzQXbtj2O',
	beta: 'ses_dd4e24f30ffe663KxF26UZ7WDq',
	parent: 'ses_dd4e228f9ffevowPS6DmvvuzZv',
	child: 'ses_dd4e21da8ffeLpHvnuQrgV3eiu',
};

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function world(): FixtureWorld {
	const w = buildOpencodeFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

function layout(): TempLayout {
	const l = makeTempLayout('opencode-x');
	cleanups.push(() => l.cleanup());
	return l;
}

const dbOf = (w: FixtureWorld) => w.databases[0] ?? '';

function sessionIds(db: string): string[] {
	const handle = new Database(db, {readonly: true});
	try {
		const tables = (handle.prepare("SELECT name FROM sqlite_master WHERE name IN ('session', 'session_v2')").all() as {name: string}[]).map(t => t.name);
		return [...new Set(tables.flatMap(t => (handle.prepare(`SELECT id FROM ${t}`).all() as {id: string}[]).map(r => r.id)))].sort();
	} finally {
		handle.close();
	}
}

/**
 * A stand-in `opencode` binary: logs how it was called, then either deletes the session and its
 * children's session rows (like `opencode session delete`, leaving events to the adapter) or fails.
 */
function fakeOpencode(l: TempLayout, mode: 'delete' | 'fail'): {exec: Exec; log: string} {
	const bin = path.join(l.base, 'bin');
	const log = path.join(l.base, 'opencode-calls.jsonl');
	fs.mkdirSync(bin, {recursive: true});
	const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
	fs.writeFileSync(
		path.join(bin, 'opencode'),
		`#!${process.execPath}
const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({argv: process.argv.slice(2), cwd: process.cwd(), HOME: process.env.HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME, OPENCODE_DB: process.env.OPENCODE_DB}) + '\\n');
if (${JSON.stringify(mode)} === 'fail') { console.error('Error: session is busy'); process.exit(1); }
const Database = require(${JSON.stringify(sqlite)});
const db = new Database(process.env.OPENCODE_DB);
const ids = [process.argv[4]];
for (let i = 0; i < ids.length; i++) for (const t of ['session', 'session_v2']) for (const r of db.prepare('SELECT id FROM ' + t + ' WHERE parent_id = ?').all(ids[i])) ids.push(r.id);
for (const t of ['session', 'session_v2']) for (const id of ids) db.prepare('DELETE FROM ' + t + ' WHERE id = ?').run(id);
db.close();
`,
		{mode: 0o755},
	);
	return {exec: (file, args, options) => realExec(path.join(bin, file), args, options), log};
}

describe('opencode against the real sample (opencode 1.18.33, rows in the WAL)', {timeout: 30_000}, () => {
	it('lists parents only, a child still verifies, and reading changes no file name', async () => {
		const l = layout();
		fs.cpSync(SAMPLES, l.home, {recursive: true});
		const dir = path.join(l.home, '.local', 'share', 'opencode');
		const before = fs.readdirSync(dir).sort();
		const ctx = fixtureContext(l);
		const {conversations, problems} = await opencodeAdapter.discover(ctx);
		expect(problems).toEqual([]);
		expect(conversations.map(c => [c.id, c.childCount])).toEqual([
			[SAMPLE.parent, 1],
			[SAMPLE.beta, 0],
			[SAMPLE.alpha, 0],
		]);
		expect(conversations[0]?.title).toBe('Hello from the fake model.');
		const child = await opencodeAdapter.verify(ctx, SAMPLE.child);
		expect(child.kind === 'yes' || /no longer exists/.test(child.kind === 'no' ? child.reason : '')).toBe(true);
		expect((await opencodeAdapter.artifacts(ctx, SAMPLE.parent)).descendants).toEqual([SAMPLE.child]);
		expect(fs.readdirSync(dir).sort()).toEqual(before);
	});

	it('purges a parent and its child from the sample, leaving the other two sessions', async () => {
		const l = layout();
		fs.cpSync(SAMPLES, l.home, {recursive: true});
		const ctx = fixtureContext(l);
		await purgeNow(opencodeAdapter, ctx, SAMPLE.parent);
		expect(await opencodeAdapter.residual(ctx, SAMPLE.parent)).toEqual([]);
		expect(sessionIds(path.join(l.home, '.local', 'share', 'opencode', 'opencode.db'))).toEqual([SAMPLE.beta, SAMPLE.alpha].sort());
	});
});

describe('opencode database generations', () => {
	it('a 2.x-only database: parent_id descendants at every depth', async () => {
		const l = layout();
		const db = path.join(l.home, '.local', 'share', 'opencode', 'opencode.db');
		const now = Date.now();
		const chain = [opencodeId(), opencodeId(), opencodeId(), opencodeId()];
		const other = opencodeId();
		const sessions: OcSession[] = [
			...chain.map((id, i) => ({
				id,
				projectId: 'global',
				directory: l.cwds[0],
				createdAt: now + i,
				title: `level ${i}`,
				gen: 'v2' as const,
				...(i > 0 ? {parentId: chain[i - 1]} : {}),
			})),
			{id: other, projectId: 'global', directory: l.cwds[0], createdAt: now - 10, title: 'other', gen: 'v2'},
		];
		writeOpencodeDb(db, 'v2', sessions, [{id: 'global', worktree: '/'}]);
		const ctx = fixtureContext(l);
		const root = chain[0] ?? '';
		expect((await opencodeAdapter.discover(ctx)).conversations.map(c => c.id)).toEqual([root, other]);
		expect(await opencodeAdapter.verify(ctx, chain[3] ?? '', l.cwds[0])).toEqual({kind: 'yes'});
		expect((await opencodeAdapter.artifacts(ctx, root)).descendants).toEqual(chain.slice(1));
		await purgeNow(opencodeAdapter, ctx, root);
		expect(sessionIds(db)).toEqual([other]);
		expect(await opencodeAdapter.residual(ctx, root)).toEqual([]);
	});

	it('a session that was never used is listed as not resumable', async () => {
		const l = layout();
		const db = path.join(l.home, '.local', 'share', 'opencode', 'opencode.db');
		const id = opencodeId();
		writeOpencodeDb(
			db,
			'v1',
			[{id, projectId: 'global', directory: l.cwds[0], createdAt: Date.now(), title: 'New session', gen: 'v1', empty: true}],
			[{id: 'global', worktree: '/'}],
		);
		expect(await opencodeAdapter.verify(fixtureContext(l), id)).toEqual({kind: 'no', reason: 'no messages yet'});
	});

	it('XDG_DATA_HOME applies only to the caller’s own home', async () => {
		const l = layout();
		const xdg = path.join(l.base, 'xdg');
		const id = opencodeId();
		writeOpencodeDb(
			path.join(xdg, 'opencode', 'opencode.db'),
			'v1',
			[{id, projectId: 'global', directory: l.cwds[0], createdAt: Date.now(), title: 't', gen: 'v1'}],
			[{id: 'global', worktree: '/'}],
		);
		const env = {XDG_DATA_HOME: xdg};
		expect((await opencodeAdapter.discover(fixtureContext(l, {ownHome: true, env}))).conversations.map(c => c.id)).toEqual([id]);
		expect((await opencodeAdapter.discover(fixtureContext(l, {ownHome: false, env}))).conversations).toEqual([]);
	});

	it('a corrupt database is reported, never thrown', async () => {
		const w = world();
		fs.writeFileSync(dbOf(w), 'garbage '.repeat(1000));
		const result = await opencodeAdapter.discover(w.ctx);
		expect(result.conversations).toEqual([]);
		expect(result.problems).toEqual([expect.stringMatching(/opencode\.db: not a sqlite database/)]);
		expect(await opencodeAdapter.verify(w.ctx, w.ids.target)).toMatchObject({kind: 'unknown'});
	});
});

describe('opencode purge through its own delete command', {timeout: 30_000}, () => {
	function withExec(w: FixtureWorld, exec: Exec): AdapterContext {
		return {...w.ctx, exec};
	}

	it('runs `opencode session delete <id>` in the session directory against exactly this database, then deletes what it left', async () => {
		const w = world();
		const l = {base: path.dirname(w.home)} as TempLayout;
		const fake = fakeOpencode(l, 'delete');
		const ctx = withExec(w, fake.exec);
		const before = w.snapshotOthers([w.ids.target, ...w.ids.targetDescendants]);
		const outcome = await purgeNow(opencodeAdapter, ctx, w.ids.target);
		expect(outcome.warnings).toEqual([]);
		const calls = fs
			.readFileSync(fake.log, 'utf8')
			.trim()
			.split('\n')
			.map(line => JSON.parse(line) as Record<string, unknown>);
		expect(calls).toEqual([
			{argv: ['session', 'delete', w.ids.target], cwd: w.cwds[0], HOME: w.home, XDG_DATA_HOME: path.join(w.home, '.local', 'share'), OPENCODE_DB: dbOf(w)},
		]);
		expect(await opencodeAdapter.residual(ctx, w.ids.target)).toEqual([]);
		expect(w.snapshotOthers([w.ids.target, ...w.ids.targetDescendants])).toEqual(before);
	});

	it('a failed delete is a warning, and the remaining rows still go', async () => {
		const w = world();
		const fake = fakeOpencode({base: path.dirname(w.home)} as TempLayout, 'fail');
		const outcome = await purgeNow(opencodeAdapter, withExec(w, fake.exec), w.ids.target);
		expect(outcome.warnings).toEqual([`opencode session delete ${w.ids.target} failed (exit 1): Error: session is busy; deleted the rows directly`]);
		expect(await opencodeAdapter.residual(w.ctx, w.ids.target)).toEqual([]);
	});

	it('a missing binary is a warning', async () => {
		const w = world();
		const outcome = await purgeNow(opencodeAdapter, w.ctx, w.ids.target);
		expect(outcome.warnings).toEqual([expect.stringMatching(/^opencode session delete could not run \(spawn opencode ENOENT\)/)]);
		expect(await opencodeAdapter.residual(w.ctx, w.ids.target)).toEqual([]);
	});

	it('a locked database leaves every row visible to residual', async () => {
		const w = world();
		const lock = new Database(dbOf(w));
		lock.pragma('journal_mode = DELETE');
		lock.exec('BEGIN EXCLUSIVE');
		try {
			const outcome = await purgeNow(opencodeAdapter, {...w.ctx, exec: fakeOpencode({base: path.dirname(w.home)} as TempLayout, 'fail').exec}, w.ids.target);
			expect(outcome.warnings.some(warning => /locked/.test(warning))).toBe(true);
			expect(outcome.removed.filter(i => i.kind === 'rows')).toEqual([]);
		} finally {
			lock.exec('ROLLBACK');
			lock.close();
		}
		const lines = await opencodeAdapter.residual(w.ctx, w.ids.target);
		expect(lines.some(line => line.includes('table session_v2'))).toBe(true);
		expect(lines.some(line => line.includes(`[child session ${w.ids.targetDescendants[0]}]`))).toBe(true);
	}, 20_000);
});

describe('opencode in use', {timeout: 30_000}, () => {
	it('a TUI uses the sessions of its own project only; the shared database held open says nothing', async () => {
		const w = world();
		const [alpha, beta] = w.cwds as [string, string];
		fs.mkdirSync(alpha, {recursive: true});
		fs.mkdirSync(beta, {recursive: true});
		// A TUI in beta holding the one database open, as every opencode process does.
		const tui = await spawnFileHolder([dbOf(w)], 'opencode', [], beta, asUserOf(w));
		cleanups.push(() => tui.stop());
		const service = await spawnFileHolder([dbOf(w)], 'opencode', ['serve', '--service'], alpha, asUserOf(w));
		cleanups.push(() => service.stop());
		expect(await opencodeAdapter.inUse(w.ctx, w.ids.target)).toEqual([]);
		const foreign = await opencodeAdapter.inUse(w.ctx, w.ids.foreign);
		expect(foreign.map(h => h.pid)).toEqual([tui.pid]);
		expect(foreign[0]?.reason).toMatch(/keeps no record of which conversation/);
		// A TUI in alpha without --session could be on any of alpha's sessions: all of them are in use.
		const inAlpha = await spawnFileHolder([], 'opencode', [], alpha, asUserOf(w));
		cleanups.push(() => inAlpha.stop());
		for (const id of [w.ids.target, w.ids.sibling, w.ids.old]) expect((await opencodeAdapter.inUse(w.ctx, id)).map(h => h.pid)).toEqual([inAlpha.pid]);
		await inAlpha.stop();
		// With --session it is on that session only.
		const named = await spawnFileHolder([dbOf(w)], 'opencode', ['--session', w.ids.sibling], alpha, asUserOf(w));
		cleanups.push(() => named.stop());
		expect((await opencodeAdapter.inUse(w.ctx, w.ids.sibling)).map(h => h.pid)).toEqual([named.pid]);
		expect(await opencodeAdapter.inUse(w.ctx, w.ids.target)).toEqual([]);
		// A server the user started may act on any session.
		const server = await spawnFileHolder([dbOf(w)], 'opencode', ['serve', '--port', '4096'], beta, asUserOf(w));
		cleanups.push(() => server.stop());
		expect((await opencodeAdapter.inUse(w.ctx, w.ids.target)).map(h => h.pid)).toEqual([server.pid]);
	});
});

describe('opencode targeted lookups', () => {
	it('per-id queries answer verify and inUse exactly as the whole-store index does', async () => {
		const w = world();
		const [alpha, beta] = w.cwds;
		const at = w.epoch + 5_000;
		const ids = {empty: opencodeId(), gone: opencodeId(), crossChild: opencodeId()};
		// A second channel's database: a session with no messages, one whose directory is gone, and
		// a sub-agent of the target filed there.
		const sessions: OcSession[] = [
			{id: ids.empty, projectId: 'global', directory: alpha, createdAt: at, title: 'empty', gen: 'v2', empty: true},
			{id: ids.gone, projectId: 'global', directory: path.join(beta, 'removed'), createdAt: at + 10, title: 'gone', gen: 'v2'},
			{id: ids.crossChild, projectId: 'global', directory: alpha, createdAt: at + 20, title: 'cross', gen: 'v2', parentId: w.ids.target},
		];
		writeOpencodeDb(path.join(w.home, '.local', 'share', 'opencode', 'opencode-beta.db'), 'v2', sessions, [{id: 'global', worktree: '/'}]);
		const holder = await spawnArgvHolder([ids.crossChild]);
		cleanups.push(() => holder.stop());
		// The grandchild is named only by its parent's task part (no parent_id: FORMATS 3, 1.18).
		const deep = await spawnArgvHolder([w.ids.targetDescendants.at(-1) ?? w.ids.target]);
		cleanups.push(() => deep.stop());
		const asked = [w.ids.target, ...w.ids.targetDescendants, w.ids.sibling, w.ids.foreign, w.ids.old, w.ids.absent, ...Object.values(ids)];
		await expectTargetedMatchesIndex(opencodeAdapter, w.ctx, asked, [undefined, alpha, beta]);
		expect(await opencodeAdapter.verify(w.ctx, ids.empty)).toEqual({kind: 'no', reason: 'no messages yet'});
		expect((await opencodeAdapter.verify(w.ctx, ids.gone)).kind).toBe('no');
		expect(await opencodeAdapter.verify(w.ctx, w.ids.target, beta)).toEqual({kind: 'no', reason: `belongs to ${alpha}, not ${beta}`});
		expect((await opencodeAdapter.inUse(w.ctx, w.ids.target)).map(h => h.pid)).toEqual(expect.arrayContaining([holder.pid, deep.pid]));
	});
});
