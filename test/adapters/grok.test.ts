import '../support/sqliteUri.js';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {grokAdapter} from '../../src/adapters/grok.js';
import {purgeBuild} from '../../src/adapters/grok/purge.js';
import {assertValidId, InvalidIdError} from '../../src/adapters/types.js';
import {spawnArgvHolder, spawnWalWriter, type HeldProcess} from '../support/holders.js';
import {adapterContract} from './contract.js';
import {buildGrokBuildOnlyFixture, buildGrokFixture, grokCliDbPath, grokCliId, grokCliRowCounts, grokRoot, insertGrokCliSession} from './fixtures/grok.js';
import {expectTargetedMatchesIndex} from './fixtures/directLookups.js';
import {grokBuildId, writeGrokBuildSession} from './fixtures/grok.js';
import type {FixtureWorld} from './fixtures/types.js';
import {fixtureContext, makeTempLayout, missingBinaryExec, type ExecCall} from './fixtures/world.js';
import Database from 'better-sqlite3';
import {purgeNow} from '../helpers/purge.js';

// The registered grok world (contract.test.ts) puts a Grok Build target beside grok-cli
// sessions; here the contract also runs over Grok Build alone, and the grok-cli sharp edges get
// their own tests (grok-cli persists no children, so it can never be the contract's target).
describe('adapter contract: grok (Grok Build alone)', () => {
	adapterContract(grokAdapter, buildGrokBuildOnlyFixture);
});

// These tests start real processes and sqlite writers; on a loaded machine they need more than
// vitest's 5 s default. A ceiling, not a timing assertion.
vi.setConfig({testTimeout: 30_000});

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function world(): FixtureWorld {
	const w = buildGrokFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

async function held<T extends HeldProcess>(p: Promise<T>): Promise<T> {
	const h = await p;
	cleanups.push(() => h.stop());
	return h;
}

/** `node <tmp>/grok …args` started in `cwd`, holding `files` open: grok-cli at work in a workspace. */
async function grokIn(cwd: string, files: readonly string[], args: readonly string[] = []): Promise<HeldProcess> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-grok-bin-'));
	const script = path.join(dir, 'grok');
	fs.writeFileSync(
		script,
		`const fs = require('node:fs'); const fds = ${JSON.stringify(files)}.map(f => fs.openSync(f, 'r')); console.log('ready'); setInterval(() => fds.length, 1e6);`,
	);
	const child = spawn(process.execPath, [script, ...args], {cwd, stdio: ['ignore', 'pipe', 'ignore']});
	await new Promise<void>((resolve, reject) => {
		child.stdout.once('data', () => resolve());
		child.once('exit', code => reject(new Error(`fake grok exited ${code}`)));
	});
	const h = {
		pid: child.pid ?? -1,
		stop: async () => {
			if (child.exitCode === null) {
				const gone = new Promise(resolve => child.once('exit', resolve));
				child.kill('SIGKILL');
				await gone;
			}
			fs.rmSync(dir, {recursive: true, force: true});
		},
	};
	cleanups.push(h.stop);
	return h;
}

describe('grok: two products in one ~/.grok', () => {
	it('each id form picks its product: UUID resumes with --resume, 12 hex with --session', () => {
		const w = world();
		expect(grokAdapter.resume(w.ctx, w.ids.target).argv).toEqual(['grok', '--resume', w.ids.target]);
		expect(grokAdapter.resume(w.ctx, w.ids.sibling).argv).toEqual(['grok', '--session', w.ids.sibling]);
		for (const good of [w.ids.target, w.ids.sibling]) assertValidId(grokAdapter, good);
		for (const bad of ['0123456789abc', '0123456789AB', `${w.ids.sibling}0`, w.ids.target.toUpperCase(), w.ids.target.replaceAll('-', '')]) {
			expect(() => assertValidId(grokAdapter, bad), bad).toThrow(InvalidIdError);
		}
	});

	it('discovery lists both products side by side, each with its cwd, and verify reads the right store', async () => {
		const w = world();
		const [alpha, beta] = w.cwds;
		const {conversations} = await grokAdapter.discover(w.ctx, {cwd: alpha, since: w.epoch});
		expect(conversations.map(c => c.id)).toEqual([w.ids.target, w.ids.sibling]);
		expect(await grokAdapter.verify(w.ctx, w.ids.sibling, alpha)).toEqual({kind: 'yes'});
		expect(await grokAdapter.verify(w.ctx, w.ids.sibling, beta)).toEqual({kind: 'no', reason: `belongs to ${alpha}`});
		expect((await grokAdapter.verify(w.ctx, grokCliId())).kind).toBe('no');
	});

	it('grok-cli alone (no sessions/ folder) is found, and an unused session is not resumable', async () => {
		const l = makeTempLayout('grok-cli');
		cleanups.push(() => l.cleanup());
		const ctx = fixtureContext(l);
		const [used, unused] = [grokCliId(), grokCliId()];
		insertGrokCliSession(l.home, {id: used, cwd: l.cwds[0], createdAt: Date.now() - 60_000, title: 'fix it'});
		insertGrokCliSession(l.home, {id: unused, cwd: l.cwds[0], createdAt: Date.now() - 30_000, turns: 0});
		expect(fs.existsSync(path.join(grokRoot(l.home), 'sessions'))).toBe(false);
		const {conversations} = await grokAdapter.discover(ctx);
		expect(conversations.map(c => [c.id, c.title, c.resumeState.kind])).toEqual([
			[unused, undefined, 'no'],
			[used, 'fix it', 'yes'],
		]);
	});
});

