import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentId} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {BETTER_SQLITE3, builtCli, cliEnv, type CliChild} from '../helpers/cli.js';
import {writeCrashHook, type WriteCounts} from './support/crashHook.js';
import {budgetMs, trials} from './support/soak.js';

/**
 * Issue 18 item 4: a restore or a `trash empty` killed at any write leaves the old state or the
 * new one, and running it again finishes it. Every agent with a sqlite store or shared files is
 * here (claude: files, lines and a JSON key; codex and opencode: rows in several databases;
 * gemini: files). Purges killed at any point are purgeCrash.test.ts's (it runs with the trash on).
 */
const AGENTS = (process.env['MAM_AGENTS']?.split(',') ?? ['claude', 'codex', 'opencode', 'gemini']) as AgentId[];
const NAME = 'victim';

let scratch: string;
let hook: string;

beforeAll(() => {
	scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-trash-crash-')));
	hook = writeCrashHook(scratch);
});

afterAll(() => fs.rmSync(scratch, {recursive: true, force: true}));

interface Scene {
	readonly world: FixtureWorld;
	readonly dir: string;
	readonly env: Record<string, string>;
	readonly registry: string;
	/** Everything of every conversation, target included, before the purge. */
	readonly whole: ReadonlyMap<string, string>;
	dispose(): void;
}

async function scene(agent: AgentId): Promise<Scene> {
	const build = FIXTURE_BUILDERS[agent];
	if (!build) throw new Error(`no fixture for ${agent}`);
	const world = await build();
	const dir = fs.mkdtempSync(path.join(scratch, `${agent}-`));
	const registry = path.join(dir, 'registry.db');
	const reg = Registry.open(registry);
	reg.insert({name: NAME, agent, cwd: world.cwds[0], agentSessionId: world.ids.target, status: 'stopped', epoch: world.epoch});
	reg.close();
	return {
		world,
		dir,
		registry,
		env: cliEnv(path.join(dir, 'user'), path.join(dir, 'state'), {MAM_BETTER_SQLITE3: BETTER_SQLITE3}),
		whole: world.snapshotOthers([]),
		dispose() {
			world.cleanup();
			fs.rmSync(dir, {recursive: true, force: true});
		},
	};
}

function cli(s: Scene, args: readonly string[], extraEnv: Record<string, string> = {}, preload?: string): CliChild {
	return builtCli([...args, '--home', s.world.home, '--registry', s.registry], {env: {...s.env, ...extraEnv}, cwd: s.dir, ...(preload ? {preload} : {})});
}

async function purged(s: Scene): Promise<string> {
	const run = await cli(s, ['purge', NAME, '--yes']);
	expect(run.exitCode, `${String(run.stdout)}\n${String(run.stderr)}`).toBe(0);
	const listed = await cli(s, ['trash', '--json']);
	const purges = (JSON.parse(String(listed.stdout)) as {purges: {purgeId: string; state: string}[]}).purges;
	expect(purges.map(p => p.state)).toEqual(['done']);
	return purges[0]?.purgeId ?? '';
}

/** How many writes a whole `args` run makes, on a throwaway world of the same shape. */
async function probe(agent: AgentId, args: (purgeId: string) => string[]): Promise<WriteCounts> {
	const s = await scene(agent);
	try {
		const purgeId = await purged(s);
		const countFile = path.join(s.dir, 'count');
		const run = await cli(s, args(purgeId), {MAM_CRASH_COUNT_FILE: countFile}, hook);
		expect(run.exitCode, `${String(run.stdout)}\n${String(run.stderr)}`).toBe(0);
		return JSON.parse(fs.readFileSync(countFile, 'utf8')) as WriteCounts;
	} finally {
		s.dispose();
	}
}

const random = (n: number) => 1 + Math.floor(Math.random() * n);

/** Kill points: the first removal, the first sqlite write, and random writes. */
function points(w: WriteCounts, extra: number): {kind: keyof WriteCounts; at: number}[] {
	const out: {kind: keyof WriteCounts; at: number}[] = [];
	if (w.rm > 0) out.push({kind: 'rm', at: 1});
	if (w.sql > 0) out.push({kind: 'sql', at: random(w.sql)});
	for (let i = 0; i < extra; i++) out.push({kind: 'any', at: random(w.any)});
	return out;
}

async function crash(s: Scene, args: readonly string[], point: {kind: keyof WriteCounts; at: number}): Promise<void> {
	const run = await cli(s, args, {MAM_CRASH_AT: String(point.at), MAM_CRASH_KIND: point.kind}, hook);
	// A rerun has less to do and may end before its crash point, or find that an earlier killed run
	// got to the end (the entry is gone); any other refusal fails.
	const finishedBefore = run.exitCode === 1 && /no purge \S+ in the trash/.test(String(run.stderr));
	expect(
		run.signal === 'SIGKILL' || run.exitCode === 0 || finishedBefore,
		`crash before ${point.kind} write ${point.at}: exit ${run.exitCode}\n${String(run.stdout)}\n${String(run.stderr)}`,
	).toBe(true);
}

describe('restore and trash empty killed at any write are finished by a rerun (built CLI)', () => {
	const extra = trials(2, 6);

	it.each(AGENTS)('%s: restore', {timeout: budgetMs(120_000, 900_000)}, async agent => {
		const writes = await probe(agent, id => ['restore', id]);
		const s = await scene(agent);
		try {
			const purgeId = await purged(s);
			const seen: string[] = [];
			for (const point of points(writes, extra)) {
				seen.push(`${point.kind} ${point.at}`);
				await crash(s, ['restore', purgeId], point);
			}
			const last = await cli(s, ['restore', purgeId]);
			const when = `${agent}: kills before ${seen.join(', ')}`;
			// Finished by an earlier run (killed after the entry went), or by this one.
			if (last.exitCode !== 0) expect(String(last.stderr), when).toMatch(/no purge .* in the trash/);
			expect((await ADAPTERS[agent].verify(s.world.ctx, s.world.ids.target)).kind, when).toBe('yes');
			expect(s.world.snapshotOthers([]), when).toEqual(s.whole);
			const listed = await cli(s, ['trash', '--json']);
			expect(JSON.parse(String(listed.stdout)), when).toMatchObject({purges: []});
		} finally {
			s.dispose();
		}
	});

	it.each(AGENTS)('%s: trash empty', {timeout: budgetMs(120_000, 900_000)}, async agent => {
		const writes = await probe(agent, () => ['trash', 'empty', '--yes']);
		const s = await scene(agent);
		try {
			const purgeId = await purged(s);
			for (const point of points(writes, extra)) await crash(s, ['trash', 'empty', '--yes'], point);
			const last = await cli(s, ['trash', 'empty', '--yes']);
			expect(last.exitCode, String(last.stderr)).toBe(0);
			expect(fs.readdirSync(path.join(s.dir, 'state', 'trash'))).toEqual([]);
			const restore = await cli(s, ['restore', purgeId]);
			expect(restore.exitCode).toBe(1);
			expect(await ADAPTERS[agent].residual(s.world.ctx, s.world.ids.target)).toEqual([]);
		} finally {
			s.dispose();
		}
	});
});
