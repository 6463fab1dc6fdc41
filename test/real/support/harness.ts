import '../../support/sqliteUri.js';
/**
 * The real-agent harness: the real CLIs (claude, codex, opencode, gemini, grok, hermes) driven in a
 * private tmux server, offline, against the stand-in model in `./model.ts`. Tests under
 * `test/real/` run with `npm run test:real` (never with `npm test`). Everything here is generic:
 * a test file brings its own scenario.
 *
 * API (others code against these names):
 *
 * - `installRealClis(): Promise<RealClis>` — the pinned CLIs in the cache folder outside the repo
 *   (`$MAM_REAL_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/mam-tui-real/cli`), installed with npm
 *   when a version is missing; each is started once with `--version`. Throws, naming the CLI and
 *   why, when one cannot be installed or started: the suite never skips.
 *   Result: `{claude, codex, opencode, gemini, grok, hermes}` absolute bin paths, plus `binDir`,
 *   `hermesBinDir` (hermes' venv link, `./installPython.ts`) and `cacheDir`.
 *
 * - `startModel(opts?: {slowMs?, shellCommand?, shellWorkdir?, reply?}): Promise<Model>` — the
 *   stand-in model on 127.0.0.1:<free port>: `{url, port, requests(), configure(opts), close()}`.
 *   Prompt words `SLOW_REPLY`, `SPAWN_SUBAGENT`, `RUN_SHELL` (exported) choose what it does; see
 *   model.ts. `requests()` holds every request (method, path, headers, raw and parsed body, the
 *   last user text) from its arrival on. The test closes it (a world does not).
 *
 * - `makeWorld(model, opts?): Promise<RealWorld>` — a throwaway user: `dir` (temp root) holding
 *   `home` (HOME, XDG_CONFIG_HOME/DATA/STATE/CACHE under it), `tmpdir` (TMPDIR), projects
 *   `alpha` (a git repo with one commit) and `beta` (a plain folder), `registry` (mam-tui's
 *   registry file) and a private tmux server (`tmux -S <tmuxPath>`, kept alive by one idle
 *   `keeper` window). Every agent is configured offline for the model: claude `.claude.json`
 *   (onboarding done, alpha and beta trusted, the API key approved) and `.claude/settings.json`
 *   env; codex `.codex/config.toml` (provider `standin`, both projects trusted,
 *   `[features] daemon_auto_start = false`; approvals left at codex's defaults); opencode
 *   `opencode.jsonc` (provider `standin`); gemini `.gemini/settings.json` (API-key auth) plus
 *   `GEMINI_CLI_TRUST_WORKSPACE=true`; grok `.grok/config.toml` (the model as `stub`, telemetry
 *   off) plus `GROK_DISABLE_AUTOUPDATER=1`, `GROK_TELEMETRY_ENABLED=0`; hermes `.hermes/config.yaml`
 *   (a custom endpoint with a 65536-token window, model catalog, lazy pip installs and tirith off)
 *   and a fresh `.hermes/.update_check`.
 *   - `env`: what a pane in this world has (PATH with the CLI bin folder first, HOME, XDG_*,
 *     TMPDIR, API keys and base URLs, `npm_config_registry` pointed at the model so opencode's
 *     start-up plugin install stays local, and `MAM_REAL_WORLD=<id>`, which marks every process
 *     the world starts so cleanup can find it). The tmux server was started with it, so every
 *     pane in the world (the test's or mam-tui's) has it.
 *   - `tmux(args)`: run `tmux -S <tmuxPath> -f /dev/null ...args` as a client of the world.
 *   - `mamTui(args, opts?)`: the BUILT `dist/bin/cli.js` with `--mux tmux --tmux-path <tmuxPath>
 *     --registry <registry>` in front of `args`, with the world's env (MAM_HOME under the world):
 *     `{exitCode, stdout, stderr}`. Never throws on a non-zero exit.
 *   - `processes()`: every live process the world started (marked env, or argv naming its dir).
 *   - `cleanup()`: kills the tmux server and every process of the world (TERM, then KILL), checks
 *     the process table, removes the temp dir and the agents' litter outside it; throws when a
 *     process survived.
 *
 * - `startTui(world, agent, cwd, args?, opts?: {env?}): Promise<Tui>` — a new window in the
 *   world's tmux server running an interactive shell (`bash --noprofile --norc -i`), into which
 *   the CLI's command line is typed, as a user would (`opts.env` as `VAR=value` in front of it);
 *   resolves once the TUI shows its ready marker ({@link READY}). `Tui`: `{agent, paneId,
 *   shellPid, agentPid(), screen(),
 *   waitForScreen(re, timeoutMs?), typeText(text), sendKeys(...keys), prompt(text),
 *   waitForExit(timeoutMs?), quit(timeoutMs?), processTree(), close()}`. `prompt` types the
 *   text, waits until the TUI drew it, then {@link SUBMIT_PAUSE_MS} (codex and gemini drop an
 *   Enter that follows typed text at once), presses Enter, and presses it once more when the
 *   screen did not change at all within 3 s (a dropped Enter). Tests that measure how a TUI
 *   takes input use `typeText`/`sendKeys` instead. `quit` is Ctrl+U, pause,
 *   {@link EXIT_COMMAND} as a prompt, then waits for the CLI to end.
 *
 * - `attachTui(world, agent, paneId, timeoutMs?): Promise<Tui>` — the same handle for a pane
 *   someone else opened (e.g. `mam-tui resume`); there the pane process may be the agent itself.
 *
 * - `waitForConversation(world, agent, cwd, opts?: {timeoutMs?, exclude?, containing?})` — the
 *   agent's own conversation id for `cwd` once the CLI wrote it to disk (claude
 *   `projects/<slug>/<id>.jsonl`, codex `sessions/**\/rollout-*.jsonl`, opencode `opencode.db`
 *   session rows read-only, gemini `tmp/<short>/chats/session-*.jsonl`, grok
 *   `.grok/sessions/<encoded cwd>/<id>/updates.jsonl`, hermes `.hermes/state.db` `cli` sessions
 *   read-only). Main conversations
 *   only (no sub-agents); `exclude` skips ids a test already knows; `containing` waits until the
 *   conversation's text holds that string (e.g. the model's reply). `conversationsOnDisk` is the
 *   one-shot listing behind it.
 *
 * - `grepHome(world, needle): Promise<string[]>` — every regular file under the world's HOME and
 *   TMPDIR whose bytes contain `needle` (like `grep -a -r -l`), sorted, for purge tests.
 *
 * - Helpers: `processTable()` and `descendants(pid)` (from /proc), `sleep(ms)`, `shellQuote`,
 *   `READY` (each TUI's ready marker), `EXIT_COMMAND`, `SUBMIT_PAUSE_MS`, `MAM_TUI` (the built CLI).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {execa} from 'execa';
import {afterAll, beforeAll} from 'vitest';
import {installRealClis, type RealAgent, type RealClis} from './install.js';
import {seedUpdateCheck} from './installPython.js';
import {startModel, type Model, type ModelOptions} from './model.js';

import {CLI} from '../../helpers/cli.js';

export {installRealClis, REAL_AGENTS, InstallError, type RealAgent, type RealClis} from './install.js';
export {
	startModel,
	SLOW_REPLY,
	SPAWN_SUBAGENT,
	RUN_SHELL,
	DEFAULT_REPLY,
	DEFAULT_SHELL_COMMAND,
	SUBAGENT_TASK,
	type Model,
	type ModelOptions,
	type ModelRequest,
} from './model.js';

/** The built CLI, as users run it (`npm run test:real` builds first). */
export const MAM_TUI = CLI;

