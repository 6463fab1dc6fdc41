import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {resumeSession} from '../../src/actions/resume.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {Registry} from '../../src/registry/registry.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {killLeftovers, startTimeOf} from '../actions/support/agents.js';
import {writeFixtureConversation} from '../actions/support/fixtureAdapter.js';
import {createTestWorld} from '../actions/support/world.js';
import {privateTmux, type PrivateTmux} from '../helpers/tmux.js';
import {disposeStandinScript, installTestStandin, readStandinRecords, type StandinInstall} from '../support/standin.js';
import {builtCli, cliEnv} from '../helpers/cli.js';
import {inspectRegistry, rowProblems} from './support/registryCheck.js';
import {budgetMs, trials} from './support/soak.js';
import {eventually} from '../helpers/poll.js';
import {tmuxCan} from '../../src/mux/tmux.js';

let base: string;
let tmux: PrivateTmux;
let world: FixtureWorld;
let claude: StandinInstall;
const leftovers: Array<{pid: number; startTime: number}> = [];

beforeAll(async () => {
	base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-concurrent-')));
	tmux = privateTmux('mam-test');
	await tmux.run(['new-session', '-d', '-s', 'base', 'sleep', '100000']);
	world = await (
		FIXTURE_BUILDERS.claude ??
		(() => {
			throw new Error('no claude fixture');
		})
	)();
	// `claude` on the PATH the panes get: a stand-in that records every start.
	claude = installTestStandin(path.join(base, 'bin'), 'claude', {});
});

afterAll(async () => {
	await tmux?.kill();
	for (const r of readStandinRecords(claude.recordFile)) {
		for (const pid of [r.pid, ...r.childPids]) {
			try {
				leftovers.push({pid, startTime: startTimeOf(pid)});
			} catch {
				// already gone
			}
		}
	}
	killLeftovers(leftovers);
	world?.cleanup();
	disposeStandinScript();
	fs.rmSync(base, {recursive: true, force: true});
});

function env(): Record<string, string> {
	return cliEnv(path.join(base, 'user'), path.join(base, 'state'), {PATH: `${claude.binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`});
}

function args(registry: string): string[] {
	return ['--registry', registry, '--home', world.home, '--mux', 'tmux', '--tmux-socket', tmux.name];
}

/** Start both commands at the same moment and wait for both. */
async function together(a: readonly string[], b: readonly string[]) {
	const [x, y] = await Promise.all([builtCli(a, {env: env(), cwd: base}), builtCli(b, {env: env(), cwd: base})]);
	return [x, y] as const;
}

describe('two resumes that both pass every check before either opens a pane', () => {
	it('exactly one opens a pane; the other is turned away at the claim, and the row records one pane', {timeout: 30_000}, async () => {
		const tw = createTestWorld('mam-rel-race-');
		try {
			const id = crypto.randomUUID();
			writeFixtureConversation(tw.home, {id, cwd: tw.project});
			const row = tw.registry.insert({name: 'racy', agent: 'claude', cwd: tw.project, agentSessionId: id, status: 'stopped', epoch: 0});
			// Two processes: two connections to one registry file, and one barrier both listings wait at,
			// so both have seen the conversation free before either goes on.
			const other = Registry.open(path.join(tw.dir, 'registry.db'));
			const opened: string[] = [];
			let waiting = 0;
			let release: () => void = () => {};
			const barrier = new Promise<void>(resolve => (release = resolve));
			const mux: Multiplexer = {
				kind: 'tmux',
				can: tmuxCan(false),
				async listPanes() {
					waiting += 1;
					if (waiting === 2) release();
					await barrier;
					return [];
				},
				subscribe: () => () => {},
				sendText: async () => {},
				sendKeys: async () => {},
				readOutput: async () => '',
				async openPane(request) {
					opened.push(request.argv.join(' '));
					return `%${opened.length}`;
				},
				closePane: async () => {},
				focusPane: async () => {},
				health: () => ({kind: 'tmux', ok: true, message: 'fake'}),
				dispose: async () => {},
			};
			const [a, b] = await Promise.all([resumeSession(tw.deps(mux), row), resumeSession(tw.deps(mux, {registry: other}), row)]);
			other.close();
			expect(opened).toEqual([`claude --resume ${id}`]);
			expect([a.ok, b.ok].sort()).toEqual([false, true]);
			const loser = a.ok ? b : a;
			expect(!loser.ok && loser.error.message).toMatch(/was resumed|changed by another mam-tui/);
			expect(tw.registry.get('racy')).toMatchObject({status: 'running', paneId: '%1'});
			expect(
				tw.registry
					.auditLog('racy')
					.filter(e => e.step === null)
					.map(e => e.outcome)
					.sort(),
			).toEqual(['ok', 'refused']);
		} finally {
			tw.dispose();
		}
	});
});