describe('grok-cli purge', () => {
	it('deletes the session row and every child row (messages, tool calls and results, usage, compactions), nothing else', async () => {
		const w = world();
		const id = w.ids.sibling;
		expect(grokCliRowCounts(w.home, id)).toEqual({sessions: 1, messages: 2, tool_calls: 1, tool_results: 1, usage_events: 1, compactions: 1});
		// tool_results rows name no session (they hang off tool_calls): the generic fingerprint counts
		// them as everyone's, so they are compared through the other session's counts instead.
		const others = () => new Map([...w.snapshotOthers([id])].filter(([key]) => !key.endsWith(':tool_results')));
		const before = others();
		const foreignBefore = grokCliRowCounts(w.home, w.ids.foreign);
		const plan = await grokAdapter.artifacts(w.ctx, id);
		expect(plan.items.map(i => `${i.table} ${i.count}`).sort()).toEqual([
			'compactions 1',
			'messages 2',
			'sessions 1',
			'tool_calls 1',
			'tool_results 1',
			'usage_events 1',
		]);
		expect(plan.descendants).toEqual([]);
		const outcome = await purgeNow(grokAdapter, w.ctx, id);
		expect(outcome).toEqual({removed: plan.items, warnings: []});
		expect(grokCliRowCounts(w.home, id)).toEqual({sessions: 0, messages: 0, tool_calls: 0, tool_results: 0, usage_events: 0, compactions: 0});
		expect(others()).toEqual(before);
		expect(grokCliRowCounts(w.home, w.ids.foreign)).toEqual(foreignBefore);
		expect(foreignBefore['tool_results']).toBe(1);
		expect(await grokAdapter.residual(w.ctx, id)).toEqual([]);
		expect((await grokAdapter.verify(w.ctx, id)).kind).toBe('no');
		expect(await grokAdapter.verify(w.ctx, w.ids.foreign, w.cwds[1])).toEqual({kind: 'yes'});
	});

	it('a Grok Build purge leaves grok.db and the cwd group folder in place', async () => {
		const w = world();
		const db = grokCliDbPath(w.home);
		const before = fs.readFileSync(db);
		await purgeNow(grokAdapter, w.ctx, w.ids.target);
		expect(fs.readFileSync(db).equals(before)).toBe(true);
		expect(fs.readdirSync(path.join(grokRoot(w.home), 'sessions'), {withFileTypes: true}).filter(e => e.isDirectory()).length).toBe(1);
	});
});

describe('grok-cli reads leave no trace beside grok.db (SPEC 4.3)', () => {
	const answers = async (w: FixtureWorld) => {
		await grokAdapter.inUse(w.ctx, w.ids.sibling);
		return {
			recent: (await grokAdapter.discover(w.ctx, {cwd: w.cwds[0], since: w.epoch})).conversations.map(c => c.id),
			all: (await grokAdapter.discover(w.ctx)).conversations.map(c => `${c.id} ${c.title ?? ''} ${c.resumeState.kind}`),
			verify: (await grokAdapter.verify(w.ctx, w.ids.sibling, w.cwds[0])).kind,
			verifyForeign: (await grokAdapter.verify(w.ctx, w.ids.foreign, w.cwds[0])).kind,
			plan: (await grokAdapter.artifacts(w.ctx, w.ids.sibling)).items.map(i => `${i.table} ${i.count}`).sort(),
			residual: (await grokAdapter.residual(w.ctx, w.ids.sibling)).length,
		};
	};
	const listing = (dir: string) =>
		fs
			.readdirSync(dir)
			.sort()
			.map(name => (name.endsWith('-shm') ? name : `${name} ${fs.lstatSync(path.join(dir, name)).mtimeMs}`));
	const states: [string, (w: FixtureWorld) => Promise<void>][] = [
		['clean', async () => {}],
		['leftover -wal and -shm, rows only in the WAL', async w => (await spawnWalWriter([grokCliDbPath(w.home)])).crash()],
		[
			'-wal without -shm',
			async w => {
				await (await spawnWalWriter([grokCliDbPath(w.home)])).crash();
				fs.rmSync(`${grokCliDbPath(w.home)}-shm`);
			},
		],
		['a live writer', async w => void (await held(spawnWalWriter([grokCliDbPath(w.home)])))],
	];
	for (const [name, state] of states) {
		it(name, async () => {
			const w = world();
			const baseline = await answers(w);
			expect(baseline.verify).toBe('yes');
			expect(baseline.plan.length).toBeGreaterThan(0);
			await state(w);
			const before = listing(grokRoot(w.home));
			expect(await answers(w)).toEqual(baseline);
			expect(listing(grokRoot(w.home))).toEqual(before);
		});
	}
});