/** Between typed text and its Enter: codex and gemini drop an Enter that follows text at once (exit-input.md). */
export const SUBMIT_PAUSE_MS = 300;

/** What each TUI shows once it takes input (plain capture; screens/README.md "Marker summary"). */
export const READY: Readonly<Record<RealAgent, RegExp>> = {
	claude: /\? for shortcuts/,
	codex: /\? for shortcuts/,
	opencode: /ctrl\+p commands/,
	gemini: /Type your message/,
	// The composer box's lower border ends in the configured model's name (`stub`, configureAgents).
	// With a mode on (`always-approve` after such an approval) the border reads `stub · <mode>`.
	grok: /\u2500 stub (\u2500|\u00b7 [a-z-]+)/,
	// The status bar over the composer, drawn once prompt_toolkit takes keys (the banner and
	// `Welcome to Hermes Agent!` come seconds before it). Names the model: the world's `stand-in`.
	hermes: /\u2695 stand-in \u2502/,
};

/** The command each TUI exits on (all four take both; these are the ones their help names first). */
export const EXIT_COMMAND: Readonly<Record<RealAgent, string>> = {
	claude: '/exit',
	codex: '/quit',
	opencode: '/exit',
	gemini: '/quit',
	// Grok Build names `/quit` first and `/exit` as its alias; both exit (measured).
	grok: '/exit',
	hermes: '/quit',
};

/** Grok Build's model: the stand-in under the name `stub` (READY matches it in the composer's border). */
const GROK_MODEL = 'stub';

/** The key claude is told, and the 20-character tail `.claude.json` approves (no key dialog). */
const CLAUDE_KEY = 'sk-ant-standin-0123456789abcdefghij';
const PROMPT_MARK = 'mam-real$ ';

export interface RunResult {
	readonly exitCode: number;
	readonly stdout: string;
	readonly stderr: string;
}

export interface ProcessInfo {
	readonly pid: number;
	readonly ppid: number;
	readonly pgid: number;
	readonly sid: number;
	readonly comm: string;
	/** argv joined by spaces ('' for a zombie or a kernel thread). */
	readonly args: string;
}

export interface WorldOptions {
	/** Pane size (default 120x36, the size the screens were captured at). */
	readonly cols?: number;
	readonly rows?: number;
}

export interface RealWorld {
	readonly id: string;
	readonly dir: string;
	readonly home: string;
	readonly tmpdir: string;
	readonly alpha: string;
	readonly beta: string;
	readonly registry: string;
	readonly tmuxPath: string;
	readonly env: Readonly<Record<string, string>>;
	readonly clis: RealClis;
	readonly model: Model;
	tmux(args: readonly string[]): Promise<RunResult>;
	mamTui(
		args: readonly string[],
		opts?: {readonly timeoutMs?: number; readonly input?: string; readonly env?: Readonly<Record<string, string>>},
	): Promise<RunResult>;
	processes(): ProcessInfo[];
	cleanup(): Promise<void>;
}

