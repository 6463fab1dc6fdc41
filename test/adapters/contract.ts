import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {InvalidIdError, type AdapterContext, type AgentAdapter, type PurgePlan} from '../../src/adapters/types.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import {snapshotTable, type ProcessTable} from '../../src/system/processes.js';
import {keepingReadConnections} from '../../src/system/sqliteRead.js';
import {spawnArgvHolder, spawnFileHolder, spawnWalWriter, type HeldProcess} from '../support/holders.js';
import {hashWorld} from './fixtures/hashWorld.js';
import type {FixtureBuilder, FixtureWorld} from './fixtures/types.js';
import {planNaming, purgeNow} from '../helpers/purge.js';

/** Tests start real processes and databases on a shared machine: generous, never a timing assertion. */
const SLOW = {timeout: 30_000};

/** Ids every adapter must refuse before any I/O (SPEC 7). */
export const BAD_IDS: readonly string[] = ['../x', 'a/b', 'a;rm -rf ~', '', '.', '..', '-rf', 'ünïcödé-😀', 'a'.repeat(10 * 1024), 'x\0y'];

/** Parents in `cwd` created at or after `since`, newest first: what discover must return. */
export function expectedParents(world: FixtureWorld, cwd: string, since?: number): string[] {
	return world.sessions
		.filter(s => s.parentId === undefined && s.cwd === cwd && (since === undefined || s.createdAt >= since))
		.sort((a, b) => b.createdAt - a.createdAt)
		.map(s => s.id);
}

function realRoots(world: FixtureWorld): string[] {
	return world.roots.filter(r => fs.existsSync(r)).map(r => fs.realpathSync(r));
}

/** Where `p` really is: its parent folder resolved, its own name kept (a link is not followed). */
function resolvedLocation(p: string): string {
	let dir = path.dirname(p);
	const tail = [path.basename(p)];
	while (!fs.existsSync(dir)) {
		tail.unshift(path.basename(dir));
		dir = path.dirname(dir);
	}
	return path.join(fs.realpathSync(dir), ...tail);
}

function inside(p: string, roots: readonly string[]): boolean {
	return roots.some(root => p === root || p.startsWith(`${root}${path.sep}`));
}

function planPaths(plan: PurgePlan): string[] {
	return plan.items.filter(i => i.kind === 'file' || i.kind === 'dir').map(i => i.path);
}

/** A context that fails loudly on any use: an adapter that does I/O before validating trips it. */
function trapContext(world: FixtureWorld): AdapterContext {
	const trap = (what: string) => () => {
		throw new Error(`I/O before id validation: ${what}`);
	};
	const processes: ProcessTable = {list: trap('processes.list'), get: trap('processes.get'), holders: trap('processes.holders')};
	return {
		...world.ctx,
		home: path.join(world.home, 'does-not-exist'),
		exec: trap('exec'),
		processes,
		now: trap('now'),
	};
}

/**
 * Names, sizes and mtimes of a folder. With a live writer, a `mode=ro` reader takes a read mark
 * inside the `-shm` (SPEC 4.3 prescribes that open), so there only the `-shm`'s presence counts.
 */
function listDir(dir: string, liveWriter: boolean): string[] {
	return fs
		.readdirSync(dir)
		.sort()
		.map(name => {
			const st = fs.lstatSync(path.join(dir, name));
			return liveWriter && name.endsWith('-shm') ? name : `${name} ${st.size} ${st.mtimeMs}`;
		});
}

function listDatabaseDirs(world: FixtureWorld, liveWriter = false): Map<string, string[]> {
	const dirs = new Set(world.databases.map(db => path.dirname(db)));
	return new Map([...dirs].map(dir => [dir, listDir(dir, liveWriter)]));
}

/**
 * The contract every adapter meets (SPEC 4). Call inside a `describe`; each test builds a fresh
 * fixture world with `buildFixture` and removes it afterwards.
 */
