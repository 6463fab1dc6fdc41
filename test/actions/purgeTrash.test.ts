import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {createActions} from '../../src/actions/index.js';
import {purgeConfirmed, purgePlan} from '../../src/actions/purge.js';
import {restorePurge, trashEmpty, trashList} from '../../src/actions/trashActions.js';
import type {ActionDeps} from '../../src/actions/types.js';
import {claudeAdapter} from '../../src/adapters/claude.js';
import {codexAdapter} from '../../src/adapters/codex.js';
import {opencodeAdapter} from '../../src/adapters/opencode.js';
import type {AgentAdapter} from '../../src/adapters/types.js';
import {DEFAULT_CONFIG} from '../../src/config/config.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {silentLogger} from '../../src/system/logger.js';
import {createUiController} from '../../src/ui/controller.js';
import {resolveCommand} from '../../components/input/keymap.js';
import {buildClaudeFixture} from '../adapters/fixtures/claude.js';
import {buildCodexFixture} from '../adapters/fixtures/codex.js';
import {buildOpencodeFixture} from '../adapters/fixtures/opencode.js';
import {ParseCache} from '../../src/adapters/common/refresh.js';
import {forgetInMemo, ParseMemo, parseMemoPath} from '../../src/system/parseMemo.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';

/**
 * Purge into the trash, restore, empty (issue 18 item 4), and the erasure of item 3, against each
 * agent's fixture home in its real format with real sqlite files.
 */

const cases: readonly [string, () => FixtureWorld, AgentAdapter][] = [
	['claude', buildClaudeFixture, claudeAdapter],
	['codex', buildCodexFixture, codexAdapter],
	['opencode', buildOpencodeFixture, opencodeAdapter],
];

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

function depsFor(fx: FixtureWorld, adapter: AgentAdapter): ActionDeps & {readonly stateDir: string} {
	const state = fs.mkdtempSync(path.join(fx.ctx.tmpDir, 'mam-'));
	const registry = Registry.open(path.join(state, 'registry.db'));
	cleanups.push(() => registry.close());
	// As the CLI's world: one parse cache for the process, its memo under $MAM_HOME.
	const parses = new ParseCache(new ParseMemo(parseMemoPath(state), {appVersion: 'test', flushDelayMs: 60_000}));
	cleanups.push(() => parses.close());
	return {
		stateDir: state,
		parseMemo: {forget: paths => forgetInMemo(parseMemoPath(state), paths)},
		registry,
		mux: () => Promise.reject(new Error('no multiplexer in this test')),
		adapterFor: agent => (agent === adapter.id ? adapter : undefined),
		context: {...fx.ctx, parses},
		processes: fx.ctx.processes,
		config: DEFAULT_CONFIG,
		now: Date.now,
		trashDir: path.join(state, 'trash'),
	};
}

/** Every file under `dir` whose bytes contain `needle` (what `grep -a -r -l` finds). */
function filesNaming(dir: string, needle: string): string[] {
	const out: string[] = [];
	const walk = (d: string) => {
		for (const e of fs.readdirSync(d, {withFileTypes: true})) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.isFile() && fs.readFileSync(p).includes(needle)) out.push(p);
		}
	};
	walk(dir);
	return out;
}

async function purge(deps: ActionDeps, agent: string, id: string, hard = false) {
	const plan = await purgePlan(deps, {agent, id});
	if (!plan.ok) throw new Error(plan.error.message);
	const done = await purgeConfirmed(deps, [plan.value], plan.value.label, {hard});
	if (!done.ok) throw new Error(done.error.message);
	return done.value[0];
}

