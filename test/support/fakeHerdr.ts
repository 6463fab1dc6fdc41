// A faithful fake herdr server (PROTOCOL 11) for tests and end-to-end runs. Panes are real: each
// herdr pane is a window of a private tmux server this fake drives, so every pane has a PTY, a
// shell in its own session and a foreground process group, exactly what herdr reads. It plays
// protocol 20 (herdr 0.8) or 22 (herdr 0.9) as src/mux/herdr/protocol.ts describes them, and every
// line it receives and sends is checked against that protocol's JSON schema; violations are collected.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {parseStat} from '../../src/system/processes.js';
import type {ProcessRef} from '../../src/domain/types.js';
import {HERDR_PROTOCOLS, type HerdrProtocol} from '../../src/mux/herdr/protocol.js';
import {herdrValidator, type FakeProtocol, type HerdrShape} from './herdrSchema.js';
import {privateTmux, type PrivateTmux} from '../helpers/tmux.js';

type Json = Record<string, unknown>;
type Status = 'idle' | 'working' | 'blocked' | 'done' | 'unknown';

/** The herdr release the fake claims to be for each protocol. */
export const FAKE_HERDR_VERSIONS: Readonly<Record<FakeProtocol, string>> = {20: '0.8.0', 22: '0.9.1'};

/** What a herdr of each protocol puts in `pong.capabilities` (a normal headless server). */
const CAPABILITY_VALUES: Readonly<Record<string, boolean | number>> = {
	live_handoff: true,
	detached_server_daemon: false,
	endpoint_protocol_generation: 1,
	surface_interest: true,
	health_check: true,
};

/** How the fake can be told to misbehave (fault tests). `methods` limits it to some methods. */
export type Misbehaviour =
	| {readonly kind: 'refuse'; readonly methods?: readonly string[]}
	| {readonly kind: 'garbage'; readonly methods?: readonly string[]}
	| {readonly kind: 'slow'; readonly delayMs: number; readonly methods?: readonly string[]}
	| {readonly kind: 'silent'; readonly methods?: readonly string[]}
	/** Answer with this herdr error code (and message) instead. */
	| {readonly kind: 'error'; readonly code: string; readonly message?: string; readonly methods?: readonly string[]}
	/** Answer with this result, unvalidated (a shape a newer herdr might send). */
	| {readonly kind: 'raw'; readonly result: Readonly<Record<string, unknown>>; readonly methods?: readonly string[]}
	| {readonly kind: 'wrong-protocol'; readonly protocol: number};

export interface FakeHerdrOptions {
	/** The API socket to listen on (tests pass it to mam-tui as HERDR_SOCKET_PATH). */
	readonly socketPath: string;
	/** The protocol to play (default 22, what herdr 0.9 speaks). */
	readonly protocol?: FakeProtocol;
	/** Drive this private tmux server (default: a fresh `mam-test-<random>`). */
	readonly tmux?: PrivateTmux;
	/** Validate every line against the schema (default true). */
	readonly validate?: boolean;
	/** herdr writes at most one event per subscription per tick (PROTOCOL 5.4). */
	readonly eventTickMs?: number;
	/** How often exits and foreground agents are looked for (herdr: ~300 ms). */
	readonly watchMs?: number;
	/** Environment of every pane (before caller env and HERDR_* keys). */
	readonly paneEnv?: Readonly<Record<string, string>>;
	/** The shell each pane starts (default an interactive `/bin/sh`, which has job control). */
	readonly shell?: readonly string[];
}

interface Workspace {
	readonly id: string;
	label: string;
	nextPane: number;
	nextTab: number;
	activeTab: string;
}

interface Tab {
	readonly id: string;
	readonly workspaceId: string;
	label: string;
}

interface FakePane {
	readonly id: string;
	readonly terminalId: string;
	readonly workspaceId: string;
	readonly tabId: string;
	readonly tmuxPane: string;
	readonly shellPid: number;
	readonly cwd: string;
	label?: string;
	agent?: string;
	/** Set by pane.report_agent: lifecycle hooks outrank screen/foreground detection. */
	reportedAgent?: boolean;
	status: Status;
	revision: number;
	stateSeq: number;
	agentSession?: {source: string; agent: string; kind: 'id' | 'path'; value: string};
	sessionSeq: Map<string, number>;
	closing: boolean;
}

interface Subscription {
	readonly id: string;
	readonly socket: net.Socket;
	readonly lifecycle: ReadonlySet<string>;
	readonly paneStatus: ReadonlyMap<string, Status | undefined>;
	readonly queue: Json[];
}

/** herdr's bijective base-32 numbering (PROTOCOL 2). */
const ALPHABET = '123456789ABCDEFGHJKMNPQRSTVWXYZ0';
export function herdrNumber(n: number): string {
	let out = '';
	for (let rest = n; rest > 0; rest = Math.floor((rest - 1) / 32)) out = (ALPHABET[(rest - 1) % 32] ?? '?') + out;
	return out;
}

/** Agent kinds herdr knows (PROTOCOL 4), plus the aliases of its detection table (PROTOCOL 8). */
const AGENT_KINDS = new Set([
	'pi',
	'claude',
	'codex',
	'gemini',
	'cursor',
	'devin',
	'agy',
	'cline',
	'omp',
	'mastracode',
	'opencode',
	'copilot',
	'kimi',
	'kiro',
	'droid',
	'amp',
	'grok',
	'hermes',
	'kilo',
	'qodercli',
	'maki',
]);
const AGENT_ALIASES: Readonly<Record<string, string>> = {'claude-code': 'claude', antigravity: 'agy', 'cursor-agent': 'cursor', 'kiro-cli': 'kiro'};
const RUNTIMES = /^(node|bun|deno|python[0-9.]*|sh|bash|dash|zsh)$/;
const OFFICIAL_SOURCES = new Set([
	'claude',
	'codex',
	'copilot',
	'devin',
	'droid',
	'kimi',
	'omp',
	'mastracode',
	'pi',
	'hermes',
	'opencode',
	'qodercli',
	'kilo',
	'cursor',
	'grok',
]);
const SHAPES: readonly HerdrShape[] = ['request', 'success_response', 'error_response', 'event', 'subscription_event'];
const ROLLUP: readonly Status[] = ['blocked', 'done', 'working', 'idle', 'unknown'];

