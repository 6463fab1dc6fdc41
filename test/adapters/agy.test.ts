import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import '../support/sqliteUri.js';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {agyAdapter} from '../../src/adapters/agy.js';
import {spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {agyDbPath, agyId, agyRoot, agySummariesPath, buildAgyFixture, writeAgyConversation, writeLastConversations} from './fixtures/agy.js';
import type {FixtureWorld} from './fixtures/types.js';
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
	const w = buildAgyFixture();
	cleanups.push(() => w.cleanup());
	return w;
}

function listing(dir: string): string[] {
	return fs
		.readdirSync(dir)
		.sort()
		.map(name => {
			const st = fs.lstatSync(path.join(dir, name));
			return `${name} ${st.size} ${st.mtimeMs}`;
		});
}

/** Put every conversation database into WAL mode with no sidecars: what a clean agy exit leaves. */
function toWalMode(files: readonly string[]): void {
	for (const file of files) {
		const db = new Database(file);
		db.pragma('journal_mode = WAL');
		db.close();
		expect(fs.existsSync(`${file}-wal`)).toBe(false);
	}
}

/** `node <tmp>/agy …` running in `cwd`: a process that looks like agy to the process table. */
async function fakeAgy(cwd: string, args: readonly string[] = []): Promise<HeldProcess> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-agy-bin-'));
	const script = path.join(dir, 'agy');
	fs.writeFileSync(script, "console.log('ready'); setInterval(() => {}, 1e6);");
	const child = spawn(process.execPath, [script, ...args], {cwd, stdio: ['ignore', 'pipe', 'ignore']});
	await new Promise<void>((resolve, reject) => {
		child.stdout.once('data', () => resolve());
		child.once('exit', code => reject(new Error(`fake agy exited ${code}`)));
	});
	const held = {
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
	cleanups.push(held.stop);
	return held;
}

function setBusy(home: string, id: string): void {
	const db = new Database(agySummariesPath(home));
	db.prepare('UPDATE conversation_summaries SET not_fully_idle = 1, killed = 0 WHERE conversation_id = ?').run(id);
	db.close();
}

describe('agy workspaces', () => {
	it('a conversation that last_conversations.json gives to another workspace is not a candidate, even when it lists this cwd', async () => {
		const w = world();
		const [alpha, beta] = w.cwds;
		// foreign lists alpha as a resource folder ahead of beta (the trap of FORMATS 5).
		const {conversations} = await agyAdapter.discover(w.ctx, {cwd: alpha});
		expect(conversations.map(c => c.id)).not.toContain(w.ids.foreign);
		expect(await agyAdapter.verify(w.ctx, w.ids.foreign, alpha)).toEqual({kind: 'no', reason: `belongs to workspace ${beta}`});
		expect(await agyAdapter.verify(w.ctx, w.ids.foreign, beta)).toEqual({kind: 'yes'});
	});

	it('an unclaimed conversation matches any of its workspace URIs, and its cwd is the last one', async () => {
		const w = world();
		const [alpha, beta] = w.cwds;
		const id = agyId();
		writeAgyConversation(w.home, {id, workspaces: [alpha, beta], createdAt: w.epoch + 5_000});
		expect((await agyAdapter.discover(w.ctx, {cwd: alpha})).conversations.map(c => c.id)).toContain(id);
		const listed = (await agyAdapter.discover(w.ctx, {cwd: beta})).conversations.find(c => c.id === id);
		expect(listed?.cwd).toBe(beta);
	});

	it('reading for one workspace leaves no -wal/-shm beside any conversation database, this workspace or another', async () => {
		const w = world();
		toWalMode(w.databases);
		const dirs = [path.dirname(agyDbPath(w.home, w.ids.foreign)), agyRoot(w.home)];
		const before = dirs.map(listing);
		await agyAdapter.discover(w.ctx, {cwd: w.cwds[0], since: w.epoch});
		await agyAdapter.discover(w.ctx, {includeChildren: true});
		expect(await agyAdapter.verify(w.ctx, w.ids.foreign, w.cwds[0])).toMatchObject({kind: 'no'});
		expect(await agyAdapter.verify(w.ctx, w.ids.target, w.cwds[0])).toEqual({kind: 'yes'});
		await agyAdapter.artifacts(w.ctx, w.ids.target);
		await agyAdapter.residual(w.ctx, w.ids.target);
		await agyAdapter.inUse(w.ctx, w.ids.target);
		expect(dirs.map(listing)).toEqual(before);
	});
});

