import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {main} from '../../src/cli/main.js';
import type {ConversationsJson} from '../../src/cli/conversationsCommand.js';
import type {AgentId, ResumeState} from '../../src/domain/types.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {cliEnv} from '../helpers/cli.js';
import {applyFault, IS_ROOT, isSqliteFile, listing, SQLITE_ONLY, STORE_FAULTS, type StoreFault} from './support/storeFaults.js';
import {budgetMs} from './support/soak.js';
import {differences, othersSnapshot, ownershipOf, withDescendants} from './support/isolation.js';

const AGENTS = Object.keys(FIXTURE_BUILDERS) as AgentId[];

let scratch: string;
beforeAll(() => {
	scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-stores-')));
});
afterAll(() => fs.rmSync(scratch, {recursive: true, force: true}));

/** The files that hold the target: its transcript or rollout, and the databases whose rows name it. */
function storesOfTarget(world: FixtureWorld, fault: StoreFault): string[] {
	const held = world.holdPaths(world.ids.target);
	const dbs = world.databases.filter(db => fs.readFileSync(db).includes(world.ids.target));
	const files = [...new Set([...held, ...dbs])];
	return SQLITE_ONLY.has(fault) ? files.filter(isSqliteFile) : files;
}

interface Answers {
	readonly verify: ResumeState;
	readonly verifyInCwd: ResumeState;
	readonly problems: readonly string[];
	readonly listed: ResumeState | undefined;
	readonly cliState: string;
	readonly cliTarget: string | undefined;
	readonly purgeDryRun: number;
}

async function cli(args: readonly string[], env: Record<string, string>): Promise<{code: number; out: string; err: string}> {
	const out: string[] = [];
	const err: string[] = [];
	const o = vi.spyOn(process.stdout, 'write').mockImplementation(chunk => {
		out.push(String(chunk));
		return true;
	});
	const e = vi.spyOn(process.stderr, 'write').mockImplementation(chunk => {
		err.push(String(chunk));
		return true;
	});
	try {
		return {code: await main(args, env), out: out.join(''), err: err.join('')};
	} finally {
		o.mockRestore();
		e.mockRestore();
	}
}

/** Every read a user can trigger over the store: verify, discovery, `conversations`, a purge plan. */
async function ask(world: FixtureWorld, dir: string): Promise<Answers> {
	const adapter = ADAPTERS[world.agent];
	const verify = await adapter.verify(world.ctx, world.ids.target);
	const verifyInCwd = await adapter.verify(world.ctx, world.ids.target, world.cwds[0]);
	const found = await adapter.discover(world.ctx, {includeChildren: true});
	const env = cliEnv(path.join(dir, 'user'), path.join(dir, 'state'));
	const common = ['--home', world.home, '--registry', path.join(dir, 'registry.db')];
	const conv = await cli(['conversations', '--json', '--agent', world.agent, ...common], env);
	expect(conv.code, conv.err).toBe(0);
	const body = JSON.parse(conv.out) as ConversationsJson;
	const purge = await cli(['purge', '--agent', world.agent, '--id', world.ids.target, '--dry-run', ...common], env);
	expect(purge.err, 'a purge plan over a broken store').not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
	return {
		verify,
		verifyInCwd,
		problems: found.problems,
		listed: found.conversations.find(c => c.id === world.ids.target)?.resumeState,
		cliState: body.agents.find(a => a.agent === world.agent)?.state ?? '?',
		cliTarget: body.conversations.find(c => c.id === world.ids.target)?.resumeState,
		purgeDryRun: purge.code,
	};
}

/**
 * What verify may answer for the target. Never `yes` for a store that lost its content; `no` only
 * where the damage leaves no conversation to speak of (an empty transcript, a folder where the file
 * was); `unknown` with its reason for anything unreadable.
 */
function allowedKinds(fault: StoreFault, sqlite: boolean): readonly ResumeState['kind'][] {
	switch (fault) {
		case 'locked':
			// A trace-free reader may read past a writer's lock (immutable open, or a private copy).
			return ['yes', 'unknown'];
		case 'truncated':
			// Half a transcript may still hold a real message.
			return sqlite ? ['yes', 'no', 'unknown'] : ['yes', 'no', 'unknown'];
		case 'empty':
		case 'directory':
		case 'permission':
			return ['no', 'unknown'];
		case 'garbage':
			return sqlite ? ['yes', 'no', 'unknown'] : ['no', 'unknown'];
		case 'corrupt-pages':
		case 'future-schema':
			return ['yes', 'no', 'unknown'];
	}
}

/** Damage to a database must be said somewhere: the session is unknown, the agent's store is, or a purge plan is refused. */
function reported(a: Answers): boolean {
	return a.verify.kind === 'unknown' || a.cliState.startsWith('unknown: ') || (a.cliTarget ?? '').startsWith('unknown: ') || a.purgeDryRun === 1;
}