/** Key names → bytes (PROTOCOL 4); undefined = invalid_key. */
function keyBytes(key: string): Buffer | undefined {
	if ([...key].length === 1) return Buffer.from(key, 'utf8');
	const lower = key.toLowerCase();
	const named: Record<string, string> = {
		enter: '\r',
		return: '\r',
		esc: '\x1b',
		escape: '\x1b',
		tab: '\t',
		backspace: '\x7f',
		space: ' ',
		up: '\x1b[A',
		down: '\x1b[B',
		right: '\x1b[C',
		left: '\x1b[D',
		minus: '-',
		plus: '+',
		comma: ',',
		period: '.',
		slash: '/',
		backslash: '\\',
		quote: "'",
		double_quote: '"',
		semicolon: ';',
		colon: ':',
		percent: '%',
		ampersand: '&',
		backtick: '`',
		f1: '\x1bOP',
		f2: '\x1bOQ',
		f3: '\x1bOR',
		f4: '\x1bOS',
	};
	const direct = named[lower];
	if (direct !== undefined) return Buffer.from(direct, 'utf8');
	if (lower === 'shift+tab') return Buffer.from('\x1b[Z');
	const ctrl = /^(?:ctrl|control)\+(.)$/.exec(lower) ?? /^c-(.)$/.exec(lower);
	if (ctrl?.[1] && /[a-z@[\\\]^_]/.test(ctrl[1])) return Buffer.from([ctrl[1].toUpperCase().charCodeAt(0) & 0x1f]);
	const alt = /^alt\+(.+)$/.exec(lower);
	if (alt?.[1]) {
		const rest = keyBytes(alt[1]);
		return rest ? Buffer.concat([Buffer.from('\x1b'), rest]) : undefined;
	}
	return undefined;
}

class HerdrFault extends Error {
	readonly code: string;
	constructor(code: string, message: string) {
		super(message);
		this.code = code;
	}
}

function readProc(pid: number): {ref: ProcessRef; pgid: number; sid: number; tpgid: number; state: string} | undefined {
	try {
		const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const stat = parseStat(text);
		if (!stat) return undefined;
		const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
		let argv: string[] = [];
		try {
			argv = fs
				.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
				.split('\0')
				.filter((a, i, all) => i < all.length - 1 || a !== '');
		} catch {
			// zombies have no cmdline
		}
		let cwd: string | undefined;
		try {
			cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
		} catch {
			// gone meanwhile
		}
		return {
			ref: {pid, ppid: stat.ppid, startTime: stat.startTime, name: stat.name, argv, ...(cwd ? {cwd} : {})},
			pgid: stat.pgid,
			sid: stat.sid,
			tpgid: Number(fields[5]),
			state: fields[0] ?? '?',
		};
	} catch {
		return undefined;
	}
}

function allProcs(): NonNullable<ReturnType<typeof readProc>>[] {
	return fs
		.readdirSync('/proc')
		.filter(e => /^\d+$/.test(e))
		.map(e => readProc(Number(e)))
		.filter((p): p is NonNullable<typeof p> => p !== undefined);
}

/**
 * `root` and its descendants from the kernel's child lists (/proc/<pid>/task/<tid>/children), as
 * herdr reads one pane's tree: the same processes a ppid walk over all of /proc finds, without
 * reading all of /proc for every pane (500 panes: a snapshot or 500 process_info calls).
 */
function subtree(root: number): NonNullable<ReturnType<typeof readProc>>[] {
	const out: NonNullable<ReturnType<typeof readProc>>[] = [];
	const seen = new Set<number>();
	const queue = [root];
	for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
		if (seen.has(pid)) continue;
		seen.add(pid);
		const proc = readProc(pid);
		if (!proc) continue;
		out.push(proc);
		let tasks: string[] = [];
		try {
			tasks = fs.readdirSync(`/proc/${pid}/task`);
		} catch {
			continue;
		}
		for (const tid of tasks) {
			try {
				for (const child of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (child) queue.push(Number(child));
			} catch {
				// the task ended meanwhile
			}
		}
	}
	return out;
}

/** One pass over /proc/<pid>/stat only: every process's parent and groups, for a whole snapshot. */
interface StatTable {
	readonly byPid: ReadonlyMap<number, {readonly pgid: number; readonly tpgid: number}>;
	readonly children: ReadonlyMap<number, readonly number[]>;
}

function statTable(): StatTable {
	const byPid = new Map<number, {pgid: number; tpgid: number}>();
	const children = new Map<number, number[]>();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		let text: string;
		try {
			text = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
		} catch {
			continue;
		}
		const stat = parseStat(text);
		if (!stat) continue;
		const pid = Number(entry);
		byPid.set(pid, {pgid: stat.pgid, tpgid: Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[5])});
		children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
	}
	return {byPid, children};
}

/** The foreground group's pids under `shell` (the tty's tpgid), sorted: what `foreground()` lists, from a table. */
function foregroundPids(table: StatTable, shell: number): number[] {
	const tpgid = table.byPid.get(shell)?.tpgid ?? 0;
	if (tpgid <= 0) return [];
	const out: number[] = [];
	const queue = [shell];
	const seen = new Set<number>();
	for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
		if (seen.has(pid)) continue;
		seen.add(pid);
		if (table.byPid.get(pid)?.pgid === tpgid) out.push(pid);
		queue.push(...(table.children.get(pid) ?? []));
	}
	return out.sort((a, b) => a - b);
}

function cwdOf(pid: number | undefined): string | undefined {
	if (pid === undefined) return undefined;
	try {
		return fs.readlinkSync(`/proc/${pid}/cwd`);
	} catch {
		return undefined;
	}
}

function alive(pid: number): boolean {
	const proc = readProc(pid);
	return proc !== undefined && proc.state !== 'Z';
}

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** A hook run between the two halves of a client's bootstrap (see `inGap`). */
interface Gap {
	readonly fn: () => Promise<void>;
	/** Which stream's subscription is one half: the lifecycle one, or a per-pane status one. */
	readonly stream: 'lifecycle' | 'status';
	first?: 'subscribe' | 'snapshot';
	done?: Promise<void>;
}

export class FakeHerdr {
	readonly socketPath: string;
	readonly tmux: PrivateTmux;
	readonly protocol: FakeProtocol;
	readonly version: string;
	/** Schema violations seen in either direction; a test asserts this stays empty. */
	readonly violations: string[] = [];
	/** Every method received, in order (lets tests count round trips). */
	readonly methods: string[] = [];
	private readonly options: FakeHerdrOptions;
	private readonly traits: HerdrProtocol;
	private readonly validate: ReturnType<typeof herdrValidator>;
	private readonly workspaces = new Map<string, Workspace>();
	private readonly tabs = new Map<string, Tab>();
	private readonly panes = new Map<string, FakePane>();
	private readonly subscriptions = new Set<Subscription>();
	private readonly ring: Json[] = [];
	private readonly connections = new Set<net.Socket>();
	private server: net.Server | undefined;
	private nextWorkspace = 1;
	private focusedPane: string | undefined;
	private misbehaviour: Misbehaviour | undefined;
	private tickTimer: NodeJS.Timeout | undefined;
	private watchTimer: NodeJS.Timeout | undefined;
	private watching = false;
	private gap: Gap | undefined;