export interface Tui {
	readonly agent: RealAgent;
	readonly world: RealWorld;
	readonly cwd: string;
	readonly paneId: string;
	/** The pane's process (tmux's `#{pane_pid}`): the shell for {@link startTui}, maybe the agent itself for {@link attachTui}. */
	readonly shellPid: number;
	/** The CLI (the shell's child, or the pane process when it is no shell), or undefined once it exited. */
	agentPid(): number | undefined;
	/** The pane's visible text (plain capture, no escapes). */
	screen(): Promise<string>;
	/** Poll the screen until it matches; throws with the last screen on timeout (default 30 s). */
	waitForScreen(re: RegExp, timeoutMs?: number): Promise<string>;
	/** Type literally (`send-keys -l`): no Enter. */
	typeText(text: string): Promise<void>;
	/** tmux key names (`Enter`, `Escape`, `C-u`, `y`, …). */
	sendKeys(...keys: string[]): Promise<void>;
	/** Type, wait until drawn, pause {@link SUBMIT_PAUSE_MS}, Enter (again if it was dropped): how each real TUI accepts a prompt. */
	prompt(text: string): Promise<void>;
	/** Wait until the shell has no child any more (the CLI exited); throws on timeout (default 30 s). */
	waitForExit(timeoutMs?: number): Promise<void>;
	/** The shell and every descendant, from /proc. */
	processTree(): ProcessInfo[];
	/** Leave the way a user does: Ctrl+U, the agent's {@link EXIT_COMMAND}, Enter; then {@link waitForExit}. */
	quit(timeoutMs?: number): Promise<void>;
	/** `kill-pane` (tmux hangs the pty up). */
	close(): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** A string a POSIX shell reads back as exactly `arg`. */
export function shellQuote(arg: string): string {
	return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function readProc(pid: number, file: string): string | undefined {
	try {
		return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
	} catch {
		return undefined;
	}
}

function processInfo(pid: number): ProcessInfo | undefined {
	const stat = readProc(pid, 'stat');
	if (!stat) return undefined;
	// comm may hold spaces and parentheses: the fields after it start at the last ')'.
	const close = stat.lastIndexOf(')');
	const comm = stat.slice(stat.indexOf('(') + 1, close);
	const fields = stat.slice(close + 2).split(' ');
	const args = (readProc(pid, 'cmdline') ?? '').split('\0').filter(Boolean).join(' ');
	return {pid, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), comm, args};
}

function allPids(): number[] {
	return fs
		.readdirSync('/proc')
		.filter(name => /^\d+$/.test(name))
		.map(Number);
}

/** Every live process (zombies included), read from /proc. */
export function processTable(): ProcessInfo[] {
	return allPids()
		.map(processInfo)
		.filter((p): p is ProcessInfo => p !== undefined);
}

/** `root` and all its descendants. */
export function descendants(root: number, table = processTable()): ProcessInfo[] {
	const out: ProcessInfo[] = [];
	const queue = [root];
	while (queue.length > 0) {
		const pid = queue.shift() as number;
		const me = table.find(p => p.pid === pid);
		if (me) out.push(me);
		for (const child of table) if (child.ppid === pid && child.pid !== pid) queue.push(child.pid);
	}
	return out;
}

function claudeSlug(cwd: string): string {
	return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

function writeFile(file: string, text: string): void {
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, text);
}

/** Each agent's own offline configuration in `home`, pointed at the model. */
function configureAgents(home: string, model: Model, projects: readonly string[]): void {
	writeFile(
		path.join(home, '.claude.json'),
		`${JSON.stringify(
			{
				hasCompletedOnboarding: true,
				theme: 'dark',
				customApiKeyResponses: {approved: [CLAUDE_KEY.slice(-20)], rejected: []},
				projects: Object.fromEntries(projects.map(p => [p, {hasTrustDialogAccepted: true}])),
			},
			null,
			2,
		)}\n`,
	);
	// settings.json env beats the process env, and claude's background daemon reads only this.
	writeFile(
		path.join(home, '.claude/settings.json'),
		`${JSON.stringify({env: {ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: CLAUDE_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'}}, null, 2)}\n`,
	);
	writeFile(
		path.join(home, '.codex/config.toml'),
		[
			'model = "stand-in"',
			'model_provider = "standin"',
			'',
			'[model_providers.standin]',
			'name = "Stand-in"',
			`base_url = "${model.url}/v1"`,
			'env_key = "STANDIN_API_KEY"',
			'wire_api = "responses"',
			'',
			...projects.flatMap(p => [`[projects.${JSON.stringify(p)}]`, 'trust_level = "trusted"']),
			'',
			// Else the TUI installs a 424 MB app-server daemon that outlives it (REAL.md surprise 2).
			'[features]',
			'daemon_auto_start = false',
			'',
		].join('\n'),
	);
	writeFile(
		path.join(home, '.config/opencode/opencode.jsonc'),
		`${JSON.stringify(
			{
				$schema: 'https://opencode.ai/config.json',
				autoupdate: false,
				share: 'disabled',
				model: 'standin/stand-in',
				small_model: 'standin/stand-in',
				provider: {
					standin: {
						npm: '@ai-sdk/openai-compatible',
						name: 'Stand-in',
						options: {baseURL: `${model.url}/v1`, apiKey: 'standin'},
						models: {'stand-in': {name: 'Stand-in Model'}},
					},
				},
			},
			null,
			2,
		)}\n`,
	);
	// hermes: the stand-in as a custom OpenAI-compatible endpoint (hermes refuses a context
	// window under 64K); the model catalog, runtime pip installs (PyPI is reachable from here) and
	// the tirith download switched off; its update check answered by a fresh cache entry.
	writeFile(
		path.join(home, '.hermes/config.yaml'),
		[
			'model:',
			'  provider: custom',
			`  base_url: ${model.url}/v1`,
			'  default: stand-in',
			'  context_length: 65536',
			'model_catalog:',
			'  enabled: false',
			'security:',
			'  allow_lazy_installs: false',
			'  tirith_enabled: false',
			'',
		].join('\n'),
	);
	seedUpdateCheck(path.join(home, '.hermes'));
	writeFile(
		path.join(home, '.gemini/settings.json'),
		`${JSON.stringify(
			{
				security: {auth: {selectedType: 'gemini-api-key'}},
				general: {enableAutoUpdate: false, enableAutoUpdateNotification: false},
				privacy: {usageStatisticsEnabled: false},
				telemetry: {enabled: false},
			},
			null,
			2,
		)}\n`,
	);
}

/** Grok Build's `config.toml`: the stand-in as its default model, telemetry off (REAL.md, Grok Build 1.0.41). */
function configureGrok(home: string, model: Model): void {
	writeFile(
		path.join(home, '.grok/config.toml'),
		[
			`[model.${GROK_MODEL}]`,
			`base_url = "${model.url}/v1"`,
			'api_key = "dummy"',
			'',
			'[models]',
			`default = "${GROK_MODEL}"`,
			'',
			'[telemetry]',
			'mixpanel_enabled = false',
			'trace_upload = false',
			'',
		].join('\n'),
	);
}

async function git(cwd: string, args: readonly string[]): Promise<void> {
	await execa('git', ['-c', 'user.email=real@mam-tui.test', '-c', 'user.name=mam-tui real', '-c', 'init.defaultBranch=main', ...args], {cwd, stdin: 'ignore'});
}

/**
 * The PATH a user's shell would have: ours without the `node_modules/.bin` folders npm puts in
 * front while it runs a script (a pane must not find the repository's tools).
 */
function userPath(): string[] {
	const parts = (process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin').split(':');
	return parts.filter(
		part => part !== '' && !part.endsWith(`${path.sep}node_modules${path.sep}.bin`) && !part.includes(`${path.sep}node_modules${path.sep}npm${path.sep}`),
	);
}

/** Processes of one world: its marker in their environment, or its folder in their argv. */
function worldProcesses(id: string, dir: string): ProcessInfo[] {
	const marker = `MAM_REAL_WORLD=${id}\0`;
	const self = new Set([process.pid, process.ppid]);
	return processTable().filter(p => !self.has(p.pid) && ((readProc(p.pid, 'environ') ?? '').includes(marker) || p.args.includes(dir)));
}

/**
 * Whether a file a world's process mapped is litter to delete at cleanup: a file right in /tmp,
 * where Bun-built CLIs extract native libraries although TMPDIR points into the world (REAL.md
 * surprise 9). Never a file in a folder there: the CLIs themselves may be installed under /tmp
 * (`XDG_CACHE_HOME=$(mktemp -d)`), and deleting a mapped opencode binary broke every later test.
 */
export function isTmpLitter(file: string, tmp = os.tmpdir()): boolean {
	return path.dirname(file) === tmp && !file.endsWith(' (deleted)');
}

function mappedTmpFiles(pids: readonly number[]): Set<string> {
	const found = new Set<string>();
	for (const pid of pids) {
		for (const line of (readProc(pid, 'maps') ?? '').split('\n')) {
			if (!line.includes('/')) continue;
			const file = line.slice(line.indexOf('/'));
			if (isTmpLitter(file)) found.add(file);
		}
	}
	return found;
}

async function killAll(id: string, dir: string, litter: Set<string>): Promise<ProcessInfo[]> {
	for (let round = 0; round < 3; round++) {
		const alive = worldProcesses(id, dir);
		if (alive.length === 0) return [];
		for (const file of mappedTmpFiles(alive.map(p => p.pid))) litter.add(file);
		const signal = round === 0 ? 'SIGTERM' : 'SIGKILL';
		for (const p of alive) {
			try {
				process.kill(p.pid, signal);
			} catch {
				// already gone
			}
		}
		for (let i = 0; i < 30 && worldProcesses(id, dir).some(p => readProc(p.pid, 'stat')?.includes(') Z') !== true); i++) await sleep(100);
	}
	return worldProcesses(id, dir).filter(p => readProc(p.pid, 'stat')?.includes(') Z') !== true);
}

/** The model and world of one describe block (`useRealWorld`); read them inside hooks and tests. */
export interface RealWorldUse {
	readonly model: Model;
	readonly world: RealWorld;
}

export interface UseRealWorldOptions {
	/** The stand-in model's options, or a function giving them when the block starts. */
	readonly model?: ModelOptions | (() => ModelOptions);
	readonly world?: WorldOptions;
	/** Runs after the world is cleaned up and the model closed. */
	readonly after?: () => void | Promise<void>;
}

/**
 * One stand-in model and one world for the enclosing describe block: started in its beforeAll,
 * cleaned up (every process killed, every file removed) and closed in its afterAll, even when a
 * test failed half-way. Every real test file starts this way.
 */
export function useRealWorld(options: UseRealWorldOptions = {}): RealWorldUse {
	let model: Model | undefined;
	let world: RealWorld | undefined;
	beforeAll(async () => {
		model = await startModel(typeof options.model === 'function' ? options.model() : options.model);
		world = await makeWorld(model, options.world);
	});
	afterAll(async () => {
		await world?.cleanup();
		await model?.close();
		await options.after?.();
	});
	return {
		get model() {
			if (!model) throw new Error('useRealWorld: the model is read before its beforeAll ran');
			return model;
		},
		get world() {
			if (!world) throw new Error('useRealWorld: the world is read before its beforeAll ran');
			return world;
		},
	};
}

/** A throwaway user with the four agents configured for `model` and a private tmux server. */
export async function makeWorld(model: Model, opts: WorldOptions = {}): Promise<RealWorld> {
	const clis = await installRealClis();
	if (!fs.existsSync(MAM_TUI)) throw new Error(`${MAM_TUI} is missing: run \`npm run build\` (npm run test:real does)`);
	const id = crypto.randomBytes(5).toString('hex');
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-')));
	const home = path.join(dir, 'home');
	const tmpdir = path.join(dir, 'tmp');
	const alpha = path.join(dir, 'projects', 'alpha');
	const beta = path.join(dir, 'projects', 'beta');
	const mamHome = path.join(dir, 'mam');
	const registry = path.join(mamHome, 'registry.db');
	const tmuxPath = path.join(dir, 'tmux.sock');
	for (const d of [home, tmpdir, alpha, beta, mamHome]) fs.mkdirSync(d, {recursive: true});
	await git(alpha, ['init', '-q', '.']);
	await git(alpha, ['commit', '-q', '--allow-empty', '-m', 'init']);
	writeFile(path.join(beta, 'README.md'), '# beta\n');
	configureAgents(home, model, [alpha, beta]);
	configureGrok(home, model);
	const env: Record<string, string> = {
		PATH: [clis.binDir, clis.hermesBinDir, ...userPath()].join(':'),
		HOME: home,
		USER: process.env['USER'] ?? 'root',
		LOGNAME: process.env['LOGNAME'] ?? process.env['USER'] ?? 'root',
		SHELL: '/bin/bash',
		LANG: 'C.UTF-8',
		XDG_CONFIG_HOME: path.join(home, '.config'),
		XDG_DATA_HOME: path.join(home, '.local/share'),
		XDG_STATE_HOME: path.join(home, '.local/state'),
		XDG_CACHE_HOME: path.join(home, '.cache'),
		TMPDIR: tmpdir,
		MAM_REAL_WORLD: id,
		ANTHROPIC_BASE_URL: model.url,
		ANTHROPIC_API_KEY: CLAUDE_KEY,
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
		DISABLE_AUTOUPDATER: '1',
		STANDIN_API_KEY: 'standin',
		GEMINI_API_KEY: 'standin',
		GOOGLE_GEMINI_BASE_URL: model.url,
		GEMINI_CLI_TRUST_WORKSPACE: 'true',
		OPENCODE_DISABLE_AUTOUPDATE: '1',
		OPENCODE_DISABLE_MODELS_FETCH: '1',
		OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
		GROK_DISABLE_AUTOUPDATER: '1',
		GROK_TELEMETRY_ENABLED: '0',
		NO_UPDATE_NOTIFIER: '1',
		// opencode installs its plugin packages with npm at start: the registry is the model,
		// which answers 404, so nothing leaves 127.0.0.1 (opencode carries on without them).
		npm_config_registry: `${model.url}/npm-registry/`,
	};
	const tmux = async (args: readonly string[]): Promise<RunResult> => {
		const r = await execa('tmux', ['-u', '-S', tmuxPath, '-f', '/dev/null', ...args], {env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 15_000});
		return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)};
	};
	const cols = opts.cols ?? 120;
	const rows = opts.rows ?? 36;
	// The server copies this client's environment: every pane, ours or mam-tui's, gets `env`.
	const started = await tmux([
		'new-session',
		'-d',
		'-s',
		'world',
		'-n',
		'keeper',
		'-x',
		String(cols),
		'-y',
		String(rows),
		'-c',
		dir,
		'--',
		'tail',
		'-f',
		'/dev/null',
	]);
	if (started.exitCode !== 0) {
		fs.rmSync(dir, {recursive: true, force: true});
		throw new Error(`tmux did not start: ${started.stderr.trim()}`);
	}
	await tmux(['set-option', '-g', 'default-terminal', 'tmux-256color']);
	await tmux(['set-option', '-g', 'default-size', `${cols}x${rows}`]);
	await tmux(['set-option', '-g', 'history-limit', '5000']);
	let cleaned = false;
	const world: RealWorld = {
		id,
		dir,
		home,
		tmpdir,
		alpha,
		beta,
		registry,
		tmuxPath,
		env,
		clis,
		model,
		tmux,
		async mamTui(args, runOpts = {}) {
			const r = await execa(MAM_TUI, ['--mux', 'tmux', '--tmux-path', tmuxPath, '--registry', registry, ...args], {
				env: {...env, MAM_HOME: mamHome, NO_COLOR: '1', ...runOpts.env},
				extendEnv: false,
				reject: false,
				input: runOpts.input ?? '',
				timeout: runOpts.timeoutMs ?? 60_000,
				cwd: dir,
			});
			return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)};
		},
		processes: () => worldProcesses(id, dir),
		async cleanup() {
			if (cleaned) return;
			cleaned = true;
			await tmux(['kill-server']);
			const litter = new Set<string>();
			const survivors = await killAll(id, dir, litter);
			for (const file of litter) fs.rmSync(file, {force: true});
			// claude keeps per-session task folders in /tmp/claude-<uid>/<slug> whatever TMPDIR says.
			for (const project of [alpha, beta])
				fs.rmSync(path.join(os.tmpdir(), `claude-${process.getuid?.() ?? 0}`, claudeSlug(project)), {recursive: true, force: true});
			fs.rmSync(dir, {recursive: true, force: true});
			if (survivors.length > 0) throw new Error(`world ${id}: processes survived SIGKILL:\n${survivors.map(p => `${p.pid} ${p.comm} ${p.args}`).join('\n')}`);
		},
	};
	return world;
}