export function adapterContract(adapter: AgentAdapter, buildFixture: FixtureBuilder): void {
	let world: FixtureWorld;
	let held: HeldProcess[] = [];
	const hold = async (p: Promise<HeldProcess>) => {
		const h = await p;
		held.push(h);
		return h;
	};

	beforeEach(async () => {
		world = await buildFixture();
	});
	afterEach(async () => {
		for (const h of held) await h.stop();
		held = [];
		// undefined when the builder itself failed
		(world as FixtureWorld | undefined)?.cleanup();
	});

	describe('discover', () => {
		it('lists the parents created in a cwd since the epoch, newest first', SLOW, async () => {
			const {conversations, problems} = await adapter.discover(world.ctx, {cwd: world.cwds[0], since: world.epoch});
			expect(problems).toEqual([]);
			expect(conversations.map(c => c.id)).toEqual(expectedParents(world, world.cwds[0], world.epoch));
			expect(conversations.map(c => c.id)).toEqual([world.ids.target, world.ids.sibling]);
		});

		it('without an epoch also lists the older parents, and never a descendant', SLOW, async () => {
			const {conversations} = await adapter.discover(world.ctx, {cwd: world.cwds[0]});
			const ids = conversations.map(c => c.id);
			expect(ids).toEqual(expectedParents(world, world.cwds[0]));
			expect(ids).toContain(world.ids.old);
			for (const child of world.ids.targetDescendants) expect(ids).not.toContain(child);
		});

		it('filters by cwd', SLOW, async () => {
			const {conversations} = await adapter.discover(world.ctx, {cwd: world.cwds[1]});
			expect(conversations.map(c => c.id)).toEqual(expectedParents(world, world.cwds[1]));
			expect(conversations.map(c => c.id)).toContain(world.ids.foreign);
		});

		it('without filters lists every parent, newest first, each with its cwd, times and child count', SLOW, async () => {
			const {conversations} = await adapter.discover(world.ctx);
			const all = world.sessions.filter(s => s.parentId === undefined).sort((a, b) => b.createdAt - a.createdAt);
			expect(conversations.map(c => c.id)).toEqual(all.map(s => s.id));
			for (const c of conversations) {
				const session = all.find(s => s.id === c.id);
				expect(c.agent).toBe(adapter.id);
				expect(c.cwd).toBe(session?.cwd);
				expect(c.createdAt).toBe(session?.createdAt);
				expect(c.updatedAt).toBeGreaterThanOrEqual(c.createdAt);
				expect(c.resumeState).toEqual({kind: 'yes'});
			}
			const target = conversations.find(c => c.id === world.ids.target);
			const directChildren = world.sessions.filter(s => s.parentId === world.ids.target).length;
			expect(target?.childCount).toBe(directChildren);
			expect(directChildren).toBeGreaterThan(0);
		});

		it('lists a resumable child with its parent when asked for children', SLOW, async ({skip}) => {
			if (!world.ids.verifiableChild) skip();
			const {conversations} = await adapter.discover(world.ctx, {cwd: world.cwds[0], includeChildren: true});
			const child = conversations.find(c => c.id === world.ids.verifiableChild);
			expect(child?.parentId).toBeDefined();
		});

		it('an empty or missing home is an empty result, not an error', SLOW, async () => {
			const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-empty-'));
			try {
				for (const home of [empty, path.join(empty, 'missing')]) {
					const result = await adapter.discover({...world.ctx, home});
					expect(result).toEqual({conversations: [], problems: []});
				}
				expect(fs.readdirSync(empty)).toEqual([]);
			} finally {
				fs.rmSync(empty, {recursive: true, force: true});
			}
		});
	});

	describe('verify', () => {
		it('a parent verifies in its own cwd and without a cwd', SLOW, async () => {
			expect(await adapter.verify(world.ctx, world.ids.target, world.cwds[0])).toEqual({kind: 'yes'});
			expect(await adapter.verify(world.ctx, world.ids.target)).toEqual({kind: 'yes'});
			expect(await adapter.verify(world.ctx, world.ids.foreign, world.cwds[1])).toEqual({kind: 'yes'});
		});

		it('a child verifies', SLOW, async ({skip}) => {
			if (!world.ids.verifiableChild) skip();
			expect(await adapter.verify(world.ctx, world.ids.verifiableChild ?? '', world.cwds[0])).toEqual({kind: 'yes'});
		});

		it("another cwd's conversation does not verify", SLOW, async () => {
			expect((await adapter.verify(world.ctx, world.ids.foreign, world.cwds[0])).kind).toBe('no');
			expect((await adapter.verify(world.ctx, world.ids.target, world.cwds[1])).kind).toBe('no');
		});

		it('an id that exists nowhere does not verify', SLOW, async () => {
			expect((await adapter.verify(world.ctx, world.ids.absent)).kind).toBe('no');
		});
	});

	describe('messages', () => {
		it("reads the target's text, then nothing new from its cursor; an id that exists nowhere reads undefined", SLOW, async () => {
			const first = await adapter.messages(world.ctx, world.ids.target);
			expect(first, 'the target is on disk').toBeDefined();
			expect(first?.messages.length).toBeGreaterThan(0);
			for (const m of first?.messages ?? []) expect(m.text.trim()).not.toBe('');
			const again = await adapter.messages(world.ctx, world.ids.target, first?.cursor);
			expect(again?.messages).toEqual([]);
			expect(again?.restart).toBe(false);
			expect(await adapter.messages(world.ctx, world.ids.absent)).toBeUndefined();
		});

		it('leaves the store as it found it (no sidecar, no byte changed)', SLOW, async () => {
			const before = world.snapshotOthers([]);
			await adapter.messages(world.ctx, world.ids.target);
			await adapter.messages(world.ctx, world.ids.sibling);
			expect(world.snapshotOthers([])).toEqual(before);
		});
	});

	describe('watchPaths', () => {
		it('when given, their stat moves when the conversations of the cwd change', SLOW, async ({skip}) => {
			const watch = adapter.watchPaths?.bind(adapter);
			if (!watch) return skip();
			const signature = () =>
				watch(world.ctx, world.cwds[0])
					.map(p => {
						const st = fs.statSync(p, {throwIfNoEntry: false});
						return `${p} ${st?.mtimeMs ?? '-'} ${st?.size ?? '-'}`;
					})
					.join('\n');
			const before = signature();
			expect(signature()).toBe(before);
			world.interruptPurge();
			expect(signature()).not.toBe(before);
		});
	});

	describe('artifacts', () => {
		it('plans the target and all its descendants, inside the agent root, nothing of other sessions', SLOW, async () => {
			const plan = await adapter.artifacts(world.ctx, world.ids.target);
			expect(plan.agent).toBe(adapter.id);
			expect(plan.id).toBe(world.ids.target);
			expect([...plan.descendants].sort()).toEqual([...world.ids.targetDescendants].sort());
			expect(plan.items.length).toBeGreaterThan(0);
			expect(plan.totalBytes).toBe(plan.items.reduce((sum, i) => sum + i.bytes, 0));
			const roots = realRoots(world);
			const owners = new Set([world.ids.target, ...world.ids.targetDescendants]);
			for (const item of plan.items) {
				expect(inside(resolvedLocation(item.path), roots), item.path).toBe(true);
				expect(owners.has(item.sessionId), item.sessionId).toBe(true);
				for (const other of [world.ids.sibling, world.ids.old, world.ids.foreign]) {
					expect(item.path.includes(other), item.path).toBe(false);
				}
			}
			for (const descendant of world.ids.targetDescendants) {
				expect(
					plan.items.some(i => i.sessionId === descendant),
					descendant,
				).toBe(true);
			}
		});

		it('an id that exists nowhere has an empty plan', SLOW, async () => {
			const plan = await adapter.artifacts(world.ctx, world.ids.absent);
			expect(plan.items).toEqual([]);
		});
	});

	describe.skipIf(!adapter.capabilities.purge)('purge', () => {
		it('deletes exactly the plan; every other session stays byte-identical', SLOW, async () => {
			const owners = [world.ids.target, ...world.ids.targetDescendants];
			const before = world.snapshotOthers(owners);
			const plan = await adapter.artifacts(world.ctx, world.ids.target);
			const outcome = await adapter.purge(world.ctx, plan);
			expect(new Set(outcome.removed.map(i => `${i.kind} ${i.path} ${i.table ?? ''}`))).toEqual(
				new Set(plan.items.map(i => `${i.kind} ${i.path} ${i.table ?? ''}`)),
			);
			for (const p of planPaths(plan)) expect(fs.existsSync(p), p).toBe(false);
			expect(world.snapshotOthers(owners)).toEqual(before);
			expect(await adapter.residual(world.ctx, world.ids.target)).toEqual([]);
			expect((await adapter.verify(world.ctx, world.ids.target)).kind).toBe('no');
			for (const other of [world.ids.sibling, world.ids.old, world.ids.foreign]) {
				expect(await adapter.verify(world.ctx, other), other).toEqual({kind: 'yes'});
			}
			const {conversations} = await adapter.discover(world.ctx, {cwd: world.cwds[0], since: world.epoch});
			expect(conversations.map(c => c.id)).toEqual([world.ids.sibling]);
		});

		it('after a purge that stopped half-way, residual names what remains and a rerun finishes it', SLOW, async () => {
			const owners = [world.ids.target, ...world.ids.targetDescendants];
			const before = world.snapshotOthers(owners);
			world.interruptPurge();
			const lines = await adapter.residual(world.ctx, world.ids.target);
			for (const child of world.ids.targetDescendants) {
				expect(
					lines.some(l => l.includes(`[child session ${child}]`)),
					`${child} in ${lines.join('\n')}`,
				).toBe(true);
			}
			await purgeNow(adapter, world.ctx, world.ids.target);
			expect(await adapter.residual(world.ctx, world.ids.target)).toEqual([]);
			expect(world.snapshotOthers(owners)).toEqual(before);
		});

		it('never follows a symlink out of the agent root', SLOW, async () => {
			const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-outside-'));
			try {
				fs.writeFileSync(path.join(outside, 'keep.txt'), 'precious');
				fs.mkdirSync(path.join(outside, 'sub'));
				fs.writeFileSync(path.join(outside, 'sub', 'keep2.txt'), 'precious too');
				world.plantEscapeSymlink(outside);
				// The builder may add files out there (what a followed link would reach): all must stay.
				const planted = hashWorld(outside, []);
				const plan = await adapter.artifacts(world.ctx, world.ids.target);
				const roots = realRoots(world);
				for (const item of plan.items) expect(inside(resolvedLocation(item.path), roots), item.path).toBe(true);
				await adapter.purge(world.ctx, plan);
				expect(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('precious');
				expect(fs.readFileSync(path.join(outside, 'sub', 'keep2.txt'), 'utf8')).toBe('precious too');
				expect(hashWorld(outside, [])).toEqual(planted);
			} finally {
				fs.rmSync(outside, {recursive: true, force: true});
			}
		});
	});

	describe('inUse', () => {
		it('is empty when no process uses the conversation', SLOW, async () => {
			await hold(spawnArgvHolder([world.ids.sibling]));
			expect(await adapter.inUse(world.ctx, world.ids.target)).toEqual([]);
		});

		it('names a process whose argv names the id, or a descendant id', SLOW, async () => {
			const byId = await hold(spawnArgvHolder(['--resume', world.ids.target]));
			const holders = await adapter.inUse(world.ctx, world.ids.target);
			expect(holders.map(h => h.pid)).toContain(byId.pid);
			const holder = holders.find(h => h.pid === byId.pid);
			expect(holder?.startTime).toBeGreaterThan(0);
			expect(holder?.reason).toMatch(/argv/);
			await byId.stop();
			const child = world.ids.targetDescendants[0] ?? '';
			const byChild = await hold(spawnArgvHolder([child]));
			expect((await adapter.inUse(world.ctx, world.ids.target)).map(h => h.pid)).toContain(byChild.pid);
		});

		it('names a process holding the conversation files open', SLOW, async ({skip}) => {
			const paths = world.holdPaths(world.ids.target);
			if (paths.length === 0) return skip();
			const holder = await hold(spawnFileHolder(paths));
			const holders = await adapter.inUse(world.ctx, world.ids.target);
			expect(holders.map(h => h.pid)).toContain(holder.pid);
		});

		it('inside a refresh (one scan memo, one process table and one read pool for every call) names the same holders as alone', SLOW, async () => {
			await keepingReadConnections(async reads => holdersAsAlone(reads));
		});

		async function holdersAsAlone(reads: AdapterContext['reads']): Promise<void> {
			const byChild = await hold(spawnArgvHolder([world.ids.targetDescendants[0] ?? world.ids.target]));
			const own = world.holdPaths(world.ids.target);
			const byFile = own.length > 0 ? await hold(spawnFileHolder(own)) : await hold(spawnArgvHolder([world.ids.target]));
			const refresh: AdapterContext = {...world.ctx, refresh: createRefresh(), processes: snapshotTable(world.ctx.processes), reads};
			const pids = async (ctx: AdapterContext, id: string) => (await adapter.inUse(ctx, id)).map(h => h.pid).sort((a, b) => a - b);
			// Asked in another order than alone, so an index built for the first id serves the next.
			for (const id of [world.ids.sibling, world.ids.target, world.ids.foreign]) expect(await pids(refresh, id)).toEqual(await pids(world.ctx, id));
			expect(await pids(refresh, world.ids.target)).toEqual(expect.arrayContaining([byChild.pid, byFile.pid]));
			for (const id of [world.ids.old, world.ids.target, world.ids.foreign])
				expect(await adapter.verify(refresh, id, world.cwds[0])).toEqual(await adapter.verify(world.ctx, id, world.cwds[0]));
			// In a status run's order: every row verified, then the same ids asked about use.
			const status: AdapterContext = {...world.ctx, refresh: createRefresh(), processes: snapshotTable(world.ctx.processes), reads};
			const ids = [world.ids.target, world.ids.sibling, world.ids.old, world.ids.foreign];
			for (const id of ids) expect(await adapter.verify(status, id, world.cwds[0])).toEqual(await adapter.verify(world.ctx, id, world.cwds[0]));
			for (const id of ids) expect(await pids(status, id)).toEqual(await pids(world.ctx, id));
		}

		it("ignores the agent's background service, but not another holder beside it", SLOW, async ({skip}) => {
			const service = world.service;
			if (!service) return skip();
			const svc = await hold(spawnFileHolder(service.holds, service.name, service.args));
			expect(await adapter.inUse(world.ctx, world.ids.target)).toEqual([]);
			const own = world.holdPaths(world.ids.target);
			const other = await hold(own.length > 0 ? spawnFileHolder(own) : spawnArgvHolder(['--session', world.ids.target]));
			const pids = (await adapter.inUse(world.ctx, world.ids.target)).map(h => h.pid);
			expect(pids).toContain(other.pid);
			expect(pids).not.toContain(svc.pid);
		});
	});

	describe('inside a refresh', () => {
		// A refresh may answer from per-id lookups or from a whole-store index (ctx.refresh decides,
		// after `directLookups` ids); every answer must be the one the adapter gives alone. Like
		// discovery's refresh, it reads each database through the connection its pool keeps open.
		it.each([0, 1, 32])('answers discover, verify, inUse, watchPaths and artifacts as alone (direct lookups: %i)', SLOW, async directLookups => {
			await keepingReadConnections(async reads => answersAsAlone(directLookups, reads));
		});

		async function answersAsAlone(directLookups: number, reads: AdapterContext['reads']): Promise<void> {
			const alone = world.ctx;
			const {target, sibling, old, foreign, absent, targetDescendants} = world.ids;
			const ids = [foreign, target, ...targetDescendants.filter(d => adapter.idPattern.test(d)), sibling, old, absent];
			const cwds = [undefined, ...world.cwds];
			const inRefresh: AdapterContext = {...alone, refresh: createRefresh({directLookups}), processes: snapshotTable(alone.processes), reads};
			const pids = async (ctx: AdapterContext, id: string) => (await adapter.inUse(ctx, id)).map(h => `${h.pid} ${h.reason}`).sort();
			const ask = async (ctx: AdapterContext) => {
				const answers: unknown[] = [];
				for (const id of ids) for (const cwd of cwds) answers.push(await adapter.verify(ctx, id, cwd));
				for (const id of ids) answers.push(await pids(ctx, id));
				return answers;
			};
			const expected = await ask(alone);
			// Before and after discover has read the whole store into the refresh.
			expect(await ask(inRefresh)).toEqual(expected);
			for (const cwd of cwds) {
				for (const includeChildren of [false, true]) {
					const query = {...(cwd === undefined ? {} : {cwd}), includeChildren};
					expect(await adapter.discover(inRefresh, query), `discover ${JSON.stringify(query)}`).toEqual(await adapter.discover(alone, query));
				}
			}
			expect(await ask(inRefresh)).toEqual(expected);
			for (const cwd of world.cwds) expect(adapter.watchPaths?.(inRefresh, cwd)).toEqual(adapter.watchPaths?.(alone, cwd));
			expect(await adapter.artifacts(inRefresh, target)).toEqual(await adapter.artifacts(alone, target));
		}
	});

	describe.skipIf(!adapter.liveUses)('live uses', () => {
		// A refresh for a file change reuses the last process listing; the live uses made from it
		// (records, argv, open files of every agent process) are made once for that listing and
		// shared by the conversations list and inUse, and made again for a new listing.
		it('are made once per listing, shared by refreshes on it, and inUse answers as alone', SLOW, async () => {
			await hold(spawnArgvHolder(['--resume', world.ids.target]));
			const table = snapshotTable(world.ctx.processes);
			const listing = new Map<string, unknown>();
			const onListing = (): AdapterContext => ({...world.ctx, refresh: createRefresh({listing}), processes: table});
			const first = onListing();
			const uses = await adapter.liveUses?.(first);
			expect(await adapter.liveUses?.(onListing())).toBe(uses);
			const pids = async (ctx: AdapterContext) => (await adapter.inUse(ctx, world.ids.target)).map(h => `${h.pid} ${h.reason}`).sort();
			expect(await pids(onListing())).toEqual(await pids(world.ctx));
			const next: AdapterContext = {...world.ctx, refresh: createRefresh({listing: new Map()}), processes: snapshotTable(world.ctx.processes)};
			expect(await adapter.liveUses?.(next)).not.toBe(uses);
			expect(await adapter.liveUses?.(next)).toEqual(uses);
		});
	});

	describe('bad ids', () => {
		it('are rejected by every id-taking method before any I/O', SLOW, async () => {
			const before = world.snapshotOthers([]);
			const trap = trapContext(world);
			for (const bad of [...BAD_IDS, `${world.ids.target}\n`, ` ${world.ids.target}`, `${world.ids.target}/..`]) {
				for (const ctx of [trap, world.ctx]) {
					await expect(adapter.verify(ctx, bad), JSON.stringify(bad.slice(0, 40))).rejects.toBeInstanceOf(InvalidIdError);
					await expect(adapter.artifacts(ctx, bad)).rejects.toBeInstanceOf(InvalidIdError);
					await expect(adapter.purge(ctx, planNaming(adapter, bad))).rejects.toBeInstanceOf(InvalidIdError);
					await expect(adapter.residual(ctx, bad)).rejects.toBeInstanceOf(InvalidIdError);
					await expect(adapter.inUse(ctx, bad)).rejects.toBeInstanceOf(InvalidIdError);
					expect(() => adapter.resume(ctx, bad)).toThrow(InvalidIdError);
				}
			}
			expect(world.snapshotOthers([])).toEqual(before);
		});

		it('resume gives argv with the id as one element, never a shell string', SLOW, () => {
			const spec = adapter.resume(world.ctx, world.ids.target);
			expect(spec.argv).toContain(world.ids.target);
			expect(adapter.matchesProcess({pid: 1, ppid: 0, startTime: 1, name: path.basename(spec.argv[0] ?? ''), argv: spec.argv})).toBe(true);
		});
	});

	describe('reads leave no trace (SPEC 4.3)', () => {
		/** Sidecars are files of their own: a state that creates them may add them to a plan or residual. */
		const noSidecars = (lines: readonly string[]) => lines.filter(l => !/-(wal|shm|journal)\b/.test(l));
		/** Every read query's answer; in-use is run but not compared (a live writer is a holder). */
		const answers = async () => {
			const plan = await adapter.artifacts(world.ctx, world.ids.target);
			await adapter.inUse(world.ctx, world.ids.target);
			return {
				recent: (await adapter.discover(world.ctx, {cwd: world.cwds[0], since: world.epoch})).conversations.map(c => c.id),
				all: (await adapter.discover(world.ctx, {includeChildren: true})).conversations.map(c => `${c.id} ${c.title ?? ''} ${c.childCount}`),
				verifyTarget: (await adapter.verify(world.ctx, world.ids.target, world.cwds[0])).kind,
				verifyForeign: (await adapter.verify(world.ctx, world.ids.foreign, world.cwds[0])).kind,
				descendants: [...plan.descendants].sort(),
				plan: noSidecars(plan.items.map(i => `${i.kind} ${i.path} ${i.table ?? ''} ${i.count ?? ''} ${i.sessionId}`)).sort(),
				residual: noSidecars(await adapter.residual(world.ctx, world.ids.target)),
			};
		};
		/** Answers in the clean state, checked against the fixture, then required again in `state`. */
		const check = async (state: () => Promise<void>, liveWriter = false) => {
			const baseline = await answers();
			expect(baseline.recent).toEqual([world.ids.target, world.ids.sibling]);
			expect(baseline.verifyTarget).toBe('yes');
			expect(baseline.verifyForeign).toBe('no');
			expect(baseline.descendants).toEqual([...world.ids.targetDescendants].sort());
			expect(baseline.plan.some(line => line.startsWith('rows '))).toBe(true);
			await state();
			const before = listDatabaseDirs(world, liveWriter);
			expect(await answers()).toEqual(baseline);
			expect(listDatabaseDirs(world, liveWriter)).toEqual(before);
		};

		it('clean database files', SLOW, async ({skip}) => {
			if (world.databases.length === 0) return skip();
			for (const db of world.databases) expect(fs.existsSync(`${db}-wal`)).toBe(false);
			await check(async () => {});
		});

		it('leftover -wal and -shm from a crashed writer, rows only in the WAL', SLOW, async ({skip}) => {
			if (world.databases.length === 0) return skip();
			await check(async () => {
				const writer = await spawnWalWriter(world.databases);
				await writer.crash();
				for (const db of world.databases) expect(fs.existsSync(`${db}-shm`), db).toBe(true);
			});
		});

		it('-wal without -shm', SLOW, async ({skip}) => {
			if (world.databases.length === 0) return skip();
			await check(async () => {
				const writer = await spawnWalWriter(world.databases);
				await writer.crash();
				for (const db of world.databases) fs.rmSync(`${db}-shm`);
			});
		});

		it('a live writer holding the databases open in WAL mode', SLOW, async ({skip}) => {
			if (world.databases.length === 0) return skip();
			await check(async () => {
				await hold(spawnWalWriter(world.databases));
			}, true);
		});
	});
}
