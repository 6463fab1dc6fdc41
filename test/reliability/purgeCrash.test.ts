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
import {differences, othersSnapshot, outsideSnapshot, ownershipOf, type Ownership} from './support/isolation.js';
import {inspectRegistry, rowProblems} from './support/registryCheck.js';
import {budgetMs, SOAK, trials} from './support/soak.js';

/** Every agent with a fixture; MAM_AGENTS=a,b narrows a run while debugging one adapter. */
const AGENTS = (process.env['MAM_AGENTS']?.split(',') ?? Object.keys(FIXTURE_BUILDERS)) as AgentId[];
const NAME = 'victim';

let scratch: string;
let hook: string;

beforeAll(() => {
	scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-crash-')));
	hook = writeCrashHook(scratch);
});

afterAll(() => {
	fs.rmSync(scratch, {recursive: true, force: true});
	if (leftoverTemps.length > 0)
		console.info(`purge crash: ${leftoverTemps.length} rewrite temp file(s) left behind by kills (harmless, not cleaned up by the rerun)`);
});

/** One fixture world with its target registered as a stopped session, and the state to compare against. */
interface Scene {
	readonly world: FixtureWorld;
	readonly dir: string;
	readonly registry: string;
	readonly env: Record<string, string>;
	readonly excluded: readonly string[];
	readonly own: Ownership;
	readonly others: ReadonlyMap<string, string>;
	readonly outside: ReadonlyMap<string, string>;
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
	reg.insert({name: 'bystander', agent, cwd: world.cwds[0], agentSessionId: world.ids.sibling, status: 'stopped', epoch: world.epoch});
	reg.close();
	const excluded = [world.ids.target, ...world.ids.targetDescendants];
	const own = ownershipOf(world, excluded);
	return {
		world,
		dir,
		registry,
		env: cliEnv(path.join(dir, 'user'), path.join(dir, 'state'), {MAM_BETTER_SQLITE3: BETTER_SQLITE3}),
		excluded,
		own,
		others: othersSnapshot(world, own),
		outside: outsideSnapshot(path.dirname(world.home), world.roots),
		dispose() {
			world.cleanup();
			fs.rmSync(dir, {recursive: true, force: true});
		},
	};
}

function purge(s: Scene, extraEnv: Record<string, string> = {}, preload?: string): CliChild {
	return builtCli(['purge', NAME, '--yes', '--home', s.world.home, '--registry', s.registry], {
		env: {...s.env, ...extraEnv},
		cwd: s.dir,
		...(preload ? {preload} : {}),
	});
}

/**
 * A shared file is rewritten through `.<name>.mam-<hex>.tmp` and a rename; a kill between the two
 * leaves that temp file behind. It holds only other sessions' lines and nothing reads it, so it
 * is not a change to any session; it is counted (see the report) rather than failed on.
 */
const REWRITE_TEMP = /\.mam-[0-9a-f]{12}\.tmp$/;
const leftoverTemps: string[] = [];

function withoutTemps(snapshot: ReadonlyMap<string, string>): Map<string, string> {
	return new Map(
		[...snapshot].filter(([key]) => {
			if (!REWRITE_TEMP.test(key)) return true;
			if (!leftoverTemps.includes(key)) leftoverTemps.push(key);
			return false;
		}),
	);
}

/** After any crash: other sessions, everything outside the roots and the registry are whole. */
function expectIntact(s: Scene, when: string): void {
	expect(differences(s.others, withoutTemps(othersSnapshot(s.world, s.own))), `${when}: other sessions`).toEqual([]);
	expect(differences(s.outside, outsideSnapshot(path.dirname(s.world.home), s.world.roots)), `${when}: outside the roots`).toEqual([]);
	const state = inspectRegistry(s.registry);
	expect(state.integrity, `${when}: registry integrity`).toBe('ok');
	expect(rowProblems(state.sessions), `${when}: registry rows`).toEqual([]);
	expect(state.sessions.map(r => r.name).sort(), when).toEqual(['bystander', NAME]);
	const bystander = state.sessions.find(r => r.name === 'bystander');
	expect(bystander?.status, `${when}: the other row`).toBe('stopped');
	expect(bystander?.version, `${when}: the other row`).toBe(1);
}

/** The rerun finishes the job: exit 0, nothing left, row purged, audit has every attempt. */
async function expectRerunFinishes(s: Scene, crashes: number, when: string): Promise<void> {
	const last = await purge(s);
	expect(last.exitCode, `${when}\n${String(last.stdout)}\n${String(last.stderr)}`).toBe(0);
	expect(String(last.stdout)).toContain('residual: nothing left');
	expect(await ADAPTERS[s.world.agent].residual(s.world.ctx, s.world.ids.target), when).toEqual([]);
	expect((await ADAPTERS[s.world.agent].verify(s.world.ctx, s.world.ids.target)).kind, when).toBe('no');
	expectIntact(s, `${when}, after the rerun`);
	const state = inspectRegistry(s.registry);
	const row = state.sessions.find(r => r.name === NAME);
	expect(row?.status).toBe('purged');
	expect(row?.extra['purge']).toMatchObject({state: 'done'});
	const audit = state.audit.filter(a => a.session === NAME && a.action === 'purge');
	expect(audit.at(-1)?.outcome, when).toBe('ok');
	// Every run that got as far as deleting put its intent on record first; the last one did too.
	const started = audit.filter(a => a.step === 'delete' && a.outcome === 'started').length;
	expect(started).toBeGreaterThanOrEqual(1);
	expect(started).toBeLessThanOrEqual(crashes + 1);
	await expectOneRestorableEntry(s, when);
}