/** Poll `check` every 100 ms until it holds (true) or `timeoutMs` passed (false). */
async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		if (await check()) return true;
		if (Date.now() > deadline) return false;
		await sleep(100);
	}
}

async function capture(world: RealWorld, paneId: string): Promise<string> {
	const r = await world.tmux(['capture-pane', '-p', '-t', paneId]);
	if (r.exitCode !== 0) throw new Error(`capture-pane ${paneId}: ${r.stderr.trim()}`);
	return r.stdout;
}

async function waitForScreenOf(world: RealWorld, paneId: string, re: RegExp, timeoutMs: number, what: string): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	let last = '';
	while (Date.now() < deadline) {
		last = await capture(world, paneId).catch((error: unknown) => `(${String(error)})`);
		if (re.test(last)) return last;
		await sleep(200);
	}
	throw new Error(`${what}: the screen did not match ${re} within ${timeoutMs} ms; it showed:\n${last}`);
}

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh']);

/** A {@link Tui} over a pane that already runs `agent` (a shell's child, or the pane process itself). */
function tuiOf(world: RealWorld, agent: RealAgent, paneId: string, panePid: number, cwd: string): Tui {
	const send = async (keys: readonly string[]) => {
		const r = await world.tmux(['send-keys', '-t', paneId, ...keys]);
		if (r.exitCode !== 0) throw new Error(`send-keys ${paneId}: ${r.stderr.trim()}`);
	};
	const agentPid = () => {
		const table = processTable();
		const pane = table.find(p => p.pid === panePid);
		if (!pane || pane.args === '') return undefined;
		return SHELLS.has(pane.comm) ? table.find(p => p.ppid === panePid)?.pid : pane.pid;
	};
	const tui: Tui = {
		agent,
		world,
		cwd,
		paneId,
		shellPid: panePid,
		agentPid,
		screen: () => capture(world, paneId),
		waitForScreen: (re, timeoutMs = 30_000) => waitForScreenOf(world, paneId, re, timeoutMs, `${agent} in ${paneId}`),
		typeText: text => send(['-l', text]),
		sendKeys: (...keys) => send(keys),
		async prompt(text) {
			await send(['-l', text]);
			// The pause counts from when the TUI drew the text, not from when tmux sent it: on a
			// loaded machine the TUI may take longer than the pause to read what was typed.
			await waitUntil(async () => (await capture(world, paneId).catch(() => '')).includes(text.slice(-16)), 5000);
			await sleep(SUBMIT_PAUSE_MS);
			const before = await capture(world, paneId).catch(() => '');
			await send(['Enter']);
			// An Enter the TUI dropped leaves the screen exactly as it was; one more Enter submits.
			// (A submitted prompt always redraws: spinner, transcript, or the menu it opened.)
			// A pane that is gone (its agent exited on this Enter) counts as redrawn.
			const redrawn = await waitUntil(async () => (await capture(world, paneId).catch(() => '\0gone')) !== before, 3000);
			if (!redrawn) await send(['Enter']);
		},
		async waitForExit(timeoutMs = 30_000) {
			const deadline = Date.now() + timeoutMs;
			while (agentPid() !== undefined) {
				if (Date.now() > deadline) throw new Error(`${agent} in ${paneId} still runs after ${timeoutMs} ms:\n${await capture(world, paneId).catch(() => '')}`);
				await sleep(200);
			}
		},
		async quit(timeoutMs = 30_000) {
			// Every process of the agent's tree, not only the pane's child: opencode's binary can
			// still be exiting (its folder already unreadable, so a purge rightly counts it as in
			// use) after the launcher it was started by has gone.
			const tree = descendants(panePid).filter(p => p.pid !== panePid);
			// The sequence exit-input.md measured 36 of 36: clear the composer, the command, Enter.
			await send(['C-u']);
			await sleep(SUBMIT_PAUSE_MS);
			await tui.prompt(EXIT_COMMAND[agent]);
			await tui.waitForExit(timeoutMs);
			// A resident helper may outlive it on purpose (a shared server): wait a while, then go on.
			const deadline = Date.now() + 10_000;
			const running = () => processTable().some(p => p.args !== '' && tree.some(t => t.pid === p.pid && t.comm === p.comm));
			while (running() && Date.now() < deadline) await sleep(200);
		},
		processTree: () => descendants(panePid),
		async close() {
			await world.tmux(['kill-pane', '-t', paneId]);
		},
	};
	return tui;
}