	constructor(options: FakeHerdrOptions) {
		this.options = options;
		this.socketPath = options.socketPath;
		this.tmux = options.tmux ?? privateTmux();
		this.protocol = options.protocol ?? 22;
		this.version = FAKE_HERDR_VERSIONS[this.protocol];
		const traits = HERDR_PROTOCOLS.find(p => p.protocol === this.protocol);
		if (!traits) throw new Error(`mam-tui's protocol table has no protocol ${this.protocol}`);
		this.traits = traits;
		this.validate = herdrValidator(this.protocol);
	}

	/** Start listening; resolves once the socket accepts connections. */
	async start(): Promise<void> {
		// Compiling the schema takes a while; do it before the first client waits on an answer.
		if (this.options.validate !== false) for (const shape of SHAPES) this.validate(shape, {});
		await this.listen();
		this.tickTimer = setInterval(() => this.flushEvents(), this.options.eventTickMs ?? 100);
		this.watchTimer = setInterval(() => void this.watch(), this.options.watchMs ?? 100);
	}

	/** Stop listening and remove the socket file: clients then see "no herdr socket". */
	async stopListening(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		for (const socket of this.connections) socket.destroy();
		if (server) await new Promise<void>(resolve => server.close(() => resolve()));
		fs.rmSync(this.socketPath, {force: true});
	}

