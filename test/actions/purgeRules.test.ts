import fs from 'node:fs';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import {confirmPurge, expectedConfirmation, planFingerprint, type PurgePlanView, type PurgeProgress} from '../../src/actions/purge.js';
import type {AgentAdapter, InUseHolder, PlanItem, PurgeOutcome, PurgePlan} from '../../src/adapters/types.js';
import {captureToTrash} from '../../src/actions/trash.js';
import {entryDir, entryIds, readMeta} from '../../src/actions/trashStore.js';
import {createFixtureAdapter} from './support/fixtureAdapter.js';
import {createTestWorld, type TestWorld} from './support/world.js';

// SPEC 6.3 as the purge action runs it, on an adapter whose answers the test scripts: what is
// refused and why, what is re-checked before the first deletion, what is recorded, and what a
// purge reports while it runs.

const ID = '0123abcd-0000-4000-8000-00000000000a';
const OTHER = '0123abcd-0000-4000-8000-00000000000b';

interface Script {
	holders: readonly InUseHolder[];
	items: PlanItem[];
	outcome: PurgeOutcome;
	residual: readonly string[];
	purged: string[];
	/** Every plan handed to the adapter's purge. */
	plans: PurgePlan[];
	purgeThrows?: string;
	/** What artifacts() answers from its second call on (the recheck), when set. */
	itemsLater?: PlanItem[];
}

let world: TestWorld;
let script: Script;
let calls: number;
beforeEach(() => {
	world = createTestWorld('mam-purge-rules-');
	calls = 0;
	script = {holders: [], items: [item('/r/a'), item('/r/b', OTHER)], outcome: {removed: [item('/r/a')], warnings: []}, residual: [], purged: [], plans: []};
});
afterEach(() => world.dispose());

function item(p: string, sessionId = ID, kind: PlanItem['kind'] = 'file'): PlanItem {
	return {kind, path: p, bytes: 5, sessionId, description: p};
}

function scripted(over: Partial<AgentAdapter> = {}): AgentAdapter {
	return {
		...createFixtureAdapter(),
		async inUse() {
			return script.holders;
		},
		async artifacts(_ctx, id): Promise<PurgePlan> {
			calls += 1;
			const items = calls > 1 && script.itemsLater ? script.itemsLater : script.items;
			return {agent: 'claude', id, descendants: [OTHER], items, totalBytes: items.length * 5};
		},
		async purge(_ctx, plan) {
			if (script.purgeThrows) throw new Error(script.purgeThrows);
			script.purged.push(plan.id);
			script.plans.push(plan);
			return script.outcome;
		},
		async residual() {
			return script.residual;
		},
		...over,
	};
}

function actions(adapter: AgentAdapter = scripted()) {
	return createActions(world.deps(undefined, {adapterFor: agent => (agent === 'claude' ? adapter : undefined), now: () => 4242}));
}

async function planOf(ref: Parameters<ReturnType<typeof actions>['purgePlan']>[0], adapter?: AgentAdapter): Promise<PurgePlanView> {
	const plan = await actions(adapter).purgePlan(ref);
	if (!plan.ok) throw new Error(plan.error.message);
	return plan.value;
}

const holder: InUseHolder = {pid: 77, startTime: 1, command: 'claude --resume x', reason: 'argv names x'};

