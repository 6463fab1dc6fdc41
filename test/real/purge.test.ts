import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {execa} from 'execa';
import {describe, expect, it} from 'vitest';
import {
	attachTui,
	conversationsOnDisk,
	DEFAULT_REPLY,
	grepHome,
	grepMamHome,
	purgeOnceSettled,
	REAL_AGENTS,
	type RealAgent,
	type RealWorld,
	sleep,
	startTui,
	useRealWorld,
	waitForConversation,
} from './support/harness.js';

/** The argv that makes each real CLI open conversation `id` itself. */
const RESUME_ARGS: Readonly<Record<RealAgent, (id: string) => string[]>> = {
	claude: id => ['--resume', id],
	codex: id => ['resume', id],
	opencode: id => ['--session', id],
	gemini: id => ['--resume', id],
	grok: id => ['--resume', id],
	hermes: id => ['--resume', id],
};

interface Listed {
	readonly purgeId: string;
	readonly conversation: string;
}

/** Each CLI's one-shot run (no TUI): the cheap way to another conversation. */
const HEADLESS: Readonly<Record<RealAgent, (text: string) => string[]>> = {
	claude: text => ['-p', text],
	codex: text => ['exec', '--skip-git-repo-check', text],
	opencode: text => ['run', text],
	gemini: text => ['-p', text],
	grok: text => ['-p', text],
	hermes: text => ['-z', text],
};

/** A conversation written by a one-shot run in `cwd`; its id. */
async function oneShot(world: RealWorld, agent: RealAgent, cwd: string, text: string): Promise<string> {
	const run = await execa(world.clis[agent], HEADLESS[agent](text), {cwd, env: world.env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 120_000});
	expect(run.exitCode, `${agent} one-shot: ${run.stderr}`).toBe(0);
	return waitForConversation(world, agent, cwd, {containing: DEFAULT_REPLY});
}

const REPLY = /Hello from the stand-in model\./;

/** One TUI turn in `cwd` with `text`; the conversation id once the reply is on disk. */
async function converse(world: RealWorld, agent: RealAgent, cwd: string, text: string, exclude: readonly string[] = []): Promise<string> {
	const tui = await startTui(world, agent, cwd);
	await tui.prompt(text);
	if (agent !== 'gemini') await tui.waitForScreen(REPLY, 90_000);
	else {
		try {
			await tui.waitForScreen(REPLY, 30_000);
		} catch {
			// gemini now and then drops the Enter of its first prompt (the text stays in its input box).
			await tui.sendKeys('Enter');
			await tui.waitForScreen(REPLY, 60_000);
		}
	}
	const id = await waitForConversation(world, agent, cwd, {containing: DEFAULT_REPLY, exclude});
	await tui.quit();
	return id;
}

/** sha256 of each file naming `id` (the other conversation's bytes, to compare after the purge). */
async function bytesOf(world: RealWorld, id: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	for (const file of await grepHome(world, id)) {
		// grok's shared line files: the other conversation's own lines keep their bytes.
		if (/(prompt_history|unified)\.jsonl$/.test(file)) {
			const own = fs
				.readFileSync(file, 'utf8')
				.split('\n')
				.filter(line => line.includes(id));
			out[`${file} (lines naming ${id})`] = crypto.createHash('sha256').update(own.join('\n')).digest('hex');
			continue;
		}
		// Shared databases and logs change with every run; the conversation's own files must not.
		if (/\.(sqlite|db)(-wal|-shm)?$|\.log$|history\.jsonl$|session_index\.jsonl$|\.claude\.json/.test(file)) continue;
		out[file] = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
	}
	return out;
}

/** sha256 of every file under `dir` (links by target), to see exactly which files a purge changed. */
function hashTree(dir: string): Map<string, string> {
	const out = new Map<string, string>();
	const walk = (d: string) => {
		for (const e of fs.readdirSync(d, {withFileTypes: true})) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.isSymbolicLink()) out.set(p, `link ${fs.readlinkSync(p)}`);
			else if (e.isFile()) out.set(p, crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
		}
	};
	walk(dir);
	return out;
}

interface ShownPlan {
	readonly items: readonly {readonly kind: string; readonly path: string}[];
	readonly changed?: readonly {readonly path: string; readonly reason: string}[];
}

/**
 * Issue 26 item 4: every file the purge created, changed or removed is one the plan named — an
 * item (or a file inside a planned folder), a place the agent's own delete changes (`changed`, a file or what is inside that folder),
 * or a database's -wal / -shm / -journal beside a named one. Everything else keeps its bytes.
 */
function unplannedChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, plan: ShownPlan): string[] {
	const named = [...plan.items.map(i => i.path), ...(plan.changed ?? []).map(c => c.path)];
	const folders = [...plan.items.filter(i => i.kind === 'dir').map(i => i.path), ...(plan.changed ?? []).map(c => c.path)].map(p => `${p}${path.sep}`);
	// A sidecar that appeared beside a database whose own bytes did not change comes from an open
	// (codex's delete opens every database it has): no row of that database was written.
	const opened = (file: string) => {
		const db = file.replace(/-(wal|shm)$/, '');
		return db !== file && !before.has(file) && before.has(db) && before.get(db) === after.get(db);
	};
	// A sidecar the plan names itself (codex's `changed`: each opened database's -wal and -shm)
	// counts as named too, also when it was there before the purge and only changed.
	const covered = (file: string) =>
		named.includes(file) || named.includes(file.replace(/-(wal|shm|journal)$/, '')) || folders.some(f => file.startsWith(f)) || opened(file);
	const touched = [...new Set([...before.keys(), ...after.keys()])].filter(f => before.get(f) !== after.get(f));
	return touched.filter(f => !covered(f)).sort();
}

/**
 * Issue 18 items 2–5 with the real CLIs: a purge exits 0 and leaves no file under HOME naming
 * the conversation or holding its unique prompt (freed sqlite pages included); the other
 * conversation keeps its bytes; a second purge says nothing is left; restore puts it back and the
 * real CLI resumes it; `trash empty` deletes it for good. gemini: mam-tui's resume in a later
 * minute leaves no stub, so the next gemini start in the project does not delete the conversation.
 */
describe('real agents: purge, trash, restore', () => {
	const real = useRealWorld();

	it.each(REAL_AGENTS)('%s', async agent => {
		const marker = `purge-marker-${agent}-${crypto.randomBytes(6).toString('hex')}`;
		const other = await oneShot(real.world, agent, real.world.beta, `keep me ${agent}`);
		const id = await converse(real.world, agent, real.world.alpha, `please remember ${marker}`, [other]);
		expect(await grepHome(real.world, marker)).not.toEqual([]);
		const otherBytes = await bytesOf(real.world, other);
		const otherText = conversationsOnDisk(real.world, agent, real.world.beta).find(c => c.id === other)?.text;

		const shown = await real.world.mamTui(['purge', '--json', '--dry-run', '--agent', agent, '--id', id]);
		expect(shown.exitCode, shown.stdout + shown.stderr).toBe(0);
		const plan = (JSON.parse(shown.stdout) as {plans: ShownPlan[]}).plans[0] ?? {items: []};
		const home = hashTree(real.world.home);
		const purged = await purgeOnceSettled(real.world, ['--agent', agent, '--id', id]);
		expect(purged.exitCode, purged.stdout + purged.stderr).toBe(0);
		expect(purged.stdout).toMatch(/residual: nothing left/);
		expect(unplannedChanges(home, hashTree(real.world.home), plan), 'files the purge changed that its plan does not name').toEqual([]);
		expect(await grepHome(real.world, id)).toEqual([]);
		expect(await grepHome(real.world, marker)).toEqual([]);
		expect(await bytesOf(real.world, other)).toEqual(otherBytes);
		expect(conversationsOnDisk(real.world, agent, real.world.beta).find(c => c.id === other)?.text).toBe(otherText);

		if (agent === 'grok') await grokRefuses(real.world, id);

		const again = await real.world.mamTui(['purge', '--agent', agent, '--id', id, '--yes']);
		expect(again.exitCode, again.stdout + again.stderr).toBe(0);
		expect(again.stdout).toMatch(/nothing on disk names this conversation/);
		if (agent === 'hermes') {
			// The real CLI refuses the purged id (it then opens a new, empty session, dropped on exit).
			const refused = await startTui(real.world, agent, real.world.alpha, RESUME_ARGS[agent](id));
			await refused.waitForScreen(new RegExp(`Session not found: ${id}`), 30_000);
			await refused.quit();
		}

		const listed = JSON.parse((await real.world.mamTui(['trash', '--json'])).stdout) as {purges: Listed[]};
		const entry = listed.purges.find(p => p.conversation === id);
		expect(entry).toBeDefined();
		const restored = await real.world.mamTui(['restore', entry?.purgeId ?? '']);
		expect(restored.exitCode, restored.stdout + restored.stderr).toBe(0);
		expect(await grepHome(real.world, marker)).not.toEqual([]);

		if (agent === 'gemini') {
			await resumeLaterMinuteThenStartAgain(real.world, id, marker);
		} else {
			const tui = await startTui(real.world, agent, real.world.alpha, RESUME_ARGS[agent](id));
			await tui.waitForScreen(new RegExp(marker), 60_000);
			await tui.quit();
		}

		const purgedAgain = await real.world.mamTui(['purge', '--agent', agent, '--id', id, '--yes']);
		expect(purgedAgain.exitCode, purgedAgain.stdout + purgedAgain.stderr).toBe(0);
		const emptied = await real.world.mamTui(['trash', 'empty', '--yes']);
		expect(emptied.exitCode, emptied.stdout + emptied.stderr).toBe(0);
		expect(JSON.parse((await real.world.mamTui(['trash', '--json'])).stdout)).toMatchObject({purges: []});
		expect(await grepHome(real.world, marker)).toEqual([]);
		// mam-tui's own files too: the trash is empty, and the search index (if any) forgot it.
		expect(await grepMamHome(real.world, marker)).toEqual([]);
	});
});