export interface StartTuiOptions {
	/** Variables for this CLI only, typed in front of its name (`CLAUDE_CONFIG_DIR=… claude`). */
	readonly env?: Readonly<Record<string, string>>;
}

/** Open a window running a shell, type the CLI's command line, wait for its ready marker. */
export async function startTui(world: RealWorld, agent: RealAgent, cwd: string, args: readonly string[] = [], opts: StartTuiOptions = {}): Promise<Tui> {
	const opened = await world.tmux([
		'new-window',
		'-d',
		'-P',
		'-F',
		'#{pane_id} #{pane_pid}',
		'-n',
		agent,
		'-c',
		cwd,
		'-e',
		`PS1=${PROMPT_MARK}`,
		'--',
		'bash',
		'--noprofile',
		'--norc',
		'-i',
	]);
	const [paneId = '', pid = ''] = opened.stdout.trim().split(' ');
	if (opened.exitCode !== 0 || !/^%\d+$/.test(paneId)) throw new Error(`tmux new-window failed: ${opened.stderr.trim()}`);
	const tui = tuiOf(world, agent, paneId, Number(pid), cwd);
	await waitForScreenOf(world, paneId, /mam-real\$/, 15_000, `the shell in ${paneId}`);
	const assignments = Object.entries(opts.env ?? {}).map(([key, value]) => {
		if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`not an environment variable name: ${JSON.stringify(key)}`);
		return `${key}=${shellQuote(value)}`;
	});
	await tui.typeText([...assignments, ...[agent, ...args].map(shellQuote)].join(' '));
	await tui.sendKeys('Enter');
	await tui.waitForScreen(READY[agent], 60_000);
	return tui;
}

