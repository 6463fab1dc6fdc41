// The benchmark's world: a temp home holding N conversations in every agent's real on-disk
// format (written with the fixture writers of test/adapters/fixtures), a registry of M sessions
// pinned to some of them over a few dozen cwds, and the stand-in agent programs their panes run.
// Everything is a function of the seed: ids, cwds, times and file contents.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {projectSlug} from '../../src/adapters/claude.js';
import {AGENT_IDS, type AgentId} from '../../src/domain/types.js';
import {Registry} from '../../src/registry/registry.js';
import {writeAgyConversation} from '../adapters/fixtures/agy.js';
import {claudeSubagentTranscript, claudeTranscript} from '../adapters/fixtures/claude.js';
import {codexRollout, rolloutRelPath, uuidV7, writeDb} from '../adapters/fixtures/codex.js';
import {CODEX_STATE_SCHEMA} from '../adapters/fixtures/codexSchema.js';
import {writeGeminiMain, writeGeminiProject, writeGeminiSubagent} from '../adapters/fixtures/gemini.js';
import {grokCliId, insertGrokCliSession, writeGrokBuildSession} from '../adapters/fixtures/grok.js';
import {createHermesStore, hermesId, insertHermesSession} from '../adapters/fixtures/hermes.js';
import {opencodeId, writeOpencodeDb, type OcSession} from '../adapters/fixtures/opencode.js';
import {jsonl, writeFile} from '../adapters/fixtures/world.js';
import {Rng, withSeededCrypto} from './seeded.js';

export interface WorldOptions {
	readonly seed?: number;
	/** Conversations on disk, children included (default 20,000). */
	readonly conversations?: number;
	/** Registry sessions (default 500). */
	readonly sessions?: number;
	/** Project folders the conversations and sessions spread over (default 40). */
	readonly cwds?: number;
	/** Where to make the temp folder (default os.tmpdir()). */
	readonly parentDir?: string;
}

export interface ConversationSpec {
	readonly agent: AgentId;
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly parentId?: string;
	/** The file a new turn is appended to (file-based agents). */
	readonly file?: string;
}

export interface SessionSpec {
	readonly name: string;
	readonly agent: AgentId;
	readonly cwd: string;
	readonly agentSessionId: string | null;
	readonly status: 'running' | 'stopped';
	/** When the session started: a minute before its conversation, or (not pinned yet) after every conversation. */
	readonly epoch: number;
}

export interface BenchWorld {
	readonly seed: number;
	readonly base: string;
	/** The agents' home (HOME of every mam-tui the bench starts). */
	readonly home: string;
	/** MAM_HOME: the registry and the log live here. */
	readonly stateDir: string;
	readonly registryPath: string;
	/** Folders holding the stand-in agent programs (`claude`, `codex`, … → /bin/sleep). */
	readonly binDir: string;
	readonly cwds: readonly string[];
	readonly conversations: readonly ConversationSpec[];
	readonly sessions: readonly SessionSpec[];
	/** The environment a mam-tui of this world runs with (no user TMUX, HERDR_*, agent overrides). */
	env(extra?: Readonly<Record<string, string>>): Record<string, string>;
	/** The argv a pane of `agent` runs: its stand-in program, sleeping. */
	agentCommand(agent: AgentId): readonly string[];
	/** Write the registry: running sessions get the pane `paneOf` gives them. */
	writeRegistry(paneOf: (session: SessionSpec, index: number) => {readonly mux: 'herdr' | 'tmux'; readonly paneId: string} | undefined): void;
	/** Append one turn to a pinned claude conversation's transcript; returns the conversation. */
	appendTurn(conversation: ConversationSpec, at: number): void;
	cleanup(): void;
}

