// A stand-in for an agent's TUI, for the demo and the tests. It behaves like an agent in a pane
// (prompt, echo, a graceful exit input) and can misbehave on purpose (ignore the exit input,
// ignore SIGTERM/SIGHUP, leave a child behind) so stop escalation can be shown and tested.
//
// It imports only node: builtins so the tests can transpile this one file on its own; there is
// exactly one implementation, used by both. That is also why it is one file of about 440 lines
// (options, screens, the conversation files it writes, the TUI loop): it is installed and run as
// a single script, so it cannot import siblings.
import {spawn, type ChildProcess} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {fileURLToPath} from 'node:url';

/** How a stand-in behaves. Every switch defaults to a well-behaved agent. */
export interface StandinOptions {
	/** The agent it pretends to be; recorded as argv[0] and used for the artifact format. */
	readonly agent: string;
	/** Lines that end it gracefully. */
	readonly exitInputs: readonly string[];
	/** Print a note and keep running when the exit input arrives. */
	readonly ignoreExit: boolean;
	/** Ignore SIGTERM, SIGHUP and SIGINT, and keep running when the terminal goes away. */
	readonly ignoreSignals: boolean;
	/** Plain child processes to start (they die with the pane, like an MCP server would). */
	readonly children: number;
	/** Also start one child in its own session that ignores SIGHUP and SIGTERM: it outlives a pane close. */
	readonly orphan: boolean;
	/** How long a graceful exit takes (an agent saving its state). */
	readonly exitDelayMs: number;
	/** Append one JSON line per start here: argv, cwd, pid, child pids. */
	readonly recordFile?: string;
	/** Write a conversation artifact in the agent's real format (claude, codex) under this home and keep it open. */
	readonly artifactHome?: string;
	/**
	 * Draw the agent's real status markers (footer, spinner row, approval prompt; claude's record
	 * status, codex's OSC 7501, gemini's title) so the status detectors read idle, working and
	 * blocked from it. A typed line works for `workMs`; a line with `ask` in it then blocks until
	 * `y` is typed.
	 */
	readonly statusScreen?: boolean;
	/** The state it starts in (with statusScreen). */
	readonly startState?: StandinState;
	/** How long a typed line keeps it working (ms). */
	readonly workMs?: number;
	/** With statusScreen: move idle → working → blocked → idle on its own every this many ms (the demo). */
	readonly cycleMs?: number;
}

export type StandinState = 'idle' | 'working' | 'blocked';

export const DEFAULT_STANDIN_OPTIONS: StandinOptions = {
	agent: 'agent',
	exitInputs: ['/exit', '/quit'],
	ignoreExit: false,
	ignoreSignals: false,
	children: 0,
	orphan: false,
	exitDelayMs: 0,
	statusScreen: false,
	startState: 'idle',
	workMs: 3000,
};

/** The env var holding a JSON object of StandinOptions overrides. */
export const STANDIN_OPTIONS_ENV = 'MAM_STANDIN_OPTIONS';
const CHILD_FLAG = '--mam-standin-child=';

/** One line of the record file. */
export interface StandinRecord {
	readonly agent: string;
	readonly argv: readonly string[];
	readonly cwd: string;
	readonly pid: number;
	readonly childPids: readonly number[];
	readonly conversationId?: string;
	readonly artifact?: string;
}

function parseOptions(raw: string | undefined): Partial<StandinOptions> {
	if (!raw) return {};
	try {
		const value: unknown = JSON.parse(raw);
		return value && typeof value === 'object' && !Array.isArray(value) ? (value as Partial<StandinOptions>) : {};
	} catch {
		return {};
	}
}