/**
 * A {@link Tui} for a pane someone else opened in the world (e.g. `mam-tui resume`), once the
 * agent in it shows its ready marker. Throws when the pane does not exist.
 */
export async function attachTui(world: RealWorld, agent: RealAgent, paneId: string, timeoutMs = 60_000): Promise<Tui> {
	const r = await world.tmux(['display-message', '-p', '-t', paneId, '#{pane_id} #{pane_pid} #{pane_current_path}']);
	const [id = '', pid = '', ...cwd] = r.stdout.trim().split(' ');
	if (r.exitCode !== 0 || id !== paneId) throw new Error(`no pane ${paneId} in world ${world.id}: ${r.stderr.trim()}`);
	const tui = tuiOf(world, agent, paneId, Number(pid), cwd.join(' '));
	await tui.waitForScreen(READY[agent], timeoutMs);
	return tui;
}

export interface DiskConversation {
	readonly id: string;
	/** The files (or the database) holding it. */
	readonly files: readonly string[];
	/** Its text as stored (jsonl lines, or the opencode rows' JSON), to look for a prompt or reply. */
	readonly text: string;
}

function readLines(file: string): string[] {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
	} catch {
		return [];
	}
}

function parseLine(line: string | undefined): Record<string, unknown> | undefined {
	try {
		const value = line ? (JSON.parse(line) as unknown) : undefined;
		return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
	} catch {
		return undefined;
	}
}