/** Share of conversations per agent (claude and codex dominate real homes). */
const AGENT_WEIGHTS: Readonly<Record<AgentId, number>> = {claude: 35, codex: 20, opencode: 10, gemini: 10, hermes: 10, grok: 10, agy: 5};
/** Every conversation is dated between this anchor minus 180 days and the anchor (fixed: the seed decides). */
const ANCHOR = Date.UTC(2026, 3, 1, 12, 0, 0);
const SPAN_MS = 180 * 86_400_000;
/** One parent in this many gets sub-agent children. */
const CHILD_EVERY = 8;
const PROMPTS = [
	'fix the flaky test',
	'refactor the parser',
	'add a --json flag',
	'explain this stack trace',
	'write the README section',
	'speed up the build',
];

/**
 * Phrases that end the prompt of one conversation each (the agent's `nth` conversation, 1-based,
 * sub-agents not counted): the search bench's quality check asks for `query` and looks for that
 * conversation first. The prompt is still picked (the same draw), so the world is otherwise the same.
 */
export const SEEDED_PHRASES: readonly {readonly agent: AgentId; readonly nth: number; readonly phrase: string; readonly query: string}[] = [
	{agent: 'claude', nth: 7, phrase: 'the ingress returns 502 after the helm upgrade', query: 'helm upgrade 502'},
	{agent: 'claude', nth: 40, phrase: 'migrate the payments webhook to stripe idempotency keys', query: 'stripe idempotency'},
	{agent: 'claude', nth: 90, phrase: 'debounce the autocomplete in the search box', query: 'autocomplete debounce'},
	{agent: 'codex', nth: 7, phrase: 'find the postgres deadlock in the nightly reconciliation job', query: 'postgres deadlock'},
	{agent: 'codex', nth: 60, phrase: 'replace the regex tokenizer with a hand-written lexer', query: 'lexer'},
	{agent: 'opencode', nth: 7, phrase: 'add a dark mode toggle to the settings page with tailwind', query: 'tailwind dark mode'},
	{agent: 'gemini', nth: 7, phrase: 'why does the websocket reconnect loop leak memory', query: 'websocket leak'},
	{agent: 'hermes', nth: 7, phrase: 'rotate the nightly s3 snapshots older than thirty days', query: 's3 snapshots'},
	{agent: 'grok', nth: 7, phrase: 'translate the onboarding emails into portuguese', query: 'portuguese onboarding'},
	{agent: 'agy', nth: 7, phrase: 'read the flamegraph of the image resize service', query: 'flamegraph resize'},
];

/** Project folder names: a few dozen, like a developer's checkouts. */
function cwdNames(count: number, rng: Rng): string[] {
	const words = ['api', 'web', 'cli', 'infra', 'docs', 'sdk', 'bench', 'auth', 'billing', 'search', 'mobile', 'data', 'ml', 'ops', 'site', 'lib'];
	const names = new Set<string>();
	while (names.size < count) names.add(`${rng.pick(words)}-${rng.pick(words)}-${names.size}`);
	return [...names];
}

/** A skewed pick: a few cwds hold most conversations, as in real homes. */
function skewedIndex(rng: Rng, n: number): number {
	return Math.min(n - 1, Math.floor(n * rng.next() ** 2));
}

function agentOrder(rng: Rng): AgentId {
	return AGENT_IDS[rng.weighted(AGENT_IDS.map(a => AGENT_WEIGHTS[a]))] ?? 'claude';
}

function childCountFor(rng: Rng): number {
	return rng.int(CHILD_EVERY) === 0 ? 1 + rng.int(2) : 0;
}

/** Plan every conversation (parents and children) before writing any. */
function planConversations(
	rng: Rng,
	total: number,
	cwds: readonly string[],
): {agent: AgentId; cwd: string; createdAt: number; children: number; grokCli: boolean}[] {
	const plans: {agent: AgentId; cwd: string; createdAt: number; children: number; grokCli: boolean}[] = [];
	let count = 0;
	while (count < total) {
		const agent = agentOrder(rng);
		const grokCli = agent === 'grok' && rng.int(2) === 0;
		// grok-cli keeps no children (FORMATS 7).
		const children = grokCli ? 0 : Math.min(childCountFor(rng), total - count - 1);
		const cwd = cwds[skewedIndex(rng, cwds.length)] ?? '';
		plans.push({agent, cwd, createdAt: ANCHOR - rng.int(SPAN_MS), children, grokCli});
		count += 1 + children;
	}
	return plans;
}

