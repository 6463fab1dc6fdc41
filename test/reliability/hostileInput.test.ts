import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {InvalidIdError, type AdapterContext, type AgentAdapter} from '../../src/adapters/types.js';
import {main} from '../../src/cli/main.js';
import {Registry} from '../../src/registry/registry.js';
import type {Exec} from '../../src/system/exec.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {writeAgentStandIns} from '../support/agentBin.js';
import {privateTmux, type PrivateTmux} from '../helpers/tmux.js';
import {builtCli, cliEnv} from '../helpers/cli.js';
import {HOSTILE_STRINGS, hostileString, shellPayloads} from './support/hostile.js';
import {outsideSnapshot, differences} from './support/isolation.js';
import {budgetMs, fcOptions, SOAK, trials} from './support/soak.js';
import {eventually} from '../helpers/poll.js';
import {planNaming} from '../helpers/purge.js';

let base: string;
/** Hostile paths are built under this folder, deep enough that `../../../..` stays inside `base`. */
let deep: string;
let marker: string;
let world: FixtureWorld;
let registry: string;
/** Commands that may create rows under hostile names write here, so `alpha` stays alone in `registry`. */
let scratchRegistry: string;
let tmux: PrivateTmux;
let env: Record<string, string>;
let fixtureBefore: Map<string, string>;
/** Existing folders whose names are the payloads (a user can have those). */
const hostileDirs = new Map<string, string>();

beforeAll(async () => {
	base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-hostile-')));
	deep = path.join(base, 'h', 'a', 'b', 'c', 'd', 'e');
	fs.mkdirSync(deep, {recursive: true});
	fs.mkdirSync(path.join(base, 'canary'));
	marker = path.join(base, 'canary', 'pwned');
	world = await (
		FIXTURE_BUILDERS.claude ??
		(() => {
			throw new Error('no claude fixture');
		})
	)();
	registry = path.join(base, 'state', 'registry.db');
	scratchRegistry = path.join(base, 'state', 'scratch.db');
	const reg = Registry.open(registry);
	reg.insert({name: 'alpha', agent: 'claude', cwd: world.cwds[0], agentSessionId: world.ids.target, status: 'stopped', epoch: world.epoch});
	reg.close();
	for (const payload of [...HOSTILE_STRINGS, ...shellPayloads(marker)]) {
		if (payload.length === 0 || payload.includes('\0') || Buffer.byteLength(payload) > 200) continue;
		const dir = path.resolve(path.join(base, 'dirs'), payload);
		if (!dir.startsWith(`${base}${path.sep}dirs${path.sep}`)) continue;
		fs.mkdirSync(dir, {recursive: true});
		hostileDirs.set(payload, dir);
	}
	tmux = privateTmux('mam-test');
	await tmux.run(['new-session', '-d', '-s', 'base', 'sleep', '100000']);
	env = cliEnv(path.join(base, 'user'), path.join(base, 'state'));
	fixtureBefore = outsideSnapshot(path.dirname(world.home), []);
});

afterAll(async () => {
	await tmux?.kill();
	world?.cleanup();
	fs.rmSync(base, {recursive: true, force: true});
});

interface Run {
	readonly code: number;
	readonly out: string;
	readonly err: string;
}

/** `mam-tui ...args` in this process (same code path as the binary), output captured. */
async function cli(args: readonly string[]): Promise<Run> {
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
		const code = await main(args, env);
		return {code, out: out.join(''), err: err.join('')};
	} finally {
		o.mockRestore();
		e.mockRestore();
	}
}

const VALID_ABSENT = '00000000-0000-4000-8000-000000000000';

/** A command line with the payload in one place, and the exit codes that count as handled. */
interface Template {
	readonly what: string;
	readonly args: (p: string) => string[];
	readonly codes: readonly number[];
	/** Exit codes that are an answer, not a refusal, so they need no message on stderr (`drift` 1: findings). */
	readonly answers?: readonly number[];
}

const pathOf = (p: string) => hostileDirs.get(p) ?? `${deep}/${p}`;

