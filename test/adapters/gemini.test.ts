import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {geminiAdapter} from '../../src/adapters/gemini.js';
import {assertValidId, InvalidIdError} from '../../src/adapters/types.js';
import {createRefresh, memoHas} from '../../src/adapters/common/refresh.js';
import {chatFileName, geminiRoot, uuidWithPrefix, writeGeminiArtifacts, writeGeminiMain, writeGeminiProject, writeGeminiSubagent} from './fixtures/gemini.js';
import {fixtureContext, makeTempLayout, writeFile, type TempLayout} from './fixtures/world.js';
import {purgeNow} from '../helpers/purge.js';
import {MAIN_CHATS, SUB_AGENTS} from '../../src/adapters/gemini/chats.js';
import {snapshotTable} from '../../src/system/processes.js';
import {spawnArgvHolder} from '../support/holders.js';

const SAMPLES = '/work/shared/agents/samples/gemini';

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.reverse()) await c();
	cleanups = [];
});

function layout(): TempLayout {
	const l = makeTempLayout('gemini-x');
	cleanups.push(() => l.cleanup());
	return l;
}

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Two sessions in alpha whose ids share the first 8 characters, a minute apart. */
function twins(l: TempLayout) {
	const [alpha] = l.cwds;
	const dir = writeGeminiProject(l.home, 'alpha', alpha);
	const a = crypto.randomUUID();
	const b = uuidWithPrefix(a.slice(0, 8));
	const at = Date.now() - 5 * 60_000;
	const [fileA = ''] = writeGeminiMain(dir, {id: a, cwd: alpha, createdAt: at, prompt: 'first'});
	const [fileB = ''] = writeGeminiMain(dir, {id: b, cwd: alpha, createdAt: at + 60_000, prompt: 'second'});
	writeGeminiArtifacts(dir, a);
	writeGeminiArtifacts(dir, b);
	return {dir, a, b, fileA, fileB, at};
}

describe('gemini short ids', () => {
	it('two sessions sharing the first 8 characters: purging one never touches the other', async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const {a, b, fileA, fileB, dir} = twins(l);
		expect(path.basename(fileA).slice(-14)).toBe(path.basename(fileB).slice(-14));
		const plan = await geminiAdapter.artifacts(ctx, a);
		expect(plan.items.map(i => i.path)).toContain(fileA);
		expect(plan.items.map(i => i.path)).not.toContain(fileB);
		const before = sha(fileB);
		await purgeNow(geminiAdapter, ctx, a);
		expect(fs.existsSync(fileA)).toBe(false);
		expect(sha(fileB)).toBe(before);
		expect(fs.existsSync(path.join(dir, 'logs', `session-${b}.jsonl`))).toBe(true);
		expect(await geminiAdapter.verify(ctx, b, l.cwds[0])).toEqual({kind: 'yes'});
		expect((await geminiAdapter.verify(ctx, a)).kind).toBe('no');
		expect(await geminiAdapter.residual(ctx, a)).toEqual([]);
		expect((await geminiAdapter.discover(ctx, {cwd: l.cwds[0]})).conversations.map(c => c.id)).toEqual([b]);
	});

	it("a file named with the prefix whose header cannot be read is nobody's: never planned, never deleted", async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const {a, dir, at} = twins(l);
		const torn = path.join(dir, 'chats', chatFileName(a, at + 120_000));
		writeFile(torn, '{"sessionId": "torn');
		expect((await geminiAdapter.artifacts(ctx, a)).items.map(i => i.path)).not.toContain(torn);
		await purgeNow(geminiAdapter, ctx, a);
		expect(fs.existsSync(torn)).toBe(true);
	});

	it('every file of one session goes together: a resume stub a minute later shares the id', async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const [alpha] = l.cwds;
		const dir = writeGeminiProject(l.home, 'alpha', alpha);
		const id = crypto.randomUUID();
		const at = Date.now() - 5 * 60_000;
		const files = writeGeminiMain(dir, {id, cwd: alpha, createdAt: at, resumedAt: at + 5_000, stubAt: at + 120_000});
		expect(files).toHaveLength(2);
		const {conversations} = await geminiAdapter.discover(ctx);
		expect(conversations.map(c => [c.id, c.createdAt])).toEqual([[id, at]]);
		const plan = await geminiAdapter.artifacts(ctx, id);
		expect(
			plan.items
				.filter(i => i.kind === 'file')
				.map(i => i.path)
				.sort(),
		).toEqual([...files].sort());
		await purgeNow(geminiAdapter, ctx, id);
		for (const f of files) expect(fs.existsSync(f)).toBe(false);
	});
});