interface Writers {
	readonly home: string;
	readonly rng: Rng;
	readonly out: ConversationSpec[];
	/** Per agent, work that must run once at the end (databases written in one go). */
	readonly finish: (() => void)[];
	/** A prompt for `agent`'s next conversation (one of PROMPTS; a seeded one ends with its phrase). */
	readonly prompt: (agent: AgentId) => string;
}

function claudeWriter({home, rng, out, prompt}: Writers) {
	const projects = path.join(home, '.claude', 'projects');
	return (cwd: string, createdAt: number, children: number) => {
		const id = rng.uuid();
		const dir = path.join(projects, projectSlug(cwd));
		const file = path.join(dir, `${id}.jsonl`);
		writeFile(file, claudeTranscript(id, cwd, createdAt, prompt('claude')));
		out.push({agent: 'claude', id, cwd, createdAt, file});
		for (let i = 0; i < children; i++) {
			const agentId = rng.bytes(9).toString('hex').slice(0, 17);
			const sub = path.join(dir, id, 'subagents', `agent-${agentId}`);
			writeFile(`${sub}.jsonl`, claudeSubagentTranscript(id, agentId, cwd, createdAt + 300 + i));
			writeFile(`${sub}.meta.json`, JSON.stringify({agentType: 'general-purpose', description: 'subtask', toolUseId: `toolu_${i}`, spawnDepth: 1}));
			out.push({agent: 'claude', id: `agent-${agentId}`, cwd, createdAt: createdAt + 300 + i, parentId: id, file: `${sub}.jsonl`});
		}
	};
}

interface CodexThread {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly prompt: string;
	readonly rollout: string;
	readonly parent?: string;
}

function codexWriter({home, out, finish, prompt}: Writers) {
	const root = path.join(home, '.codex');
	const threads: CodexThread[] = [];
	const write = (cwd: string, createdAt: number, prompt: string, parent?: string) => {
		const id = uuidV7(createdAt);
		const rollout = path.join(root, rolloutRelPath(id, createdAt));
		writeFile(rollout, codexRollout({id, cwd, createdAt, prompt, ...(parent ? {parent: {id: parent, depth: 1}} : {})}));
		threads.push({id, cwd, createdAt, prompt, rollout, ...(parent ? {parent} : {})});
		out.push({agent: 'codex', id, cwd, createdAt, file: rollout, ...(parent ? {parentId: parent} : {})});
		return id;
	};
	finish.push(() =>
		writeDb(path.join(root, 'state_5.sqlite'), CODEX_STATE_SCHEMA, db => {
			const insert = db.prepare(
				`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode,
					archived, first_user_message, created_at_ms, updated_at_ms, thread_source, preview, cli_version)
				VALUES (?, ?, ?, ?, ?, 'fake', ?, ?, 'read-only', 'never', 0, ?, ?, ?, ?, ?, '0.171.0')`,
			);
			const edge = db.prepare("INSERT INTO thread_spawn_edges (parent_thread_id, child_thread_id, status) VALUES (?, ?, 'open')");
			for (const t of threads) {
				const source = t.parent ? JSON.stringify({subagent: {thread_spawn: {parent_thread_id: t.parent, depth: 1}}}) : 'exec';
				const secs = Math.floor(t.createdAt / 1000);
				insert.run(
					t.id,
					t.rollout,
					secs,
					secs + 1,
					source,
					t.cwd,
					t.prompt,
					t.prompt,
					t.createdAt,
					t.createdAt + 1000,
					t.parent ? 'subagent' : 'user',
					t.prompt,
				);
				if (t.parent) edge.run(t.parent, t.id);
			}
		}),
	);
	return (cwd: string, createdAt: number, children: number) => {
		const id = write(cwd, createdAt, prompt('codex'));
		for (let i = 0; i < children; i++) write(cwd, createdAt + 300 + i, 'Say hello from the subagent.', id);
	};
}