describe.each(cases)('%s: purge to the trash', (agent, build, adapter) => {
	it('leaves no byte naming the conversation, keeps every other one identical, and restores it byte for byte', async () => {
		const fx = build();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, adapter);
		const id = fx.ids.target;
		const gone = [id, ...fx.ids.targetDescendants];
		const whole = fx.snapshotOthers([]);
		const others = fx.snapshotOthers(gone);
		// A dashboard ran before: $MAM_HOME's parse memo holds what it parsed of the conversation.
		await adapter.discover(deps.context, {includeChildren: true});
		deps.context.parses?.persist();
		const memoFiles = () => filesNaming(deps.stateDir, id).filter(f => path.basename(f).startsWith('parse-memo.db'));
		if (agent !== 'opencode') expect(memoFiles()).not.toEqual([]);

		const result = await purge(deps, agent, id);
		expect(result?.residual).toEqual([]);
		expect(result?.trashId).toMatch(/^\d{8}-\d{6}-[a-z]+-[0-9a-f]{6}$/);
		// Erased, not just unlinked: no file under the home holds the id in any byte (freed sqlite pages included).
		expect(filesNaming(fx.home, id)).toEqual([]);
		// Nor mam-tui's own parse memo, with the batch the purge's own reads staged written too.
		deps.context.parses?.persist();
		expect(memoFiles()).toEqual([]);
		expect(fx.snapshotOthers(gone)).toEqual(others);
		const listed = await trashList(deps);
		expect(listed.ok && listed.value.map(t => [t.purgeId, t.state])).toEqual([[result?.trashId, 'done']]);

		const restored = await restorePurge(deps, result?.trashId ?? '');
		expect(restored.ok ? restored.value.resume : restored.error.message).toEqual({kind: 'yes'});
		expect(fx.snapshotOthers([])).toEqual(whole);
		expect((await trashList(deps)).ok && (await trashList(deps))).toMatchObject({value: []});
		const audit = deps.registry.auditLog().map(a => `${a.action}:${a.outcome}`);
		expect(audit).toContain('restore:ok');
	});

	it('remembers whose home it purged: a restore run from another home checks resumability where the files went back', async () => {
		const fx = build();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, adapter);
		const result = await purge(deps, agent, fx.ids.target);
		// `purge --home X`, then a plain `restore ID`: the command's own home holds none of it.
		const elsewhere = fs.mkdtempSync(path.join(fx.ctx.tmpDir, 'own-home-'));
		const plain: ActionDeps = {...deps, context: {...fx.ctx, home: elsewhere, ownHome: true}};
		const restored = await restorePurge(plain, result?.trashId ?? '');
		expect(restored.ok ? restored.value.resume : restored.error.message).toEqual({kind: 'yes'});
		expect(restored.ok && restored.value.home).toBe(fx.ctx.home);
	});

	it('a second purge exits clean with nothing left and adds no trash entry; trash empty deletes for good', async () => {
		const fx = build();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, adapter);
		const first = await purge(deps, agent, fx.ids.target);
		const second = await purge(deps, agent, fx.ids.target);
		expect(second?.removed).toEqual([]);
		expect(second?.residual).toEqual([]);
		expect(second?.trashId).toBeUndefined();
		const emptied = await trashEmpty(deps);
		expect(emptied.ok && emptied.value).toEqual([first?.trashId]);
		expect(fs.readdirSync(deps.trashDir ?? '')).toEqual([]);
		const restored = await restorePurge(deps, first?.trashId ?? '');
		expect(restored.ok).toBe(false);
	});

	it('--hard keeps nothing in the trash', async () => {
		const fx = build();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, adapter);
		const result = await purge(deps, agent, fx.ids.target, true);
		expect(result?.trashId).toBeUndefined();
		expect(result?.residual).toEqual([]);
		expect(fs.existsSync(deps.trashDir ?? '') ? fs.readdirSync(deps.trashDir ?? '') : []).toEqual([]);
	});
});

describe('restore refuses', () => {
	it('when a file of the purge is back with other bytes, and restores nothing', async () => {
		const fx = buildClaudeFixture();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, claudeAdapter);
		const plan = await purgePlan(deps, {agent: 'claude', id: fx.ids.target});
		if (!plan.ok) throw new Error(plan.error.message);
		const transcript = plan.value.plan.items.find(i => i.description === 'transcript')?.path ?? '';
		const done = await purgeConfirmed(deps, [plan.value], plan.value.label);
		if (!done.ok) throw new Error(done.error.message);
		fs.writeFileSync(transcript, 'someone else\n');
		const restored = await restorePurge(deps, done.value[0]?.trashId ?? '');
		expect(restored.ok).toBe(false);
		expect(!restored.ok && restored.error.message).toMatch(/would overwrite/);
		expect(fs.readFileSync(transcript, 'utf8')).toBe('someone else\n');
		expect((await trashList(deps)).ok).toBe(true);
	});

	it("when the agent's schema changed since the purge", async () => {
		const fx = buildCodexFixture();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, codexAdapter);
		const result = await purge(deps, 'codex', fx.ids.target);
		const {openDatabase} = await import('../../src/system/sqlite.js');
		const db = openDatabase(path.join(fx.home, '.codex', 'state_5.sqlite'));
		db.exec('ALTER TABLE threads ADD COLUMN added_later TEXT');
		db.close();
		const restored = await restorePurge(deps, result?.trashId ?? '');
		expect(!restored.ok && restored.error.message).toMatch(/schema changed/);
	});
});