	/** Listen again after stopListening (a herdr restart, for reconnect tests). */
	async listen(): Promise<void> {
		fs.rmSync(this.socketPath, {force: true});
		const server = net.createServer(socket => this.accept(socket));
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(this.socketPath, () => resolve());
		});
		this.server = server;
	}

	/** Stop everything: connections, timers, every pane's processes, the tmux server. */
	async stop(): Promise<void> {
		clearInterval(this.tickTimer);
		clearInterval(this.watchTimer);
		await this.stopListening();
		for (const pane of [...this.panes.values()]) await this.teardown(pane);
		await this.tmux.kill();
	}

	misbehave(mode: Misbehaviour | undefined): void {
		this.misbehaviour = mode;
	}

	/** Cut every open event stream (a herdr restart or a network blip, from the client's view), or only the lifecycle ones. */
	dropSubscriptions(only?: 'lifecycle'): void {
		for (const sub of [...this.subscriptions]) {
			if (only === 'lifecycle' && sub.lifecycle.size === 0) continue;
			sub.socket.destroy();
			this.subscriptions.delete(sub);
		}
	}

	/** How many event streams are open right now. */
	subscriberCount(): number {
		return this.subscriptions.size;
	}

	/**
	 * Run `fn` in the gap of a client's (re)connect: after the fake answered the first of an
	 * `events.subscribe` of that `stream` (lifecycle types, or per-pane status only) and a
	 * `session.snapshot`, and before it serves the other one (which waits for `fn`). Whichever
	 * order the client takes them in, a change `fn` makes falls between.
	 */
	inGap(fn: () => Promise<void>, stream: 'lifecycle' | 'status' = 'lifecycle'): void {
		this.gap = {fn, stream};
	}

	/** End every open event stream with an `events_lost` error line, as herdr does for a stream that fell behind. */
	loseEvents(): void {
		for (const sub of this.subscriptions) {
			const line = {id: sub.id, error: {code: 'events_lost', message: 'subscriber fell behind; events were dropped'}};
			this.check('error_response', line, 'response');
			sub.socket.end(`${JSON.stringify(line)}\n`);
		}
		this.subscriptions.clear();
	}

	/** Write a raw line to every open event stream, unvalidated (to test how clients take garbage). */
	injectRaw(line: string): void {
		for (const sub of this.subscriptions) sub.socket.write(`${line}\n`);
	}

	/** Test hook: set a pane's agent status (herdr's screen detection would), emitting the status event. */
	setAgentStatus(paneId: string, status: Status): void {
		const pane = this.panes.get(paneId);
		if (!pane) throw new Error(`no pane ${paneId}`);
		this.changeStatus(pane, status);
	}

	/** The pane ids, for tests. */
	paneIds(): string[] {
		return [...this.panes.keys()];
	}

	/** The pane's shell pid (what process_info reports). */
	shellPidOf(paneId: string): number | undefined {
		return this.panes.get(paneId)?.shellPid;
	}

	private check(shape: HerdrShape, value: unknown, where: string): void {
		if (this.options.validate === false) return;
		const problem = this.validate(shape, value);
		if (problem) this.violations.push(`${where}: ${problem} in ${JSON.stringify(value).slice(0, 300)}`);
	}

	private accept(socket: net.Socket): void {
		this.connections.add(socket);
		socket.on('close', () => this.connections.delete(socket));
		socket.on('error', () => undefined);
		socket.setEncoding('utf8');
		let buffer = '';
		let done = false;
		// herdr drops a connection whose request line does not arrive within 5 s.
		const timer = setTimeout(() => socket.destroy(), 5000);
		socket.on('data', chunk => {
			if (done) return;
			buffer += String(chunk);
			const newline = buffer.indexOf('\n');
			if (newline < 0) {
				if (buffer.length > 1024 * 1024) socket.destroy();
				return;
			}
			done = true;
			clearTimeout(timer);
			void this.handleLine(socket, buffer.slice(0, newline));
		});
	}

	private applies(methods: readonly string[] | undefined, method: string): boolean {
		return methods === undefined || methods.includes(method);
	}

	/** The id an `invalid_request` answer carries: protocol 22 keeps a string id of a JSON object, 20 always says "". */
	private invalidId(request: unknown): string {
		if (!this.traits.invalidRequestKeepsId || typeof request !== 'object' || request === null || Array.isArray(request)) return '';
		const id = (request as Json)['id'];
		return typeof id === 'string' ? id : '';
	}

	private async handleLine(socket: net.Socket, line: string): Promise<void> {
		let request: unknown;
		try {
			request = JSON.parse(line);
		} catch {
			this.violations.push(`received a line that is not JSON: ${line.slice(0, 200)}`);
			this.reply(socket, {id: '', error: {code: 'invalid_request', message: 'invalid request: expected JSON'}});
			return;
		}
		const problem = this.options.validate === false ? undefined : this.validate('request', request);
		if (problem) {
			this.violations.push(`request: ${problem} in ${line.slice(0, 300)}`);
			this.reply(socket, {id: this.invalidId(request), error: {code: 'invalid_request', message: `invalid request: ${problem}`}});
			return;
		}
		const {id, method, params} = request as {id: string; method: string; params: Json};
		this.methods.push(method);
		const bad = this.misbehaviour;
		if (bad && bad.kind !== 'wrong-protocol' && this.applies(bad.methods, method)) {
			if (bad.kind === 'refuse') return void socket.destroy();
			if (bad.kind === 'garbage') return void socket.end('this is not json {\n');
			if (bad.kind === 'silent') return;
			if (bad.kind === 'error') return this.reply(socket, {id, error: {code: bad.code, message: bad.message ?? `the fake herdr answers ${bad.code}`}});
			if (bad.kind === 'raw') return void socket.end(`${JSON.stringify({id, result: bad.result})}\n`);
			await sleep(bad.delayMs);
		}
		const stream = method === 'events.subscribe' ? (this.isLifecycle(params) ? 'lifecycle' : 'status') : undefined;
		const half = method === 'session.snapshot' ? 'snapshot' : stream && stream === this.gap?.stream ? 'subscribe' : undefined;
		if (half) await this.gapBefore(half);
		if (method === 'events.subscribe') {
			this.subscribe(socket, id, params);
		} else {
			try {
				const result = await this.dispatch(method, params);
				this.reply(socket, {id, result});
			} catch (error) {
				const fault = error instanceof HerdrFault ? error : new HerdrFault('internal_error', String(error));
				this.reply(socket, {id, error: {code: fault.code, message: fault.message}});
			}
		}
		if (half) this.gapAfter(half);
	}

	private isLifecycle(params: Json): boolean {
		const list = params['subscriptions'];
		return Array.isArray(list) && list.some(sub => typeof sub === 'object' && sub !== null && (sub as Json)['type'] !== 'pane.agent_status_changed');
	}

	/** The second half of a bootstrap waits until the gap hook has run. */
	private async gapBefore(half: 'subscribe' | 'snapshot'): Promise<void> {
		const gap = this.gap;
		if (!gap?.first || gap.first === half) return;
		this.gap = undefined;
		await gap.done;
	}

	/** The first half answered: run the gap hook now. */
	private gapAfter(half: 'subscribe' | 'snapshot'): void {
		const gap = this.gap;
		if (!gap || gap.first) return;
		gap.first = half;
		gap.done = gap.fn().catch(error => void this.violations.push(`the gap hook failed: ${String(error)}`));
	}

	private reply(socket: net.Socket, body: Json): void {
		this.check('error' in body ? 'error_response' : 'success_response', body, 'response');
		if (!socket.destroyed) socket.end(`${JSON.stringify(body)}\n`);
	}

	private pane(params: Json): FakePane {
		const id = params['pane_id'];
		const pane = typeof id === 'string' ? this.panes.get(id) : undefined;
		if (!pane) throw new HerdrFault('pane_not_found', `pane ${String(id)} not found`);
		return pane;
	}

	private async dispatch(method: string, params: Json): Promise<Json> {
		switch (method) {
			case 'ping': {
				const protocol = this.misbehaviour?.kind === 'wrong-protocol' ? this.misbehaviour.protocol : this.protocol;
				const capabilities = Object.fromEntries(this.traits.capabilities.map(name => [name, CAPABILITY_VALUES[name] ?? false]));
				return {type: 'pong', version: this.version, protocol, capabilities};
			}
			case 'session.snapshot':
				return {type: 'session_snapshot', snapshot: this.snapshot()};
			case 'workspace.list':
				return {type: 'workspace_list', workspaces: [...this.workspaces.values()].map(w => this.workspaceInfo(w))};
			case 'workspace.create':
				return this.createWorkspace(params);
			case 'workspace.close':
				return this.closeWorkspace(params);
			case 'tab.list': {
				const ws = params['workspace_id'];
				return {type: 'tab_list', tabs: [...this.tabs.values()].filter(t => typeof ws !== 'string' || t.workspaceId === ws).map(t => this.tabInfo(t))};
			}
			case 'tab.create':
				return this.createTab(params);
			case 'pane.list': {
				const ws = params['workspace_id'];
				return {type: 'pane_list', panes: [...this.panes.values()].filter(p => typeof ws !== 'string' || p.workspaceId === ws).map(p => this.paneInfo(p))};
			}
			case 'pane.get':
				return {type: 'pane_info', pane: this.paneInfo(this.pane(params))};
			case 'agent.list':
				return {type: 'agent_list', agents: [...this.panes.values()].filter(p => p.agent).map(p => this.agentInfo(p))};
			case 'agent.get': {
				const pane = this.panes.get(String(params['target']));
				if (!pane?.agent) throw new HerdrFault('agent_not_found', `agent ${String(params['target'])} not found`);
				return {type: 'agent_info', agent: this.agentInfo(pane)};
			}
			case 'pane.process_info':
				return {type: 'pane_process_info', process_info: this.processInfo(params)};
			case 'pane.read':
				return this.read(params);
			case 'pane.send_text':
				await this.write(this.pane(params), Buffer.from(String(params['text']), 'utf8'));
				return {type: 'ok'};
			case 'pane.send_keys':
				await this.sendInput(this.pane(params), undefined, params['keys'] as string[]);
				return {type: 'ok'};
			case 'pane.send_input':
				await this.sendInput(this.pane(params), params['text'] as string | undefined, (params['keys'] as string[] | undefined) ?? []);
				return {type: 'ok'};
			case 'pane.split':
				return this.splitPane(params);
			case 'pane.close':
				await this.closePane(this.pane(params));
				return {type: 'ok'};
			case 'pane.focus':
				this.focus(this.pane(params));
				return {type: 'ok'};
			case 'pane.rename': {
				const pane = this.pane(params);
				const label = params['label'];
				if (typeof label === 'string' && label) pane.label = label;
				else delete pane.label;
				this.touch(pane);
				return {type: 'ok'};
			}
			case 'pane.report_agent':
				this.reportAgent(params);
				return {type: 'ok'};
			case 'pane.report_agent_session':
				this.reportSession(this.pane(params), params);
				return {type: 'ok'};
			default:
				throw new HerdrFault('not_implemented', `${method} is not implemented by the fake herdr`);
		}
	}

	private rollup(panes: readonly FakePane[]): Status {
		return ROLLUP.find(s => panes.some(p => p.status === s)) ?? 'unknown';
	}

	private workspaceInfo(w: Workspace): Json {
		const panes = [...this.panes.values()].filter(p => p.workspaceId === w.id);
		const focused = this.focusedPane !== undefined && this.panes.get(this.focusedPane)?.workspaceId === w.id;
		return {
			workspace_id: w.id,
			number: [...this.workspaces.keys()].indexOf(w.id) + 1,
			label: w.label,
			focused,
			pane_count: panes.length,
			tab_count: [...this.tabs.values()].filter(t => t.workspaceId === w.id).length,
			active_tab_id: w.activeTab,
			agent_status: this.rollup(panes),
		};
	}

	private tabInfo(t: Tab): Json {
		const panes = [...this.panes.values()].filter(p => p.tabId === t.id);
		const siblings = [...this.tabs.values()].filter(x => x.workspaceId === t.workspaceId);
		return {
			tab_id: t.id,
			workspace_id: t.workspaceId,
			number: siblings.indexOf(t) + 1,
			label: t.label,
			focused: this.focusedPane !== undefined && this.panes.get(this.focusedPane)?.tabId === t.id,
			pane_count: panes.length,
			agent_status: this.rollup(panes),
		};
	}

	/**
	 * With `table` (a whole snapshot), the foreground cwd comes from one /proc pass shared by every
	 * pane: real herdr answers a snapshot from memory in a few ms, and a fake that re-read each
	 * pane's process tree (500 panes) made the benchmark time the fake instead of mam-tui.
	 */
	private paneInfo(p: FakePane, table?: StatTable): Json {
		const foregroundCwd = table ? cwdOf(foregroundPids(table, p.shellPid)[0]) : this.foreground(p)[0]?.ref.cwd;
		return {
			pane_id: p.id,
			terminal_id: p.terminalId,
			workspace_id: p.workspaceId,
			tab_id: p.tabId,
			focused: this.focusedPane === p.id,
			agent_status: p.status,
			revision: p.revision,
			cwd: p.cwd,
			...(foregroundCwd ? {foreground_cwd: foregroundCwd} : {}),
			...(p.label ? {label: p.label} : {}),
			...(p.agent ? {agent: p.agent, display_agent: p.agent} : {}),
			...(p.agentSession ? {agent_session: p.agentSession} : {}),
		};
	}

	private agentInfo(p: FakePane): Json {
		return {
			terminal_id: p.terminalId,
			agent_status: p.status,
			workspace_id: p.workspaceId,
			tab_id: p.tabId,
			pane_id: p.id,
			focused: this.focusedPane === p.id,
			revision: p.revision,
			state_change_seq: p.stateSeq,
			cwd: p.cwd,
			...(p.agent ? {agent: p.agent, display_agent: p.agent} : {}),
			...(p.agentSession ? {agent_session: p.agentSession} : {}),
		};
	}

	private layout(tab: Tab): Json {
		const panes = [...this.panes.values()].filter(p => p.tabId === tab.id);
		const width = 200;
		const height = 50;
		const each = Math.max(1, Math.floor(width / Math.max(1, panes.length)));
		const focused = panes.find(p => p.id === this.focusedPane)?.id ?? panes[0]?.id ?? '';
		return {
			workspace_id: tab.workspaceId,
			tab_id: tab.id,
			zoomed: false,
			area: {x: 0, y: 0, width, height},
			focused_pane_id: focused,
			panes: panes.map((p, i) => ({pane_id: p.id, focused: p.id === focused, rect: {x: i * each, y: 0, width: each, height}})),
			splits: panes.slice(1).map((_, i) => ({
				id: `${tab.id}:s${i + 1}`,
				direction: 'right',
				ratio: 0.5,
				rect: {x: 0, y: 0, width, height},
			})),
		};
	}

	private snapshot(): Json {
		const table = statTable();
		const focused = this.focusedPane ? this.panes.get(this.focusedPane) : undefined;
		return {
			version: this.version,
			protocol: this.protocol,
			...(focused ? {focused_workspace_id: focused.workspaceId, focused_tab_id: focused.tabId, focused_pane_id: focused.id} : {}),
			workspaces: [...this.workspaces.values()].map(w => this.workspaceInfo(w)),
			tabs: [...this.tabs.values()].map(t => this.tabInfo(t)),
			panes: [...this.panes.values()].map(p => this.paneInfo(p, table)),
			layouts: [...this.tabs.values()].map(t => this.layout(t)),
			agents: [...this.panes.values()].filter(p => p.agent).map(p => this.agentInfo(p)),
		};
	}

	/** The processes of the pane's foreground process group (the tty's tpgid), sorted by pid. */
	private foreground(p: FakePane): NonNullable<ReturnType<typeof readProc>>[] {
		const shell = readProc(p.shellPid);
		if (!shell || shell.tpgid <= 0) return [];
		return subtree(p.shellPid)
			.filter(x => x.pgid === shell.tpgid)
			.sort((a, b) => a.ref.pid - b.ref.pid);
	}

	private processInfo(params: Json): Json {
		const id = params['pane_id'];
		const pane = typeof id === 'string' ? this.pane(params) : this.focusedPane ? this.panes.get(this.focusedPane) : undefined;
		if (!pane) throw new HerdrFault('pane_not_found', 'no focused pane');
		const shell = readProc(pane.shellPid);
		const fg = this.foreground(pane).map(x => ({
			pid: x.ref.pid,
			name: x.ref.name,
			...(x.ref.argv[0] ? {argv0: x.ref.argv[0]} : {}),
			argv: x.ref.argv,
			cmdline: x.ref.argv.join(' '),
			...(x.ref.cwd ? {cwd: x.ref.cwd} : {}),
		}));
		return {
			pane_id: pane.id,
			shell_pid: pane.shellPid,
			...(shell && shell.tpgid > 0 ? {foreground_process_group_id: shell.tpgid} : {}),
			...(fg.length > 0 ? {foreground_processes: fg} : {}),
		};
	}

	private async read(params: Json): Promise<Json> {
		const pane = this.pane(params);
		const source = String(params['source']);
		const format = params['format'] === 'ansi' ? 'ansi' : 'text';
		const lines = typeof params['lines'] === 'number' ? params['lines'] : source.startsWith('recent') ? 80 : undefined;
		const args = ['capture-pane', '-p', '-t', pane.tmuxPane];
		if (source === 'recent_unwrapped') args.push('-J');
		if (format === 'ansi' || params['strip_ansi'] === false) args.push('-e');
		if (lines !== undefined && source.startsWith('recent')) args.push('-S', `-${lines}`);
		const out = await this.tmux.run(args);
		let text = out.stdout.replace(/\n+$/, '\n');
		if (lines !== undefined)
			text = text
				.split('\n')
				.slice(-lines - 1)
				.join('\n');
		return {
			type: 'pane_read',
			read: {pane_id: pane.id, workspace_id: pane.workspaceId, tab_id: pane.tabId, source, format, text, revision: 0, truncated: false},
		};
	}

	/** Real bytes into the pane's PTY, through tmux (`send-keys -H`: hex, no key-name lookup). */
	private async write(pane: FakePane, bytes: Buffer): Promise<void> {
		if (bytes.length === 0) return;
		const hex = [...bytes].map(b => b.toString(16).padStart(2, '0'));
		const out = await this.tmux.run(['send-keys', '-t', pane.tmuxPane, '-H', ...hex]);
		if (out.exitCode !== 0) throw new HerdrFault('pane_send_failed', out.stderr.trim());
	}

	private async sendInput(pane: FakePane, text: string | undefined, keys: readonly string[]): Promise<void> {
		const encoded = keys.map(k => ({k, bytes: keyBytes(k)}));
		const bad = encoded.find(e => e.bytes === undefined);
		if (bad) throw new HerdrFault('invalid_key', `invalid key: ${bad.k}`);
		await this.write(pane, Buffer.concat([Buffer.from(text ?? '', 'utf8'), ...encoded.map(e => e.bytes as Buffer)]));
	}

	private checkEnv(env: unknown): Record<string, string> {
		if (env === undefined) return {};
		const out: Record<string, string> = {};
		for (const [key, value] of Object.entries(env as Record<string, string>)) {
			if (key.length === 0 || /[=\0]/.test(key)) throw new HerdrFault('invalid_env', `invalid environment variable name ${JSON.stringify(key)}`);
			out[key] = value;
		}
		return out;
	}

	/** Start a pane: a tmux window running the shell, in the workspace's tmux session. */
	private async spawnPane(workspace: Workspace, tab: Tab, cwd: string, callerEnv: Record<string, string>, first: boolean): Promise<FakePane> {
		workspace.nextPane += 1;
		const id = `${workspace.id}:p${herdrNumber(workspace.nextPane)}`;
		// Caller env first; herdr-managed keys win (PROTOCOL 1.1).
		const env: Record<string, string> = {
			PS1: '$ ',
			...this.options.paneEnv,
			...callerEnv,
			HERDR_ENV: '1',
			HERDR_SOCKET_PATH: this.socketPath,
			HERDR_WORKSPACE_ID: workspace.id,
			HERDR_TAB_ID: tab.id,
			HERDR_PANE_ID: id,
			TERM: 'xterm-256color',
			COLORTERM: 'truecolor',
		};
		const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`.endsWith(';') ? `${k}=${v.slice(0, -1)}\\;` : `${k}=${v}`]);
		const shell = this.options.shell ?? ['/bin/sh', '-i'];
		const common = ['-P', '-F', '#{pane_id} #{pane_pid}', '-c', cwd.replaceAll('#', '##'), ...envArgs, '--', ...shell];
		const out = first
			? await this.tmux.run(['new-session', '-d', '-s', workspace.id, '-x', '200', '-y', '50', ...common], env['PATH'])
			: await this.tmux.run(['new-window', '-d', '-t', `${workspace.id}:`, ...common], env['PATH']);
		const [tmuxPane, pid] = out.stdout.trim().split(' ');
		if (out.exitCode !== 0 || !tmuxPane || !pid) throw new HerdrFault('pane_split_failed', out.stderr.trim() || 'tmux did not start the pane');
		const pane: FakePane = {
			id,
			terminalId: `term_${crypto.randomBytes(6).toString('hex')}`,
			workspaceId: workspace.id,
			tabId: tab.id,
			tmuxPane,
			shellPid: Number(pid),
			cwd,
			status: 'unknown',
			revision: 0,
			stateSeq: 0,
			sessionSeq: new Map(),
			closing: false,
		};
		this.panes.set(id, pane);
		this.focusedPane ??= id;
		return pane;
	}

	private cwdOf(params: Json, fallback: string): string {
		const cwd = params['cwd'];
		if (typeof cwd === 'string' && cwd) {
			if (!path.isAbsolute(cwd) || !fs.existsSync(cwd)) throw new HerdrFault('invalid_params', `cwd ${cwd} does not exist`);
			return cwd;
		}
		return fallback;
	}

	private newTab(workspace: Workspace, label?: string): Tab {
		workspace.nextTab += 1;
		const tab: Tab = {id: `${workspace.id}:t${herdrNumber(workspace.nextTab)}`, workspaceId: workspace.id, label: label ?? `${workspace.nextTab}`};
		this.tabs.set(tab.id, tab);
		return tab;
	}

	/** workspace.create (also what a test uses to get its first panes). */
	private async createWorkspace(params: Json): Promise<Json> {
		const env = this.checkEnv(params['env']);
		const cwd = this.cwdOf(params, process.cwd());
		const number = this.nextWorkspace++;
		const workspace: Workspace = {
			id: `w${herdrNumber(number)}`,
			label: typeof params['label'] === 'string' ? params['label'] : `workspace ${number}`,
			nextPane: 0,
			nextTab: 0,
			activeTab: '',
		};
		this.workspaces.set(workspace.id, workspace);
		const tab = this.newTab(workspace);
		workspace.activeTab = tab.id;
		const pane = await this.spawnPane(workspace, tab, cwd, env, true);
		if (params['focus'] === true) this.focusedPane = pane.id;
		this.lifecycle('workspace_created', {workspace: this.workspaceInfo(workspace)});
		this.lifecycle('tab_created', {tab: this.tabInfo(tab)});
		this.lifecycle('pane_created', {pane: this.paneInfo(pane)});
		this.lifecycle('layout_updated', {layout: this.layout(tab)});
		return {type: 'workspace_created', workspace: this.workspaceInfo(workspace), tab: this.tabInfo(tab), root_pane: this.paneInfo(pane)};
	}

	private async createTab(params: Json): Promise<Json> {
		const wsId =
			typeof params['workspace_id'] === 'string' ? params['workspace_id'] : this.focusedPane ? this.panes.get(this.focusedPane)?.workspaceId : undefined;
		const workspace = wsId ? this.workspaces.get(wsId) : undefined;
		if (!workspace) throw new HerdrFault('workspace_not_found', `workspace ${String(wsId)} not found`);
		const env = this.checkEnv(params['env']);
		const tab = this.newTab(workspace, typeof params['label'] === 'string' ? params['label'] : undefined);
		const pane = await this.spawnPane(workspace, tab, this.cwdOf(params, process.cwd()), env, false);
		this.lifecycle('tab_created', {tab: this.tabInfo(tab)});
		this.lifecycle('pane_created', {pane: this.paneInfo(pane)});
		this.lifecycle('layout_updated', {layout: this.layout(tab)});
		return {type: 'tab_created', tab: this.tabInfo(tab), root_pane: this.paneInfo(pane)};
	}

	private async splitPane(params: Json): Promise<Json> {
		const targetId = typeof params['target_pane_id'] === 'string' ? params['target_pane_id'] : this.focusedPane;
		const target = targetId ? this.panes.get(targetId) : undefined;
		if (!target) throw new HerdrFault('pane_not_found', `pane ${String(targetId)} not found`);
		const env = this.checkEnv(params['env']);
		const workspace = this.workspaces.get(target.workspaceId);
		const tab = this.tabs.get(target.tabId);
		if (!workspace || !tab) throw new HerdrFault('internal_error', 'pane without workspace');
		const pane = await this.spawnPane(workspace, tab, this.cwdOf(params, target.cwd), env, false);
		this.lifecycle('pane_created', {pane: this.paneInfo(pane)});
		this.lifecycle('layout_updated', {layout: this.layout(tab)});
		if (params['focus'] === true) this.focus(pane);
		return {type: 'pane_info', pane: this.paneInfo(pane)};
	}

	private focus(pane: FakePane): void {
		this.focusedPane = pane.id;
		this.lifecycle('pane_focused', {pane_id: pane.id, workspace_id: pane.workspaceId});
	}

	private touch(pane: FakePane): void {
		pane.revision += 1;
		this.lifecycle('pane_updated', {pane: this.paneInfo(pane)});
	}

	/** herdr's close: every pid in the pane's session gets HUP, TERM, KILL 250 ms apart (PROTOCOL 10). */
	private async teardown(pane: FakePane): Promise<void> {
		pane.closing = true;
		const members = () =>
			allProcs()
				.filter(p => p.sid === pane.shellPid && p.state !== 'Z')
				.map(p => p.ref.pid);
		for (const signal of ['SIGHUP', 'SIGTERM', 'SIGKILL'] as const) {
			const pids = members();
			if (pids.length === 0) break;
			for (const pid of pids) {
				try {
					process.kill(pid, signal);
				} catch {
					// already gone
				}
			}
			for (let waited = 0; waited < 250 && members().length > 0; waited += 20) await sleep(20);
		}
		await this.tmux.run(['kill-pane', '-t', pane.tmuxPane]);
		this.panes.delete(pane.id);
		if (this.focusedPane === pane.id) this.focusedPane = this.panes.keys().next().value;
	}

	/** Remove a tab or workspace that lost its last pane; returns what went. */
	private prune(pane: FakePane): 'workspace' | 'tab' | undefined {
		const left = [...this.panes.values()];
		if (!left.some(p => p.workspaceId === pane.workspaceId)) {
			this.workspaces.delete(pane.workspaceId);
			for (const tab of [...this.tabs.values()]) if (tab.workspaceId === pane.workspaceId) this.tabs.delete(tab.id);
			return 'workspace';
		}
		if (!left.some(p => p.tabId === pane.tabId)) {
			this.tabs.delete(pane.tabId);
			return 'tab';
		}
		return undefined;
	}

	private async closePane(pane: FakePane): Promise<void> {
		await this.teardown(pane);
		this.lifecycle('pane_closed', {pane_id: pane.id, workspace_id: pane.workspaceId});
		const removed = this.prune(pane);
		if (removed === 'workspace') this.lifecycle('workspace_closed', {workspace_id: pane.workspaceId});
		else {
			if (removed === 'tab') this.lifecycle('tab_closed', {tab_id: pane.tabId, workspace_id: pane.workspaceId});
			const tab = this.tabs.get(pane.tabId);
			if (tab) this.lifecycle('layout_updated', {layout: this.layout(tab)});
		}
	}

	private async closeWorkspace(params: Json): Promise<Json> {
		const id = params['workspace_id'];
		const workspace = typeof id === 'string' ? this.workspaces.get(id) : undefined;
		if (!workspace) throw new HerdrFault('workspace_not_found', `workspace ${String(id)} not found`);
		for (const pane of [...this.panes.values()].filter(p => p.workspaceId === workspace.id)) await this.teardown(pane);
		this.workspaces.delete(workspace.id);
		for (const tab of [...this.tabs.values()]) if (tab.workspaceId === workspace.id) this.tabs.delete(tab.id);
		// Only workspace_closed: no per-pane pane_closed (PROTOCOL 5.3).
		this.lifecycle('workspace_closed', {workspace_id: workspace.id});
		return {type: 'ok'};
	}

	private changeStatus(pane: FakePane, status: Status): void {
		if (pane.status === status) return;
		pane.status = status;
		pane.stateSeq += 1;
		this.paneStatusEvent(pane);
	}

	private changeAgent(pane: FakePane, agent: string | undefined): void {
		if (pane.agent === agent) return;
		if (agent) pane.agent = agent;
		else delete pane.agent;
		pane.revision += 1;
		this.lifecycle('pane_agent_detected', {pane_id: pane.id, workspace_id: pane.workspaceId, ...(agent ? {agent} : {})});
		// A fresh agent at its prompt is idle; a pane without one is unknown.
		this.changeStatus(pane, agent ? 'idle' : 'unknown');
	}

	private reportAgent(params: Json): void {
		const pane = this.pane(params);
		const agent = String(params['agent'] ?? '');
		if (agent.trim() === '') throw new HerdrFault('invalid_agent', 'agent must not be empty');
		pane.reportedAgent = true;
		this.changeAgent(pane, agent);
		this.changeStatus(pane, params['state'] as Status);
		this.reportSession(pane, params);
	}

	/** Store a native session reference only for official source/agent pairs and newer seqs (PROTOCOL 4, 8). */
	private reportSession(pane: FakePane, params: Json): void {
		const agent = String(params['agent'] ?? '');
		if (agent.trim() === '') throw new HerdrFault('invalid_agent', 'agent must not be empty');
		const source = String(params['source'] ?? '');
		const official = (OFFICIAL_SOURCES.has(agent) && source === `herdr:${agent}`) || (agent === 'agy' && source === 'herdr:antigravity_cli');
		if (!official) return;
		const seq = typeof params['seq'] === 'number' ? params['seq'] : undefined;
		const last = pane.sessionSeq.get(source);
		if (seq !== undefined && last !== undefined && seq <= last) return;
		const id = params['agent_session_id'];
		const file = params['agent_session_path'];
		let ref: FakePane['agentSession'];
		if (typeof file === 'string' && path.isAbsolute(file) && file.length <= 4096 && (agent === 'pi' || agent === 'omp'))
			ref = {source, agent, kind: 'path', value: file};
		else if (typeof id === 'string' && id.length > 0 && Buffer.byteLength(id) <= 512 && !/[\0-\x1f\x7f]/.test(id)) ref = {source, agent, kind: 'id', value: id};
		if (!ref) return;
		if (seq !== undefined) pane.sessionSeq.set(source, seq);
		pane.agentSession = ref;
		pane.revision += 1;
	}

	/** The agent in the pane's foreground (herdr reads the tpgid leader; PROTOCOL 8). */
	private detectAgent(pane: FakePane): string | undefined {
		const shell = readProc(pane.shellPid);
		if (!shell || shell.tpgid <= 0 || shell.tpgid === pane.shellPid) return undefined;
		const leader = readProc(shell.tpgid);
		if (!leader) return undefined;
		try {
			const env = fs.readFileSync(`/proc/${leader.ref.pid}/environ`, 'utf8').split('\0');
			const hint = env.find(e => e.startsWith('HERDR_AGENT='))?.slice('HERDR_AGENT='.length);
			if (hint) return hint;
		} catch {
			// not readable: fall back to the name
		}
		let name = leader.ref.name;
		const argv0 = path.basename(leader.ref.argv[0] ?? '');
		if (RUNTIMES.test(name) || RUNTIMES.test(argv0)) name = path.basename(leader.ref.argv[1] ?? name);
		const label = AGENT_ALIASES[name] ?? name;
		return AGENT_KINDS.has(label) ? label : undefined;
	}

	/** Exits and foreground agents, like herdr's ~300 ms probe. */
	private async watch(): Promise<void> {
		if (this.watching) return;
		this.watching = true;
		try {
			for (const pane of [...this.panes.values()]) {
				if (pane.closing) continue;
				if (!alive(pane.shellPid)) {
					await this.exited(pane);
					continue;
				}
				if (!pane.reportedAgent) this.changeAgent(pane, this.detectAgent(pane));
			}
		} finally {
			this.watching = false;
		}
	}

	/** The PTY's child died by itself: pane_exited, no pane_closed, and the pane is gone (PROTOCOL 5.3). */
	private async exited(pane: FakePane): Promise<void> {
		pane.closing = true;
		if (pane.agent) this.lifecycle('pane_agent_detected', {pane_id: pane.id, workspace_id: pane.workspaceId, released: true, final_status: pane.status});
		await this.tmux.run(['kill-pane', '-t', pane.tmuxPane]);
		this.panes.delete(pane.id);
		if (this.focusedPane === pane.id) this.focusedPane = this.panes.keys().next().value;
		this.lifecycle('pane_exited', {pane_id: pane.id, workspace_id: pane.workspaceId});
		// An implicitly closed workspace sends no workspace_closed (PROTOCOL 12).
		const removed = this.prune(pane);
		const tab = this.tabs.get(pane.tabId);
		if (!removed && tab) this.lifecycle('layout_updated', {layout: this.layout(tab)});
	}

	private lifecycle(event: string, data: Json): void {
		const line = {event, data: {type: event, ...data}};
		this.check('event', line, 'event');
		this.ring.push(line);
		if (this.ring.length > 512) this.ring.shift();
		const type = event.replace('_', '.');
		for (const sub of this.subscriptions) if (sub.lifecycle.has(type)) sub.queue.push(line);
	}

	private paneStatusEvent(pane: FakePane): void {
		const line = {
			event: 'pane.agent_status_changed',
			data: {
				pane_id: pane.id,
				workspace_id: pane.workspaceId,
				agent_status: pane.status,
				...(pane.agent ? {agent: pane.agent, display_agent: pane.agent} : {}),
			},
		};
		this.check('subscription_event', line, 'event');
		for (const sub of this.subscriptions) {
			if (!sub.paneStatus.has(pane.id)) continue;
			const filter = sub.paneStatus.get(pane.id);
			if (filter === undefined || filter === pane.status) sub.queue.push(line);
		}
	}

	private subscribe(socket: net.Socket, id: string, params: Json): void {
		const list = params['subscriptions'] as Json[];
		const lifecycle = new Set<string>();
		const paneStatus = new Map<string, Status | undefined>();
		for (const [index, sub] of list.entries()) {
			const type = String(sub['type']);
			if (type === 'pane.agent_status_changed') {
				const paneId = String(sub['pane_id']);
				if (!this.panes.has(paneId)) {
					// A per-pane subscription on a missing pane fails the whole request (PROTOCOL 5.4).
					this.reply(socket, {id: `${id}:sub:${index}:probe`, error: {code: 'pane_not_found', message: `pane ${paneId} not found`}});
					return;
				}
				paneStatus.set(paneId, typeof sub['agent_status'] === 'string' ? (sub['agent_status'] as Status) : undefined);
			} else if (type.startsWith('pane.') && type !== 'pane.output_matched' && type !== 'pane.scroll_changed') lifecycle.add(type);
			else if (/^(workspace|tab|layout|worktree)\./.test(type)) lifecycle.add(type);
		}
		const started = {id, result: {type: 'subscription_started'}};
		this.check('success_response', started, 'response');
		socket.write(`${JSON.stringify(started)}\n`);
		// Protocol 20: a new subscriber first gets a replay of recent events of its kinds (PROTOCOL
		// 5.4). Protocol 22 starts with live events only (PROTOCOL 14).
		const queue = this.traits.replaysLifecycle ? this.ring.filter(line => lifecycle.has(String(line['event']).replace('_', '.'))) : [];
		const subscription: Subscription = {id, socket, lifecycle, paneStatus, queue};
		this.subscriptions.add(subscription);
		socket.on('close', () => this.subscriptions.delete(subscription));
		// With a status filter, a pane already in that status is reported at once (PROTOCOL 5.3).
		for (const [paneId, filter] of paneStatus) {
			const pane = this.panes.get(paneId);
			if (pane && filter !== undefined && pane.status === filter) this.paneStatusEvent(pane);
		}
	}

	/** One event per subscription per tick, like herdr's 100 ms poll. */
	private flushEvents(): void {
		for (const sub of this.subscriptions) {
			const line = sub.queue.shift();
			if (!line || sub.socket.destroyed) continue;
			sub.socket.write(`${JSON.stringify(line)}\n`);
		}
	}

	/** Test convenience: a workspace whose root pane's shell runs in `cwd` with `env`; resolves with its pane id. */
	async openWorkspace(cwd: string, env: Readonly<Record<string, string>> = {}): Promise<string> {
		const result = await this.createWorkspace({cwd, env: {...env}});
		return String((result['root_pane'] as Json)['pane_id']);
	}

	/** Test convenience: split `target` (its tab gets a new pane running a shell in `cwd`); resolves with the new id. */
	async split(target: string, cwd: string, env: Readonly<Record<string, string>> = {}): Promise<string> {
		const result = await this.splitPane({direction: 'right', target_pane_id: target, cwd, env: {...env}});
		return String((result['pane'] as Json)['pane_id']);
	}

	/** Test convenience: type a command line and Enter into a pane, like `herdr pane run`. */
	async run(paneId: string, line: string): Promise<void> {
		const pane = this.panes.get(paneId);
		if (!pane) throw new Error(`no pane ${paneId}`);
		await this.sendInput(pane, line, ['Enter']);
	}
}

/** Start a fake herdr on `socketPath`. */
export async function startFakeHerdr(options: FakeHerdrOptions): Promise<FakeHerdr> {
	const fake = new FakeHerdr(options);
	await fake.start();
	return fake;
}