function opencodeWriter({home, rng, out, finish, prompt}: Writers) {
	const sessions: OcSession[] = [];
	const projects = new Map<string, string>();
	const projectOf = (cwd: string) => {
		let id = projects.get(cwd);
		if (!id) projects.set(cwd, (id = rng.bytes(20).toString('hex')));
		return id;
	};
	finish.push(() => {
		if (sessions.length === 0) return;
		const file = path.join(home, '.local', 'share', 'opencode', 'opencode.db');
		writeOpencodeDb(
			file,
			'v2',
			sessions,
			[...projects].map(([worktree, id]) => ({id, worktree})),
		);
	});
	return (cwd: string, createdAt: number, children: number) => {
		const id = opencodeId();
		sessions.push({id, projectId: projectOf(cwd), directory: cwd, createdAt, title: prompt('opencode'), gen: 'v2'});
		out.push({agent: 'opencode', id, cwd, createdAt});
		for (let i = 0; i < children; i++) {
			const child = opencodeId();
			sessions.push({
				id: child,
				projectId: projectOf(cwd),
				directory: cwd,
				createdAt: createdAt + 300 + i,
				title: 'subtask (@general subagent)',
				gen: 'v2',
				parentId: id,
			});
			out.push({agent: 'opencode', id: child, cwd, createdAt: createdAt + 300 + i, parentId: id});
		}
	};
}

function geminiWriter({home, rng, out, prompt}: Writers) {
	const projects = new Map<string, string>();
	const projectDir = (cwd: string) => {
		let dir = projects.get(cwd);
		if (!dir) projects.set(cwd, (dir = writeGeminiProject(home, path.basename(cwd), cwd)));
		return dir;
	};
	return (cwd: string, createdAt: number, children: number) => {
		const id = rng.uuid();
		const dir = projectDir(cwd);
		const [file] = writeGeminiMain(dir, {id, cwd, createdAt, prompt: prompt('gemini')});
		out.push({agent: 'gemini', id, cwd, createdAt, ...(file ? {file} : {})});
		for (let i = 0; i < children; i++) {
			const child = rng.uuid();
			const childFile = writeGeminiSubagent(dir, id, child, cwd, createdAt + 300 + i);
			out.push({agent: 'gemini', id: child, cwd, createdAt: createdAt + 300 + i, parentId: id, file: childFile});
		}
	};
}

function hermesWriter({home, out, prompt}: Writers) {
	const root = path.join(home, '.hermes');
	let created = false;
	const used = new Set<string>();
	const titles = new Map<string, number>();
	const freshId = (at: number) => {
		for (;;) {
			const id = hermesId(at);
			if (!used.has(id)) {
				used.add(id);
				return id;
			}
		}
	};
	return (cwd: string, createdAt: number, children: number) => {
		if (!created) createHermesStore(root);
		created = true;
		const id = freshId(createdAt);
		// hermes keeps titles unique (a unique index): a repeated prompt gets a number, as hermes numbers them.
		const text = prompt('hermes');
		const seen = titles.get(text) ?? 0;
		titles.set(text, seen + 1);
		insertHermesSession(root, {
			id,
			startedAt: createdAt,
			cwd,
			endedAt: createdAt + 60_000,
			endReason: 'user_exit',
			title: seen === 0 ? text : `${text} #${seen + 1}`,
			// As real hermes keeps it: what the user typed is the first user message (the title is only a label).
			prompt: text,
		});
		out.push({agent: 'hermes', id, cwd, createdAt});
		for (let i = 0; i < children; i++) {
			const at = createdAt + 1000 + i * 1000;
			const child = freshId(at);
			insertHermesSession(root, {
				id: child,
				startedAt: at,
				cwd,
				source: 'subagent',
				parentId: id,
				modelConfig: {_delegate_from: id},
				endedAt: at + 500,
				endReason: 'delegate_done',
			});
			out.push({agent: 'hermes', id: child, cwd, createdAt: at, parentId: id});
		}
	};
}