/**
 * The purges killed on the way left one trash entry, complete (issue 18 item 4): entries killed
 * while copying are gone, one killed after copying was finished by the rerun; restoring it brings
 * the conversation back.
 */
async function expectOneRestorableEntry(s: Scene, when: string): Promise<void> {
	const listed = await builtCli(['trash', '--json', '--home', s.world.home, '--registry', s.registry], {env: s.env, cwd: s.dir});
	const purges = (JSON.parse(String(listed.stdout)) as {purges: {purgeId: string; state: string}[]}).purges;
	expect(
		purges.map(p => p.state),
		`${when}: the trash`,
	).toEqual(['done']);
	const restored = await builtCli(['restore', purges[0]?.purgeId ?? '', '--home', s.world.home, '--registry', s.registry], {env: s.env, cwd: s.dir});
	expect(restored.exitCode, `${when}: restore\n${String(restored.stdout)}\n${String(restored.stderr)}`).toBe(0);
	expect((await ADAPTERS[s.world.agent].verify(s.world.ctx, s.world.ids.target)).kind, `${when}: after restore`).toBe('yes');
}

interface Probe {
	/** Writes a whole purge makes: all of them, file removals, sqlite writes. */
	readonly writes: WriteCounts;
	/** How long a whole purge took, wall clock. */
	readonly ms: number;
}

/** A whole purge on a throwaway world of the same shape, counting its writes. */
async function probe(agent: AgentId): Promise<Probe> {
	const s = await scene(agent);
	try {
		const countFile = path.join(s.dir, 'count');
		const started = Date.now();
		const run = await purge(s, {MAM_CRASH_COUNT_FILE: countFile}, hook);
		expect(run.exitCode, `${String(run.stdout)}\n${String(run.stderr)}`).toBe(0);
		return {writes: JSON.parse(fs.readFileSync(countFile, 'utf8')) as WriteCounts, ms: Date.now() - started};
	} finally {
		s.dispose();
	}
}

const random = (n: number) => Math.floor(Math.random() * n);

/** Where one run is killed: right before write `at` (of a kind), or `delayMs` after it started. */
type CrashPoint = {readonly kind: keyof WriteCounts; readonly at: number} | {readonly delayMs: number};

function describePoint(point: CrashPoint, p: Probe): string {
	return 'delayMs' in point ? `+${point.delayMs} ms of ${p.ms}` : `${point.kind} write ${point.at}/${p.writes[point.kind]}`;
}

/**
 * The kill points of one world: right before the first file removal (where an adapter that
 * deletes its index rows before the files they lead to loses track of them), before a random
 * write of any kind, after a random delay, and in the soak run before a random removal too.
 */
function crashPoints(p: Probe, extra: number): CrashPoint[] {
	const points: CrashPoint[] = [];
	if (p.writes.rm > 0) points.push({kind: 'rm', at: 1});
	for (let i = 0; i < extra; i++) {
		if (p.writes.rm > 0 && SOAK) points.push({kind: 'rm', at: 1 + random(p.writes.rm)});
		points.push({kind: 'any', at: 1 + random(p.writes.any)});
		points.push({delayMs: random(Math.ceil(p.ms * 1.2))});
	}
	return points;
}

async function crash(s: Scene, point: CrashPoint): Promise<void> {
	if ('delayMs' in point) {
		const child = purge(s);
		await new Promise(resolve => setTimeout(resolve, point.delayMs));
		child.kill('SIGKILL');
		await child;
		return;
	}
	const run = await purge(s, {MAM_CRASH_AT: String(point.at), MAM_CRASH_KIND: point.kind}, hook);
	// A rerun after a crash has fewer writes to make and may finish before its crash point.
	expect(
		run.signal === 'SIGKILL' || run.exitCode === 0,
		`crash before ${point.kind} write ${point.at}: exit ${run.exitCode}\n${String(run.stdout)}\n${String(run.stderr)}`,
	).toBe(true);
}

describe('a purge killed at any point is finished by a rerun (built CLI, every adapter)', () => {
	const worlds = trials(1, 5);
	const extra = trials(1, 3);

	it.each(AGENTS)(
		`%s: SIGKILL before the first file removal and at random points, then a rerun (${worlds} world(s))`,
		{timeout: budgetMs(90_000, 900_000)},
		async agent => {
			const p = await probe(agent);
			expect(p.writes.any).toBeGreaterThan(3);
			for (let w = 0; w < worlds; w++) {
				const s = await scene(agent);
				try {
					const seen: string[] = [];
					for (const point of crashPoints(p, extra)) {
						seen.push(describePoint(point, p));
						await crash(s, point);
						expectIntact(s, `${agent}: after kills at ${seen.join(', ')}`);
					}
					await expectRerunFinishes(s, seen.length, `${agent}: kills at ${seen.join(', ')}`);
				} finally {
					s.dispose();
				}
			}
		},
	);
});
