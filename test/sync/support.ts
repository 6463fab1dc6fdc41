import type {AdapterContext, AgentAdapter, DiscoverQuery, DiscoverResult, InUseHolder} from '../../src/adapters/types.js';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentId, Conversation, Pane, ProcessRef, ResumeState, SessionRecord} from '../../src/domain/types.js';
import type {Multiplexer, MuxEvent, MuxHealth, OpenPaneRequest} from '../../src/mux/types.js';
import type {ProcessTable} from '../../src/system/processes.js';
import {HERDR_CAN} from '../../src/mux/herdr/index.js';

let nextId = 1;

/** A registry row with defaults. */
export function row(overrides: Partial<SessionRecord> & Pick<SessionRecord, 'name'>): SessionRecord {
	const id = nextId++;
	return {
		id,
		agent: 'claude',
		cwd: '/w/app',
		mux: 'herdr',
		paneId: null,
		agentSessionId: null,
		status: 'running',
		epoch: 0,
		createdAt: 0,
		updatedAt: 0,
		version: 1,
		extra: {},
		...overrides,
	};
}

export function proc(pid: number, name: string, argv: readonly string[] = [name], ppid = 1): ProcessRef {
	return {pid, ppid, startTime: pid * 10, name, argv};
}

/** A pane with defaults (no agent, unknown status). */
export function pane(id: string, overrides: Partial<Pane> = {}): Pane {
	return {id, mux: 'herdr', agentStatus: 'unknown', processes: [], isSelf: false, ...overrides};
}

export const UUID = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function conversation(id: string, overrides: Partial<Conversation> = {}): Conversation {
	return {agent: 'claude', id, cwd: '/w/app', createdAt: 1, updatedAt: 1, childCount: 0, resumeState: {kind: 'yes'}, ...overrides};
}

/** A scriptable adapter that counts its calls; everything else is the real claude adapter. */
export interface CountingAdapter extends AgentAdapter {
	readonly calls: {discover: number; verify: number; inUse: number};
	conversations: Conversation[];
	verdict: ResumeState;
	holders: InUseHolder[];
	watch: string[] | undefined;
	failDiscover: string | undefined;
}

export function countingAdapter(agent: AgentId = 'claude'): CountingAdapter {
	const base = ADAPTERS[agent];
	const adapter: CountingAdapter = {
		...base,
		calls: {discover: 0, verify: 0, inUse: 0},
		conversations: [],
		verdict: {kind: 'yes'},
		holders: [],
		watch: undefined,
		failDiscover: undefined,
		async discover(_ctx: AdapterContext, query?: DiscoverQuery): Promise<DiscoverResult> {
			adapter.calls.discover += 1;
			if (adapter.failDiscover) throw new Error(adapter.failDiscover);
			return {conversations: adapter.conversations.filter(c => !query?.cwd || c.cwd === query.cwd), problems: []};
		},
		async verify() {
			adapter.calls.verify += 1;
			return adapter.verdict;
		},
		async inUse() {
			adapter.calls.inUse += 1;
			return adapter.holders;
		},
	};
	Object.defineProperty(adapter, 'watchPaths', {
		enumerable: true,
		get: () => (adapter.watch ? () => adapter.watch ?? [] : undefined),
	});
	return adapter;
}

/** Adapters where `agent` is replaced by `adapter`. */
export function adaptersWith(adapter: AgentAdapter): Record<AgentId, AgentAdapter> {
	return {...ADAPTERS, [adapter.id]: adapter};
}

export const ctx: AdapterContext = {
	home: '/nonexistent-home',
	ownHome: false,
	env: {},
	exec: async () => ({exitCode: 0, stdout: '', stderr: ''}),
	processes: {list: async () => [], get: async () => undefined, holders: async () => []},
	now: () => 0,
	tmpDir: '/tmp',
};

export function staticProcesses(list: readonly ProcessRef[] = []): ProcessTable {
	return {list: async () => list, get: async pid => list.find(p => p.pid === pid), holders: async () => []};
}

/** An in-memory Multiplexer: panes are set by the test, events are pushed by the test. */
export class MemoryMux implements Multiplexer {
	readonly kind = 'herdr' as const;
	readonly can = HERDR_CAN;
	panes: Pane[] = [];
	listCalls = 0;
	fail: string | undefined;
	private readonly listeners = new Set<(e: MuxEvent) => void>();
	private current: MuxHealth = {kind: 'herdr', ok: true, message: 'memory'};

	async listPanes(): Promise<readonly Pane[]> {
		this.listCalls += 1;
		if (this.fail) throw new Error(this.fail);
		return this.panes;
	}
	subscribe(listener: (e: MuxEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}
	emit(event: MuxEvent): void {
		if (event.type === 'health') this.current = event.health;
		for (const l of this.listeners) l(event);
	}
	listenerCount(): number {
		return this.listeners.size;
	}
	async sendText(): Promise<void> {}
	async sendKeys(): Promise<void> {}
	async readOutput(): Promise<string> {
		return '';
	}
	async openPane(_r: OpenPaneRequest): Promise<string> {
		return 'w1:p9';
	}
	async closePane(): Promise<void> {}
	async focusPane(): Promise<void> {}
	health(): MuxHealth {
		return this.current;
	}
	async dispose(): Promise<void> {}
}
