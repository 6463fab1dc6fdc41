import crypto from 'node:crypto';
import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, afterEach, describe, expect, it} from 'vitest';
import {exitCodeFor} from '../../src/actions/cliSupport.js';
import {createActions} from '../../src/actions/index.js';
import {EXIT} from '../../src/domain/exitCodes.js';
import {disposeStandinScript, installTestStandin, readStandinRecords} from '../support/standin.js';
import {fixtureRoot, installFixtureDeleteCommand, snapshotTree, writeFixtureConversation} from './support/fixtureAdapter.js';
import {createTestWorld, type TestWorld} from './support/world.js';
import {eventually} from '../helpers/poll.js';

let world: TestWorld;
const children: ChildProcess[] = [];

afterEach(() => {
	for (const child of children.splice(0)) child.kill('SIGKILL');
	world?.dispose();
});

afterAll(() => disposeStandinScript());

const uuid = () => crypto.randomUUID();

interface Scene {
	readonly a: string;
	readonly child: string;
	readonly b: string;
	readonly c: string;
}

/** Three conversations side by side; `a` has a child. Rows for a and b. */
function scene(w: TestWorld, deleteFails = false): Scene {
	installFixtureDeleteCommand(w.binDir, deleteFails);
	const s = {a: uuid(), child: uuid(), b: uuid(), c: uuid()};
	writeFixtureConversation(w.home, {id: s.a, cwd: w.project});
	writeFixtureConversation(w.home, {id: s.child, cwd: w.project, parent: s.a});
	writeFixtureConversation(w.home, {id: s.b, cwd: w.project});
	writeFixtureConversation(w.home, {id: s.c, cwd: w.project});
	w.registry.insert({name: 'alpha', agent: 'claude', cwd: w.project, agentSessionId: s.a, status: 'stopped', epoch: 0});
	w.registry.insert({name: 'beta', agent: 'claude', cwd: w.project, agentSessionId: s.b, status: 'stopped', epoch: 0});
	return s;
}

/** Everything of the conversations in `ids`, for byte-identity checks (the shared index by its lines). */
function otherFiles(w: TestWorld, ids: readonly string[]): Record<string, string> {
	const tree = snapshotTree(fixtureRoot(w.home));
	const keep = Object.entries(tree).filter(([file]) => ids.some(id => file.includes(id)));
	const index = fs
		.readFileSync(path.join(fixtureRoot(w.home), 'index.jsonl'), 'utf8')
		.split('\n')
		.filter(l => ids.some(id => l.includes(id)));
	return {...Object.fromEntries(keep), index: index.join('\n')};
}

