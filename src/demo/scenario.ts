import {spawn} from 'node:child_process';
import path from 'node:path';
import {adapterFor} from '../adapters/index.js';
import type {AdapterContext} from '../adapters/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import type {AgentId, ProcessRef} from '../domain/types.js';
import {createTmuxMux} from '../mux/tmux.js';
import type {Multiplexer} from '../mux/types.js';
import {Registry, type NewSession} from '../registry/registry.js';
import type {ProcessTable} from '../system/processes.js';
import {installStandin} from './installStandin.js';
import type {Sandbox} from './sandbox.js';
import {PROJECTS, writeSampleData, type SampleIds} from './sampleData.js';
import {STANDIN_OPTIONS_ENV, type StandinOptions} from './standin.js';

/**
 * How each stand-in behaves. One obeys its exit command (claude), one ignores it (codex: a stop
 * ends at step 2, closing the pane), one ignores it and SIGTERM/SIGHUP too (opencode: a stop
 * needs step 3, SIGKILL). claude and codex write their conversation files as the real ones do.
 */
/**
 * Every stand-in draws its agent's real status markers, so the dashboard shows live statuses:
 * claude cycles idle → working → blocked, codex keeps working, opencode waits for an approval.
 */
function standinOptions(agent: AgentId, home: string): Partial<StandinOptions> {
	const status = {statusScreen: true} as const;
	switch (agent) {
		case 'claude':
			return {...status, artifactHome: home, cycleMs: 8000};
		case 'codex':
			return {...status, artifactHome: home, ignoreExit: true, startState: 'working'};
		case 'opencode':
			return {...status, ignoreExit: true, ignoreSignals: true, startState: 'blocked'};
		case 'gemini':
		case 'hermes':
		case 'agy':
		case 'grok':
			return {...status, startState: 'working'};
	}
}

const AGENTS: readonly AgentId[] = ['claude', 'codex', 'opencode', 'gemini', 'hermes', 'agy', 'grok'];

/** What the demo built, for the dashboard and for cleanup. */
export interface DemoScenario {
	readonly registryPath: string;
	readonly ids: SampleIds;
	/** Every session row the demo wrote, by name. */
	readonly sessions: readonly string[];
}

async function startServer(sandbox: Sandbox): Promise<void> {
	const result = await sandbox.exec('tmux', [
		'-u',
		'-L',
		sandbox.tmuxName,
		'-f',
		'/dev/null',
		'new-session',
		'-d',
		'-s',
		'mam-demo',
		'-n',
		'shell',
		'-x',
		'160',
		'-y',
		'48',
		'-c',
		sandbox.work,
	]);
	if (result.failure)
		throw new CliError(`the demo needs tmux: ${/ENOENT/.test(result.failure) ? 'tmux is not installed (or not on PATH)' : result.failure}`, EXIT.failed);
	if (result.exitCode !== 0) throw new CliError(`could not start the demo's tmux server ${sandbox.tmuxName}: ${result.stderr.trim()}`, EXIT.failed);
}