describe('claude: lastSessionId in .claude.json and its backups', () => {
	it('goes from the plan, that key only, every other byte kept; nothing is left', async () => {
		const fx = buildClaudeFixture();
		cleanups.push(() => fx.cleanup());
		const deps = depsFor(fx, claudeAdapter);
		const id = fx.ids.target;
		const config = (last: string) =>
			`{\n  "numStartups": 3,\n  "projects": {\n    "${fx.cwds[0]}": {\n      "hasTrustDialogAccepted": true,\n      "lastCost": 0.1,\n      "lastSessionId": "${last}",\n      "lastSessionMetrics": {\n        "frame_duration_ms_count": 13\n      }\n    }\n  }\n}\n`;
		const file = path.join(fx.home, '.claude.json');
		const backup = path.join(fx.home, '.claude', 'backups', '.claude.json.backup.1796119694775');
		fs.mkdirSync(path.dirname(backup), {recursive: true});
		fs.writeFileSync(file, config(id));
		fs.writeFileSync(backup, config(id));
		const result = await purge(deps, 'claude', id);
		expect(result?.residual).toEqual([]);
		const expected = config(id).replace(`      "lastSessionId": "${id}",\n`, '');
		expect(fs.readFileSync(file, 'utf8')).toBe(expected);
		expect(fs.readFileSync(backup, 'utf8')).toBe(expected);
		const again = await purge(deps, 'claude', id);
		expect(again?.residual).toEqual([]);
		// Another conversation's lastSessionId is not touched.
		fs.writeFileSync(file, config(fx.ids.sibling));
		await purge(deps, 'claude', fx.ids.foreign);
		expect(fs.readFileSync(file, 'utf8')).toBe(config(fx.ids.sibling));
	});
});

/** A dashboard's store and controller on a claude fixture, and a wait for a state of the store. */
function dashboardOn(fx: ReturnType<typeof buildClaudeFixture>) {
	const deps = depsFor(fx, claudeAdapter);
	const store = createStore(reducer, initialState());
	const controller = createUiController({
		store,
		actions: createActions(deps),
		registry: deps.registry,
		mux: deps.mux,
		logger: silentLogger,
		now: Date.now,
		refresh: () => {},
		quit: () => {},
		config: DEFAULT_CONFIG,
		adapterFor: () => undefined,
		discoverAll: async () => [],
	});
	const until = async (ok: (s: AppState) => boolean) => {
		while (!ok(store.getState())) await new Promise(resolve => setTimeout(resolve, 20));
	};
	return {deps, store, controller, until};
}

describe('dashboard: u undoes the last purge', () => {
	it('is offered in the notice after a purge, restores it from the trash, and the conversation resumes', async () => {
		expect(resolveCommand('sessions', 'u', {})).toBe('purge.undo');
		const fx = buildClaudeFixture();
		cleanups.push(() => fx.cleanup());
		const {store, controller, until} = dashboardOn(fx);
		const id = fx.ids.target;
		controller.openPurgeConversation({agent: 'claude', id});
		await until(s => (s.purge?.plans.length ?? 0) > 0);
		controller.confirmPurge(id);
		const said = (s: AppState, start: string) => s.notices.find(n => n.text.startsWith(start))?.text;
		await until(s => said(s, 'purged') !== undefined);
		expect(said(store.getState(), 'purged')).toMatch(/u to undo/);
		expect((await claudeAdapter.verify(fx.ctx, id)).kind).toBe('no');
		controller.undoPurge();
		await until(s => said(s, 'restored') !== undefined);
		expect((await claudeAdapter.verify(fx.ctx, id)).kind).toBe('yes');
	});
});

describe('dashboard: the trash view', () => {
	it('lists the purge, restores it (a second restore refuses cleanly), and empties only what it is told', async () => {
		const fx = buildClaudeFixture();
		cleanups.push(() => fx.cleanup());
		const {deps, store, controller, until} = dashboardOn(fx);
		const said = (s: AppState, start: string) => s.notices.find(n => n.text.startsWith(start))?.text;
		const purgeOne = async (id: string) => {
			controller.openPurgeConversation({agent: 'claude', id});
			await until(s => (s.purge?.plans.length ?? 0) > 0);
			controller.confirmPurge(id);
			await until(s => said(s, `purged`) !== undefined);
			store.dispatch({type: 'notice/dismiss'});
		};
		const id = fx.ids.target;
		await purgeOne(id);
		controller.loadTrash();
		await until(s => (s.trash?.length ?? 0) === 1);
		const [row] = store.getState().trash ?? [];
		expect(row).toMatchObject({agent: 'claude', conversation: id, state: 'done'});
		expect(row?.bytes).toBeGreaterThan(0);

		controller.restoreTrash(row!.purgeId);
		await until(s => said(s, 'restored') !== undefined);
		expect((await claudeAdapter.verify(fx.ctx, id)).kind).toBe('yes');
		await until(s => s.trash?.length === 0);
		store.dispatch({type: 'notice/dismiss'});
		controller.restoreTrash(row!.purgeId);
		await until(s => said(s, `restore ${row!.purgeId}`) !== undefined);
		expect(store.getState().notices.at(-1)?.level).toBe('error');
		expect((await claudeAdapter.verify(fx.ctx, id)).kind).toBe('yes');

		await purgeOne(id);
		controller.loadTrash();
		await until(s => s.trash?.length === 1);
		const purgeId = store.getState().trash![0]!.purgeId;
		controller.emptyTrash(purgeId);
		await until(s => said(s, `emptied ${purgeId}`) !== undefined);
		await until(s => s.trash?.length === 0);
		expect(fs.existsSync(path.join(deps.trashDir!, purgeId))).toBe(false);
		expect((await claudeAdapter.verify(fx.ctx, id)).kind).toBe('no');
	});
});