describe('which conversation a purge is about', () => {
	it('a name with no row, an unknown agent, a bad id, an unpinned row and an agent without purge are refused, each with its kind', async () => {
		const a = actions();
		expect(await a.purgePlan({name: 'nobody'})).toEqual({ok: false, error: {kind: 'not-found', message: 'no session named "nobody"'}});
		expect(await a.purgePlan({agent: 'vim', id: ID})).toEqual({ok: false, error: {kind: 'unknown-agent', message: 'unknown agent "vim"'}});
		expect(await a.purgePlan({agent: 'claude', id: '../x'})).toMatchObject({ok: false, error: {kind: 'bad-input'}});
		world.registry.insert({name: 'loose', agent: 'claude', cwd: '/w', status: 'stopped', epoch: 0});
		expect(await a.purgePlan({name: 'loose'})).toEqual({
			ok: false,
			error: {kind: 'unpinned', message: 'session loose has no conversation id pinned: there is nothing of it on disk to purge'},
		});
		const noPurge = scripted({capabilities: {resume: true, purge: false}, label: 'Nopurge'});
		expect(await actions(noPurge).purgePlan({agent: 'claude', id: ID})).toEqual({
			ok: false,
			error: {kind: 'unsupported', message: 'purging Nopurge conversations is not supported yet'},
		});
		expect(calls).toBe(0);
	});

	it('a row of an agent this build does not know, or with an id its adapter refuses, is refused', async () => {
		world.registry.insert({name: 'other', agent: 'codex', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0});
		expect(await actions().purgePlan({name: 'other'})).toEqual({ok: false, error: {kind: 'unknown-agent', message: 'unknown agent "codex"'}});
		world.registry.insert({name: 'corrupt', agent: 'claude', cwd: '/w', agentSessionId: 'not an id', status: 'stopped', epoch: 0});
		expect(await actions().purgePlan({name: 'corrupt'})).toEqual({ok: false, error: {kind: 'bad-input', message: 'invalid claude session id "not an id"'}});
		expect(calls).toBe(0);
	});

	it('a plan by id has the id as its label; by name, the row and its name', async () => {
		const byId = await planOf({agent: 'claude', id: ID});
		expect(byId).toMatchObject({agent: 'claude', id: ID, label: ID});
		expect(byId.session).toBeUndefined();
		const row = world.registry.insert({name: 'alpha', agent: 'claude', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0});
		const byName = await planOf({name: 'alpha'});
		expect(byName).toMatchObject({label: 'alpha', session: {id: row.id, name: 'alpha'}});
		expect(byName.fingerprint).toBe(planFingerprint(byName.plan));
		// By id, the registered row is found too.
		expect((await planOf({agent: 'claude', id: ID})).label).toBe('alpha');
	});
});

describe('refused while in use', () => {
	it('a process using it: in-use, naming it, and the refusal is audited', async () => {
		script.holders = [holder];
		const plan = await actions().purgePlan({agent: 'claude', id: ID});
		expect(plan).toEqual({
			ok: false,
			error: {kind: 'in-use', message: `conversation ${ID} is in use by pid 77 (claude --resume x): argv names x; nothing was deleted`, holders: [holder]},
		});
		expect(world.registry.auditLog()).toEqual([
			expect.objectContaining({
				session: null,
				action: 'purge',
				outcome: 'refused',
				detail: {agent: 'claude', id: ID, kind: 'in-use', message: expect.stringContaining('is in use by pid 77')},
			}),
		]);
		expect(calls).toBe(0);
	});

	it('a running row: in-use, with its pane and the pids, and how to stop it', async () => {
		world.registry.insert({name: 'live', agent: 'claude', cwd: '/w', agentSessionId: ID, mux: 'tmux', paneId: '%4', status: 'running', epoch: 0});
		expect(await actions().purgePlan({name: 'live'})).toEqual({
			ok: false,
			error: {kind: 'in-use', message: 'session live is running in pane %4; stop it first (mam-tui stop live); nothing was deleted', holders: []},
		});
		expect(world.registry.auditLog('live')).toEqual([expect.objectContaining({session: 'live', action: 'purge', outcome: 'refused'})]);
		script.holders = [holder, {...holder, pid: 78}];
		expect(await actions().purgePlan({name: 'live'})).toMatchObject({
			ok: false,
			error: {message: 'session live is running in pane %4 (pid 77, 78); stop it first (mam-tui stop live); nothing was deleted'},
		});
		world.registry.insert({name: 'paneless', agent: 'claude', cwd: '/w', agentSessionId: OTHER, status: 'running', epoch: 0});
		script.holders = [];
		expect(await actions().purgePlan({name: 'paneless'})).toMatchObject({
			ok: false,
			error: {message: 'session paneless is running; stop it first (mam-tui stop paneless); nothing was deleted'},
		});
		// A stopped row of the same conversation is no obstacle.
		world.registry.insert({name: 'old', agent: 'claude', cwd: '/w', agentSessionId: '0123abcd-0000-4000-8000-00000000000c', status: 'stopped', epoch: 0});
		expect((await actions().purgePlan({name: 'old'})).ok).toBe(true);
	});
});