describe('two mam-tui processes on one registry: exactly one wins, the other is told, nothing is lost', () => {
	const rounds = trials(3, 20);

	it(`two resumes of the same session at once start exactly one agent (${rounds} rounds)`, {timeout: budgetMs(120_000, 900_000)}, async () => {
		for (let round = 0; round < rounds; round++) {
			const registry = path.join(base, `resume-${round}.db`);
			const reg = Registry.open(registry);
			reg.insert({name: 'twice', agent: 'claude', cwd: world.cwds[0], agentSessionId: world.ids.target, status: 'stopped', epoch: world.epoch});
			reg.close();
			const startsBefore = readStandinRecords(claude.recordFile).length;
			const [a, b] = await together(['resume', 'twice', ...args(registry)], ['resume', 'twice', ...args(registry)]);
			const label = `round ${round}: exits ${a.exitCode}/${b.exitCode}\n${String(a.stdout)}${String(a.stderr)}\n${String(b.stdout)}${String(b.stderr)}`;
			const codes = [a.exitCode, b.exitCode].sort();
			expect(codes[0], label).toBe(0);
			expect(codes[1], label).not.toBe(0);
			const loser = a.exitCode === 0 ? b : a;
			expect(String(loser.stderr), label).toMatch(/is live|in use|changed by another mam-tui|was resumed/);
			// One agent started, resuming the pinned conversation.
			const starts = await eventually('the resumed agent', () => {
				const all = readStandinRecords(claude.recordFile).slice(startsBefore);
				return all.length >= 1 ? all : undefined;
			});
			await new Promise(resolve => setTimeout(resolve, 300));
			expect(readStandinRecords(claude.recordFile).slice(startsBefore).length, label).toBe(1);
			expect(starts[0]?.argv).toEqual(['claude', '--resume', world.ids.target]);
			const state = inspectRegistry(registry);
			expect(state.integrity).toBe('ok');
			expect(rowProblems(state.sessions)).toEqual([]);
			const row = state.sessions.find(s => s.name === 'twice');
			expect(row?.status, label).toBe('running');
			expect(row?.agentSessionId).toBe(world.ids.target);
			// The audit log has both: one resume that opened a pane, one that was turned away.
			const resumes = state.audit.filter(e => e.action === 'resume' && e.step === null);
			expect(resumes.map(e => e.outcome).sort(), label).toEqual(['ok', 'refused']);
			// Stop the winner's agent before the next round.
			for (const r of starts) leftovers.push({pid: r.pid, startTime: startTimeOf(r.pid)});
			killLeftovers(leftovers);
		}
	});

	it(
		'a stop and a purge of the same session at once: the stop wins, the purge is refused, the conversation survives',
		{timeout: budgetMs(120_000, 300_000)},
		async () => {
			const registry = path.join(base, 'stop-purge.db');
			// A running agent that ignores /exit and SIGTERM: the stop takes its full grace, so the purge surely runs meanwhile.
			const stubborn = installTestStandin(path.join(base, 'stubborn-bin'), 'claude', {ignoreExit: true, ignoreSignals: true});
			const pane = (
				await tmux.run(['new-window', '-d', '-P', '-F', '#{pane_id}', '-c', world.cwds[0], stubborn.file, '--resume', world.ids.target])
			).stdout.trim();
			const record = await eventually('the running agent', () => readStandinRecords(stubborn.recordFile)[0]);
			leftovers.push({pid: record.pid, startTime: startTimeOf(record.pid)});
			const reg = Registry.open(registry);
			reg.insert({
				name: 'contested',
				agent: 'claude',
				cwd: world.cwds[0],
				agentSessionId: world.ids.target,
				mux: 'tmux',
				paneId: pane,
				status: 'running',
				epoch: world.epoch,
			});
			reg.close();
			const transcript = world.holdPaths(world.ids.target)[0] ?? '';
			const bytes = fs.readFileSync(transcript);
			const [stop, purge] = await together(
				['stop', 'contested', '--grace', '3', '--kill-wait', '1', ...args(registry)],
				['purge', 'contested', '--yes', ...args(registry)],
			);
			const label = `stop exit ${stop.exitCode}: ${String(stop.stdout)}${String(stop.stderr)}\npurge exit ${purge.exitCode}: ${String(purge.stdout)}${String(purge.stderr)}`;
			expect(stop.exitCode, label).toBe(0);
			expect([1, 4], label).toContain(purge.exitCode);
			expect(String(purge.stderr), label).toMatch(/is running|in use/);
			expect(fs.readFileSync(transcript).equals(bytes), 'the transcript is untouched').toBe(true);
			const state = inspectRegistry(registry);
			expect(state.integrity).toBe('ok');
			expect(rowProblems(state.sessions)).toEqual([]);
			expect(state.sessions.find(s => s.name === 'contested')?.status).toBe('stopped');
			const audit = state.audit.filter(e => e.session === 'contested');
			expect(
				audit.some(e => e.action === 'stop' && e.step === null && e.outcome === 'ok'),
				label,
			).toBe(true);
			expect(
				audit.some(e => e.action === 'purge' && e.outcome === 'refused'),
				label,
			).toBe(true);
			expect(
				audit.some(e => e.action === 'purge' && e.step === 'delete'),
				'no delete was ever started',
			).toBe(false);
		},
	);
});