/** Defaults, then `baked` (written into the installed shim), then the env var. */
export function resolveStandinOptions(baked: Partial<StandinOptions>, env: NodeJS.ProcessEnv): StandinOptions {
	return {...DEFAULT_STANDIN_OPTIONS, ...baked, ...parseOptions(env[STANDIN_OPTIONS_ENV])};
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The conversation id the argv names (`--resume X`, `resume X`, `--session X`, `--session-id X`). */
export function conversationIdFromArgv(args: readonly string[]): string | undefined {
	for (let i = 0; i < args.length - 1; i++) {
		if (['--resume', '-r', 'resume', '--session', '--session-id', '--conversation'].includes(args[i] ?? '')) return args[i + 1];
	}
	return undefined;
}

/** Field 22 of /proc/self/stat: what the real claude writes as `procStart`. */
function ownStartTime(): number | undefined {
	try {
		const stat = fs.readFileSync(`/proc/${process.pid}/stat`, 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return Number(fields[19]);
	} catch {
		return undefined;
	}
}

/** An open conversation file, closed (and its live marker removed) on exit. */
interface Artifact {
	readonly path: string;
	readonly fd: number;
	readonly cleanup: readonly string[];
	/** claude's live record, rewritten with each status change. */
	readonly liveRecord?: {readonly file: string; readonly body: Record<string, unknown>};
}

const RULE = '\u2500'.repeat(60);

/**
 * The rows each real agent draws at the bottom of its UI in each state (agents/screens, the
 * captures the detectors are tested on), shortened. agy and grok: their documented hints.
 */
export function statusRows(agent: string, state: StandinState): string[] {
	switch (agent) {
		case 'claude':
			if (state === 'blocked')
				return [' Bash command', '   echo hello > hello.txt', ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No', ' Esc to cancel · Tab to amend'];
			return [
				...(state === 'working' ? ['✶ Pondering…'] : []),
				RULE,
				'❯\u00a0',
				RULE,
				state === 'working' ? '  esc to interrupt · ← for agents' : '  ? for shortcuts · ← for agents',
			];
		case 'codex':
			if (state === 'blocked')
				return [
					'  Would you like to run the following command?',
					'  $ echo hello > hello.txt',
					'› 1. Yes, proceed (y)',
					'  2. No (esc)',
					'  Press enter to confirm or esc to cancel',
				];
			return [
				...(state === 'working' ? ['• Working (3s • esc to interrupt)', ''] : []),
				'› Ask Codex to do anything',
				'',
				'  stand-in model',
				'  ← for agents · ? for shortcuts',
			];
		case 'opencode':
			if (state === 'blocked') return ['  ┃  △ Permission required', '  ┃    ← Access external directory', '  ┃   Allow once   Allow always   Reject'];
			return [
				'  ┃  Build · Stand-in',
				state === 'working' ? '   ■■⬝⬝⬝⬝⬝⬝  esc interrupt      tab agents  ctrl+p commands' : '   stand-in        ctrl+p commands',
			];
		case 'gemini':
			if (state === 'blocked')
				return ['│ ? Shell  echo hello > hello.txt', '│ Allow execution of [Shell]?', '│ ● 1. Allow once', '│   2. No, suggest changes (esc)'];
			return [
				...(state === 'working' ? [' ⠹ Thinking... (esc to cancel, 2s)'] : []),
				' >   Type your message or @path/to/file',
				' workspace (/directory)     branch     sandbox     /model',
			];
		case 'grok':
			if (state === 'blocked')
				return [
					'  ┃  echo hello > hello.txt',
					'  ┃  2 (○) Yes, proceed',
					'  ┃  3 (○) No, reject (type to add feedback)',
					'',
					'  1/4:select  │  Tab:next option  │  Ctrl+c:cancel',
				];
			return [
				'  ╭────╮',
				'  │ ❯  │',
				'  ╰─ stand-in ─╯',
				'',
				state === 'working' ? '  Shift+Tab:mode  │  Ctrl+c:cancel  │  Ctrl+x:shortcuts' : '  Shift+Tab:mode  │  Ctrl+x:shortcuts',
			];
		case 'hermes': {
			// hermes 0.19.0: status bar, rule, composer, rule; the icon before the prompt tells the state.
			const bar = ` \u2695 stand-in \u2502 12/65.5K \u2502 [\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591] 0% \u2502 1m \u2502 ${state === 'idle' ? '\u23f2 4s \u2502 \u2713 0s' : '\u23f1 2s'}`;
			const prompt =
				state === 'blocked'
					? '\u26a0 \u276f'
					: state === 'working'
						? '\u2695 \u276f msg=interrupt \u00b7 /queue \u00b7 /bg \u00b7 /steer \u00b7 Ctrl+C cancel'
						: '\u276f';
			const dialog =
				state === 'blocked'
					? [
							'\u2502 \u26a0\ufe0f  Dangerous Command \u2502',
							'\u2502 \u276f 1. Allow once      \u2502',
							'\u2502   4. Deny            \u2502',
							'  \u2191/\u2193 to select, Enter to confirm  (57s)',
						]
					: [];
			return [...dialog, bar, RULE, prompt, RULE];
		}
		default:
			if (state === 'blocked') return ['  echo hello > hello.txt', '  Allow? [o]nce, [s]ession, [a]lways, or [d]eny'];
			return state === 'working' ? ['⠋ Thinking (esc to interrupt)'] : ['> '];
	}
}

/** What the agent writes besides its screen when its state changes: codex's OSC 7501, gemini's title. */
function stateSequences(agent: string, state: StandinState): string {
	if (agent === 'codex') return `\x1b]7501;state=${state}:app=codex${state === 'blocked' ? ':kind=permission' : ''}\x07`;
	if (agent === 'gemini') return `\x1b]0;${state === 'blocked' ? '✋  Action Required' : state === 'working' ? '✦  Working…' : '◇  Ready'} (stand-in)\x07`;
	return '';
}

/** claude's `status` word for a state (its sessions/<pid>.json). */
const CLAUDE_STATUS: Record<StandinState, Record<string, string>> = {
	idle: {status: 'idle'},
	working: {status: 'busy'},
	blocked: {status: 'waiting', waitingFor: 'permission prompt'},
};

function claudeArtifact(home: string, env: NodeJS.ProcessEnv, id: string, cwd: string): Artifact {
	const root = env['CLAUDE_CONFIG_DIR'] || path.join(home, '.claude');
	const slug = cwd.replace(/[^A-Za-z0-9]/g, '-');
	const file = path.join(root, 'projects', slug, `${id}.jsonl`);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const fd = fs.openSync(file, 'a');
	const at = new Date().toISOString();
	const base = {isSidechain: false, userType: 'external', cwd, sessionId: id, version: '2.1.197', gitBranch: ''};
	const user = {parentUuid: null, ...base, type: 'user', message: {role: 'user', content: 'hello from the stand-in'}, uuid: crypto.randomUUID(), timestamp: at};
	const reply = {
		parentUuid: user.uuid,
		...base,
		type: 'assistant',
		message: {role: 'assistant', content: [{type: 'text', text: 'hello'}]},
		uuid: crypto.randomUUID(),
		timestamp: at,
	};
	fs.writeSync(fd, `${JSON.stringify(user)}\n${JSON.stringify(reply)}\n`);
	// The real claude keeps sessions/<pid>.json while it runs: the in-use signal adapters read.
	const marker = path.join(root, 'sessions', `${process.pid}.json`);
	fs.mkdirSync(path.dirname(marker), {recursive: true});
	const body = {pid: process.pid, sessionId: id, cwd, procStart: String(ownStartTime() ?? ''), startedAt: Date.now()};
	fs.writeFileSync(marker, JSON.stringify(body));
	return {path: file, fd, cleanup: [marker], liveRecord: {file: marker, body}};
}

function localStamp(date: Date): {day: string[]; stamp: string} {
	const two = (n: number) => String(n).padStart(2, '0');
	const day = [String(date.getFullYear()), two(date.getMonth() + 1), two(date.getDate())];
	return {day, stamp: `${day.join('-')}T${two(date.getHours())}-${two(date.getMinutes())}-${two(date.getSeconds())}`};
}

function codexArtifact(home: string, env: NodeJS.ProcessEnv, id: string, cwd: string): Artifact {
	const root = env['CODEX_HOME'] || path.join(home, '.codex');
	const now = new Date();
	const {day, stamp} = localStamp(now);
	const dir = path.join(root, 'sessions', ...day);
	const existing = fs.existsSync(dir) ? fs.readdirSync(dir).find(name => name.endsWith(`-${id}.jsonl`)) : undefined;
	const file = path.join(dir, existing ?? `rollout-${stamp}-${id}.jsonl`);
	fs.mkdirSync(dir, {recursive: true});
	// Codex keeps its rollout open for append for the whole thread: the in-use signal on Linux.
	const fd = fs.openSync(file, 'a');
	const at = now.toISOString();
	const lines = [
		...(existing
			? []
			: [
					{
						timestamp: at,
						type: 'session_meta',
						payload: {id, session_id: id, timestamp: at, cwd, originator: 'codex_cli_rs', cli_version: '0.171.0', source: 'cli'},
					},
				]),
		{timestamp: at, type: 'response_item', payload: {type: 'message', role: 'user', content: [{type: 'input_text', text: 'hello from the stand-in'}]}},
	];
	fs.writeSync(fd, lines.map(line => `${JSON.stringify(line)}\n`).join(''));
	return {path: file, fd, cleanup: []};
}

function openArtifact(options: StandinOptions, env: NodeJS.ProcessEnv, id: string): Artifact | undefined {
	if (!options.artifactHome) return undefined;
	const cwd = process.cwd();
	if (options.agent === 'claude') return claudeArtifact(options.artifactHome, env, id, cwd);
	if (options.agent === 'codex') return codexArtifact(options.artifactHome, env, id, cwd);
	return undefined;
}

/** A child process: idles until killed; the orphan kind leaves the pane's session and ignores hangups. */
function runChild(kind: string): void {
	if (kind === 'orphan') {
		process.on('SIGHUP', () => {});
		process.on('SIGTERM', () => {});
	}
	setInterval(() => {}, 60_000);
}

function startChildren(options: StandinOptions, script: string): ChildProcess[] {
	const started: ChildProcess[] = [];
	for (let i = 0; i < options.children; i++) {
		started.push(spawn(process.execPath, [script, `${CHILD_FLAG}plain`], {stdio: 'ignore'}));
	}
	if (options.orphan) {
		// detached = setsid(): its own session, so closing the pane's terminal does not reach it.
		started.push(spawn(process.execPath, [script, `${CHILD_FLAG}orphan`], {stdio: 'ignore', detached: true}));
	}
	for (const child of started) child.unref();
	return started;
}

/**
 * `opencode session delete ID` and `hermes sessions delete ID --yes`: the agents' own delete
 * commands, which a purge runs before removing what is left itself. A stand-in keeps no store of
 * its own, so it answers at once (exit 0) instead of opening its TUI on a pipe.
 */
export function isDeleteCommand(args: readonly string[]): boolean {
	return (args[0] === 'session' || args[0] === 'sessions') && args[1] === 'delete';
}

/**
 * The bottom of the real agent's TUI when its composer is empty, drawn above the prompt: a stop
 * reads the pane's screen for the agent's composer before typing its exit input, and types
 * nothing into a screen it does not recognise (a draft there would be sent as a prompt).
 * Only agents whose composer may sit above other rows; codex's must be the last rows.
 * Glyphs are `\u` escapes (the bundle is ASCII only): ─ 2500, ❯ 276f, · 00b7, ← 2190, ┃ 2503,
 * … 2026, ╹ 2579, ▀ 2580.
 */
const EMPTY_COMPOSER: Readonly<Record<string, readonly string[]>> = {
	claude: [RULE, '\u276f\u00a0', RULE, '  ? for shortcuts \u00b7 \u2190 for agents'],
	gemini: [RULE, ' Shift+Tab to accept edits', '', ' >   Type your message or @path/to/file', '', ' workspace (/directory)   branch   sandbox   /model'],
	opencode: ['  \u2503', '  \u2503  Ask anything\u2026 "stand-in"', '  \u2503', '  \u2503  Build \u00b7 Stand-in', `  \u2579${'\u2580'.repeat(40)}`],
};

/**
 * Run the stand-in TUI. `argv` is what the agent was started with (after its own name);
 * `name` is the name it was started under.
 */
export function runStandin(name: string, argv: readonly string[], baked: Partial<StandinOptions> = {}, env: NodeJS.ProcessEnv = process.env): void {
	if (isDeleteCommand(argv)) {
		process.stdout.write(`${name} stand-in: nothing of its own to delete; the purge removes the files and rows\n`);
		return;
	}
	const options = resolveStandinOptions({agent: name, ...baked}, env);
	const script = fileURLToPath(import.meta.url);
	const conversationId = conversationIdFromArgv(argv) ?? (options.agent === 'claude' || options.agent === 'codex' ? crypto.randomUUID() : undefined);
	const children = startChildren(options, script);
	const artifact = conversationId && UUID.test(conversationId) ? openArtifact(options, env, conversationId) : undefined;
	let terminalGone = false;
	// Writing to a closed pane fails with EIO; a stand-in that outlives its terminal must not crash on it.
	process.stdout.on('error', () => {
		terminalGone = true;
	});
	const say = (text: string) => {
		if (!terminalGone) process.stdout.write(text);
	};
	const finish = (code: number) => {
		for (const child of children) {
			try {
				child.kill('SIGKILL');
			} catch {
				// already gone
			}
		}
		if (artifact) {
			fs.closeSync(artifact.fd);
			for (const file of artifact.cleanup) fs.rmSync(file, {force: true});
		}
		process.exit(code);
	};

	// When the pane closes, readline's cleanup (setRawMode) throws EIO from inside node; an agent
	// that survives its terminal must survive that too.
	process.on('uncaughtException', error => {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === 'EIO' || code === 'EPIPE' || code === 'ENXIO' || /\bEIO\b/.test(error.message)) {
			terminalGone = true;
			if (!options.ignoreSignals) finish(129);
			return;
		}
		process.stderr.write(`${name} stand-in crashed: ${error.stack ?? error.message}\n`);
		finish(1);
	});

	if (options.ignoreSignals) {
		for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => say(`\n(${name} stand-in ignores ${signal})\n> `));
	} else {
		process.on('SIGTERM', () => finish(143));
		process.on('SIGHUP', () => finish(129));
	}
	// Keeps the process alive after its terminal closed, when it is meant to survive that.
	const keepAlive = setInterval(() => {}, 60_000);

	const rl = readline.createInterface({input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true, prompt: '> '});
	const composer = EMPTY_COMPOSER[options.agent];
	const prompt = () => {
		if (composer) say(`${composer.join('\n')}\n`);
		rl.prompt();
	};
	rl.on('SIGINT', () => {
		if (options.ignoreSignals) say(`\n(${name} stand-in ignores ctrl+c)\n`);
		else finish(130);
	});
	rl.on('close', () => {
		if (options.ignoreSignals) say(`(${name} stand-in keeps running without input)\n`);
		terminalGone = true;
		if (!options.ignoreSignals) finish(0);
	});
	// The status screen: drawn after every change; the prompt is the screen's last rows.
	let state: StandinState = options.startState ?? 'idle';
	let stateTimer: NodeJS.Timeout | undefined;
	const draw = () => {
		if (!options.statusScreen) return;
		say(`${stateSequences(options.agent, state)}\n${statusRows(options.agent, state).join('\n')}\n`);
		const record = artifact?.liveRecord;
		if (record) {
			try {
				fs.writeFileSync(record.file, JSON.stringify({...record.body, ...CLAUDE_STATUS[state], statusUpdatedAt: Date.now()}));
			} catch {
				// The home went away (a demo being cleaned up): the screen still tells.
			}
		}
	};
	const become = (next: StandinState) => {
		clearTimeout(stateTimer);
		state = next;
		draw();
	};
	if (options.statusScreen) {
		rl.setPrompt('');
		if (options.cycleMs !== undefined && options.cycleMs > 0) {
			const order: readonly StandinState[] = ['idle', 'working', 'blocked'];
			const cycle = setInterval(() => become(order[(order.indexOf(state) + 1) % order.length] ?? 'idle'), options.cycleMs);
			cycle.unref();
		}
	}

	rl.on('line', line => {
		const text = line.trim();
		if (options.statusScreen && !options.exitInputs.includes(text)) {
			if (state === 'blocked' && text !== 'y') {
				draw();
				return;
			}
			if (text.length > 0) say(`${name}: you said ${JSON.stringify(text)}\n`);
			const ask = /\bask\b/.test(text);
			become('working');
			stateTimer = setTimeout(() => become(ask ? 'blocked' : 'idle'), options.workMs ?? 3000);
			return;
		}
		if (options.exitInputs.includes(text)) {
			if (options.ignoreExit) {
				say(`(${name} stand-in ignores ${text})\n`);
				prompt();
				return;
			}
			say(options.exitDelayMs > 0 ? 'saving the conversation…\n' : 'bye\n');
			rl.pause();
			clearInterval(keepAlive);
			setTimeout(() => finish(0), options.exitDelayMs);
			return;
		}
		if (text.length > 0) say(`${name}: you said ${JSON.stringify(text)}\n`);
		prompt();
	});
	// Written last: a record means every handler is in place (tests wait for it before signalling).
	if (options.recordFile) {
		const record: StandinRecord = {
			agent: options.agent,
			argv: [name, ...argv],
			cwd: process.cwd(),
			pid: process.pid,
			childPids: children.map(c => c.pid ?? -1),
			...(conversationId ? {conversationId} : {}),
			...(artifact ? {artifact: artifact.path} : {}),
		};
		fs.appendFileSync(options.recordFile, `${JSON.stringify(record)}\n`);
	}

	say(`${name} stand-in (pid ${process.pid}, mam-tui demo) in ${process.cwd()}\n`);
	if (conversationId) say(`conversation ${conversationId}\n`);
	say(
		`type ${options.exitInputs[0] ?? '/exit'} to quit${options.statusScreen ? '; a line works for a while, a line with "ask" then asks (y approves)' : ''}\n`,
	);
	if (options.statusScreen) {
		draw();
		rl.prompt();
	} else prompt();
}

/** Entry when run as `node standin.js [--mam-standin-child=KIND | args…]`. */
function isEntry(): boolean {
	const entry = process.argv[1];
	if (!entry) return false;
	try {
		return fs.realpathSync(entry) === fs.realpathSync(fileURLToPath(import.meta.url));
	} catch {
		return false;
	}
}

if (isEntry()) {
	const first = process.argv[2] ?? '';
	if (first.startsWith(CHILD_FLAG)) runChild(first.slice(CHILD_FLAG.length));
	else runStandin(path.basename(process.argv[1] ?? 'agent'), process.argv.slice(2));
}