describe('purge', {timeout: 30_000}, () => {
	it('deletes the session and its child, leaves every other session byte-identical, marks the row purged', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const others = otherFiles(world, [s.b, s.c]);
		const actions = createActions(world.deps(undefined));
		const plan = await actions.purgePlan({name: 'alpha'});
		expect(plan.ok).toBe(true);
		if (!plan.ok) return;
		expect(plan.value.plan.descendants).toEqual([s.child]);
		expect(plan.value.plan.items.some(i => i.sessionId === s.child && i.description === 'sub-agent transcript')).toBe(true);
		expect(actions.expectedConfirmation([plan.value])).toBe('alpha');
		const result = await actions.purge([plan.value], 'alpha');
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		expect(result.value[0]?.residual).toEqual([]);
		expect(await world.adapter.residual(world.context, s.a)).toEqual([]);
		expect(otherFiles(world, [s.b, s.c])).toEqual(others);
		const row = world.registry.get('alpha');
		expect(row?.status).toBe('purged');
		expect(row?.extra['purge']).toMatchObject({state: 'done'});
		expect(world.registry.get('beta')?.status).toBe('stopped');
		expect(world.registry.auditLog('alpha').map(a => `${a.step ?? '-'}:${a.outcome}`)).toEqual(['delete:started', '-:ok']);
	});

	it('accepts only the exact name: anything else cancels and deletes nothing', async () => {
		world = createTestWorld('mam-purge-');
		scene(world);
		const before = snapshotTree(world.home);
		const actions = createActions(world.deps(undefined));
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		for (const typed of ['', 'alph', 'alpha ', ' alpha', 'ALPHA', 'purge 1', 'y', 'yes', '\u001b']) {
			expect(actions.confirmPurge([plan.value], typed)).toBe(false);
			const result = await actions.purge([plan.value], typed);
			expect(!result.ok && result.error.kind).toBe('not-confirmed');
		}
		expect(snapshotTree(world.home)).toEqual(before);
		expect(world.registry.get('alpha')?.status).toBe('stopped');
	});

	it('needs `purge N` for a bulk purge of N sessions', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const others = otherFiles(world, [s.c]);
		const actions = createActions(world.deps(undefined));
		const plans = await Promise.all([actions.purgePlan({name: 'alpha'}), actions.purgePlan({name: 'beta'})]);
		const views = plans.map(p => {
			if (!p.ok) throw new Error(p.error.message);
			return p.value;
		});
		expect(actions.expectedConfirmation(views)).toBe('purge 2');
		const before = snapshotTree(world.home);
		expect(actions.confirmPurge(views, 'alpha')).toBe(false);
		expect((await actions.purge(views, 'alpha')).ok).toBe(false);
		expect(snapshotTree(world.home)).toEqual(before);
		const result = await actions.purge(views, 'purge 2');
		expect(result.ok && result.value.map(r => r.residual.length)).toEqual([0, 0]);
		expect(otherFiles(world, [s.c])).toEqual(others);
		expect(world.registry.list().map(r => r.status)).toEqual(['purged', 'purged']);
	});

	it('refuses a running session as in use (exit 4), naming the pane and the pids, and says to stop it first', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		world.registry.insert({name: 'live', agent: 'claude', cwd: world.project, agentSessionId: s.c, status: 'running', mux: 'tmux', paneId: '%3', epoch: 0});
		const agent = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)', '--', '--resume', s.c], {stdio: 'ignore'});
		children.push(agent);
		const result = await createActions(world.deps(undefined)).purgePlan({name: 'live'});
		expect(!result.ok && result.error.kind).toBe('in-use');
		expect(!result.ok && exitCodeFor(result.error)).toBe(EXIT.inUse);
		expect(!result.ok && result.error.message).toMatch(new RegExp(`running in pane %3 \\(pid ${agent.pid}\\); stop it first \\(mam-tui stop live\\)`));
		expect(!result.ok && result.error.holders?.map(h => h.pid)).toEqual([agent.pid]);
	});

	it('refuses while a stand-in holds the conversation, naming its pid and command', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const before = snapshotTree(world.home);
		const install = installTestStandin(path.join(world.dir, 'standin-bin'), 'claude');
		const holder = spawn(install.file, ['--resume', s.a], {stdio: ['pipe', 'ignore', 'ignore']});
		children.push(holder);
		const record = await eventually('the stand-in', () => readStandinRecords(install.recordFile)[0]);
		const result = await createActions(world.deps(undefined)).purgePlan({name: 'alpha'});
		expect(result.ok).toBe(false);
		if (result.ok) return;
		expect(result.error.kind).toBe('in-use');
		expect(result.error.holders?.map(h => h.pid)).toEqual([record.pid]);
		expect(result.error.message).toContain(`pid ${record.pid} (`);
		expect(result.error.message).toContain(`--resume ${s.a}`);
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('re-checks use just before deleting: a holder that appeared while the dialog was open stops it', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const actions = createActions(world.deps(undefined));
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', s.a], {stdio: 'ignore'});
		children.push(holder);
		await eventually('the holder', async () => (await world.context.processes.get(holder.pid ?? -1))?.argv.includes(s.a));
		const before = snapshotTree(world.home);
		const result = await actions.purge([plan.value], 'alpha');
		expect(!result.ok && result.error.kind).toBe('in-use');
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('re-checks identity just before deleting: a plan that no longer matches deletes nothing', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const actions = createActions(world.deps(undefined));
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		// A new sub-agent conversation appeared after the plan was shown.
		writeFixtureConversation(world.home, {id: uuid(), cwd: world.project, parent: s.a});
		const before = snapshotTree(world.home);
		const result = await actions.purge([plan.value], 'alpha');
		expect(!result.ok && result.error.kind).toBe('changed');
		expect(snapshotTree(world.home)).toEqual(before);
	});

	it('reports the residual when the agent delete command fails', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world, true);
		const actions = createActions(world.deps(undefined));
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		const result = await actions.purge([plan.value], 'alpha');
		expect(result.ok).toBe(true);
		if (!result.ok) return;
		const [only] = result.value;
		expect(only?.warnings.join('\n')).toMatch(/fixture-agent delete failed: exit 1/);
		expect(only?.residual).toEqual([
			path.join(fixtureRoot(world.home), 'store', `${s.a}.row`),
			`${path.join(fixtureRoot(world.home), 'store', `${s.child}.row`)} [child session ${s.child}]`,
		]);
		expect(world.registry.get('alpha')?.extra['purge']).toMatchObject({state: 'residual'});
	});

	it('purges a purged row again (finishing an interrupted purge) and an unregistered conversation by id', async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const actions = createActions(world.deps(undefined));
		const first = await actions.purgePlan({name: 'alpha'});
		if (!first.ok) throw new Error(first.error.message);
		await actions.purge([first.value], 'alpha');
		const again = await actions.purgePlan({name: 'alpha'});
		expect(again.ok && again.value.plan.items).toEqual([]);
		if (!again.ok) return;
		expect((await actions.purge([again.value], 'alpha')).ok).toBe(true);
		const byId = await actions.purgePlan({agent: 'claude', id: s.c});
		if (!byId.ok) throw new Error(byId.error.message);
		expect(byId.value.label).toBe(s.c);
		const done = await actions.purge([byId.value], s.c);
		expect(done.ok && done.value[0]?.residual).toEqual([]);
		expect(world.registry.auditLog().some(a => a.session === null && a.action === 'purge' && a.outcome === 'ok')).toBe(true);
	});

	it('rejects ids that do not match the pattern and unknown names', async () => {
		world = createTestWorld('mam-purge-');
		const actions = createActions(world.deps(undefined));
		expect(await actions.purgePlan({agent: 'claude', id: '../x'})).toMatchObject({ok: false, error: {kind: 'bad-input'}});
		expect(await actions.purgePlan({name: 'nobody'})).toMatchObject({ok: false, error: {kind: 'not-found'}});
		world.registry.insert({name: 'fresh', agent: 'claude', cwd: world.project, status: 'stopped', epoch: 0});
		expect(await actions.purgePlan({name: 'fresh'})).toMatchObject({ok: false, error: {kind: 'unpinned'}});
	});
});