function grokWriter({home, rng, out, prompt}: Writers) {
	return (cwd: string, createdAt: number, children: number, cli: boolean) => {
		if (cli) {
			const id = grokCliId();
			insertGrokCliSession(home, {id, cwd, createdAt, title: prompt('grok')});
			out.push({agent: 'grok', id, cwd, createdAt});
			return;
		}
		const id = rng.uuid();
		const dir = writeGrokBuildSession(home, {id, cwd, createdAt, title: prompt('grok')});
		out.push({agent: 'grok', id, cwd, createdAt, file: path.join(dir, 'updates.jsonl')});
		for (let i = 0; i < children; i++) {
			const child = rng.uuid();
			const childDir = writeGrokBuildSession(home, {id: child, cwd, createdAt: createdAt + 300 + i, parentId: id});
			out.push({agent: 'grok', id: child, cwd, createdAt: createdAt + 300 + i, parentId: id, file: path.join(childDir, 'updates.jsonl')});
		}
	};
}

function agyWriter({home, rng, out, prompt}: Writers) {
	return (cwd: string, createdAt: number, children: number) => {
		const id = rng.uuid();
		writeAgyConversation(home, {id, workspaces: [cwd], createdAt, title: prompt('agy')});
		out.push({agent: 'agy', id, cwd, createdAt});
		for (let i = 0; i < children; i++) {
			const child = rng.uuid();
			writeAgyConversation(home, {id: child, workspaces: [cwd], createdAt: createdAt + 300 + i, parentId: id, depth: 1, title: 'subtask'});
			out.push({agent: 'agy', id: child, cwd, createdAt: createdAt + 300 + i, parentId: id});
		}
	};
}

/** Sessions over the cwds, pinned (mostly) to a parent conversation of their agent in their cwd. */
function planSessions(rng: Rng, count: number, cwds: readonly string[], conversations: readonly ConversationSpec[]): SessionSpec[] {
	const parents = new Map<string, ConversationSpec[]>();
	for (const c of conversations) {
		if (c.parentId) continue;
		const key = `${c.agent}\0${c.cwd}`;
		parents.set(key, [...(parents.get(key) ?? []), c]);
	}
	const pinned = new Set<string>();
	const sessions: SessionSpec[] = [];
	for (let i = 0; i < count; i++) {
		const agent = agentOrder(rng);
		const cwd = cwds[skewedIndex(rng, cwds.length)] ?? '';
		const free = (parents.get(`${agent}\0${cwd}`) ?? []).filter(c => !pinned.has(c.id));
		// One in ten is not pinned yet (a fresh agent that has not written its conversation).
		const pin = rng.int(10) === 0 || free.length === 0 ? undefined : rng.pick(free);
		if (pin) pinned.add(pin.id);
		const status = rng.int(10) === 0 ? 'stopped' : 'running';
		sessions.push({
			name: `${agent}-${path.basename(cwd)}-${i}`,
			agent,
			cwd,
			agentSessionId: pin?.id ?? null,
			status,
			epoch: pin ? pin.createdAt - 60_000 : ANCHOR,
		});
	}
	return sessions;
}