describe('grok-cli in use', () => {
	it("argv naming the session, or a grok holding grok.db in the session's workspace; not one in another workspace, not the daemon", async () => {
		const w = world();
		const db = grokCliDbPath(w.home);
		const elsewhere = await grokIn(w.cwds[1], [db]);
		// The schedule daemon runs in the same workspace: only its being the daemon excludes it.
		const daemon = await grokIn(w.cwds[0], [db], ['daemon']);
		expect(await grokAdapter.inUse(w.ctx, w.ids.sibling)).toEqual([]);
		const here = await grokIn(w.cwds[0], [db]);
		const byArgv = await held(spawnArgvHolder(['--session', w.ids.sibling]));
		const pids = (await grokAdapter.inUse(w.ctx, w.ids.sibling)).map(h => h.pid);
		expect(pids.sort()).toEqual([here.pid, byArgv.pid].sort());
		expect(pids).not.toContain(elsewhere.pid);
		expect(pids).not.toContain(daemon.pid);
	});
});

describe('grok targeted lookups', () => {
	it('looking up one session folder or row answers verify and inUse exactly as the whole index does', async () => {
		const w = buildGrokFixture();
		cleanups.push(() => w.cleanup());
		const [alpha, beta] = w.cwds;
		const at = w.epoch + 5_000;
		const ids = {empty: grokBuildId(), crossChild: grokBuildId(), liar: grokBuildId(), cliEmpty: grokCliId(), cliAbsent: grokCliId()};
		// No messages; a sub-agent filed under another cwd's group; a folder whose summary names
		// another id (not trusted); the target's id filed a second time under another group; an
		// empty grok-cli session.
		writeGrokBuildSession(w.home, {id: ids.empty, cwd: alpha, createdAt: at, turns: 0});
		writeGrokBuildSession(w.home, {id: ids.crossChild, cwd: beta, createdAt: at + 10, parentId: w.ids.target});
		writeGrokBuildSession(w.home, {id: ids.liar, cwd: alpha, createdAt: at + 20});
		writeGrokBuildSession(w.home, {id: ids.liar, cwd: beta, createdAt: at + 20});
		// The lying copy is in the group listed first: the next group's copy is the session.
		const groups = path.join(grokRoot(w.home), 'sessions');
		const summary = path.join(groups, fs.readdirSync(groups, {withFileTypes: true}).find(e => e.isDirectory())?.name ?? '', ids.liar, 'summary.json');
		fs.writeFileSync(summary, fs.readFileSync(summary, 'utf8').replaceAll(ids.liar, grokBuildId()));
		writeGrokBuildSession(w.home, {id: w.ids.target, cwd: beta, createdAt: at + 30, turns: 0});
		insertGrokCliSession(w.home, {id: ids.cliEmpty, cwd: alpha, createdAt: at + 40, title: 'empty', turns: 0});
		await held(spawnArgvHolder([ids.crossChild]));
		const asked = [w.ids.target, ...w.ids.targetDescendants, w.ids.sibling, w.ids.foreign, w.ids.old, w.ids.absent, ...Object.values(ids)];
		await expectTargetedMatchesIndex(grokAdapter, w.ctx, asked, [undefined, alpha, beta]);
		expect(await grokAdapter.verify(w.ctx, ids.empty)).toEqual({kind: 'no', reason: 'the session holds no messages'});
		expect(await grokAdapter.verify(w.ctx, ids.crossChild, beta)).toEqual({kind: 'yes'});
		expect(await grokAdapter.verify(w.ctx, ids.liar)).toEqual({kind: 'yes'});
		expect(await grokAdapter.verify(w.ctx, ids.cliEmpty)).toEqual({kind: 'no', reason: 'the session holds no messages'});
		expect((await grokAdapter.inUse(w.ctx, w.ids.target)).map(h => h.reason)).toContain(`argv names ${ids.crossChild}`);
	});
});

/** Every byte of `file` (and its sidecars) as one buffer. */
function bytesOf(file: string): Buffer {
	return Buffer.concat([file, `${file}-wal`, `${file}-journal`].filter(f => fs.existsSync(f)).map(f => fs.readFileSync(f)));
}