function templates(): Template[] {
	const mux = ['--mux', 'tmux', '--tmux-socket', tmux.name];
	const own = ['--registry', registry, '--home', world.home, ...mux];
	const creating = ['--registry', scratchRegistry, '--home', world.home, ...mux];
	return [
		{what: 'resume NAME', args: p => ['resume', p, ...own], codes: [2, 3]},
		{what: 'resume --id', args: p => ['resume', '--agent', 'claude', '--id', p, ...own], codes: [2]},
		{what: 'resume --agent', args: p => ['resume', '--agent', p, '--id', VALID_ABSENT, ...own], codes: [2]},
		{what: 'stop NAME', args: p => ['stop', p, ...own], codes: [2, 3]},
		{what: 'stop --id', args: p => ['stop', '--agent', 'claude', '--id', p, ...own], codes: [2]},
		{what: 'stop --agent', args: p => ['stop', '--agent', p, '--id', VALID_ABSENT, ...own], codes: [2]},
		{what: 'stop --grace', args: p => ['stop', 'alpha', '--grace', p, ...own], codes: [2]},
		{what: 'purge NAME --yes', args: p => ['purge', p, '--yes', ...own], codes: [2, 3]},
		{what: 'purge --id --dry-run', args: p => ['purge', '--agent', 'claude', '--id', p, '--dry-run', ...own], codes: [2]},
		{what: 'purge --id --yes', args: p => ['purge', '--agent', 'claude', '--id', p, '--yes', ...own], codes: [2]},
		{what: 'purge --agent', args: p => ['purge', '--agent', p, '--id', VALID_ABSENT, '--yes', ...own], codes: [2]},
		{what: 'adopt --id', args: p => ['adopt', '--agent', 'claude', '--id', p, ...own], codes: [2]},
		{what: 'adopt --agent', args: p => ['adopt', '--agent', p, '--id', world.ids.sibling, ...own], codes: [2]},
		// A printable name is a fine name: adopting under it is handled (0), control characters are refused.
		{what: 'adopt --name', args: p => ['adopt', '--agent', 'claude', '--id', world.ids.foreign, '--name', p, ...creating], codes: [0, 2]},
		{what: 'new --cwd', args: p => ['new', '--agent', 'claude', '--cwd', pathOf(p), ...creating], codes: [0, 2]},
		{what: 'new --agent', args: p => ['new', '--agent', p, '--cwd', world.cwds[0], ...own], codes: [2]},
		{what: 'new --name', args: p => ['new', '--agent', 'claude', '--cwd', world.cwds[1], '--name', p, ...creating], codes: [0, 2]},
		{what: 'conversations --agent', args: p => ['conversations', '--agent', p, '--json', ...own], codes: [2]},
		{what: 'conversations --cwd', args: p => ['conversations', '--cwd', pathOf(p), '--json', ...own], codes: [0, 2]},
		{what: 'status --registry', args: p => ['status', '--json', '--registry', `${deep}/${p}`, '--home', world.home, ...mux], codes: [0, 2]},
		{what: 'status --home', args: p => ['status', '--json', '--registry', registry, '--home', `${deep}/${p}`, ...mux], codes: [0, 2]},
		{what: 'drift --home', args: p => ['drift', '--json', '--registry', registry, '--home', `${deep}/${p}`, ...mux], codes: [0, 1, 2], answers: [1]},
		{what: 'drift --registry', args: p => ['drift', '--json', '--registry', `${deep}/${p}`, '--home', world.home, ...mux], codes: [0, 1, 2], answers: [1]},
		{what: 'purge --registry', args: p => ['purge', 'alpha', '--dry-run', '--registry', `${deep}/${p}`, '--home', world.home], codes: [2, 3]},
	];
}

/** Handled: an expected exit code, a one-line reason when refused, no stack trace, nothing ran. */
function expectHandled(t: Template, payload: string, run: Run): void {
	const label = `${t.what} ${JSON.stringify(payload.slice(0, 60))}: exit ${run.code}\n${run.err.slice(0, 400)}`;
	// `--help` where a value was expected is parsed as the option: printing the usage is handled too.
	const codes = payload === '--help' ? [...t.codes, 0] : t.codes;
	expect(codes, label).toContain(run.code);
	if (run.code !== 0 && !t.answers?.includes(run.code)) expect(run.err.trim().length, label).toBeGreaterThan(0);
	expect(run.err, label).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
	expect(fs.existsSync(marker), `${label}: the canary was created, something executed the payload`).toBe(false);
}

