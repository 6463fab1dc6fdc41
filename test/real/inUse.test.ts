import '../support/sqliteUri.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {describe, expect, it} from 'vitest';
import {conversationsOnDisk, type RealAgent, type RealWorld, startTui, useRealWorld, waitForConversation} from './support/harness.js';

/** A real TUI started in a pane by hand, one turn answered: the pane and the conversation it wrote. */
async function liveTui(world: RealWorld, agent: RealAgent, cwd: string, words: string) {
	const tui = await startTui(world, agent, cwd);
	await tui.prompt(words);
	await tui.waitForScreen(/Hello from the stand-in model\./, 90_000);
	const id = await waitForConversation(world, agent, cwd, {containing: words});
	return {tui, id};
}

function digests(files: readonly string[]): Record<string, string> {
	return Object.fromEntries(files.map(f => [f, crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex')]));
}

/** The pane's session adopted with `drift --fix`: its registry name. */
async function adoptedName(world: RealWorld, paneId: string): Promise<string> {
	const fixed = JSON.parse((await world.mamTui(['drift', '--json', '--fix'])).stdout) as {applied?: Array<{session: string | null; fix: {paneId?: string}}>};
	return fixed.applied?.find(a => a.fix.paneId === paneId)?.session ?? '';
}

function stateOf(stdout: string, id: string): string | undefined {
	return (JSON.parse(stdout) as {conversations: Array<{id: string; resumeState: string}>}).conversations.find(c => c.id === id)?.resumeState;
}

/**
 * Issue 18 items 1, 6 and 7 with the real CLIs: a plain gemini TUI (no `-r`) keeps no record of
 * which conversation it is on, so every conversation of its project is in use; opencode's one
 * shared database held open by a TUI says nothing about a session of another project; a running
 * session's purge exits 4 naming its pane and pids.
 */
describe('real agents: in use', () => {
	const real = useRealWorld();

	it('gemini: a plain TUI on conversation X — purge of X exits 4 and deletes nothing; adopted, its purge names the pane and pids', async () => {
		const {tui, id} = await liveTui(real.world, 'gemini', real.world.alpha, 'keep me, gemini');
		const files = conversationsOnDisk(real.world, 'gemini', real.world.alpha).filter(c => c.id === id);
		expect(files.length).toBeGreaterThan(0);
		const listed = await real.world.mamTui(['conversations', '--json', '--agent', 'gemini']);
		expect(stateOf(listed.stdout, id)).toMatch(/^no: in use by pid \d+/);

		const purge = await real.world.mamTui(['purge', '--agent', 'gemini', '--id', id, '--yes']);
		expect(purge.exitCode, purge.stderr + purge.stdout).toBe(4);
		expect(purge.stderr).toMatch(/in use/);
		expect(conversationsOnDisk(real.world, 'gemini', real.world.alpha).map(c => c.id)).toContain(id);

		// Registered and running in its pane: the refusal names the pane and the pids (exit 4, not 1).
		const name = await adoptedName(real.world, tui.paneId);
		expect(name).not.toBe('');
		const byName = await real.world.mamTui(['purge', name, '--yes']);
		expect(byName.exitCode, byName.stderr + byName.stdout).toBe(4);
		const agentPid = tui.agentPid();
		expect(byName.stderr).toContain(`running in pane ${tui.paneId}`);
		expect(byName.stderr).toContain(`pid ${agentPid}`);
		for (const file of files.flatMap(c => c.files)) expect(fs.existsSync(file), file).toBe(true);
		await tui.close();
	});

	// claude keeps a live record of the conversation a TUI is on, codex holds its rollout open: the
	// purge by id is refused from that evidence, and nothing of the conversation changes.
	for (const agent of ['claude', 'codex'] as const) {
		it(`${agent}: a live TUI on conversation X — purge of X exits 4 naming the pid, deletes nothing; adopted, its purge names the pane and pids`, async () => {
			const {tui, id} = await liveTui(real.world, agent, real.world.alpha, `keep me, ${agent}`);
			const files = conversationsOnDisk(real.world, agent, real.world.alpha)
				.filter(c => c.id === id)
				.flatMap(c => c.files);
			expect(files.length).toBeGreaterThan(0);
			const before = digests(files);
			const agentPid = tui.agentPid();

			const purge = await real.world.mamTui(['purge', '--agent', agent, '--id', id, '--yes']);
			expect(purge.exitCode, purge.stderr + purge.stdout).toBe(4);
			expect(purge.stderr).toMatch(/in use/);
			expect(purge.stderr).toContain(String(agentPid));
			expect(digests(files)).toEqual(before);

			const name = await adoptedName(real.world, tui.paneId);
			expect(name).not.toBe('');
			const byName = await real.world.mamTui(['purge', name, '--yes']);
			expect(byName.exitCode, byName.stderr + byName.stdout).toBe(4);
			expect(byName.stderr).toContain(`running in pane ${tui.paneId}`);
			expect(byName.stderr).toContain(`pid ${agentPid}`);
			expect(digests(files)).toEqual(before);
			await tui.close();
		});
	}

	// Grok Build holds its session's files open (events.jsonl) from the first prompt on; resumed,
	// argv names the session too. Either way the purge by id is refused and nothing changes.
	it('grok: a live TUI on X, plain and resumed — purge of X exits 4 naming the pid, nothing changes', async () => {
		const {tui, id} = await liveTui(real.world, 'grok', real.world.alpha, 'keep me, grok');
		const files = conversationsOnDisk(real.world, 'grok', real.world.alpha)
			.filter(c => c.id === id)
			.flatMap(c => c.files.flatMap(dir => fs.readdirSync(dir).map(name => path.join(dir, name))))
			.filter(f => fs.statSync(f).isFile());
		expect(files.length).toBeGreaterThan(0);
		const history = path.join(real.world.home, '.grok/sessions', encodeURIComponent(real.world.alpha), 'prompt_history.jsonl');
		// session_search.sqlite is left out of the sizes: the live grok itself rewrites its index
		// (the title it generates lands there while it runs); its row of X must still be there.
		const search = path.join(real.world.home, '.grok/sessions/session_search.sqlite');
		const searchRows = () => {
			const db = new Database(search, {readonly: true, fileMustExist: true});
			try {
				return (db.prepare('SELECT count(*) AS n FROM session_docs WHERE session_id = ?').get(id) as {n: number}).n;
			} finally {
				db.close();
			}
		};
		const watched = [...files, history];
		for (const args of [[], ['--resume', id]]) {
			const live = args.length === 0 ? tui : await startTui(real.world, 'grok', real.world.alpha, args);
			// The live grok itself keeps writing its session (summary.json, updates.jsonl): nothing may
			// be gone or shorter, and the prompt stays in its files.
			const sizes = () => Object.fromEntries(watched.map(f => [f, fs.existsSync(f) ? fs.statSync(f).size : -1]));
			const before = sizes();
			const rowsBefore = fs.existsSync(search) ? searchRows() : 0;
			const purge = await real.world.mamTui(['purge', '--agent', 'grok', '--id', id, '--yes']);
			expect(purge.exitCode, purge.stderr + purge.stdout).toBe(4);
			expect(purge.stderr).toMatch(/in use/);
			expect(purge.stderr).toContain(String(live.agentPid()));
			// summary.json is rewritten whole by grok (CI: 1030 then 1029 bytes while it ran): it must
			// still be there; every other file is only appended to, so nothing may be shorter.
			for (const [file, size] of Object.entries(sizes())) {
				if (path.basename(file) === 'summary.json') expect(size, file).toBeGreaterThan(0);
				else expect(size, file).toBeGreaterThanOrEqual(before[file] ?? 0);
			}
			expect(fs.readFileSync(history, 'utf8')).toContain('keep me, grok');
			// grok indexes a session when it chooses to (its title, its exit): none may be lost.
			if (fs.existsSync(search)) expect(searchRows()).toBeGreaterThanOrEqual(rowsBefore);
			if (args.length === 0) await tui.quit();
			else await live.close();
		}
	});

	// hermes keeps no record of which session a plain TUI is on (the TUI holds only the shared
	// state.db): every conversation of its folder is in use. Resumed, its argv names the id.
	it('hermes: a live TUI on conversation X, plain and then resumed — purge of X exits 4 and changes nothing', async () => {
		const {tui, id} = await liveTui(real.world, 'hermes', real.world.alpha, 'keep me, hermes');
		const history = path.join(real.world.home, '.hermes/.hermes_history');
		const textOf = () => conversationsOnDisk(real.world, 'hermes', real.world.alpha).find(c => c.id === id)?.text;
		const text = textOf();
		expect(text).toContain('keep me, hermes');
		const refused = async (pid: number | undefined) => {
			// hermes itself appends to its history (the /quit of the plain run): compare from here.
			const before = digests([history]);
			const listed = await real.world.mamTui(['conversations', '--json', '--agent', 'hermes']);
			expect(stateOf(listed.stdout, id)).toMatch(/^no: in use by pid \d+/);
			const purge = await real.world.mamTui(['purge', '--agent', 'hermes', '--id', id, '--yes']);
			expect(purge.exitCode, purge.stderr + purge.stdout).toBe(4);
			expect(purge.stderr).toMatch(/in use/);
			expect(purge.stderr).toContain(String(pid));
			expect(textOf()).toBe(text);
			expect(digests([history])).toEqual(before);
			expect(JSON.parse((await real.world.mamTui(['trash', '--json'])).stdout)).toMatchObject({purges: []});
		};
		await refused(tui.agentPid());
		await tui.quit();

		const resumed = await startTui(real.world, 'hermes', real.world.beta, ['--resume', id]);
		await resumed.waitForScreen(/keep me, hermes/, 60_000);
		await refused(resumed.agentPid());
		await resumed.quit();
	});

	it("opencode: a TUI in alpha does not make beta's session in use; its own project's session is", async () => {
		const beta = await liveTui(real.world, 'opencode', real.world.beta, 'a beta session for opencode');
		await beta.tui.quit();
		const alpha = await liveTui(real.world, 'opencode', real.world.alpha, 'an alpha session for opencode');
		const listed = await real.world.mamTui(['conversations', '--json', '--agent', 'opencode']);
		expect(stateOf(listed.stdout, beta.id)).toBe('yes');
		expect(stateOf(listed.stdout, alpha.id)).toMatch(/^no: in use by pid \d+/);

		const own = await real.world.mamTui(['purge', '--agent', 'opencode', '--id', alpha.id, '--yes']);
		expect(own.exitCode, own.stderr + own.stdout).toBe(4);
		// Whether the purge leaves a residual (exit 5) is the purge's own story; in use it is not.
		const other = await real.world.mamTui(['purge', '--agent', 'opencode', '--id', beta.id, '--yes']);
		expect([0, 5], other.stderr + other.stdout).toContain(other.exitCode);
		expect(conversationsOnDisk(real.world, 'opencode', real.world.beta).map(c => c.id)).not.toContain(beta.id);
		expect(conversationsOnDisk(real.world, 'opencode', real.world.alpha).map(c => c.id)).toContain(alpha.id);
		await alpha.tui.close();
	});
});