// What grok 1.0.41 keeps beside a session folder, measured: `grok sessions delete` removes the
// folder and the search row only; the prompt stays in prompt_history.jsonl, in the search index's
// freed pages and FTS5 segments, and unified.jsonl names the id.
describe('Grok Build purge: every place beside the folder', () => {
	function buildWorld(): FixtureWorld {
		const w = buildGrokBuildOnlyFixture();
		cleanups.push(() => w.cleanup());
		return w;
	}
	const group = (w: FixtureWorld) => path.join(grokRoot(w.home), 'sessions', encodeURIComponent(w.cwds[0]));

	it('plans prompt_history lines, the search row and the log lines, and asks grok sessions delete first', async () => {
		const w = buildWorld();
		const calls: ExecCall[] = [];
		const ctx = {...w.ctx, exec: missingBinaryExec(calls)};
		const plan = await grokAdapter.artifacts(ctx, w.ids.target);
		const ids = [w.ids.target, ...w.ids.targetDescendants];
		expect(plan.items.filter(i => i.kind !== 'dir').map(i => `${i.kind} ${path.relative(w.home, i.path)} ${i.table ?? ''} ${i.count}`)).toEqual([
			`lines ${path.relative(w.home, path.join(group(w), 'prompt_history.jsonl'))}  4`,
			'rows .grok/sessions/session_search.sqlite session_docs 3',
			'lines .grok/logs/unified.jsonl  6',
		]);
		const outcome = await purgeNow(grokAdapter, ctx, w.ids.target);
		expect(calls.map(c => [c.file, ...c.args])).toEqual([['grok', 'sessions', 'delete', w.ids.target]]);
		expect(calls[0]?.options?.env).toMatchObject({HOME: w.home, GROK_HOME: grokRoot(w.home)});
		expect(outcome.warnings).toEqual([`grok sessions delete could not run (spawn grok ENOENT); deleted everything directly`]);
		const history = fs.readFileSync(path.join(group(w), 'prompt_history.jsonl'), 'utf8');
		for (const id of ids) expect(history).not.toContain(id);
		expect(fs.readFileSync(path.join(grokRoot(w.home), 'logs', 'unified.jsonl'), 'utf8')).not.toMatch(new RegExp(ids.join('|')));
		expect(await grokAdapter.residual(ctx, w.ids.target)).toEqual([]);
	});

	it("other sessions' prompt_history lines stay byte-identical", async () => {
		const w = buildWorld();
		const file = path.join(group(w), 'prompt_history.jsonl');
		const others = (text: string) => text.split('\n').filter(line => line.includes(w.ids.sibling) || line.includes(w.ids.old));
		const before = others(fs.readFileSync(file, 'utf8'));
		expect(before.length).toBe(2);
		await purgeNow(grokAdapter, w.ctx, w.ids.target);
		expect(others(fs.readFileSync(file, 'utf8'))).toEqual(before);
	});

	it("erases the prompt from the search index's bytes: freed pages and FTS5 segments", async () => {
		const w = buildWorld();
		const db = path.join(grokRoot(w.home), 'sessions', 'session_search.sqlite');
		// The target's prompts ("hello 0 from task <id6>"): the title's token is unique to it.
		const word = `task ${w.ids.target.slice(0, 6)}`;
		expect(bytesOf(db).includes(Buffer.from(word))).toBe(true);
		// The plan is made first; then grok's own deleter runs (as purge runs it), deleting the rows
		// through the FTS5 'delete' trigger without secure_delete: the text stays in the file.
		const plan = await grokAdapter.artifacts(w.ctx, w.ids.target);
		const raw = new Database(db);
		raw.pragma('secure_delete = OFF');
		const family = [w.ids.target, ...w.ids.targetDescendants];
		raw.prepare(`DELETE FROM session_docs WHERE session_id IN (${family.map(() => '?').join(', ')})`).run(...family);
		raw.close();
		expect(bytesOf(db).includes(Buffer.from(word))).toBe(true);
		await purgeBuild(w.ctx, plan);
		expect(bytesOf(db).includes(Buffer.from(word))).toBe(false);
		expect(bytesOf(db).includes(Buffer.from(w.ids.target.slice(0, 6)))).toBe(false);
		const after = new Database(db, {readonly: true});
		try {
			expect(after.prepare("SELECT count(*) AS n FROM session_docs_fts WHERE session_docs_fts MATCH 'hello'").get()).toEqual({n: 3});
			expect(after.prepare('SELECT session_id FROM session_docs ORDER BY session_id').pluck().all()).toEqual([w.ids.sibling, w.ids.old, w.ids.foreign].sort());
		} finally {
			after.close();
		}
	});
});