describe('hostile ids, names and paths through every CLI command', () => {
	it('every command refuses (exit 2) or safely handles each fixed hostile string and shell payload', {timeout: budgetMs(180_000, 900_000)}, async () => {
		let runs = 0;
		for (const [ti, t] of templates().entries()) {
			// Every shell payload everywhere; each other hostile string in every eighth place (all of
			// them everywhere in the soak run): validation is shared, the places are what differ.
			const others = HOSTILE_STRINGS.filter((_, i) => SOAK || (i + ti) % 8 === 0);
			for (const payload of [...shellPayloads(marker), ...others]) {
				expectHandled(t, payload, await cli(t.args(payload)));
				runs += 1;
			}
		}
		expect(differences(fixtureBefore, outsideSnapshot(path.dirname(world.home), [])), 'the agent home and project folders').toEqual([]);
		// The registry still opens and its first row is untouched.
		const reg = Registry.open(registry);
		try {
			expect(reg.get('alpha')).toMatchObject({status: 'stopped', agentSessionId: world.ids.target, version: 1});
		} finally {
			reg.close();
		}
		console.info(`hostile CLI input: ${runs} runs, all refused or handled, canary never created`);
	});

	const runs = trials(40, 400);
	it(`random hostile strings in ids, agents and names (${runs} draws per place)`, {timeout: budgetMs(120_000, 900_000)}, async () => {
		const fast = templates().filter(t => /--id|--agent|NAME|--grace/.test(t.what));
		await fc.assert(
			fc.asyncProperty(fc.constantFrom(...fast), hostileString(marker), async (t, payload) => {
				if (ADAPTERS.claude.idPattern.test(payload)) return;
				expectHandled(t, payload, await cli(t.args(payload)));
			}),
			fcOptions(runs * 4),
		);
		expect(differences(fixtureBefore, outsideSnapshot(path.dirname(world.home), []))).toEqual([]);
	});

	it(
		'through the built binary: argv payloads reach no shell, and a folder named like a command opens safely',
		{timeout: budgetMs(120_000, 600_000)},
		async () => {
			const cwd = path.join(deep, 'cwd');
			fs.mkdirSync(cwd, {recursive: true});
			const shells = shellPayloads(marker);
			const placed: Array<{args: string[]; codes: number[]}> = shells
				.filter((_, i) => SOAK || i % 2 === 0)
				.map((p, i) => {
					const own = ['--registry', registry, '--home', world.home, '--mux', 'tmux', '--tmux-socket', tmux.name];
					switch (i % 4) {
						case 0:
							return {args: ['resume', '--agent', 'claude', '--id', p, ...own], codes: [2]};
						case 1:
							return {args: ['purge', p, '--yes', ...own], codes: [2, 3]};
						case 2:
							return {args: ['new', '--agent', 'claude', '--cwd', hostileDirs.get(p) ?? p, ...own.slice(2), '--registry', scratchRegistry], codes: [0, 2]};
						default:
							return {args: ['conversations', '--cwd', p, '--registry', `../../${p}`, '--home', world.home], codes: [0, 2]};
					}
				});
			for (const {args, codes} of placed) {
				const run = await builtCli(args, {env, cwd});
				const label = `${args.slice(0, 6).join(' ')}: exit ${run.exitCode}\n${String(run.stderr)}`;
				expect(codes, label).toContain(run.exitCode);
				expect(String(run.stderr), label).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
				expect(fs.existsSync(marker), label).toBe(false);
			}
			expect(differences(fixtureBefore, outsideSnapshot(path.dirname(world.home), []))).toEqual([]);
		},
	);

	it('a pane opened in a folder named like a command runs the agent there and nothing else', {timeout: 60_000}, async () => {
		// A stand-in `claude` that stays at its prompt, first on the PATH tmux hands the new pane.
		const bin = path.join(base, 'bin');
		writeAgentStandIns(bin, ['claude']);
		const savedPath = process.env['PATH'];
		process.env['PATH'] = `${bin}:${savedPath ?? ''}`;
		try {
			const opened: Array<{id: string; dir: string}> = [];
			for (const payload of shellPayloads(marker)) {
				const dir = hostileDirs.get(payload);
				if (!dir) continue;
				const run = await cli([
					'new',
					'--agent',
					'claude',
					'--cwd',
					dir,
					'--json',
					'--registry',
					scratchRegistry,
					'--home',
					world.home,
					'--mux',
					'tmux',
					'--tmux-socket',
					tmux.name,
				]);
				expect(run.code, run.err).toBe(0);
				opened.push({id: (JSON.parse(run.out) as {paneId: string}).paneId, dir});
			}
			expect(opened.length).toBeGreaterThan(5);
			for (const {id, dir} of opened) {
				const shown = await eventually(`the stand-in prompt in ${id}`, async () => {
					const text = (await tmux.run(['capture-pane', '-p', '-t', id])).stdout;
					return text.includes('claude>') ? text : undefined;
				});
				expect(shown).toContain('claude>');
				const where = await tmux.run(['display-message', '-p', '-t', id, '#{pane_current_path}']);
				expect(where.stdout).toBe(dir);
			}
			expect(fs.existsSync(marker)).toBe(false);
		} finally {
			process.env['PATH'] = savedPath;
		}
	});
});