describe('confirming', () => {
	it('only the exact text confirms: the label for one plan, `purge N` for several, never an empty list', async () => {
		const one = await planOf({agent: 'claude', id: ID});
		expect(expectedConfirmation([one])).toBe(ID);
		expect(expectedConfirmation([one, one])).toBe('purge 2');
		expect(confirmPurge([one], ID)).toBe(true);
		expect(confirmPurge([one], `${ID} `)).toBe(false);
		expect(confirmPurge([one, one], 'purge 2')).toBe(true);
		expect(confirmPurge([one, one], ID)).toBe(false);
		expect(confirmPurge([], 'purge 0')).toBe(false);
		expect(await actions().purge([one], 'yes')).toEqual({
			ok: false,
			error: {kind: 'not-confirmed', message: `purge cancelled: the confirmation did not match (type ${JSON.stringify(ID)}); nothing was deleted`},
		});
		expect(script.purged).toEqual([]);
	});

	it('the fingerprint is the artifacts: not their order, sizes or counts; a new item or a new table changes it', () => {
		const base: PurgePlan = {agent: 'claude', id: ID, descendants: ['b', 'a'], items: [item('/r/a'), item('/r/b')], totalBytes: 10};
		const same = planFingerprint(base);
		expect(planFingerprint({...base, items: [{...item('/r/b'), bytes: 99, count: 3}, item('/r/a')], descendants: ['a', 'b'], totalBytes: 1})).toBe(same);
		expect(planFingerprint({...base, items: [...base.items, item('/r/c')]})).not.toBe(same);
		expect(planFingerprint({...base, items: [{...item('/r/a'), table: 'messages', kind: 'rows'}, item('/r/b')]})).not.toBe(same);
		expect(planFingerprint({...base, items: [{...item('/r/a'), table: 'parts', kind: 'rows'}, item('/r/b')]})).not.toBe(
			planFingerprint({...base, items: [{...item('/r/a'), table: 'messages', kind: 'rows'}, item('/r/b')]}),
		);
		expect(planFingerprint({...base, items: [item('/r/a', 'x'), item('/r/b')]})).not.toBe(same);
		expect(planFingerprint({...base, descendants: ['a']})).not.toBe(same);
		expect(planFingerprint({...base, id: OTHER})).not.toBe(same);
		expect(planFingerprint({...base, agent: 'codex'})).not.toBe(same);
		// Fields joined apart: a path and a table that run together are not another pair.
		expect(planFingerprint({...base, items: [{...item('/r/ab'), table: ''}]})).not.toBe(planFingerprint({...base, items: [{...item('/r/a'), table: 'b'}]}));
	});
});

describe('re-checked before the first deletion', () => {
	it('a refused recheck of a registered session is audited under its name', async () => {
		world.registry.insert({name: 'alpha', agent: 'claude', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0});
		const view = await planOf({name: 'alpha'});
		script.itemsLater = [];
		expect((await actions().purge([view], 'alpha', {hard: true})).ok).toBe(false);
		expect(world.registry.auditLog('alpha').at(-1)).toMatchObject({session: 'alpha', step: 'recheck', outcome: 'refused'});
		script.itemsLater = undefined;
		script.purgeThrows = 'boom';
		expect((await actions().purge([view], 'alpha', {hard: true})).ok).toBe(false);
		expect(world.registry.auditLog('alpha').at(-1)).toMatchObject({session: 'alpha', action: 'purge', outcome: 'failed'});
	});

	it('a plan whose artifacts changed is refused, says how, and deletes nothing', async () => {
		const view = await planOf({agent: 'claude', id: ID});
		script.itemsLater = [...script.items, item('/r/new')];
		const events: PurgeProgress[] = [];
		const done = await actions().purge([view], ID, {onProgress: e => events.push(e), hard: true});
		expect(done).toEqual({
			ok: false,
			error: {
				kind: 'changed',
				message: `what ${ID} resolves to changed since the plan was shown (3 items now, 2 before); review the plan again. Nothing was deleted.`,
			},
		});
		expect(script.purged).toEqual([]);
		expect(events).toEqual([
			{label: ID, step: 'recheck', state: 'running', message: 'checking identity and use again'},
			{label: ID, step: 'recheck', state: 'failed', message: done.ok ? '' : done.error.message},
		]);
		expect(world.registry.auditLog().at(-1)).toMatchObject({
			action: 'purge',
			step: 'recheck',
			outcome: 'refused',
			detail: {agent: 'claude', id: ID, message: expect.stringContaining('changed since the plan')},
		});
	});

	it('a conversation that came into use after the plan is refused, and nothing of a bulk purge is deleted', async () => {
		const first = await planOf({agent: 'claude', id: ID});
		const second = await planOf({agent: 'claude', id: OTHER});
		let asked = 0;
		const adapter = scripted({
			async inUse(_ctx, id) {
				asked += 1;
				return id === OTHER ? [holder] : [];
			},
		});
		const done = await actions(adapter).purge([first, second], 'purge 2', {hard: true});
		expect(done).toMatchObject({ok: false, error: {kind: 'in-use'}});
		expect(asked).toBe(2);
		expect(script.purged).toEqual([]);
	});

	it('deletes the plan that was shown: the recheck only compares, and nothing plans a third time', async () => {
		const view = await planOf({agent: 'claude', id: ID});
		// Same artifacts, other sizes (an agent appended a line): the fingerprint holds, the plan is the shown one.
		script.itemsLater = script.items.map(i => ({...i, bytes: 99}));
		const done = await actions().purge([view], ID, {hard: true});
		expect(done.ok).toBe(true);
		expect(script.plans).toHaveLength(1);
		expect(script.plans[0]).toBe(view.plan);
		expect(calls).toBe(2);
	});

	it('an agent that went away since the plan is refused', async () => {
		const view = await planOf({agent: 'claude', id: ID});
		const gone = createActions(world.deps(undefined, {adapterFor: () => undefined}));
		expect(await gone.purge([view], ID, {hard: true})).toEqual({ok: false, error: {kind: 'unknown-agent', message: 'unknown agent "claude"'}});
	});
});