describe('gemini on the real 0.61 samples', () => {
	function sampleHome(): TempLayout {
		const l = layout();
		fs.cpSync(path.join(SAMPLES, '.gemini'), geminiRoot(l.home), {recursive: true});
		for (const entry of fs.readdirSync(l.home, {recursive: true, withFileTypes: true})) {
			fs.chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
		}
		fs.chmodSync(geminiRoot(l.home), 0o755);
		return l;
	}

	it('finds the three main sessions with their recorded cwds, and the sub-agent under its parent', async () => {
		const l = sampleHome();
		const ctx = fixtureContext(l);
		const {conversations, problems} = await geminiAdapter.discover(ctx);
		expect(problems).toEqual([]);
		const byId = new Map(conversations.map(c => [c.id, c]));
		expect([...byId.keys()].sort()).toEqual([
			'3f804c32-9ce2-4aeb-a210-ec8ffbe7908e',
			'9972c2ef-3d8f-4199-bc4b-b11d632372be',
			'f8cc108d-e46d-43da-b169-730a5ad6e2a6',
		]);
		expect(byId.get('3f804c32-9ce2-4aeb-a210-ec8ffbe7908e')?.cwd).toBe('/tmp/mam-samples/run/projects/beta');
		const resumed = byId.get('9972c2ef-3d8f-4199-bc4b-b11d632372be');
		expect(resumed).toMatchObject({
			cwd: '/tmp/mam-samples/run/projects/alpha',
			createdAt: Date.parse('2026-11-30T06:22:04.290Z'),
			title: 'hello alpha',
			resumeState: {kind: 'yes'},
		});
		expect(resumed?.updatedAt).toBe(Date.parse('2026-11-30T06:22:12.930Z'));
		expect(byId.get('f8cc108d-e46d-43da-b169-730a5ad6e2a6')?.childCount).toBe(1);
		const withChildren = await geminiAdapter.discover(ctx, {includeChildren: true});
		expect(withChildren.conversations.find(c => c.id === 'bf6b738b-4c38-4bad-b327-fca33013e449')?.parentId).toBe('f8cc108d-e46d-43da-b169-730a5ad6e2a6');
		expect(await geminiAdapter.verify(ctx, 'bf6b738b-4c38-4bad-b327-fca33013e449')).toEqual({kind: 'no', reason: 'a sub-agent transcript is not resumable'});
		expect((await geminiAdapter.artifacts(ctx, 'f8cc108d-e46d-43da-b169-730a5ad6e2a6')).descendants).toEqual(['bf6b738b-4c38-4bad-b327-fca33013e449']);
	});

	it('a legacy project folder named sha256(cwd) is matched to its cwd through projects.json', async () => {
		const l = layout();
		const [alpha = '', beta = ''] = l.cwds;
		// The slug folder of beta makes projects.json name both cwds; alpha's folder is the legacy hash.
		writeGeminiProject(l.home, 'beta', beta);
		writeGeminiProject(l.home, 'alpha', alpha);
		const root = geminiRoot(l.home);
		const legacy = path.join(root, 'tmp', crypto.createHash('sha256').update(alpha).digest('hex'));
		fs.renameSync(path.join(root, 'tmp', 'alpha'), legacy);
		fs.rmSync(path.join(legacy, '.project_root'));
		const id = crypto.randomUUID();
		writeGeminiMain(legacy, {id, cwd: alpha, createdAt: Date.now() - 60_000, prompt: 'old layout'});
		const {conversations} = await geminiAdapter.discover(fixtureContext(l), {cwd: alpha});
		expect(conversations.map(c => [c.id, c.cwd])).toEqual([[id, alpha]]);
		expect(await geminiAdapter.verify(fixtureContext(l), id, alpha)).toEqual({kind: 'yes'});
	});

	it('a project found only through projects.json (no .project_root) keeps its cwd', async () => {
		const l = sampleHome();
		fs.rmSync(path.join(geminiRoot(l.home), 'tmp', 'beta', '.project_root'));
		const {conversations} = await geminiAdapter.discover(fixtureContext(l), {cwd: '/tmp/mam-samples/run/projects/beta'});
		expect(conversations.map(c => c.id)).toEqual(['3f804c32-9ce2-4aeb-a210-ec8ffbe7908e']);
	});
});

