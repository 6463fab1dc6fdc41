import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import type {ConversationsJson} from '../../src/cli/conversationsCommand.js';
import {expectedParents} from '../adapters/contract.js';
import {buildClaudeFixture} from '../adapters/fixtures/claude.js';
import {buildCodexFixture} from '../adapters/fixtures/codex.js';
import {buildOpencodeFixture} from '../adapters/fixtures/opencode.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {spawnWalWriter} from '../support/holders.js';
import {runCli} from '../helpers/cli.js';

/** One home holding the claude, codex and opencode fixture worlds side by side. */
let worlds: FixtureWorld[];
let home: string;
let callerHome: string;

beforeAll(() => {
	worlds = [buildClaudeFixture(), buildCodexFixture(), buildOpencodeFixture()];
	home = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-conv-home-'));
	callerHome = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-conv-caller-'));
	for (const w of worlds) fs.cpSync(w.home, home, {recursive: true});
});

afterAll(() => {
	for (const w of worlds) w.cleanup();
	fs.rmSync(home, {recursive: true, force: true});
	fs.rmSync(callerHome, {recursive: true, force: true});
});

/** The CLI as the user runs it, with the caller's own HOME elsewhere (so --home is another home). */
const conversations = (...args: string[]) => runCli(['conversations', ...args, '--home', home], {HOME: callerHome});

function parse(stdout: string): ConversationsJson {
	return JSON.parse(stdout) as ConversationsJson;
}

/** The fixture's parents of one world, newest first, as the CLI must list them. */
function expected(w: FixtureWorld): string[] {
	return [...expectedParents(w, w.cwds[0]), ...expectedParents(w, w.cwds[1])]
		.map(id => w.sessions.find(s => s.id === id))
		.sort((a, b) => (b?.createdAt ?? 0) - (a?.createdAt ?? 0))
		.map(s => s?.id ?? '');
}

/** Each test runs the built CLI several times on a shared, busy machine. */
const CLI_TIMEOUT_MS = 60_000;

describe('mam-tui conversations', {timeout: CLI_TIMEOUT_MS}, () => {
	it('lists every fixture conversation of claude, codex and opencode, newest first, with resume state', async () => {
		const run = await conversations('--json');
		expect(run.stderr).toBe('');
		expect(run.exitCode).toBe(0);
		const body = parse(run.stdout);
		expect(body.version).toBe(1);
		expect(body.agents.every(a => a.state === 'ok')).toBe(true);
		for (const w of worlds) {
			const listed = body.conversations.filter(c => c.agent === w.agent);
			expect(
				listed.map(c => c.id),
				w.agent,
			).toEqual(expected(w));
			for (const c of listed) {
				const session = w.sessions.find(s => s.id === c.id);
				expect(c.cwd).toBe(session?.cwd);
				expect(c.createdAt).toBe(new Date(session?.createdAt ?? 0).toISOString());
				expect(c.resumeState).toBe('yes');
				expect(c.childCount).toBe(w.sessions.filter(s => s.parentId === c.id).length);
			}
		}
		const times = body.conversations.map(c => Date.parse(c.createdAt));
		expect(times).toEqual([...times].sort((a, b) => b - a));
	});

	it('filters by agent and cwd', async () => {
		const codex = worlds[1] as FixtureWorld;
		const run = await conversations('--json', '--agent', 'codex', '--cwd', codex.cwds[0]);
		expect(run.exitCode).toBe(0);
		const body = parse(run.stdout);
		expect(body.agents.map(a => a.agent)).toEqual(['codex']);
		expect(body.conversations.map(c => c.id)).toEqual(expectedParents(codex, codex.cwds[0]));
	});

	it('an unknown agent is bad usage (exit 2)', async () => {
		const run = await conversations('--agent', 'nope');
		expect(run.exitCode).toBe(2);
		expect(run.stderr).toMatch(/--agent must be one of claude, codex, opencode/);
	});

	it('leaves no trace: nothing under the home is newer than before the runs (clean, leftover sidecars, -wal without -shm)', async () => {
		const stamp = path.join(callerHome, 'stamp');
		const findNewer = () => spawnSync('find', [home, '-newer', stamp], {encoding: 'utf8'}).stdout.trim();
		const databases = worlds.flatMap(w => w.databases.map(db => path.join(home, path.relative(w.home, db))));
		fs.writeFileSync(stamp, '');
		for (const args of [['--json'], [], ['--agent', 'opencode', '--json']]) expect((await conversations(...args)).exitCode).toBe(0);
		expect(findNewer()).toBe('');
		const writer = await spawnWalWriter(databases);
		await writer.crash();
		fs.writeFileSync(stamp, '');
		for (const args of [['--json'], []]) expect((await conversations(...args)).exitCode).toBe(0);
		expect(findNewer()).toBe('');
		for (const db of databases) fs.rmSync(`${db}-shm`);
		fs.writeFileSync(stamp, '');
		for (const args of [['--json'], []]) expect((await conversations(...args)).exitCode).toBe(0);
		expect(findNewer()).toBe('');
		expect(parse((await conversations('--json')).stdout).conversations).toHaveLength(worlds.reduce((n, w) => n + expected(w).length, 0));
	});

	it('a corrupt store shows as unknown for its agent and the others are still listed', async () => {
		const opencode = worlds[2] as FixtureWorld;
		const db = path.join(home, path.relative(opencode.home, opencode.databases[0] ?? ''));
		const saved = [db, `${db}-wal`].filter(f => fs.existsSync(f)).map(f => [f, fs.readFileSync(f)] as const);
		fs.rmSync(`${db}-wal`, {force: true});
		fs.writeFileSync(db, 'not a database '.repeat(500));
		try {
			const run = await conversations('--json');
			expect(run.exitCode).toBe(0);
			const body = parse(run.stdout);
			expect(body.agents.find(a => a.agent === 'opencode')?.state).toMatch(/^unknown: .*opencode\.db: not a sqlite database/);
			expect(body.conversations.filter(c => c.agent === 'claude').map(c => c.id)).toEqual(expected(worlds[0] as FixtureWorld));
			const text = await conversations();
			expect(text.exitCode).toBe(0);
			expect(text.stdout).toMatch(/opencode\s+—.*unknown: /);
		} finally {
			for (const [file, data] of saved) fs.writeFileSync(file, data);
		}
	});
});
