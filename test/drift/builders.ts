import type {AdapterContext, AgentAdapter, DiscoverQuery, DiscoverResult} from '../../src/adapters/types.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import {ok} from '../../src/domain/result.js';
import type {AgentId, Conversation, Pane, ProcessRef, ResumeState, SessionRecord} from '../../src/domain/types.js';
import type {CandidateFacts, DriftInput, SessionFacts} from '../../src/drift/input.js';
import type {Multiplexer} from '../../src/mux/types.js';
import type {Exec} from '../../src/system/exec.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {HERDR_CAN} from '../../src/mux/herdr/index.js';
import {tmuxCan} from '../../src/mux/tmux.js';

/** Valid claude/codex ids (uuid v4 shape), named for readability. */
export const ID = {
	a: '11111111-1111-4111-8111-111111111111',
	b: '22222222-2222-4222-8222-222222222222',
	c: '33333333-3333-4333-8333-333333333333',
	d: '44444444-4444-4444-8444-444444444444',
} as const;

export const EPOCH = Date.UTC(2026, 0, 10, 12, 0, 0);
export const CWD = '/work/api';

/** A registry row with defaults: running claude in /work/api, pane w1:p1 in herdr, unpinned. */
export function row(id: number, over: Partial<SessionRecord> = {}): SessionRecord {
	return {
		id,
		name: `s${id}`,
		agent: 'claude',
		cwd: CWD,
		mux: 'herdr',
		paneId: `w1:p${id}`,
		agentSessionId: null,
		status: 'running',
		epoch: EPOCH,
		createdAt: EPOCH,
		updatedAt: EPOCH,
		version: 1,
		extra: {},
		...over,
	};
}

export function proc(pid: number, argv: readonly string[], over: Partial<ProcessRef> = {}): ProcessRef {
	const name = (argv[0] ?? 'x').split('/').at(-1) ?? 'x';
	return {pid, ppid: 1, startTime: pid * 10, name, argv, ...over};
}

/** A herdr pane: a bash shell, plus `agentArgv` as its child when given. */
export function pane(id: string, over: Partial<Pane> & {agentArgv?: readonly string[]} = {}): Pane {
	const {agentArgv, ...rest} = over;
	const num = Number(id.replace(/\D/g, '')) || 1;
	const shell = proc(1000 + num * 10, ['bash'], {cwd: CWD});
	const agent = agentArgv ? [proc(1001 + num * 10, agentArgv, {ppid: shell.pid, cwd: CWD})] : [];
	return {
		id,
		mux: 'herdr',
		cwd: CWD,
		agentStatus: agentArgv ? 'idle' : 'unknown',
		shellPid: shell.pid,
		processes: [shell, ...agent],
		isSelf: false,
		...rest,
	};
}

export function conv(id: string, over: Partial<Conversation> = {}): Conversation {
	return {
		agent: 'claude',
		id,
		cwd: CWD,
		createdAt: EPOCH + 60_000,
		updatedAt: EPOCH + 120_000,
		childCount: 0,
		resumeState: {kind: 'yes'},
		...over,
	};
}

export function candidates(conversations: readonly Conversation[], problems: readonly string[] = []): SessionFacts['candidates'] {
	return ok<CandidateFacts>({conversations, problems});
}

export interface WorldSpec {
	readonly sessions?: readonly SessionRecord[];
	readonly panes?: readonly Pane[] | null;
	readonly facts?: Readonly<Record<number, SessionFacts>>;
	readonly processes?: readonly ProcessRef[] | null;
	readonly mux?: 'herdr' | 'tmux' | null;
}

/** A DriftInput; the process table defaults to the panes' processes (they are alive). */
export function world(spec: WorldSpec): DriftInput {
	const panes = spec.panes === undefined ? [] : spec.panes;
	return {
		sessions: spec.sessions ?? [],
		mux: spec.mux === undefined ? 'herdr' : spec.mux,
		panes,
		...(panes === null ? {muxProblem: 'connection refused'} : {}),
		facts: new Map(Object.entries(spec.facts ?? {}).map(([k, v]) => [Number(k), v])),
		processes: spec.processes === undefined ? (panes ?? []).flatMap(p => p.processes) : spec.processes,
	};
}

/** A process table over a fixed list. */
export function fakeProcessTable(list: () => readonly ProcessRef[]): ProcessTable {
	return {
		list: async () => list(),
		get: async pid => list().find(p => p.pid === pid),
		holders: async () => [],
	};
}

/** Counts every call; fails the test through `calls` when anything that acts is called. */
export interface Spy {
	readonly calls: string[];
}

/** An Exec that records calls and never runs anything. */
export function spyExec(spy: Spy): Exec {
	return async (file, args) => {
		spy.calls.push(`exec ${file} ${args.join(' ')}`);
		return {exitCode: 1, stdout: '', stderr: 'spy exec: not allowed in drift'};
	};
}

/** A multiplexer whose only allowed method is listPanes; everything that acts records a call. */
export function spyMux(panes: () => readonly Pane[] | Error, spy: Spy, kind: 'herdr' | 'tmux' = 'herdr'): Multiplexer {
	const acts =
		(name: string) =>
		async (...args: unknown[]) => {
			spy.calls.push(`mux.${name} ${JSON.stringify(args)}`);
			throw new Error(`spy mux: ${name} is not allowed in drift`);
		};
	return {
		kind,
		can: kind === 'herdr' ? HERDR_CAN : tmuxCan(false),
		listPanes: async () => {
			const value = panes();
			if (value instanceof Error) throw value;
			return value;
		},
		subscribe: () => () => {},
		sendText: acts('sendText'),
		sendKeys: acts('sendKeys'),
		readOutput: acts('readOutput'),
		openPane: acts('openPane') as Multiplexer['openPane'],
		closePane: acts('closePane'),
		focusPane: acts('focusPane'),
		health: () => ({kind, ok: true, message: 'spy'}),
		dispose: async () => {},
	};
}

/** An adapter over the real one with discover/verify answered from tables (and counted). */
export function fakeAdapter(
	agent: AgentId,
	answers: {
		readonly discover?: (query: DiscoverQuery) => DiscoverResult | Promise<DiscoverResult>;
		readonly verify?: (id: string, cwd?: string) => ResumeState | Promise<ResumeState>;
	},
	counts: {discover: DiscoverQuery[]; verify: string[]} = {discover: [], verify: []},
): AgentAdapter {
	const real = ADAPTERS[agent];
	return {
		...real,
		discover: async (_ctx, query = {}) => {
			counts.discover.push(query);
			return answers.discover ? answers.discover(query) : {conversations: [], problems: []};
		},
		verify: async (_ctx, id, cwd) => {
			counts.verify.push(id);
			return answers.verify ? answers.verify(id, cwd) : {kind: 'yes'};
		},
	};
}

export function fakeAdapters(over: Partial<Record<AgentId, AgentAdapter>>): Record<AgentId, AgentAdapter> {
	return {...ADAPTERS, ...over};
}

export function fakeContext(processes: ProcessTable, exec: Exec, home = '/nonexistent-home'): AdapterContext {
	return {home, ownHome: false, env: {}, exec, processes, now: () => EPOCH + 3_600_000, tmpDir: '/tmp'};
}