/** Faults under which the stores still open: a real purge runs, and must touch no other session. */
const PURGE_THROUGH: ReadonlySet<StoreFault> = new Set(['future-schema', 'directory', 'empty']);

/** `purge --yes` over the damaged store: it may refuse (1) or leave residue (5), never touch another session. */
async function purgeThrough(world: FixtureWorld, dir: string, line: string): Promise<void> {
	const excluded = withDescendants(world, world.ids.target);
	const own = ownershipOf(world, excluded);
	const before = othersSnapshot(world, own);
	const env = cliEnv(path.join(dir, 'user'), path.join(dir, 'state'));
	const run = await cli(
		['purge', '--agent', world.agent, '--id', world.ids.target, '--yes', '--home', world.home, '--registry', path.join(dir, 'registry.db')],
		env,
	);
	expect([0, 1, 5], `${line}; purge --yes: exit ${run.code} ${run.err}`).toContain(run.code);
	expect(run.err).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
	expect(differences(before, othersSnapshot(world, own)), `${line}; purge --yes: other sessions`).toEqual([]);
}

describe('hostile stores: every broken store is a per-session unknown, never a crash, never a write', () => {
	const cases = AGENTS.flatMap(agent => STORE_FAULTS.filter(f => f !== 'permission').map(fault => ({agent, fault})));
	const results: string[] = [];

	afterAll(() => console.info(`hostile stores:\n${results.join('\n')}`));

	it.for(cases)('$agent: $fault', {timeout: budgetMs(60_000, 120_000)}, ({agent, fault}, {skip}) => checkFault(agent, fault, skip));

	// As root, chmod 000 does not deny a read, so the fault cannot be made; `directory` covers an unreadable path.
	it.skipIf(IS_ROOT).each(AGENTS.map(agent => ({agent})))(
		'$agent: permission denied (chmod 000; skipped when running as root, where chmod 000 does not deny reads)',
		{timeout: budgetMs(60_000, 120_000)},
		({agent}) => checkFault(agent, 'permission', () => undefined),
	);

	/** Break the store holding the target, then ask everything; `skip` when the agent keeps no such store. */
	async function checkFault(agent: AgentId, fault: StoreFault, skip: (note: string) => void): Promise<void> {
		const build = FIXTURE_BUILDERS[agent];
		if (!build) return;
		const world = await build();
		const dir = fs.mkdtempSync(path.join(scratch, `${agent}-${fault}-`));
		const faults: Array<{release(): Promise<void>}> = [];
		try {
			const files = storesOfTarget(world, fault);
			if (files.length === 0) {
				results.push(`${agent} ${fault}: not applicable (no ${SQLITE_ONLY.has(fault) ? 'database' : 'file'} holds the target)`);
				skip(`no ${SQLITE_ONLY.has(fault) ? 'database' : 'file'} of ${agent} holds the target`);
				return;
			}
			for (const file of files) faults.push(await applyFault(file, fault));
			const before = listing(world.home);
			const answers = await ask(world, dir);
			expect(differences(before, listing(world.home)), 'the reads wrote nothing').toEqual([]);
			const line = `${agent} ${fault} (${files.map(f => path.basename(f)).join(', ')}): verify ${answers.verify.kind}${answers.verify.kind === 'yes' ? '' : ` — ${answers.verify.reason}`}; conversations ${answers.cliState.slice(0, 80)}; target listed as ${answers.cliTarget ?? 'absent'}; purge --dry-run exit ${answers.purgeDryRun}`;
			results.push(line);
			const sqlite = files.some(isSqliteFile) || SQLITE_ONLY.has(fault);
			expect(allowedKinds(fault, sqlite), line).toContain(answers.verify.kind);
			expect(allowedKinds(fault, sqlite), line).toContain(answers.verifyInCwd.kind);
			if (answers.verify.kind !== 'yes') expect(answers.verify.reason.length, line).toBeGreaterThan(0);
			if (answers.verify.kind === 'unknown') {
				// Discovery says so too: the agent's store is reported, or the conversation is listed as unknown.
				expect(answers.problems.length > 0 || answers.listed?.kind === 'unknown', line).toBe(true);
				expect(answers.cliState.startsWith('unknown: ') || (answers.cliTarget ?? '').startsWith('unknown: '), line).toBe(true);
			}
			if (sqlite && ['truncated', 'garbage', 'corrupt-pages'].includes(fault)) expect(reported(answers), `${line}: the damage is reported`).toBe(true);
			// A purge plan over a broken store is refused (1), or over a locked one, names the lock holder (4).
			expect(fault === 'locked' ? [0, 1, 4] : [0, 1], line).toContain(answers.purgeDryRun);
			if (PURGE_THROUGH.has(fault)) await purgeThrough(world, dir, line);
		} finally {
			for (const f of faults) await f.release();
			world.cleanup();
		}
	}
});