describe('agy resume state', () => {
	it('is yes only when the conversation database exists and holds steps', async () => {
		const w = world();
		const [alpha] = w.cwds;
		const empty = agyId();
		writeAgyConversation(w.home, {id: empty, workspaces: [alpha], createdAt: w.epoch + 9_000, steps: 0});
		const gone = agyId();
		writeAgyConversation(w.home, {id: gone, workspaces: [alpha], createdAt: w.epoch + 9_500});
		fs.rmSync(agyDbPath(w.home, gone));
		expect(await agyAdapter.verify(w.ctx, w.ids.target, alpha)).toEqual({kind: 'yes'});
		expect(await agyAdapter.verify(w.ctx, empty, alpha)).toEqual({kind: 'no', reason: 'conversation has no steps yet'});
		// agy --conversation <unknown id> silently starts a NEW conversation: never "yes" without the database.
		expect((await agyAdapter.verify(w.ctx, gone, alpha)).kind).toBe('no');
		expect((await agyAdapter.verify(w.ctx, w.ids.absent, alpha)).kind).toBe('no');
		const listed = (await agyAdapter.discover(w.ctx, {cwd: alpha})).conversations;
		expect(listed.find(c => c.id === empty)?.resumeState.kind).toBe('no');
		expect(listed.map(c => c.id)).not.toContain(gone);
	});

	it('is unknown, naming the database, when it has no steps table (an unexpected schema)', async () => {
		const w = world();
		const [alpha] = w.cwds;
		const odd = agyId();
		writeAgyConversation(w.home, {id: odd, workspaces: [alpha], createdAt: w.epoch + 9_000});
		const db = new Database(agyDbPath(w.home, odd));
		db.exec('DROP TABLE steps');
		db.close();
		expect(await agyAdapter.verify(w.ctx, odd, alpha)).toEqual({kind: 'unknown', reason: `${agyDbPath(w.home, odd)}: no steps table (unexpected schema)`});
	});

	it('a corrupt conversation database is unknown with a reason, never a crash', async () => {
		const w = world();
		fs.writeFileSync(agyDbPath(w.home, w.ids.sibling), 'this is not sqlite at all, just text that is long enough');
		const state = await agyAdapter.verify(w.ctx, w.ids.sibling, w.cwds[0]);
		expect(state).toMatchObject({kind: 'unknown'});
		expect(state.kind === 'unknown' && state.reason).toMatch(/not a sqlite database/);
		const {conversations} = await agyAdapter.discover(w.ctx, {cwd: w.cwds[0]});
		expect(conversations.find(c => c.id === w.ids.sibling)?.resumeState.kind).toBe('unknown');
	});

	it('a corrupt summaries database is a problem for discovery and refuses a purge plan', async () => {
		const w = world();
		fs.writeFileSync(agySummariesPath(w.home), 'garbage garbage garbage garbage garbage garbage garbage');
		const {problems} = await agyAdapter.discover(w.ctx);
		expect(problems.join('\n')).toMatch(/conversation_summaries\.db: not a sqlite database/);
		await expect(agyAdapter.artifacts(w.ctx, w.ids.target)).rejects.toThrow(/cannot build the purge plan/);
	});

	it('resumes with agy --conversation <id>', () => {
		const w = world();
		expect(agyAdapter.resume(w.ctx, w.ids.target).argv).toEqual(['agy', '--conversation', w.ids.target]);
	});
});

describe('agy purge', () => {
	it('removes the conversation and its sub-agents from last_conversations.json and the summaries, keeping the file style', async () => {
		const w = world();
		const [alpha, beta] = w.cwds;
		writeLastConversations(w.home, {[alpha]: w.ids.target, [beta]: w.ids.foreign, [`${alpha}/sub`]: w.ids.sibling});
		const file = path.join(agyRoot(w.home), 'cache', 'last_conversations.json');
		const before = fs.readFileSync(file, 'utf8');
		await purgeNow(agyAdapter, w.ctx, w.ids.target);
		const after = fs.readFileSync(file, 'utf8');
		expect(JSON.parse(after)).toEqual({[beta]: w.ids.foreign, [`${alpha}/sub`]: w.ids.sibling});
		const keptLines = before.split('\n').filter(line => !line.includes(w.ids.target));
		expect(after.split('\n')).toEqual(keptLines);
		const db = new Database(agySummariesPath(w.home), {readonly: true});
		const ids = db
			.prepare<[], {conversation_id: string}>('SELECT conversation_id FROM conversation_summaries')
			.all()
			.map(r => r.conversation_id);
		db.close();
		expect(ids.sort()).toEqual([w.ids.sibling, w.ids.old, w.ids.foreign].sort());
	});

	it('never deletes through a conversations folder that is a symlink out of the agy root', async () => {
		const w = world();
		const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-agy-outside-'));
		cleanups.push(() => fs.rmSync(outside, {recursive: true, force: true}));
		const conversations = path.join(agyRoot(w.home), 'conversations');
		fs.cpSync(conversations, outside, {recursive: true});
		fs.rmSync(conversations, {recursive: true});
		fs.symlinkSync(outside, conversations);
		const outcome = await purgeNow(agyAdapter, w.ctx, w.ids.target);
		expect(fs.existsSync(path.join(outside, `${w.ids.target}.db`))).toBe(true);
		expect(outcome.warnings.join('\n')).toMatch(/refused/);
		expect(outcome.removed.map(i => i.path)).not.toContain(agyDbPath(w.home, w.ids.target));
	});
});

describe('agy in use', () => {
	it('an agy started with --continue in the workspace uses a conversation that is not idle', async () => {
		const w = world();
		setBusy(w.home, w.ids.target);
		const agy = await fakeAgy(w.cwds[0], ['--continue']);
		expect((await agyAdapter.inUse(w.ctx, w.ids.target)).map(h => h.pid)).toContain(agy.pid);
		// The same process does not use an idle conversation, nor one of another workspace.
		expect((await agyAdapter.inUse(w.ctx, w.ids.sibling)).map(h => h.pid)).not.toContain(agy.pid);
		setBusy(w.home, w.ids.foreign);
		expect((await agyAdapter.inUse(w.ctx, w.ids.foreign)).map(h => h.pid)).not.toContain(agy.pid);
	});

	it('the agy daemon holding a conversation database is not a user of it', async () => {
		const w = world();
		const daemon = await spawnFileHolder([agyDbPath(w.home, w.ids.target)], 'agy', ['daemon']);
		cleanups.push(() => daemon.stop());
		expect(await agyAdapter.inUse(w.ctx, w.ids.target)).toEqual([]);
		const other = await spawnFileHolder([agyDbPath(w.home, w.ids.target)], 'agy', ['--conversation', w.ids.target]);
		cleanups.push(() => other.stop());
		expect((await agyAdapter.inUse(w.ctx, w.ids.target)).map(h => h.pid)).toEqual([other.pid]);
	});
});