describe('a purge that runs', () => {
	it('records its intent first, reports each step, marks the rows and audits the result', async () => {
		const row = world.registry.insert({name: 'alpha', agent: 'claude', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0, extra: {keep: 1}});
		const view = await planOf({name: 'alpha'});
		script.outcome = {removed: [item('/r/a'), item('/r/b', OTHER)], warnings: ['w1']};
		const events: PurgeProgress[] = [];
		// While the agent's delete runs, the row already says a purge is under way (a killed purge shows).
		let during: unknown;
		const adapter = scripted({
			async purge() {
				during = world.registry.getById(row.id)?.extra;
				return script.outcome;
			},
		});
		const done = await actions(adapter).purge([view], 'alpha', {onProgress: e => events.push(e), hard: true});
		expect(during).toEqual({keep: 1, purge: {state: 'purging', at: 4242, items: 2}});
		expect(done).toEqual({ok: true, value: [{label: 'alpha', agent: 'claude', id: ID, removed: script.outcome.removed, warnings: ['w1'], residual: []}]});
		expect(events.map(e => `${e.step} ${e.state}: ${e.message}`)).toEqual([
			'recheck running: checking identity and use again',
			'recheck done: unchanged and not in use',
			'delete running: deleting 2 items of alpha',
			'delete done: removed 2 items; 1 warnings',
			'residual running: scanning for what is left',
			'residual done: nothing left',
		]);
		const after = world.registry.getById(row.id);
		expect(after?.status).toBe('purged');
		expect(after?.extra).toEqual({keep: 1, purge: {state: 'done', at: 4242}});
		const log = world.registry.auditLog('alpha');
		expect(log.map(e => e.action)).toEqual(['purge', 'purge']);
		expect(log.map(e => [e.step, e.outcome])).toEqual([
			['delete', 'started'],
			[null, 'ok'],
		]);
		expect(log[0]?.detail).toEqual({agent: 'claude', id: ID, items: 2, bytes: 10, descendants: [OTHER], hard: true});
		expect(log[1]?.detail).toMatchObject({removed: 2, warnings: ['w1'], residual: [], trashId: null});
	});

	it('what is left, and a database the agent holds, make it a residual purge, said so everywhere', async () => {
		const row = world.registry.insert({name: 'alpha', agent: 'claude', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0});
		const view = await planOf({name: 'alpha'});
		script.outcome = {removed: [], warnings: [], held: ['/r/db: held open']};
		script.residual = ['/r/a'];
		const events: PurgeProgress[] = [];
		const done = await actions().purge([view], 'alpha', {onProgress: e => events.push(e), hard: true});
		expect(done.ok && done.value[0]?.residual).toEqual(['/r/db: held open', '/r/a']);
		expect(events.slice(-3).map(e => `${e.step} ${e.state}: ${e.message}`)).toEqual([
			'delete done: removed 0 items',
			'residual running: scanning for what is left',
			'residual failed: 2 left',
		]);
		expect(world.registry.getById(row.id)?.extra).toEqual({purge: {state: 'residual', at: 4242, residual: ['/r/db: held open', '/r/a']}});
		expect(world.registry.auditLog('alpha').at(-1)).toMatchObject({outcome: 'failed', detail: {residual: ['/r/db: held open', '/r/a']}});
	});

	it('a delete that throws is a failed purge, audited, and says to run it again', async () => {
		const view = await planOf({agent: 'claude', id: ID});
		script.purgeThrows = 'disk on fire';
		expect(await actions().purge([view], ID, {hard: true})).toEqual({
			ok: false,
			error: {kind: 'failed', message: `purging ${ID} failed: disk on fire; run the purge again to finish it`},
		});
		expect(world.registry.auditLog().at(-1)).toMatchObject({
			session: null,
			action: 'purge',
			outcome: 'failed',
			detail: {agent: 'claude', id: ID, message: 'disk on fire'},
		});
	});

	it('a bulk purge deletes each plan in order and gives one result each', async () => {
		const views = [await planOf({agent: 'claude', id: ID}), await planOf({agent: 'claude', id: OTHER})];
		const done = await actions().purge(views, 'purge 2', {hard: true});
		expect(done.ok && done.value.map(r => r.id)).toEqual([ID, OTHER]);
		expect(script.purged).toEqual([ID, OTHER]);
	});
});