/** A surviving stand-in outside any pane: what a stop that could not finish leaves behind. */
async function startStray(sandbox: Sandbox, processes: ProcessTable, id: string): Promise<ProcessRef> {
	const file = path.join(sandbox.bin, 'grok');
	const child = spawn(file, ['--resume', id], {
		cwd: path.join(sandbox.work, PROJECTS.grok),
		env: {...sandbox.env, [STANDIN_OPTIONS_ENV]: JSON.stringify({ignoreSignals: true})},
		detached: true,
		stdio: 'ignore',
	});
	child.unref();
	const pid = child.pid;
	if (pid === undefined) throw new CliError('could not start the demo stand-in for grok', EXIT.failed);
	// Until node has exec'd the stand-in, /proc still shows the parent's argv.
	const deadline = Date.now() + 10_000;
	for (;;) {
		const proc = await processes.get(pid);
		if (proc?.argv.includes(file)) return proc;
		if (!proc || Date.now() > deadline) throw new CliError('the demo stand-in for grok did not start', EXIT.failed);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}

interface Panes {
	readonly claudeLive: string;
	readonly codexLive: string;
	readonly opencodeLive: string;
	readonly claudeFresh: string;
	readonly hermesShell: string;
	readonly agyLive: string;
	readonly grokUntracked: string;
}

async function openPanes(mux: Multiplexer, ctx: AdapterContext, work: string, ids: SampleIds): Promise<Panes> {
	const resume = (agent: AgentId, id: string) => adapterFor(agent)?.resume(ctx, id).argv ?? [agent];
	const spawnArgv = (agent: AgentId, cwd: string) => adapterFor(agent)?.spawn(ctx, cwd).argv ?? [agent];
	const open = (title: string, argv: readonly string[], project: string) => mux.openPane({argv, cwd: path.join(work, project), title});
	return {
		claudeLive: await open('claude-live', resume('claude', ids.claudeLive), PROJECTS.claude),
		codexLive: await open('codex-stubborn', resume('codex', ids.codexLive), PROJECTS.codex),
		opencodeLive: await open('opencode-immortal', resume('opencode', ids.opencodeLive), PROJECTS.opencode),
		claudeFresh: await open('claude-unpinned', spawnArgv('claude', path.join(work, PROJECTS.claudeFresh)), PROJECTS.claudeFresh),
		hermesShell: await open('hermes-exited', ['/bin/sh'], PROJECTS.hermes),
		agyLive: await open('agy-live', resume('agy', ids.agyLive), PROJECTS.agy),
		grokUntracked: await open('grok (untracked)', spawnArgv('grok', path.join(work, PROJECTS.grok)), PROJECTS.grok),
	};
}

/** The resume argv of a conversation, as a park records it to wake the agent where it was. */
type ResumeArgv = (agent: AgentId, id: string) => readonly string[];

function sessionRows(work: string, ids: SampleIds, panes: Panes, stray: ProcessRef, now: number, freshEpoch: number, resume: ResumeArgv): NewSession[] {
	const cwd = (project: string) => path.join(work, project);
	const HOUR = 3_600_000;
	const MB = 1024 * 1024;
	const live = (name: string, agent: AgentId, project: string, paneId: string, pin: string | null, epoch: number): NewSession => ({
		name,
		agent,
		cwd: cwd(project),
		mux: 'tmux',
		paneId,
		agentSessionId: pin,
		status: 'running',
		epoch,
	});
	const stopped = (name: string, agent: AgentId, project: string, pin: string, epoch: number, extra?: Record<string, unknown>): NewSession => ({
		name,
		agent,
		cwd: cwd(project),
		mux: 'tmux',
		agentSessionId: pin,
		status: 'stopped',
		epoch,
		...(extra ? {extra} : {}),
	});
	// An idle agent a park ended: the memory it freed, how long it had been idle, and how to wake it.
	const parked = (name: string, agent: AgentId, project: string, pin: string, parkedAgo: number, freedMb: number, idleMinutes: number): NewSession => ({
		...stopped(name, agent, project, pin, now - parkedAgo - idleMinutes * 60_000, {
			parked: {at: now - parkedAgo, freedBytes: freedMb * MB, idleSeconds: idleMinutes * 60, argv: resume(agent, pin), cwd: cwd(project)},
		}),
		status: 'parked',
	});
	return [
		live('claude-live', 'claude', PROJECTS.claude, panes.claudeLive, ids.claudeLive, now - HOUR),
		live('codex-stubborn', 'codex', PROJECTS.codex, panes.codexLive, ids.codexLive, now - HOUR),
		live('opencode-immortal', 'opencode', PROJECTS.opencode, panes.opencodeLive, ids.opencodeLive, now - HOUR),
		live('claude-unpinned', 'claude', PROJECTS.claudeFresh, panes.claudeFresh, null, freshEpoch),
		// A pane id this fresh server never handed out: the pane is gone.
		live('gemini-gone', 'gemini', PROJECTS.gemini, '%999', ids.geminiGone, now - 2 * HOUR),
		live('hermes-exited', 'hermes', PROJECTS.hermes, panes.hermesShell, ids.hermesExited, now - 3 * HOUR),
		stopped('agy-live', 'agy', PROJECTS.agy, ids.agyLive, now - HOUR),
		stopped('agy-missing', 'agy', PROJECTS.agy, ids.agyMissing, now - 5 * HOUR),
		stopped('gemini-dup-a', 'gemini', PROJECTS.gemini, ids.geminiShared, now - 5 * HOUR),
		stopped('gemini-dup-b', 'gemini', PROJECTS.gemini, ids.geminiShared, now - 5 * HOUR),
		stopped('grok-stale', 'grok', PROJECTS.grok, ids.grokStale, now - 7 * HOUR, {
			stop: {at: now - 60_000, endedBy: 'sigkill', processes: [stray], survivors: [stray.pid]},
		}),
		stopped('claude-old', 'claude', PROJECTS.claude, ids.claudeOld, now - 29 * HOUR),
		stopped('codex-old', 'codex', PROJECTS.codex, ids.codexOld, now - 27 * HOUR),
		stopped('opencode-old', 'opencode', PROJECTS.opencode, ids.opencodeOld, now - 51 * HOUR),
		stopped('hermes-done', 'hermes', PROJECTS.hermes, ids.hermesDone, now - 31 * HOUR),
		// Three parks: the status bar sums them ("3 parked, 2.1 GB freed").
		parked('claude-parked', 'claude', PROJECTS.claude, ids.claudeParked, 40 * 60_000, 812, 52),
		parked('codex-parked', 'codex', PROJECTS.codex, ids.codexParked, 90 * 60_000, 731, 47),
		parked('gemini-parked', 'gemini', PROJECTS.gemini, ids.geminiParked, 2 * HOUR, 611, 65),
	];
}

/**
 * Build the demo inside `sandbox`: sample conversations of all seven agents, stand-in agents in
 * panes of the sandbox's private tmux server, a stray stand-in outside any pane, and registry
 * rows that raise every drift kind tmux can show — all but `pin-changed`, which needs the agent's
 * own session id that herdr reports and tmux does not, and `status-disagrees`, which needs herdr's status. `claude-unpinned`
 * raises `unpinned` from its live record, which the dashboard then applies itself (src/ui/autoPin.ts). The tmux server is left running.
 */
export async function buildScenario(sandbox: Sandbox, deps: {readonly processes: ProcessTable; readonly ctx: AdapterContext}): Promise<DemoScenario> {
	const now = Date.now();
	const {ids} = writeSampleData(sandbox.home, sandbox.work, now);
	for (const agent of AGENTS) installStandin({binDir: sandbox.bin, name: agent, options: standinOptions(agent, sandbox.home)});
	await startServer(sandbox);
	const mux = createTmuxMux({server: {socketName: sandbox.tmuxName}, exec: sandbox.exec, processes: deps.processes, env: sandbox.env, pollMs: 1000});
	const freshEpoch = Date.now() - 1000;
	let panes: Panes;
	try {
		panes = await openPanes(mux, deps.ctx, sandbox.work, ids);
	} finally {
		await mux.dispose();
	}
	const stray = await startStray(sandbox, deps.processes, ids.grokStale);
	const resume: ResumeArgv = (agent, id) => adapterFor(agent)?.resume(deps.ctx, id).argv ?? [agent];
	const rows = sessionRows(sandbox.work, ids, panes, stray, now, freshEpoch, resume);
	const registryPath = path.join(sandbox.state, 'registry.db');
	const registry = Registry.open(registryPath);
	try {
		for (const row of rows) registry.insert(row);
	} finally {
		registry.close();
	}
	return {
		registryPath,
		ids,
		sessions: rows.map(r => r.name),
	};
}