describe('purge and the search index', () => {
	it("erases the conversation's and its children's rows from the index in the same operation", async () => {
		world = createTestWorld('mam-purge-');
		const s = scene(world);
		const forgotten: {agent: string; ids: readonly string[]}[] = [];
		const actions = createActions({
			...world.deps(undefined),
			searchIndex: {forget: (agent, ids) => void forgotten.push({agent, ids}), indexAgain: async () => {}},
		});
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		const result = await actions.purge([plan.value], 'alpha');
		expect(result.ok).toBe(true);
		expect(forgotten).toEqual([{agent: 'claude', ids: [s.a, s.child]}]);
	});

	it('says so, and still finishes the purge, when the index cannot be cleared', async () => {
		world = createTestWorld('mam-purge-');
		scene(world);
		const actions = createActions({
			...world.deps(undefined),
			searchIndex: {
				forget: () => {
					throw new Error('disk full');
				},
				indexAgain: async () => {},
			},
		});
		const plan = await actions.purgePlan({name: 'alpha'});
		if (!plan.ok) throw new Error(plan.error.message);
		const result = await actions.purge([plan.value], 'alpha');
		if (!result.ok) throw new Error(result.error.message);
		expect(result.value[0]?.warnings.join('\n')).toMatch(/search index could not be cleared .*disk full/);
	});
});
