// `npm run bench`: how mam-tui holds up with hundreds of sessions. Builds a seeded world (20,000
// conversations in every agent's format, 500 registry sessions, 500 fake-herdr panes, a private
// tmux server with 100 panes), measures cold start, `status --json`, key latency, refresh cost,
// idle CPU and peak RSS, prints a table with each target, and writes bench-results.json.
//
//   npm run bench [-- --quick] [-- --seed N --conversations N --sessions N --runs N --keep]
//   npm run bench -- --serve   builds the world, prints its environment and waits (for profiling by hand)
//   npm run bench -- --only cli|tmux|live|search|park|remote   one group of measurements (the bench then fails only on those; park builds no world)
//   (remote: three hosts over loopback ssh, test/bench/remote.ts; needs root and /usr/sbin/sshd, else it is left out)
import {fork, spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {parseArgs} from 'node:util';
import {privateTmux, type PrivateTmux} from '../support/privateTmux.js';
import type {PanePlan} from './herdrHost.js';
import type {HerdrCounter} from './inProcess.js';
import {cpuSeconds, sleep, statusKb, summarize, waitFor, waitForQuiet, type Summary} from './stats.js';
import {buildWorld, type BenchWorld} from './world.js';
import {parseMemoPath} from '../../src/system/parseMemo.js';
import {measureAutoPark} from './autoPark.js';
import {measureRemote} from './remote.js';
import {sshdAvailable} from '../remote/support/sshd.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** What users run: package.json's bin, the bundle `npm run build` makes. */
const CLI = path.join(ROOT, 'dist', 'bin', 'cli.js');
/** When V8's post-start heap shrink is over (see the idle measurement). */
const POST_START_GC_MS = 40_000;
const FLOOR = path.join(ROOT, 'test', 'bench', 'floor.mjs');
const RESULTS = path.join(ROOT, 'bench-results.json');

const {values: options} = parseArgs({
	options: {
		quick: {type: 'boolean'},
		seed: {type: 'string'},
		conversations: {type: 'string'},
		sessions: {type: 'string'},
		'tmux-panes': {type: 'string'},
		runs: {type: 'string'},
		'idle-seconds': {type: 'string'},
		keep: {type: 'boolean'},
		serve: {type: 'boolean'},
		only: {type: 'string'},
	},
	strict: true,
});
const quick = options.quick === true;
const GROUPS = ['cli', 'tmux', 'live', 'search', 'park', 'remote'] as const;
if (options.only !== undefined && !(GROUPS as readonly string[]).includes(options.only)) throw new Error(`--only takes one of ${GROUPS.join(', ')}`);
/** Does this run measure `group` (status, cold start and idle; the tmux refresh and idle; the in-process refresh and keys)? */
const measures = (group: (typeof GROUPS)[number]): boolean => options.only === undefined || options.only === group;
const config = {
	seed: Number(options.seed ?? 1),
	conversations: Number(options.conversations ?? (quick ? 2_000 : 20_000)),
	sessions: Number(options.sessions ?? (quick ? 100 : 500)),
	tmuxPanes: Number(options['tmux-panes'] ?? (quick ? 20 : 100)),
	runs: Number(options.runs ?? (quick ? 3 : 5)),
	// A minute: the dashboard's periodic work (a listing each minute, the clock's re-render) comes
	// once a minute, so a shorter window reads 0 % or twice the average depending on where it falls.
	idleSeconds: Number(options['idle-seconds'] ?? (quick ? 10 : 60)),
	keyPresses: quick ? 40 : 120,
};

const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** Where the world goes: tmpfs when there is one (building it must not wait on fsync; mam-tui's reads hit the page cache either way). */
function worldParent(): string {
	return fs.existsSync('/dev/shm') && fs.statSync('/dev/shm').isDirectory() ? '/dev/shm' : os.tmpdir();
}

interface HerdrHost extends HerdrCounter {
	readonly socket: string;
	readonly panes: readonly string[];
	stop(): Promise<void>;
}

/** Start the fake herdr in its own process with one pane per plan entry. */
async function startHerdr(world: BenchWorld, plan: readonly PanePlan[]): Promise<HerdrHost> {
	const socket = path.join(world.base, 'herdr.sock');
	const planFile = path.join(world.base, 'panes.json');
	fs.writeFileSync(planFile, JSON.stringify(plan));
	const tmuxName = `mam-bench-herdr-${process.pid}`;
	const child: ChildProcess = fork(path.join(ROOT, 'test', 'bench', 'herdrHost.ts'), [socket, tmuxName, planFile], {
		execArgv: ['--import', 'tsx'],
		env: world.env(),
		stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
	});
	const replies: ((message: {type: string; [key: string]: unknown}) => void)[] = [];
	const ready = new Promise<{panes: string[]}>((resolve, reject) => {
		child.once('exit', code => reject(new Error(`herdr host exited (${code}) before it was ready`)));
		child.on('message', (message: {type: string; panes?: string[]; [key: string]: unknown}) => {
			if (message.type === 'ready') resolve({panes: message.panes ?? []});
			else replies.shift()?.(message);
		});
	});
	const {panes} = await ready;
	return {
		socket,
		panes,
		count: () =>
			new Promise(resolve => {
				replies.push(message => resolve(message['methods'] as Record<string, number>));
				child.send({type: 'count'});
			}),
		setStatus: (paneId, status) => child.send({type: 'status', paneId, status}),
		stop: () =>
			new Promise<void>(resolve => {
				const timer = setTimeout(() => {
					child.kill('SIGKILL');
					resolve();
				}, 30_000);
				child.once('exit', () => {
					clearTimeout(timer);
					resolve();
				});
				child.send({type: 'stop'});
			}),
	};
}

/** One herdr pane per running session (its agent's stand-in), plain shells up to one pane per session. */
function panePlan(world: BenchWorld): {plan: PanePlan[]; sessionPane: Map<number, number>} {
	const plan: PanePlan[] = [];
	const sessionPane = new Map<number, number>();
	world.sessions.forEach((s, i) => {
		if (s.status !== 'running') return;
		sessionPane.set(i, plan.length);
		plan.push({cwd: s.cwd, command: world.agentCommand(s.agent)});
	});
	for (let i = 0; plan.length < world.sessions.length; i++) plan.push({cwd: world.cwds[i % world.cwds.length] ?? world.base, command: ['/bin/sh', '-i']});
	return {plan, sessionPane};
}

/** A private tmux server with `count` panes running stand-in agents (and the window the dashboard runs in). */
async function startTmux(world: BenchWorld, count: number): Promise<PrivateTmux> {
	const tmux = privateTmux('mam-bench');
	const agents = ['claude', 'codex', 'opencode', 'gemini', 'hermes', 'grok', 'agy'] as const;
	const command = (i: number) => [...world.agentCommand(agents[i % agents.length] ?? 'claude')];
	const first = await tmux.run(
		['new-session', '-d', '-s', 'bench', '-x', '200', '-y', '50', '-c', world.cwds[0] ?? world.base, '--', ...command(0)],
		world.env()['PATH'],
	);
	if (first.exitCode !== 0) throw new Error(`tmux: ${first.stderr}`);
	for (let i = 1; i < count; i++) {
		const made = await tmux.run(
			['new-window', '-d', '-t', 'bench:', '-c', world.cwds[i % world.cwds.length] ?? world.base, '--', ...command(i)],
			world.env()['PATH'],
		);
		if (made.exitCode !== 0) throw new Error(`tmux: ${made.stderr}`);
	}
	return tmux;
}

/** Wall time of `mam-tui ...args` to its exit: the bin itself, started as a shell starts it (its launcher, then node). */
async function timeCli(world: BenchWorld, env: Record<string, string>, args: readonly string[]): Promise<{ms: number; stdout: string; code: number | null}> {
	const t0 = performance.now();
	const child = spawn(CLI, [...args], {env, cwd: world.base, stdio: ['ignore', 'pipe', 'pipe']});
	let stdout = '';
	let stderr = '';
	child.stdout.on('data', chunk => (stdout += String(chunk)));
	child.stderr.on('data', chunk => (stderr += String(chunk)));
	const code = await new Promise<number | null>(resolve => child.on('exit', resolve));
	const ms = performance.now() - t0;
	if (code !== 0) log(`mam-tui ${args.join(' ')} exited ${code}: ${stderr.trim().slice(0, 300)}`);
	return {ms, stdout, code};
}

/**
 * Node's own start, with NODE_EXTRA_CA_CERTS as this machine sets it and empty, alternating:
 * what the bin's launcher saves every run (src/cli/launcher.ts). Undefined when it is not set.
 */
async function measureNodeStart(env: Record<string, string>): Promise<{asSet: Summary; empty: Summary} | undefined> {
	if (!env['NODE_EXTRA_CA_CERTS']) return undefined;
	const once = async (extra: Record<string, string>) => {
		const t0 = performance.now();
		const child = spawn(process.execPath, ['-e', '0'], {env: {...env, ...extra}, stdio: 'ignore'});
		await new Promise(resolve => child.on('exit', resolve));
		return performance.now() - t0;
	};
	const asSet: number[] = [];
	const empty: number[] = [];
	for (let i = 0; i < config.runs * 2; i++) {
		asSet.push(await once({}));
		empty.push(await once({NODE_EXTRA_CA_CERTS: ''}));
	}
	return {asSet: summarize(asSet), empty: summarize(empty)};
}

interface Started {
	readonly pid: number;
	readonly window: string;
	/** Process start (just before tmux was asked to start it) to the first frame, ms. */
	readonly firstFrameMs: number;
}

/** Start `argv` in a new window of the private tmux server; wait for its first-frame timestamp. */
async function startInWindow(tmux: PrivateTmux, world: BenchWorld, env: Record<string, string>, argv: readonly string[], name: string): Promise<Started> {
	const stamp = path.join(world.base, `first-frame-${name}-${process.hrtime.bigint()}`);
	const envArgs = Object.entries({...env, MAM_BENCH_FIRST_FRAME: stamp}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
	const t0 = Date.now();
	const made = await tmux.run(
		['new-window', '-d', '-P', '-F', '#{window_id} #{pane_pid}', '-t', 'bench:', '-c', world.base, ...envArgs, '--', ...argv],
		env['PATH'],
	);
	const [window, pid] = made.stdout.trim().split(' ');
	if (made.exitCode !== 0 || !window || !pid) throw new Error(`tmux new-window: ${made.stderr}`);
	const at = await waitFor(`${name}'s first frame`, () => (fs.existsSync(stamp) ? Number(fs.readFileSync(stamp, 'utf8')) || undefined : undefined), 60_000, 2);
	return {pid: Number(pid), window, firstFrameMs: at - t0};
}

async function closeWindow(tmux: PrivateTmux, window: string): Promise<void> {
	await tmux.run(['kill-window', '-t', window]);
}

interface Line {
	readonly metric: string;
	readonly value: string;
	readonly target: string;
	readonly pass: boolean | null;
	readonly detail?: string;
}

const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
const spread = (s: Summary, unit = 'ms') => `n=${s.n}, min ${s.min.toFixed(1)} ${unit}, max ${s.max.toFixed(1)} ${unit}`;

function table(lines: readonly Line[]): string {
	const rows = [
		['metric', 'measured', 'target', 'result'],
		...lines.map(l => [l.metric, l.value, l.target, l.pass === null ? 'info' : l.pass ? 'PASS' : 'MISS']),
	];
	const widths = rows[0]?.map((_, c) => Math.max(...rows.map(r => (r[c] ?? '').length))) ?? [];
	const out = rows.map(r =>
		r
			.map((cell, c) => cell.padEnd(widths[c] ?? 0))
			.join('  ')
			.trimEnd(),
	);
	out.splice(1, 0, widths.map(w => '-'.repeat(w)).join('  '));
	return out.join('\n');
}

/** What to undo, newest first; each runs once (after the run, or on SIGINT/SIGTERM). */
const cleanups: (() => Promise<void>)[] = [];

async function cleanUp(): Promise<void> {
	for (let undo = cleanups.shift(); undo; undo = cleanups.shift()) await undo().catch((error: unknown) => log(`cleanup: ${String(error)}`));
}

/**
 * Wait until a dashboard started at about now is idle: its first refresh settled (under 30 ms of
 * CPU in 3 s), and V8's memory reducer has shrunk the heap once, about 30 s after start (a major
 * GC, ~0.5 s of CPU, profiled): a start-up cost, not idle work. Returns the seconds waited.
 */
async function settle(pid: number): Promise<number> {
	const settleStart = Date.now();
	let last = cpuSeconds(pid);
	for (;;) {
		await sleep(3000);
		const now = cpuSeconds(pid);
		if (now - last < 0.03 || Date.now() - settleStart > 240_000) break;
		last = now;
	}
	await sleep(Math.max(0, settleStart + POST_START_GC_MS - Date.now()));
	return (Date.now() - settleStart) / 1000;
}

/** Resolves on SIGINT or SIGTERM. A measuring run stops where it is and cleans up (panes, tmux servers, the world). */
const interrupted = new Promise<void>(resolve => {
	for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
});

async function main(): Promise<void> {
	// The in-process dashboard loads React's production build, as the installed CLI does
	// (src/cli/loadDashboard.ts); React reads NODE_ENV once, when it is first imported.
	process.env['NODE_ENV'] ??= 'production';
	const {measureKeys, measureRefresh, startLive} = await import('./inProcess.js');
	if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm run bench does it first)`);
	const started = Date.now();
	// Every process on the machine is read by each status run: leftovers of an earlier run (a
	// fixture tmux server still reaping hundreds of stand-ins) make it slower; the header says so.
	const processesBefore = fs.readdirSync('/proc').filter(name => /^\d+$/.test(name)).length;
	const parkLine = (): Line => {
		const park = measureAutoPark(config.sessions);
		return {
			metric: `auto-park bookkeeping (a sample a minute over ${config.sessions} idle rows)`,
			value: `${park.percent.toFixed(4)} % (${park.perSampleMs.toFixed(3)} ms a sample)`,
			target: '≤ 0.1 %',
			pass: park.percent <= 0.1,
		};
	};
	if (options.only === 'park') {
		// In process, no world: the bookkeeping reads only the store.
		const lines = [parkLine()];
		process.stdout.write(`\n${table(lines)}\n`);
		process.exitCode = lines.every(l => l.pass !== false) ? 0 : 1;
		return;
	}
	log(`world: seed ${config.seed}, ${config.conversations} conversations, ${config.sessions} sessions`);
	const world = buildWorld({seed: config.seed, conversations: config.conversations, sessions: config.sessions, parentDir: worldParent()});
	log(`world built in ${((Date.now() - started) / 1000).toFixed(1)} s at ${world.base}`);
	cleanups.push(async () => {
		if (options.keep) log(`world kept at ${world.base}`);
		else world.cleanup();
	});
	if (options.only === 'search') {
		// In process, without panes: the index reads the agents' files only.
		const {measureSearch} = await import('./search.js');
		const {lines, quality} = await measureSearch(world, log);
		process.stdout.write(
			`\nmam-tui benchmark (search) — ${os.cpus().length} cores, load ${os
				.loadavg()
				.map(l => l.toFixed(1))
				.join(' ')}; a shared machine: figures are noisy\n\n${table(lines)}\n\n${quality}\n\n`,
		);
		await cleanUp();
		if (lines.some(l => l.pass === false)) process.exitCode = 1;
		return;
	}
	try {
		const {plan, sessionPane} = panePlan(world);
		const herdr = await startHerdr(world, plan);
		cleanups.unshift(() => herdr.stop());
		log(`fake herdr up with ${herdr.panes.length} panes`);
		world.writeRegistry((_s, i) => {
			const at = sessionPane.get(i);
			const paneId = at === undefined ? undefined : herdr.panes[at];
			return paneId ? {mux: 'herdr', paneId} : undefined;
		});
		const tmux = await startTmux(world, config.tmuxPanes);
		cleanups.unshift(() => tmux.kill());
		log(`private tmux server ${tmux.name} up with ${config.tmuxPanes} panes`);
		const env = world.env({HERDR_SOCKET_PATH: herdr.socket});
		if (options.serve) {
			process.stdout.write(`HOME=${env['HOME']} MAM_HOME=${env['MAM_HOME']} HERDR_SOCKET_PATH=${herdr.socket} PATH=${env['PATH']}\ntmux: -L ${tmux.name}\n`);
			await interrupted;
			return;
		}
		// 600 stand-in agents were just started; the figures are mam-tui's, not their boot.
		const quiet = await waitForQuiet();
		log(`machine ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.seconds.toFixed(0)} s (last second ${(quiet.busy * 100).toFixed(0)} % busy)`);
		const lines: Line[] = [];
		const results: Record<string, unknown> = {
			config,
			world: {base: world.base, conversations: world.conversations.length, sessions: world.sessions.length, herdrPanes: herdr.panes.length},
			settle: quiet,
			processesBefore,
		};

		if (measures('park')) lines.push(parkLine());
		if (measures('cli')) {
			// status --json
			const status: number[] = [];
			let statusSessions = 0;
			for (let i = 0; i < config.runs + 1; i++) {
				const run = await timeCli(world, env, ['status', '--json', '--mux', 'herdr']);
				if (i > 0) status.push(run.ms); // the first run warms the page cache
				statusSessions = (JSON.parse(run.stdout || '{"sessions":[]}') as {sessions: unknown[]}).sessions.length;
			}
			const statusSummary = summarize(status);
			lines.push({
				metric: `status --json (${statusSessions} sessions, herdr ${herdr.panes.length} panes)`,
				value: `median ${ms(statusSummary.median)}`,
				target: '≤ 500 ms',
				pass: statusSummary.median <= 500,
				detail: spread(statusSummary),
			});
			// The same world's registry on tmux: its rows live in herdr panes, so tmux judges each exited and checks it on disk.
			const statusTmuxWorld: number[] = [];
			for (let i = 0; i < config.runs; i++)
				statusTmuxWorld.push((await timeCli(world, world.env(), ['status', '--json', '--mux', 'tmux', '--tmux-socket', tmux.name])).ms);
			const statusTmuxWorldSummary = summarize(statusTmuxWorld);
			lines.push({
				metric: `status --json (tmux ${config.tmuxPanes} panes, the herdr world's ${statusSessions} rows)`,
				value: `median ${ms(statusTmuxWorldSummary.median)}`,
				target: '—',
				pass: null,
				detail: spread(statusTmuxWorldSummary),
			});
			const {writeTmuxRegistry} = await import('./tmuxRefresh.js');
			const tmuxRegistry = path.join(world.base, 'registry-tmux.db');
			const tmuxRows = await writeTmuxRegistry(world, tmux, tmuxRegistry);
			const statusTmux: number[] = [];
			for (let i = 0; i < config.runs + 1; i++) {
				const run = await timeCli(world, world.env(), ['status', '--json', '--mux', 'tmux', '--tmux-socket', tmux.name, '--registry', tmuxRegistry]);
				if (i > 0) statusTmux.push(run.ms);
			}
			const statusTmuxSummary = summarize(statusTmux);
			lines.push({
				metric: `status --json (tmux ${config.tmuxPanes} panes, ${tmuxRows} sessions live in them, statuses read)`,
				value: `median ${ms(statusTmuxSummary.median)}`,
				target: `≤ herdr's ${ms(statusSummary.median)}`,
				pass: statusTmuxSummary.median <= statusSummary.median,
				detail: spread(statusTmuxSummary),
			});
			results['status'] = {herdr: statusSummary, tmux: statusTmuxSummary, tmuxHerdrWorld: statusTmuxWorldSummary};
			const nodeStart = await measureNodeStart(env);
			if (nodeStart) {
				lines.push({
					metric: 'node start (node -e 0), NODE_EXTRA_CA_CERTS as set here',
					value: `median ${ms(nodeStart.asSet.median)}`,
					target: '—',
					pass: null,
					detail: spread(nodeStart.asSet),
				});
				lines.push({
					metric: 'node start with it empty (as the bin starts node)',
					value: `median ${ms(nodeStart.empty.median)}`,
					target: '—',
					pass: null,
					detail: spread(nodeStart.empty),
				});
				results['nodeStart'] = nodeStart;
			}
			log(`status: median ${ms(statusSummary.median)} (herdr), ${ms(statusTmuxSummary.median)} (tmux)`);

			// cold start, alternating floor and dashboard
			const floor: number[] = [];
			const dashboard: number[] = [];
			for (let i = 0; i < config.runs + 1; i++) {
				const f = await startInWindow(tmux, world, env, [process.execPath, FLOOR], 'floor');
				await closeWindow(tmux, f.window);
				const d = await startInWindow(tmux, world, env, [CLI, '--mux', 'herdr'], 'dashboard');
				await closeWindow(tmux, d.window);
				if (i === 0) continue; // warm-up
				floor.push(f.firstFrameMs);
				dashboard.push(d.firstFrameMs);
			}
			const floorSummary = summarize(floor);
			const dashSummary = summarize(dashboard);
			const ratio = dashSummary.median / floorSummary.median;
			lines.push({
				metric: 'cold start: floor (node + ink + react, one Text)',
				value: `median ${ms(floorSummary.median)}`,
				target: '—',
				pass: null,
				detail: spread(floorSummary),
			});
			lines.push({
				metric: `cold start: dashboard, first frame with ${config.sessions} rows`,
				value: `median ${ms(dashSummary.median)}`,
				target: '—',
				pass: null,
				detail: spread(dashSummary),
			});
			lines.push({metric: 'cold start ratio dashboard / floor', value: `${ratio.toFixed(2)}×`, target: '≤ 1.5×', pass: ratio <= 1.5});
			results['coldStart'] = {floor: floorSummary, dashboard: dashSummary, ratio};
			log(`cold start: floor ${ms(floorSummary.median)}, dashboard ${ms(dashSummary.median)}, ratio ${ratio.toFixed(2)}`);

			// idle CPU and peak RSS of one dashboard, once its first full refresh has settled
			const d = await startInWindow(tmux, world, env, [CLI, '--mux', 'herdr'], 'idle');
			try {
				const settledAfter = await settle(d.pid);
				const c0 = cpuSeconds(d.pid);
				const t0 = performance.now();
				await sleep(config.idleSeconds * 1000);
				const cpu = cpuSeconds(d.pid) - c0;
				const seconds = (performance.now() - t0) / 1000;
				const percent = (cpu / seconds) * 100;
				const hwmMb = statusKb(d.pid, 'VmHWM') / 1024;
				lines.push({
					metric: `idle CPU over ${seconds.toFixed(0)} s (dashboard, large world)`,
					value: `${percent.toFixed(2)} % (${cpu.toFixed(2)} s)`,
					target: '≤ 0.5 %',
					pass: percent <= 0.5,
					detail: `settled ${settledAfter.toFixed(0)} s after start`,
				});
				lines.push({metric: 'peak RSS (VmHWM, dashboard)', value: `${hwmMb.toFixed(0)} MB`, target: '≤ 160 MB', pass: hwmMb <= 160});
				results['idle'] = {cpuSeconds: cpu, seconds, percent, settledAfterSeconds: settledAfter};
				results['peakRssMb'] = hwmMb;
				log(`idle: ${percent.toFixed(2)} % CPU; peak RSS ${hwmMb.toFixed(0)} MB`);
			} finally {
				await closeWindow(tmux, d.window);
			}
		}
		if (measures('tmux')) {
			// tmux: what a refresh costs while 5 panes print each second, and a dashboard's idle CPU on 100 panes
			const {measureTmuxRefresh} = await import('./tmuxRefresh.js');
			const tmuxCost = await measureTmuxRefresh(world, tmux, quick ? 5 : 15);
			lines.push({
				metric: `tmux refresh, ${tmuxCost.changedPerRefresh} of ${tmuxCost.panes} panes printed: tmux commands (1 list + reads)`,
				value: `max ${tmuxCost.commandsMax}, processes ${tmuxCost.processesMax}`,
				target: `≤ ${1 + tmuxCost.changedPerRefresh}, 0`,
				pass: tmuxCost.commandsMax <= 1 + tmuxCost.changedPerRefresh && tmuxCost.processesMax === 0,
			});
			lines.push({
				metric: 'tmux refresh: screens read',
				value: `max ${tmuxCost.readsMax} (${tmuxCost.overBudget} of ${tmuxCost.refreshes} refreshes read more than printed)`,
				target: `≤ ${tmuxCost.changedPerRefresh}`,
				pass: tmuxCost.overBudget === 0,
			});
			lines.push({
				metric: 'tmux refresh time (list + statuses)',
				value: `median ${ms(tmuxCost.ms.median)}`,
				target: '—',
				pass: null,
				detail: spread(tmuxCost.ms),
			});
			results['tmuxRefresh'] = tmuxCost;
			log(`tmux refresh: ${tmuxCost.commandsMax} commands max, ${tmuxCost.readsMax} reads max, median ${ms(tmuxCost.ms.median)}`);
			const idleTmux = await startInWindow(tmux, world, world.env(), [CLI, '--mux', 'tmux', '--tmux-socket', tmux.name], 'idle-tmux');
			try {
				// Idle as in the large world: after the first refresh and V8's post-start heap shrink.
				const settledAfter = await settle(idleTmux.pid);
				const c0 = cpuSeconds(idleTmux.pid);
				const t0 = performance.now();
				await sleep(config.idleSeconds * 1000);
				const cpu = cpuSeconds(idleTmux.pid) - c0;
				const seconds = (performance.now() - t0) / 1000;
				const percent = (cpu / seconds) * 100;
				lines.push({
					metric: `idle CPU over ${seconds.toFixed(0)} s (dashboard, tmux ${config.tmuxPanes} panes)`,
					value: `${percent.toFixed(2)} % (${cpu.toFixed(2)} s)`,
					target: '≤ 0.5 %',
					pass: percent <= 0.5,
					detail: `settled ${settledAfter.toFixed(0)} s after start`,
				});
				results['idleTmux'] = {cpuSeconds: cpu, seconds, percent, settledAfterSeconds: settledAfter};
				log(`idle on tmux: ${percent.toFixed(2)} % CPU`);
			} finally {
				await closeWindow(tmux, idleTmux.window);
			}
		}
		if (measures('live')) {
			// in process: the live supervisor, then the real App on its store. First a start with no
			// parse memo (the earlier groups' CLI runs wrote one: removed), which writes the memo as
			// the dashboard does; then the measured start, a restart on the same MAM_HOME.
			for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${parseMemoPath(world.stateDir)}${suffix}`, {force: true});
			const first = await startLive(world, herdr.socket, 'first-refresh-no-memo');
			const memoWriteCpuMs = await first.dispose();
			const memoBytes = fs.statSync(parseMemoPath(world.stateDir)).size;
			lines.push({
				metric: 'first complete refresh, first start ever (no memo; in process)',
				value: `${ms(first.firstRefreshMs)} (${ms(first.firstRefreshCpuMs)} CPU)`,
				target: '—',
				pass: null,
				detail: `then the parse memo: ${(memoBytes / 1e6).toFixed(1)} MB written in ${ms(memoWriteCpuMs)} CPU`,
			});
			results['firstRefreshNoMemo'] = {ms: first.firstRefreshMs, cpuMs: first.firstRefreshCpuMs};
			const rig = await startLive(world, herdr.socket);
			cleanups.unshift(async () => void (await rig.dispose()));
			results['firstRefresh'] = {ms: rig.firstRefreshMs, cpuMs: rig.firstRefreshCpuMs};
			// ≤ 1 s, and ≤ 2× the Ink floor of this run (a slower machine is slower at both) when the cli group measured it.
			const floorMs = (results['coldStart'] as {floor: Summary} | undefined)?.floor.median;
			lines.push({
				metric: 'first complete refresh after start (memo from the last run; in process; resume states and findings filled in)',
				value: `${ms(rig.firstRefreshMs)} (${ms(rig.firstRefreshCpuMs)} CPU)`,
				target: floorMs === undefined ? '≤ 1000 ms' : `≤ 1000 ms and ≤ 2× the floor's ${ms(floorMs)}`,
				pass: rig.firstRefreshMs <= 1000 && (floorMs === undefined || rig.firstRefreshMs <= 2 * floorMs),
			});
			// An in-process refresh costs well under a second: more of them than CLI runs, so one
			// slow sample (a major GC) does not decide the median.
			const refresh = await measureRefresh(world, rig, herdr, Math.max(11, config.runs * 2 + 1));
			lines.push({
				metric: 'refresh after one conversation file changes (write → store)',
				value: `median ${ms(refresh.fileChange.median)}`,
				target: '≤ 30 ms',
				pass: refresh.fileChange.median <= 30,
				detail: spread(refresh.fileChange),
			});
			lines.push({
				metric: 'herdr requests for that refresh',
				value: `max ${refresh.fileChangeRequests.max}`,
				target: '≤ 2',
				pass: refresh.fileChangeRequests.max <= 2,
			});
			lines.push({
				metric: 'refresh after a herdr pane event (event → store)',
				value: `median ${ms(refresh.paneEvent.median)}`,
				target: '—',
				pass: null,
				detail: spread(refresh.paneEvent),
			});
			lines.push({
				metric: 'full refresh after that pane event (event → listing in store)',
				value: `median ${ms(refresh.paneEventListing.median)}`,
				target: '—',
				pass: null,
				detail: spread(refresh.paneEventListing),
			});
			lines.push({
				metric: 'herdr requests for a pane-event refresh',
				value: `max ${refresh.paneEventRequests.max}`,
				target: '≤ 2',
				pass: refresh.paneEventRequests.max <= 2,
			});
			results['refresh'] = refresh;
			const idleCpuMs = await rig.profileIdle(65);
			if (idleCpuMs !== undefined)
				lines.push({
					metric: 'in-process supervisor idle over 65 s (profiled, busy samples; no Ink)',
					value: `${ms(idleCpuMs)} (${((idleCpuMs / 65_000) * 100).toFixed(2)} %)`,
					target: '—',
					pass: null,
				});
			log(`refresh: file change ${ms(refresh.fileChange.median)}, pane event ${ms(refresh.paneEvent.median)}`);
			// ink-testing-library's terminal (100 columns, 24 rows) is the target line; a large 200×50
			// terminal (list and detail panel side by side, four times the cells) is shown beside it.
			const rowCount = rig.store.getState().sessions.length;
			const keys = await measureKeys(rig.store, world.home, config.keyPresses, {columns: 100, rows: 24});
			lines.push({
				metric: `key latency at ${rowCount} rows, 100×24 terminal (keystroke → frame)`,
				value: `p50 ${ms(keys.median)}, p95 ${ms(keys.p95)}`,
				target: 'p95 ≤ 12 ms',
				pass: keys.p95 <= 12,
				detail: spread(keys),
			});
			const wide = await measureKeys(rig.store, world.home, config.keyPresses, {columns: 200, rows: 50});
			lines.push({
				metric: `key latency at ${rowCount} rows, 200×50 terminal`,
				value: `p50 ${ms(wide.median)}, p95 ${ms(wide.p95)}`,
				target: '—',
				pass: null,
				detail: spread(wide),
			});
			results['keyLatency'] = {terminal100x24: keys, terminal200x50: wide};
			log(`keys: p50 ${ms(keys.median)}, p95 ${ms(keys.p95)} (100×24); p50 ${ms(wide.median)}, p95 ${ms(wide.p95)} (200×50)`);
		}
		if (measures('remote') && sshdAvailable()) {
			const remote = await measureRemote(log, Math.min(config.idleSeconds, 60));
			lines.push(...remote);
			results['remote'] = remote;
		}
		results['lines'] = lines;
		results['totalSeconds'] = (Date.now() - started) / 1000;
		fs.writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
		process.stdout.write(
			`\nmam-tui benchmark — ${os.cpus().length} cores, load ${os
				.loadavg()
				.map(l => l.toFixed(1))
				.join(
					' ',
				)}, ${((Date.now() - started) / 1000).toFixed(0)} s; measured once the machine was ${quiet.quiet ? 'quiet' : 'still busy'} (${quiet.seconds.toFixed(0)} s after the fixtures started); ${processesBefore} processes before the run\n\n${table(lines)}\n\n`,
		);
		for (const line of lines) if (line.detail) process.stdout.write(`  ${line.metric}: ${line.detail}\n`);
		process.stdout.write(`\nresults: ${RESULTS}\n`);
		process.exitCode = lines.every(l => l.pass !== false) ? 0 : 1;
	} finally {
		await cleanUp();
	}
}

void interrupted.then(async () => {
	if (options.serve) return; // --serve waits for this and cleans up itself
	log('interrupted: cleaning up');
	await cleanUp();
	process.exit(130);
});
await main();