function walkFiles(root: string, keep: (file: string) => boolean, out: string[] = []): string[] {
	let entries: fs.Dirent[];
	try {
		entries = fs.readdirSync(root, {withFileTypes: true});
	} catch {
		return out;
	}
	for (const entry of entries) {
		const full = path.join(root, entry.name);
		if (entry.isDirectory()) walkFiles(full, keep, out);
		else if (entry.isFile() && keep(full)) out.push(full);
	}
	return out;
}

function claudeConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const dir = path.join(world.home, '.claude/projects', claudeSlug(cwd));
	return walkFiles(dir, f => path.dirname(f) === dir && /^[0-9a-f-]{36}\.jsonl$/.test(path.basename(f))).map(file => ({
		id: path.basename(file, '.jsonl'),
		files: [file],
		text: fs.readFileSync(file, 'utf8'),
	}));
}

function codexConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const out: DiskConversation[] = [];
	for (const file of walkFiles(path.join(world.home, '.codex/sessions'), f => /rollout-.*\.jsonl$/.test(f))) {
		const meta = parseLine(readLines(file)[0]);
		const payload = meta?.['type'] === 'session_meta' ? (meta['payload'] as Record<string, unknown> | undefined) : undefined;
		if (!payload || payload['cwd'] !== cwd || typeof payload['id'] !== 'string') continue;
		// A sub-agent's rollout names its parent; only main conversations count.
		if (payload['parent_thread_id'] || typeof payload['source'] === 'object') continue;
		out.push({id: payload['id'], files: [file], text: fs.readFileSync(file, 'utf8')});
	}
	return out;
}

function opencodeConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const file = path.join(world.env['XDG_DATA_HOME'] ?? path.join(world.home, '.local/share'), 'opencode/opencode.db');
	if (!fs.existsSync(file)) return [];
	// Read-only: a read-write open checkpoints opencode's -wal, which holds its data (REAL.md surprise 1).
	let db: Database.Database | undefined;
	try {
		db = new Database(file, {readonly: true, fileMustExist: true, timeout: 2000});
		const sessions = db.prepare('SELECT id FROM session WHERE directory = ? AND parent_id IS NULL ORDER BY time_created').all(cwd) as Array<{id: string}>;
		const parts = db.prepare('SELECT data FROM part WHERE session_id = ? ORDER BY id');
		const messages = db.prepare('SELECT data FROM message WHERE session_id = ? ORDER BY id');
		return sessions.map(({id}) => {
			const rows = [...(messages.all(id) as Array<{data: string}>), ...(parts.all(id) as Array<{data: string}>)];
			return {id, files: [file], text: rows.map(r => r.data).join('\n')};
		});
	} catch {
		// The schema is not there yet (opencode is still creating it): nothing to list.
		return [];
	} finally {
		db?.close();
	}
}

function hermesConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const file = path.join(world.home, '.hermes/state.db');
	if (!fs.existsSync(file)) return [];
	// Read-only, as for opencode: a read-write open would checkpoint hermes' -wal.
	let db: Database.Database | undefined;
	try {
		db = new Database(file, {readonly: true, fileMustExist: true, timeout: 2000});
		const sessions = db
			.prepare("SELECT id FROM sessions WHERE cwd = ? AND parent_session_id IS NULL AND source = 'cli' ORDER BY started_at")
			.all(cwd) as Array<{id: string}>;
		const messages = db.prepare('SELECT role, content FROM messages WHERE session_id = ? ORDER BY id');
		return sessions.map(({id}) => ({
			id,
			files: [file],
			text: (messages.all(id) as Array<{role: string; content: string | null}>).map(m => `${m.role}: ${m.content ?? ''}`).join('\n'),
		}));
	} catch {
		// The schema is not there yet (hermes is still creating it): nothing to list.
		return [];
	} finally {
		db?.close();
	}
}

function geminiConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const tmp = path.join(world.home, '.gemini/tmp');
	const byId = new Map<string, {files: string[]; text: string}>();
	let shorts: string[];
	try {
		shorts = fs.readdirSync(tmp);
	} catch {
		return [];
	}
	for (const short of shorts) {
		let root: string;
		try {
			root = fs.readFileSync(path.join(tmp, short, '.project_root'), 'utf8').trim();
		} catch {
			continue;
		}
		if (root !== cwd) continue;
		const chats = path.join(tmp, short, 'chats');
		for (const file of walkFiles(chats, f => path.dirname(f) === chats && /^session-.*\.jsonl$/.test(path.basename(f)))) {
			const header = parseLine(readLines(file)[0]);
			const id = header?.['sessionId'];
			if (typeof id !== 'string' || (header?.['kind'] !== undefined && header['kind'] !== 'main')) continue;
			const entry = byId.get(id) ?? {files: [], text: ''};
			entry.files.push(file);
			entry.text += fs.readFileSync(file, 'utf8');
			byId.set(id, entry);
		}
	}
	return [...byId].map(([id, entry]) => ({id, files: entry.files, text: entry.text}));
}

/**
 * Grok Build: `.grok/sessions/<encodeURIComponent(cwd)>/<uuid>/`, the cwd in summary.json
 * `info.cwd`; sub-agents (`session_kind` subagent*) are not main conversations. Its text is
 * updates.jsonl (prompts and replies).
 */
function grokConversations(world: RealWorld, cwd: string): DiskConversation[] {
	const group = path.join(world.home, '.grok/sessions', encodeURIComponent(cwd));
	let names: string[];
	try {
		names = fs.readdirSync(group).filter(n => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(n));
	} catch {
		return [];
	}
	const out: DiskConversation[] = [];
	for (const id of names) {
		const summary = parseLine(readLines(path.join(group, id, 'summary.json')).join(''));
		if (String(summary?.['session_kind'] ?? '').startsWith('subagent')) continue;
		const updates = path.join(group, id, 'updates.jsonl');
		out.push({id, files: [path.join(group, id)], text: readLines(updates).join('\n')});
	}
	return out;
}

/** The agent's main conversations for `cwd` as they are on disk now. */
export function conversationsOnDisk(world: RealWorld, agent: RealAgent, cwd: string): DiskConversation[] {
	switch (agent) {
		case 'claude':
			return claudeConversations(world, cwd);
		case 'codex':
			return codexConversations(world, cwd);
		case 'opencode':
			return opencodeConversations(world, cwd);
		case 'gemini':
			return geminiConversations(world, cwd);
		case 'grok':
			return grokConversations(world, cwd);
		case 'hermes':
			return hermesConversations(world, cwd);
	}
}

export interface WaitConversationOptions {
	/** Default 30 s. */
	readonly timeoutMs?: number;
	/** Ids to ignore (conversations the test already knows). */
	readonly exclude?: readonly string[];
	/** Wait until the conversation's stored text contains this (a prompt, the model's reply). */
	readonly containing?: string;
}

/**
 * `mam-tui purge ARGS --yes`, asked again for up to 20 s while its only refusal is an agent
 * process whose folder cannot be read. Another test file's opencode can take seconds to exit
 * with its folder already gone; until then the purge rightly counts it as on any conversation
 * and deletes nothing. A user's answer is the same: try again once it is gone.
 */
export async function purgeOnceSettled(world: RealWorld, args: readonly string[]): Promise<{exitCode: number; stdout: string; stderr: string}> {
	const deadline = Date.now() + 20_000;
	for (;;) {
		const run = await world.mamTui(['purge', ...args, '--yes']);
		const unsure = /process whose folder cannot be read could be on any conversation; nothing was deleted/.test(run.stdout + run.stderr);
		if (run.exitCode === 0 || !unsure || Date.now() > deadline) return run;
		await sleep(1000);
	}
}

/** The agent's own id of the (one new) conversation in `cwd`, once it is on disk. */
export async function waitForConversation(world: RealWorld, agent: RealAgent, cwd: string, opts: WaitConversationOptions = {}): Promise<string> {
	const timeoutMs = opts.timeoutMs ?? 30_000;
	const deadline = Date.now() + timeoutMs;
	let seen: DiskConversation[] = [];
	for (;;) {
		seen = conversationsOnDisk(world, agent, cwd).filter(c => !(opts.exclude ?? []).includes(c.id));
		const match = seen.filter(c => opts.containing === undefined || c.text.includes(opts.containing));
		if (match.length > 1) throw new Error(`${agent} in ${cwd}: ${match.length} new conversations (${match.map(c => c.id).join(', ')}); pass exclude`);
		if (match.length === 1) return (match[0] as DiskConversation).id;
		if (Date.now() > deadline) break;
		await sleep(250);
	}
	throw new Error(
		`${agent} wrote no conversation in ${cwd}${opts.containing ? ` containing ${JSON.stringify(opts.containing)}` : ''} within ${timeoutMs} ms (saw: ${seen.map(c => c.id).join(', ') || 'none'})`,
	);
}

/** Every regular file under mam-tui's state folder ($MAM_HOME: registry, trash, search index) whose bytes contain `needle`. */
export async function grepMamHome(world: RealWorld, needle: string): Promise<string[]> {
	const wanted = Buffer.from(needle, 'utf8');
	const hits: string[] = [];
	for (const file of walkFiles(path.join(world.dir, 'mam'), () => true)) {
		try {
			if ((await fs.promises.readFile(file)).includes(wanted)) hits.push(file);
		} catch {
			// vanished while we walked
		}
	}
	return hits.sort();
}

/** Every regular file under HOME and TMPDIR whose bytes contain `needle`. */
export async function grepHome(world: RealWorld, needle: string): Promise<string[]> {
	const wanted = Buffer.from(needle, 'utf8');
	const hits: string[] = [];
	for (const root of [world.home, world.tmpdir]) {
		for (const file of walkFiles(root, () => true)) {
			try {
				if ((await fs.promises.readFile(file)).includes(wanted)) hits.push(file);
			} catch {
				// vanished while we walked: it holds nothing any more
			}
		}
	}
	return hits.sort();
}