/** The environment of a child mam-tui: the world's HOME and state, nothing of the user's mux or agents. */
function worldEnv(home: string, stateDir: string, binDir: string, extra: Readonly<Record<string, string>>): Record<string, string> {
	const drop =
		/^(TMUX|TMUX_PANE|HERDR_.*|ENV|BASH_ENV|CLAUDE_CONFIG_DIR|CODEX_HOME|CODEX_SQLITE_HOME|OPENCODE_DB|HERMES_HOME|HERMES_DATA_DIR_SUFFIX|GEMINI_CLI_HOME|HOME_DIR|XDG_.*|MAM_.*|NODE_ENV)$/;
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !drop.test(key)) env[key] = value;
	return {...env, HOME: home, MAM_HOME: stateDir, PATH: `${binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, ...extra};
}

/** Build the world. Takes about a minute for the defaults. */
export function buildWorld(options: WorldOptions = {}): BenchWorld {
	const seed = options.seed ?? 1;
	const rng = new Rng(seed);
	const base = fs.realpathSync(fs.mkdtempSync(path.join(options.parentDir ?? os.tmpdir(), 'mam-bench-')));
	const home = path.join(base, 'home');
	const stateDir = path.join(base, 'state');
	const binDir = path.join(base, 'bin');
	for (const dir of [home, stateDir, binDir]) fs.mkdirSync(dir, {recursive: true});
	const cwds = cwdNames(options.cwds ?? 40, rng).map(name => path.join(base, 'projects', name));
	for (const cwd of cwds) fs.mkdirSync(cwd, {recursive: true});
	// Stand-in agents: `claude` is /bin/sleep under the agent's name (comm and argv[0] say claude).
	const sleep = fs.existsSync('/bin/sleep') ? '/bin/sleep' : '/usr/bin/sleep';
	for (const agent of AGENT_IDS) fs.symlinkSync(sleep, path.join(binDir, agent));

	const conversations: ConversationSpec[] = [];
	withSeededCrypto(rng, () => {
		const drawn = new Map<AgentId, number>();
		const prompt = (agent: AgentId) => {
			const picked = rng.pick(PROMPTS);
			const nth = (drawn.get(agent) ?? 0) + 1;
			drawn.set(agent, nth);
			const seeded = SEEDED_PHRASES.find(p => p.agent === agent && p.nth === nth);
			return seeded ? `${picked}: ${seeded.phrase}` : picked;
		};
		const ctx: Writers = {home, rng, out: conversations, finish: [], prompt};
		const claude = claudeWriter(ctx);
		const codex = codexWriter(ctx);
		const opencode = opencodeWriter(ctx);
		const gemini = geminiWriter(ctx);
		const hermes = hermesWriter(ctx);
		const grok = grokWriter(ctx);
		const agy = agyWriter(ctx);
		for (const plan of planConversations(rng, options.conversations ?? 20_000, cwds)) {
			const write = {claude, codex, opencode, gemini, hermes, agy, grok: (cwd: string, at: number, n: number) => grok(cwd, at, n, plan.grokCli)}[plan.agent];
			write(plan.cwd, plan.createdAt, plan.children);
		}
		for (const done of ctx.finish) done();
	});
	const sessions = planSessions(rng, options.sessions ?? 500, cwds, conversations);
	const registryPath = path.join(stateDir, 'registry.db');

	return {
		seed,
		base,
		home,
		stateDir,
		registryPath,
		binDir,
		cwds,
		conversations,
		sessions,
		env: (extra = {}) => worldEnv(home, stateDir, binDir, extra),
		agentCommand: agent => [path.join(binDir, agent), '2147483647'],
		writeRegistry(paneOf) {
			fs.rmSync(registryPath, {force: true});
			const registry = Registry.open(registryPath);
			try {
				registry.transaction(() => {
					sessions.forEach((s, i) => {
						const pane = s.status === 'running' ? paneOf(s, i) : undefined;
						registry.insert({
							name: s.name,
							agent: s.agent,
							cwd: s.cwd,
							status: s.status,
							epoch: s.epoch,
							agentSessionId: s.agentSessionId,
							mux: pane?.mux ?? null,
							paneId: pane?.paneId ?? null,
						});
					});
				});
			} finally {
				registry.close();
			}
		},
		appendTurn(conversation, at) {
			if (!conversation.file) throw new Error(`${conversation.agent} ${conversation.id} has no file to append to`);
			const common = {userType: 'external', cwd: conversation.cwd, sessionId: conversation.id, version: '2.1.197'};
			fs.appendFileSync(
				conversation.file,
				jsonl([
					{
						parentUuid: null,
						isSidechain: false,
						type: 'user',
						message: {role: 'user', content: 'one more thing'},
						uuid: rng.uuid(),
						timestamp: new Date(at).toISOString(),
						...common,
					},
				]),
			);
		},
		cleanup: () => fs.rmSync(base, {recursive: true, force: true}),
	};
}