describe('gemini files', () => {
	it("logs.json loses only the purged sessions' entries and keeps its layout", async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const {a, b, dir} = twins(l);
		const entries = [
			{sessionId: a, messageId: 0, type: 'user', message: 'first', timestamp: '2026-11-30T06:00:00.000Z'},
			{sessionId: b, messageId: 0, type: 'user', message: 'second', timestamp: '2026-11-30T06:01:00.000Z'},
		];
		writeFile(path.join(dir, 'logs.json'), JSON.stringify(entries, null, 2));
		const plan = await geminiAdapter.artifacts(ctx, a);
		expect(plan.items.find(i => i.kind === 'lines')).toMatchObject({path: path.join(dir, 'logs.json'), count: 1});
		await purgeNow(geminiAdapter, ctx, a);
		expect(fs.readFileSync(path.join(dir, 'logs.json'), 'utf8')).toBe(JSON.stringify([entries[1]], null, 2));
	});

	it('reads a legacy whole-file .json conversation', async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const [alpha] = l.cwds;
		const dir = writeGeminiProject(l.home, 'alpha', alpha);
		const id = crypto.randomUUID();
		const file = path.join(dir, 'chats', `session-2026-01-02T03-04-${id.slice(0, 8)}.json`);
		const messages = [{id: 'm1', timestamp: '2026-01-02T03:04:10.000Z', type: 'user', content: [{text: 'legacy hello'}]}];
		writeFile(
			file,
			JSON.stringify({sessionId: id, projectHash: 'x', startTime: '2026-01-02T03:04:05.000Z', lastUpdated: '2026-01-02T03:04:10.000Z', messages}, null, 2),
		);
		const {conversations} = await geminiAdapter.discover(ctx, {cwd: alpha});
		expect(conversations).toMatchObject([{id, title: 'legacy hello', createdAt: Date.parse('2026-01-02T03:04:05.000Z'), resumeState: {kind: 'yes'}}]);
		await purgeNow(geminiAdapter, ctx, id);
		expect(fs.existsSync(file)).toBe(false);
	});

	it('a session with only its header is not resumable', async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const dir = writeGeminiProject(l.home, 'alpha', l.cwds[0]);
		const id = crypto.randomUUID();
		writeGeminiMain(dir, {id, cwd: l.cwds[0], createdAt: Date.now() - 60_000, empty: true});
		expect(await geminiAdapter.verify(ctx, id, l.cwds[0])).toEqual({kind: 'no', reason: 'the session holds no messages'});
	});

	it('nested sub-agents live in chats/<their parent>/ and are all descendants', async () => {
		const l = layout();
		const ctx = fixtureContext(l);
		const [alpha] = l.cwds;
		const dir = writeGeminiProject(l.home, 'alpha', alpha);
		const [parent, child, grandchild] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
		writeGeminiMain(dir, {id: parent, cwd: alpha, createdAt: Date.now() - 60_000});
		writeGeminiSubagent(dir, parent, child, alpha, Date.now() - 50_000);
		writeGeminiSubagent(dir, child, grandchild, alpha, Date.now() - 40_000);
		writeGeminiArtifacts(dir, grandchild);
		const plan = await geminiAdapter.artifacts(ctx, parent);
		expect([...plan.descendants].sort()).toEqual([child, grandchild].sort());
		expect(plan.items.map(i => i.path)).toContain(path.join(dir, 'logs', `session-${grandchild}.jsonl`));
		await purgeNow(geminiAdapter, ctx, parent);
		expect(fs.readdirSync(path.join(dir, 'chats'))).toEqual([]);
		expect(await geminiAdapter.residual(ctx, parent)).toEqual([]);
	});
});