describe('the trash a purge fills', () => {
	const trashDirOf = () => path.join(world.dir, 'trash');

	function trashActions() {
		return createActions(world.deps(undefined, {adapterFor: agent => (agent === 'claude' ? scripted() : undefined), now: () => 4242, trashDir: trashDirOf()}));
	}

	/** Two files of the conversation on disk, so the entry holds something. */
	function filesOnDisk(): void {
		script.items = ['a.jsonl', 'b.jsonl'].map(name => {
			const file = path.join(world.home, name);
			fs.writeFileSync(file, `${name}\n`);
			return item(file);
		});
	}

	async function trashPlanOf(ref: Parameters<ReturnType<typeof trashActions>['purgePlan']>[0]): Promise<PurgePlanView> {
		const plan = await trashActions().purgePlan(ref);
		if (!plan.ok) throw new Error(plan.error.message);
		return plan.value;
	}

	it("records the session's name with the entry, or none for a conversation purged by id", async () => {
		filesOnDisk();
		world.registry.insert({name: 'alpha', agent: 'claude', cwd: '/w', agentSessionId: ID, status: 'stopped', epoch: 0});
		const named = await trashActions().purge([await trashPlanOf({name: 'alpha'})], 'alpha');
		const namedId = named.ok ? named.value[0]?.trashId : undefined;
		expect(readMeta(entryDir(trashDirOf(), namedId ?? '')), 'the entry of alpha').toMatchObject({
			session: 'alpha',
			label: 'alpha',
			conversation: ID,
			state: 'done',
		});
		const byId = await trashActions().purge([await trashPlanOf({agent: 'claude', id: OTHER})], OTHER);
		const byIdId = byId.ok ? byId.value[0]?.trashId : undefined;
		expect(readMeta(entryDir(trashDirOf(), byIdId ?? '')), 'the entry by id').toMatchObject({session: null, label: OTHER, conversation: OTHER});
	});

	it('a rerun finishes the entry an interrupted purge of the same conversation left, and opens no second one', async () => {
		filesOnDisk();
		const view = await trashPlanOf({agent: 'claude', id: ID});
		// A purge that died after copying: its entry is `ready`, its writer gone.
		const gone = {pid: 2 ** 22 + 5, startTime: 1};
		const left = await captureToTrash(
			trashDirOf(),
			{agent: 'claude', conversation: ID, label: ID, session: null, home: world.home, plan: view.plan},
			gone,
			1000,
		);
		const done = await trashActions().purge([view], ID);
		expect(done.ok && done.value[0]?.trashId).toBe(left.meta.purgeId);
		expect(entryIds(trashDirOf())).toEqual([left.meta.purgeId]);
		expect(readMeta(left.dir)?.state).toBe('done');
	});
});