/**
 * After the purge the real grok knows nothing of the session: `grok sessions list` in its folder
 * does not list it, and `grok -r ID` refuses it (it finds nothing locally; its remote restore
 * needs a login the world does not have).
 */
async function grokRefuses(world: RealWorld, id: string): Promise<void> {
	const run = (args: readonly string[]) =>
		execa(world.clis.grok, args, {cwd: world.alpha, env: world.env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 60_000});
	const listed = await run(['sessions', 'list']);
	expect(listed.exitCode, listed.stderr).toBe(0);
	expect(listed.stdout).not.toContain(id);
	const resumed = await run(['-r', id, '-p', 'are you there?', '--output-format', 'json']);
	expect(resumed.exitCode, resumed.stdout).not.toBe(0);
	expect(`${resumed.stdout}\n${resumed.stderr}`).toMatch(/not found locally/);
	expect(await grepHome(world, id)).toEqual([]);
}

/**
 * REAL.md surprise 12: in a later minute than the conversation was written, `gemini -r ID -p …`
 * leaves a header-only stub `session-<now>-<id8>.jsonl`, and so does the TUI's `/quit` after
 * `--resume`; gemini's next start in the project deletes every `-<id8>.jsonl` because of it.
 * `mam-tui resume` removes the stub an earlier run left before it starts gemini, and `mam-tui
 * stop` the one gemini wrote on its way out; after that a plain gemini start leaves the
 * conversation in place.
 */
async function resumeLaterMinuteThenStartAgain(world: RealWorld, id: string, marker: string): Promise<void> {
	const created = conversationsOnDisk(world, 'gemini', world.alpha).find(c => c.id === id)?.files[0] ?? '';
	const chats = path.dirname(created);
	const named = () => fs.readdirSync(chats).filter(n => n.endsWith(`-${id.slice(0, 8)}.jsonl`));
	const minuteOf = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(/:/g, '-');
	const headlessResume = async (text: string) => {
		while (named().some(n => n.includes(minuteOf(Date.now())))) await sleep(2000);
		const run = await execa(world.clis.gemini, ['-r', id, '-p', text], {
			cwd: world.alpha,
			env: world.env,
			extendEnv: false,
			stdin: 'ignore',
			reject: false,
			timeout: 120_000,
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(named(), 'gemini -r in a later minute wrote its stub').toHaveLength(2);
	};
	await headlessResume('again, a minute later');

	const adopted = await world.mamTui(['adopt', '--json', '--agent', 'gemini', '--id', id]);
	expect(adopted.exitCode, adopted.stderr + adopted.stdout).toBe(0);
	const {session} = JSON.parse(adopted.stdout) as {session: string};
	const resumed = await world.mamTui(['resume', '--json', session]);
	expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
	expect(named(), 'no stub once gemini runs').toEqual([path.basename(created)]);
	const pane = await attachTui(world, 'gemini', (JSON.parse(resumed.stdout) as {paneId: string}).paneId);
	await pane.waitForScreen(new RegExp(marker), 60_000);
	const stopped = await world.mamTui(['stop', session]);
	expect(stopped.exitCode, stopped.stderr + stopped.stdout).toBe(0);
	expect(named(), 'no stub after mam-tui stop').toEqual([path.basename(created)]);
	// Deterministic case: a stub on disk while nothing of gemini runs. `mam-tui stop` of the
	// stopped row (it also sweeps leftovers) removes it; without that a plain start loses it all.
	await headlessResume('once more, from a script');
	const swept = await world.mamTui(['stop', session]);
	expect(swept.exitCode, swept.stderr + swept.stdout).toBe(0);
	expect(named(), 'mam-tui stop removed the stub').toEqual([path.basename(created)]);
	// A plain start (a new conversation) runs gemini's cleanup; the resumed one survives it.
	await converse(world, 'gemini', world.alpha, 'a new one after the resume', [id]);
	expect(conversationsOnDisk(world, 'gemini', world.alpha).map(c => c.id)).toContain(id);
}