describe("gemini lookups inside a refresh (indexes shared by the refresh's calls)", () => {
	it('verify and inUse answer as they do alone: twins sharing 8 characters, a session in two projects, a sub-agent', async () => {
		const l = layout();
		const [alpha = '', beta = ''] = l.cwds;
		const {a, b, dir} = twins(l);
		const other = writeGeminiProject(l.home, 'beta', beta);
		// The same session recorded in both projects (a resume from the other folder).
		writeGeminiMain(other, {id: a, cwd: beta, createdAt: Date.now() - 30_000, prompt: 'again'});
		const child = crypto.randomUUID();
		writeGeminiSubagent(dir, a, child, alpha, Date.now() - 20_000);
		// A link named like a chat, to a real chat kept outside the project: not a chat of the project.
		const linked = crypto.randomUUID();
		const [outside = ''] = writeGeminiMain(path.join(l.base, 'elsewhere'), {id: linked, cwd: alpha, createdAt: Date.now() - 10_000});
		fs.symlinkSync(outside, path.join(dir, 'chats', path.basename(outside)));
		// A legacy whole-file .json chat.
		const legacy = crypto.randomUUID();
		const messages = [{id: 'm1', timestamp: '2026-01-02T03:04:10.000Z', type: 'user', content: [{text: 'legacy hello'}]}];
		writeFile(
			path.join(dir, 'chats', `session-2026-01-02T03-04-${legacy.slice(0, 8)}.json`),
			JSON.stringify({sessionId: legacy, projectHash: 'x', startTime: '2026-01-02T03:04:05.000Z', lastUpdated: '2026-01-02T03:04:10.000Z', messages}),
		);
		const ids = [a, b, child, linked, legacy, crypto.randomUUID()];
		const alone = fixtureContext(l);
		// By name in each listing (a few ids), and from the index of every main chat (many ids).
		for (const limit of [32, 0]) {
			const inRefresh = {...fixtureContext(l), refresh: createRefresh({directLookups: limit})};
			for (const id of ids) {
				for (const cwd of [alpha, beta, undefined]) expect(await geminiAdapter.verify(inRefresh, id, cwd)).toEqual(await geminiAdapter.verify(alone, id, cwd));
				expect(await geminiAdapter.inUse(inRefresh, id)).toEqual(await geminiAdapter.inUse(alone, id));
			}
			expect(await geminiAdapter.verify(inRefresh, child)).toEqual({kind: 'no', reason: 'a sub-agent transcript is not resumable'});
			expect((await geminiAdapter.verify(inRefresh, linked)).kind).toBe('no');
			expect(await geminiAdapter.verify(inRefresh, legacy, alpha)).toEqual({kind: 'yes'});
			expect(memoHas(inRefresh, MAIN_CHATS.of(path.join(l.home, '.gemini')))).toBe(limit === 0);
		}
	});

	it("follows no link to a sub-agent folder, alone or inside a refresh: its sessions are not the parent's", async () => {
		const l = layout();
		const [alpha = ''] = l.cwds;
		const dir = writeGeminiProject(l.home, 'alpha', alpha);
		const at = Date.now() - 60_000;
		const [real, linked, realChild, linkedChild] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
		writeGeminiMain(dir, {id: real, cwd: alpha, createdAt: at, prompt: 'real'});
		writeGeminiMain(dir, {id: linked, cwd: alpha, createdAt: at + 1000, prompt: 'linked'});
		writeGeminiSubagent(dir, real, realChild, alpha, at + 2000);
		// `chats/<linked>` is a link to a folder of sub-agents kept outside the project.
		const elsewhere = path.join(l.base, 'elsewhere-project');
		writeGeminiSubagent(elsewhere, linked, linkedChild, alpha, at + 3000);
		fs.symlinkSync(path.join(elsewhere, 'chats', linked), path.join(dir, 'chats', linked));
		const h = await spawnArgvHolder([realChild, linkedChild]);
		cleanups.push(() => h.stop());
		const alone = fixtureContext(l);
		const inRefresh = {...fixtureContext(l), refresh: createRefresh(), processes: snapshotTable(alone.processes)};
		for (const ctx of [alone, inRefresh]) {
			expect((await geminiAdapter.inUse(ctx, real)).map(x => x.pid)).toContain(h.pid);
			expect((await geminiAdapter.inUse(ctx, linked)).map(x => x.pid)).not.toContain(h.pid);
		}
	});

	it('lists the sub-agent folders only for an id no main chat holds', async () => {
		const l = layout();
		const {a} = twins(l);
		const ctx = {...fixtureContext(l), refresh: createRefresh()};
		const subAgents = SUB_AGENTS.of(path.join(l.home, '.gemini'));
		expect(await geminiAdapter.verify(ctx, a, l.cwds[0])).toEqual({kind: 'yes'});
		expect(memoHas(ctx, subAgents)).toBe(false);
		expect((await geminiAdapter.verify(ctx, crypto.randomUUID())).kind).toBe('no');
		expect(memoHas(ctx, subAgents)).toBe(true);
	});
});

describe('gemini ids and homes', () => {
	it('rejects a leading dash and the names of shared project folders', () => {
		for (const bad of ['-rf', 'chats', 'logs', 'tool-outputs', '.', 'a/b']) {
			expect(() => assertValidId(geminiAdapter, bad), bad).toThrow(InvalidIdError);
		}
		for (const good of ['my_session-1', crypto.randomUUID(), 'chats2']) assertValidId(geminiAdapter, good);
	});

	it("GEMINI_CLI_HOME replaces the home only for the caller's own home", async () => {
		const l = layout();
		const other = path.join(l.base, 'other-home');
		const dir = writeGeminiProject(other, 'alpha', l.cwds[0]);
		const id = crypto.randomUUID();
		writeGeminiMain(dir, {id, cwd: l.cwds[0], createdAt: Date.now() - 60_000});
		const env = {GEMINI_CLI_HOME: other};
		expect((await geminiAdapter.discover(fixtureContext(l, {env}))).conversations).toEqual([]);
		expect((await geminiAdapter.discover(fixtureContext(l, {env, ownHome: true}))).conversations.map(c => c.id)).toEqual([id]);
	});

	it('resumes with gemini --resume <id>', () => {
		const l = layout();
		expect(geminiAdapter.resume(fixtureContext(l), 'abc').argv).toEqual(['gemini', '--resume', 'abc']);
	});
});