/** An Exec that records every call and answers "not installed". */
function recordingExec(calls: Array<{file: string; args: readonly string[]}>): Exec {
	return async (file, args) => {
		calls.push({file, args: [...args]});
		return {exitCode: undefined, stdout: '', stderr: '', failure: `spawn ${file} ENOENT`};
	};
}

const SHELLS = /(^|\/)(sh|bash|dash|zsh|fish|ksh)$/;

describe('hostile ids and cwds through every adapter method', () => {
	const draws = trials(60, 600);
	it.each(Object.keys(FIXTURE_BUILDERS))(
		`%s: ids are refused before any I/O, cwds are handled, nothing runs or changes (${draws} draws)`,
		{timeout: budgetMs(60_000, 600_000)},
		async agent => {
			const adapter = ADAPTERS[agent as keyof typeof ADAPTERS] as AgentAdapter;
			const build = FIXTURE_BUILDERS[adapter.id];
			if (!build) return;
			const w = await build();
			const canary = path.join(w.home, '..', `pwned-${crypto.randomBytes(4).toString('hex')}`);
			try {
				const calls: Array<{file: string; args: readonly string[]}> = [];
				const ctx: AdapterContext = {...w.ctx, exec: recordingExec(calls)};
				const before = w.snapshotOthers([]);
				await fc.assert(
					fc.asyncProperty(hostileString(canary), async payload => {
						const callsBefore = calls.length;
						if (!adapter.idPattern.test(payload) || payload.length > 256) {
							for (const call of [
								() => adapter.verify(ctx, payload),
								() => adapter.artifacts(ctx, payload),
								() => adapter.purge(ctx, planNaming(adapter, payload)),
								() => adapter.residual(ctx, payload),
								() => adapter.inUse(ctx, payload),
							]) {
								await expect(call(), JSON.stringify(payload)).rejects.toBeInstanceOf(InvalidIdError);
							}
							expect(() => adapter.resume(ctx, payload)).toThrow(InvalidIdError);
							expect(calls.length, 'an invalid id started a process').toBe(callsBefore);
						}
						// A hostile cwd is only a filter: no throw, nothing found, the target not claimed for it
						// (an empty cwd means no filter at all).
						const found = await adapter.discover(ctx, {cwd: payload});
						if (payload !== '') expect(found.conversations, JSON.stringify(payload)).toEqual([]);
						const state = await adapter.verify(ctx, w.ids.target, payload);
						if (payload !== '') expect(state.kind, JSON.stringify(payload)).not.toBe('yes');
						const spec = adapter.spawn(ctx, payload);
						expect(spec.argv.every(a => typeof a === 'string')).toBe(true);
						expect(SHELLS.test(spec.argv[0] ?? '')).toBe(false);
						adapter.watchPaths?.(ctx, payload);
					}),
					fcOptions(draws),
				);
				for (const call of calls) expect(SHELLS.test(call.file), `${call.file} ${call.args.join(' ')}`).toBe(false);
				expect(fs.existsSync(canary)).toBe(false);
				expect(differences(before, w.snapshotOthers([]))).toEqual([]);
			} finally {
				w.cleanup();
			}
		},
	);
});
