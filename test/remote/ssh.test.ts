import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {execa} from 'execa';
import {stringify} from 'yaml';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import type {HostConfig} from '../../src/config/hosts.js';
import type {DemoScenario} from '../../src/demo/scenario.js';
import {reapSandbox} from '../../src/demo/reaper.js';
import {createSandbox, removeSandboxDirs, type Sandbox} from '../../src/demo/sandbox.js';
import {PROJECTS} from '../../src/demo/sampleData.js';
import {installStandin} from '../../src/demo/installStandin.js';
import {Registry} from '../../src/registry/registry.js';
import {HostConnection} from '../../src/remote/client.js';
import {sshChannel, type Channel} from '../../src/remote/channel.js';
import {remoteActions} from '../../src/remote/remoteActions.js';
import {createWorld} from '../../src/world/world.js';
import {runCli} from '../helpers/cli.js';
import {eventually} from '../helpers/poll.js';
import {tempDir} from '../helpers/tmp.js';
import {freePort, REPO, sshdAvailable, startSshd, type SshServer} from './support/sshd.js';
import {CLI, E2eTmux} from '../e2e/support/tmuxScreen.js';

/**
 * Two machines on one: this test's local side (an empty HOME with one session and a config
 * naming hosts), and "devbox", a real sshd on 127.0.0.1 whose logins get the demo's sandbox as
 * HOME — real-format conversations of every agent, a registry, stand-in agents in a private tmux
 * server — and run the built mam-tui there.
 */

const hostile = ['$(touch CANARY)', "x'; touch CANARY; '", '-rf', 'a\ntouch CANARY', '`touch CANARY`'];

describe.skipIf(!sshdAvailable())('many machines over a real OpenSSH server', () => {
	let sandbox: Sandbox;
	let scenario: DemoScenario;
	let sshd: SshServer;
	let devbox: HostConfig;
	const local = tempDir('mam-remote-local-');
	const localHome = path.join(local.dir, 'home');
	const localState = path.join(local.dir, 'state');
	const localTmux = `mam-remote-${process.pid}`;
	let env: Record<string, string>;
	const canaries = () => [sandbox.home, sandbox.work, localHome, local.dir, process.cwd(), '/tmp'].filter(dir => fs.existsSync(path.join(dir, 'CANARY')));

	const writeConfig = (hosts: readonly Record<string, unknown>[]) => {
		fs.mkdirSync(path.join(localHome, '.config', 'mam'), {recursive: true});
		fs.writeFileSync(path.join(localHome, '.config', 'mam', 'config.yaml'), stringify({hosts}));
	};
	const entry = (h: HostConfig): Record<string, unknown> => ({...h, command: [...h.command]});
	const cli = (args: readonly string[], timeoutMs = 30_000) => runCli(['--tmux-socket', localTmux, ...args], env, {timeoutMs});

	/** A tmux server of this side's own (its socket under `socketDir`), where a test runs the dashboard. */
	const localTmuxServer = async (socketDir: string): Promise<E2eTmux> => {
		const sock = path.join(local.dir, socketDir);
		fs.mkdirSync(sock, {recursive: true});
		const tmux = new E2eTmux({
			PATH: process.env['PATH'] ?? '/usr/bin:/bin',
			HOME: localHome,
			MAM_HOME: localState,
			TMUX_TMPDIR: sock,
			LANG: 'C.UTF-8',
			NO_COLOR: '1',
		});
		await tmux.start();
		return tmux;
	};

	beforeAll(async () => {
		sandbox = createSandbox(process.env, process.pid + 70_000);
		const world = createWorld({mux: 'tmux', tmuxSocket: sandbox.tmuxName, json: false, verbose: false}, sandbox.env);
		try {
			// From the build: its stand-ins find their script beside it (built from source, the
			// stand-in's path does not exist and every demo pane would end at once).
			const {buildScenario} = (await import(path.join(REPO, 'dist/src/demo/scenario.js'))) as typeof import('../../src/demo/scenario.js');
			scenario = await buildScenario(sandbox, {processes: world.processes, ctx: {...world.adapterContext(), exec: sandbox.exec}});
		} finally {
			world.close();
		}
		// Hostile session names on the remote: carried as JSON values, never through a shell.
		const registry = Registry.open(scenario.registryPath);
		try {
			for (const name of hostile)
				registry.insert({name, agent: 'claude', cwd: sandbox.work, mux: 'tmux', agentSessionId: null, status: 'stopped', epoch: Date.now()});
		} finally {
			registry.close();
		}
		sshd = await startSshd(sandbox.env);
		devbox = sshd.host('devbox', ['--mux', 'tmux', '--tmux-socket', sandbox.tmuxName]);
		fs.mkdirSync(localState, {recursive: true});
		const mine = Registry.open(path.join(localState, 'registry.db'));
		mine.insert({name: 'here', agent: 'claude', cwd: local.dir, mux: 'tmux', agentSessionId: null, status: 'stopped', epoch: Date.now()});
		mine.close();
		env = {HOME: localHome, MAM_HOME: localState};
		writeConfig([entry(devbox)]);
	}, 120_000);

	afterAll(async () => {
		await sshd?.stop();
		if (sandbox) {
			await execa('tmux', ['-L', sandbox.tmuxName, 'kill-server'], {reject: false});
			await reapSandbox(sandbox.base);
			removeSandboxDirs(sandbox);
		}
		local.dispose();
	}, 60_000);

	it('status --json merges the host into one list, local first, each item with its host', async () => {
		const run = await cli(['status', '--json']);
		expect(run.stderr).toBe('');
		expect(run.exitCode).toBe(0);
		const body = JSON.parse(run.stdout) as {
			sessions: {name: string; host: string; liveStatus?: string}[];
			hosts: {name: string; state: string; rttMs: number | null; message: string}[];
		};
		expect(body.hosts).toEqual([expect.objectContaining({name: 'devbox', state: 'up', message: expect.stringMatching(/^mam-tui \S+, protocol 1$/)})]);
		expect(body.hosts[0]?.rttMs).toEqual(expect.any(Number));
		expect(body.sessions[0]).toMatchObject({name: 'here', host: 'local'});
		const remote = body.sessions.filter(s => s.host === 'devbox').map(s => s.name);
		expect(remote).toEqual(expect.arrayContaining([...scenario.sessions, ...hostile]));
		expect(body.sessions.find(s => s.host === 'devbox' && s.name === 'claude-live')?.liveStatus).toEqual(expect.any(String));
		const human = await cli(['status']);
		expect(human.stdout).toMatch(/^HOST\s+NAME/m);
		expect(human.stdout).toMatch(/^devbox\s+claude-live/m);
		expect(human.stdout).toMatch(/host devbox: up \(\d+ ms\)/);
		// The host's agent pane outside any session is listed with its host, as this machine's are.
		expect(human.stdout).toMatch(/Panes running an agent outside any session:\nHOST\s+PANE\s+AGENT[^\n]*\n(?:.*\n)*devbox\s+%\d+\s+grok\s/);
		expect(canaries()).toEqual([]);
	});

	it('--host runs stop there, with its live steps, and both sides keep an audit record', async () => {
		const run = await cli(['--host', 'devbox', 'stop', 'claude-live', '--json', '--grace', '3', '--kill-wait', '2']);
		expect(run.stderr).toBe('');
		const body = JSON.parse(run.stdout) as {ok: boolean; endedBy: string; captured: unknown[]; steps: {step: string; state: string}[]};
		expect(body.ok).toBe(true);
		expect(body.steps.length).toBeGreaterThan(0);
		// A live agent there, ended by its exit input typed into its pane on the host.
		expect(body).toMatchObject({endedBy: 'exit-input', captured: [expect.objectContaining({name: 'claude'})]});
		const remote = Registry.open(scenario.registryPath);
		try {
			expect(remote.list().find(s => s.name === 'claude-live')?.status).toBe('stopped');
			expect(remote.auditLog('claude-live').some(a => a.action === 'stop')).toBe(true);
		} finally {
			remote.close();
		}
		const mine = Registry.open(path.join(localState, 'registry.db'));
		try {
			expect(
				mine
					.auditLog('claude-live')
					.map(a => `${a.action} ${a.outcome}`)
					.sort(),
			).toEqual(['remote:stop ok', 'remote:stop started']);
		} finally {
			mine.close();
		}
	});

	it('purge on the host: the plan shows its paths, a wrong confirmation deletes nothing, the right one deletes there', async () => {
		const connection = new HostConnection({host: devbox, reconnect: false, subscribe: false}).start();
		try {
			await connection.settled();
			expect(connection.state().state).toBe('up');
			const actions = remoteActions(connection);
			const shown = await actions.purgePlan({name: 'claude-old'});
			if (!shown.ok) throw new Error(shown.error.message);
			// Whole files and folders (rows and lines are taken out of shared files, which stay).
			const paths = shown.value.plan.items.filter(i => i.kind === 'file' || i.kind === 'dir').map(i => i.path);
			expect(paths.length).toBeGreaterThan(0);
			for (const p of paths) expect(p.startsWith(sandbox.home)).toBe(true);
			expect(paths.some(p => fs.existsSync(p))).toBe(true);
			expect(actions.expectedConfirmation([shown.value])).toBe('claude-old');
			expect(await actions.purge([shown.value], 'claude-ol')).toMatchObject({ok: false, error: {kind: 'not-confirmed'}});
			expect(paths.some(p => fs.existsSync(p))).toBe(true);
			const done = await actions.purge([shown.value], 'claude-old');
			expect(done).toMatchObject({ok: true});
			for (const p of paths) expect(fs.existsSync(p)).toBe(false);
		} finally {
			connection.close();
		}
	});

	it('the CLI purge on a host asks for the typed confirmation (--yes in scripts) and refuses without', async () => {
		const refused = await cli(['--host', 'devbox', 'purge', 'codex-old']);
		expect(refused.exitCode).toBe(2);
		expect(refused.stderr).toMatch(/needs a terminal to confirm, or --yes/);
		const dry = await cli(['--host', 'devbox', 'purge', 'codex-old', '--dry-run', '--json']);
		expect(dry.exitCode).toBe(0);
		const plans = (JSON.parse(dry.stdout) as {plans: {items: {path: string}[]}[]}).plans;
		expect(plans[0]?.items.every(i => i.path.startsWith(sandbox.home))).toBe(true);
	});

	it('the channel killed in the middle of a purge: the local side says what is known; the host finishes or refuses whole', async () => {
		let channel: Channel | undefined;
		const connection = new HostConnection({
			host: devbox,
			reconnect: false,
			subscribe: false,
			open: host => (channel = sshChannel(host)),
		}).start();
		await connection.settled();
		const actions = remoteActions(connection);
		const shown = await actions.purgePlan({name: 'codex-old'});
		if (!shown.ok) throw new Error(shown.error.message);
		const paths = shown.value.plan.items.filter(i => i.kind === 'file' || i.kind === 'dir').map(i => i.path);
		expect(paths.length).toBeGreaterThan(0);
		// Cut the channel as soon as the host has re-checked the plan: the deletion is starting there.
		const result = await actions.purge([shown.value], 'codex-old', {
			onProgress: p => {
				if (p.step === 'recheck' && p.state === 'done') channel?.close();
			},
		});
		expect(result).toMatchObject({ok: false, error: {kind: 'failed'}});
		if (!result.ok) expect(result.error.message).toMatch(/lost while purge\.confirm ran there; whether it finished is not known here/);
		// The host finishes on its own: its audit says so, and the files are all gone (never some).
		const remote = Registry.open(scenario.registryPath);
		try {
			await eventually('the host recorded the purge', () => remote.auditLog('codex-old').some(a => a.action === 'purge' && a.outcome !== 'started'), {
				timeoutMs: 20_000,
			});
			const left = paths.filter(p => fs.existsSync(p));
			expect(left.length === 0 || left.length === paths.length).toBe(true);
		} finally {
			remote.close();
		}
		connection.close();
	});

	it('an unreachable host (closed port) is marked down within 2 s while the local rows show', async () => {
		const closed = await freePort();
		const dead = {...devbox, name: 'dead', port: closed};
		const started = Date.now();
		const connection = new HostConnection({host: dead, reconnect: false}).start();
		await connection.settled();
		const tookMs = Date.now() - started;
		const seen = connection.state();
		connection.close();
		expect(seen.state).toBe('down');
		expect(tookMs).toBeLessThan(2000);
		writeConfig([entry(devbox), entry(dead)]);
		try {
			const run = await cli(['status', '--json']);
			const body = JSON.parse(run.stdout) as {sessions: {name: string; host: string}[]; hosts: {name: string; state: string; message: string}[]};
			expect(body.hosts.find(h => h.name === 'dead')).toMatchObject({state: 'down', message: 'connection refused'});
			expect(body.hosts.find(h => h.name === 'devbox')).toMatchObject({state: 'up'});
			expect(body.sessions[0]).toMatchObject({name: 'here', host: 'local'});
		} finally {
			writeConfig([entry(devbox)]);
		}
	});

	it('a host that accepts and never answers blocks neither the other host nor the answer', async () => {
		const sockets: net.Socket[] = [];
		const silent = net.createServer(socket => sockets.push(socket));
		await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
		const port = (silent.address() as net.AddressInfo).port;
		writeConfig([entry({...devbox, name: 'silent', port}), entry(devbox)]);
		try {
			const started = Date.now();
			const run = await cli(['status', '--json']);
			const body = JSON.parse(run.stdout) as {sessions: {host: string}[]; hosts: {name: string; state: string}[]};
			expect(body.hosts.find(h => h.name === 'silent')?.state).toBe('connecting');
			expect(body.hosts.find(h => h.name === 'devbox')?.state).toBe('up');
			expect(body.sessions.some(s => s.host === 'devbox')).toBe(true);
			expect(Date.now() - started).toBeLessThan(20_000);
			// In one process: the event loop keeps running (keys would be read) while the host says nothing.
			const connection = new HostConnection({host: {...devbox, name: 'silent', port}, reconnect: false, helloTimeoutMs: 1000}).start();
			let ticks = 0;
			const ticker = setInterval(() => ticks++, 20);
			await connection.settled();
			clearInterval(ticker);
			expect(connection.state().state).toBe('down');
			expect(ticks).toBeGreaterThan(20);
		} finally {
			writeConfig([entry(devbox)]);
			for (const s of sockets) s.destroy();
			silent.close();
		}
	});

	it('a changed host key is refused with a clear message, and known_hosts is left as it was', async () => {
		const other = tempDir('mam-hostkey-');
		try {
			const key = path.join(other.dir, 'k');
			await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
			const pub = fs.readFileSync(`${key}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
			const knownHosts = path.join(other.dir, 'known_hosts');
			const text = `[127.0.0.1]:${sshd.port} ${pub}\n`;
			fs.writeFileSync(knownHosts, text);
			const changed = {...devbox, name: 'changed', sshOptions: {...devbox.sshOptions, UserKnownHostsFile: knownHosts}};
			const connection = new HostConnection({host: changed, reconnect: false}).start();
			await connection.settled();
			const seen = connection.state();
			connection.close();
			expect(seen.state).toBe('down');
			expect(seen.message).toMatch(/^host key changed/);
			expect(fs.readFileSync(knownHosts, 'utf8')).toBe(text);
			// An unknown host is not accepted either.
			fs.writeFileSync(knownHosts, '');
			const unknown = new HostConnection({host: changed, reconnect: false}).start();
			await unknown.settled();
			const unknownSeen = unknown.state();
			unknown.close();
			expect(unknownSeen.message).toMatch(/^host key not trusted/);
			expect(fs.readFileSync(knownHosts, 'utf8')).toBe('');
		} finally {
			other.dispose();
		}
	});

	it('mam-tui missing on the host is said in words', async () => {
		const missing = {...devbox, name: 'missing', command: ['mam-tui-not-installed-here']};
		const connection = new HostConnection({host: missing, reconnect: false}).start();
		await connection.settled();
		const seen = connection.state();
		connection.close();
		expect(seen.message).toMatch(/^mam-tui not found on the host/);
	});

	it('hostile host names and destinations are refused (exit 2, naming the problem); hostile session names travel safely', async () => {
		const bad: [Record<string, unknown>, RegExp][] = [
			[{name: '-oProxyCommand=touch CANARY', ssh: 'x'}, /host name "-oProxyCommand=touch CANARY" starts with "-"/],
			[{name: 'ok', ssh: '-oProxyCommand=touch CANARY'}, /ssh destination "-oProxyCommand=touch CANARY" starts with "-"/],
			[{name: 'ok', ssh: 'root@127.0.0.1\ntouch CANARY'}, /contains a control character/],
			[{name: 'ok', ssh: 'root@127.0.0.1 touch CANARY'}, /contains whitespace/],
			[{name: 'ok', ssh: 'x', command: ['mam-tui\ntouch CANARY']}, /control character/],
		];
		for (const [host, message] of bad) {
			writeConfig([host]);
			const run = await cli(['status', '--json']);
			expect(run.exitCode).toBe(2);
			expect(run.stderr).toMatch(message);
		}
		writeConfig([entry(devbox)]);
		for (const name of ['$(touch CANARY)', '-x', 'a b', 'a\nb']) {
			const run = await cli([`--host=${name}`, 'status']);
			expect(run.exitCode).toBe(2);
			expect(run.stderr).toMatch(/--host: host name/);
		}
		const names = (JSON.parse((await cli(['--host', 'devbox', 'status', '--json'])).stdout) as {sessions: {name: string}[]}).sessions.map(s => s.name);
		expect(names).toEqual(expect.arrayContaining(hostile));
		for (const name of hostile) {
			const run = await cli(['--host', 'devbox', 'stop', '--json', '--grace', '1', '--kill-wait', '1', '--', name]);
			// The name went there and back as a JSON value: the host's answer names exactly that session.
			expect(JSON.parse(run.stdout)).toMatchObject({session: name});
		}
		expect(canaries()).toEqual([]);
	});

	it("the dashboard: local rows first, the host's after with a HOST column, a dead host marked down within 2 s, a filter by host, a purge there", async () => {
		const dead = {...devbox, name: 'dead', port: await freePort()};
		writeConfig([entry(devbox), entry(dead)]);
		const tmux = await localTmuxServer('dash-sock');
		try {
			const pane = await tmux.openWindow('dashboard', [process.execPath, CLI, '--mux', 'tmux', '--tmux-socket', localTmux], {cwd: local.dir});
			const screen = tmux.screen(pane);
			await screen.waitFor(/\blocal\s+here\b/, 'the first frame with the local row', {timeoutMs: 20_000});
			await screen.waitFor(/dead down: connection refused/, 'the dead host marked down', {timeoutMs: 2000});
			const shown = await screen.waitFor(/^\s+devbox\s+\S/m, "devbox's rows in the list");
			expect(shown).toMatch(/HOST\s+NAME/);
			const lines = shown.split('\n');
			expect(lines.findIndex(l => /\blocal\s+here\b/.test(l))).toBeLessThan(lines.findIndex(l => /^\s+devbox\s/.test(l)));
			// A name with a newline stays on its row.
			expect(shown).not.toMatch(/^touch CANARY/m);
			expect(shown).toMatch(/devbox up \d+ ms/);
			// A filter by host: only its rows.
			await screen.press('/');
			await screen.waitFor(/filter: .*▏/, 'the filter prompt');
			await screen.type('devbox');
			await screen.press('Enter');
			const filtered = await screen.waitFor(s => !/\blocal\s+here\b/.test(s) && /^\s*>?\s+devbox\s/m.test(s), 'only devbox rows');
			expect(filtered).not.toMatch(/\blocal\s/);
			// A purge there: the dialog names the host, the typed confirmation carries it.
			await screen.press('/');
			await screen.waitFor(/filter: .*▏/, 'the filter prompt');
			await screen.press('Escape');
			await screen.waitFor(s => !s.includes('filter:'), 'the filter to clear');
			await screen.press('/');
			await screen.waitFor(/filter: .*▏/, 'the filter prompt');
			await screen.type('opencode-old');
			await screen.press('Enter');
			await screen.waitFor(/^>.*devbox\s+opencode-old/m, 'opencode-old selected');
			await screen.press('p');
			const dialog = await screen.waitFor(/Type devbox:opencode-old and press enter/, 'the purge dialog naming the host');
			// The host's own paths, as the host planned them.
			expect(dialog).toContain(`${sandbox.home}/`);
			await screen.type('devbox:opencode-old');
			await screen.press('Enter');
			await screen.waitFor(/purged devbox:opencode-old/, 'the purge done');
			// The host's serve wrote the row through the connection its view polls: the row follows.
			await screen.waitFor(/devbox\s+opencode-old\s+opencode\s+\S+\s+purged\s/, 'the row purged', {timeoutMs: 5000});
			const remote = Registry.open(scenario.registryPath);
			try {
				expect(remote.auditLog('opencode-old').some(a => a.action === 'purge' && a.outcome === 'ok')).toBe(true);
			} finally {
				remote.close();
			}
			const mine = Registry.open(path.join(localState, 'registry.db'));
			try {
				expect(mine.auditLog('opencode-old').some(a => a.action === 'remote:purge.confirm' && a.outcome === 'ok')).toBe(true);
			} finally {
				mine.close();
			}
			await screen.press('q');
			await tmux.waitExit(pane);
		} finally {
			await tmux.kill();
			writeConfig([entry(devbox)]);
		}
	});

	it("the dashboard lists the host's findings by host, and f fixes one there: its untracked grok pane adopted in its registry", async () => {
		const tmux = await localTmuxServer('findings-sock');
		try {
			const pane = await tmux.openWindow('dashboard', [process.execPath, CLI, '--mux', 'tmux', '--tmux-socket', localTmux], {cwd: local.dir});
			const screen = tmux.screen(pane);
			await screen.waitFor(/^\s+devbox\s+\S/m, "devbox's rows in the list", {timeoutMs: 20_000});
			await screen.press('Tab');
			const listed = await screen.waitFor(/untracked-pane\s+devbox:%\d+\s.*runs Grok/, "the host's untracked grok pane in the findings view");
			const paneThere = /untracked-pane\s+devbox:(%\d+)\s.*runs Grok/.exec(listed)?.[1] ?? '';
			const selected = new RegExp(`^>\\s*untracked-pane\\s+devbox:${paneThere}\\s`, 'm');
			for (let i = 0; i < 20 && !selected.test(await screen.text()); i++) await screen.press('j');
			await screen.waitFor(/f: adopt pane .* \(on devbox\)/, "the host's fix, in words, named by host");
			await screen.press('f');
			await screen.waitFor(/devbox: .*adopted pane/, 'the host saying it adopted the pane');
			const remote = Registry.open(scenario.registryPath);
			try {
				expect(remote.list().some(r => r.paneId === paneThere && r.agent === 'grok' && r.status === 'running')).toBe(true);
			} finally {
				remote.close();
			}
			const mine = Registry.open(path.join(localState, 'registry.db'));
			try {
				expect(mine.list().map(r => r.name)).toEqual(['here']);
			} finally {
				mine.close();
			}
			await screen.press('q');
			await tmux.waitExit(pane);
		} finally {
			await tmux.kill();
		}
	});

	it('park and wake on the host over the channel: the checks run there, and the session wakes there', async () => {
		const cwd = path.join(sandbox.work, PROJECTS.claude);
		const id = scenario.ids.claudeLoose;
		const tmuxThere = (args: readonly string[]) => execa('tmux', ['-L', sandbox.tmuxName, ...args], {env: sandbox.env, extendEnv: false});
		// The host's claude from now on: a stand-in that stays idle (the demo's cycles idle, working,
		// blocked), in a new pane.
		installStandin({
			binDir: sandbox.bin,
			name: 'claude',
			script: path.join(REPO, 'dist/src/demo/standin.js'),
			options: {statusScreen: true, startState: 'idle', artifactHome: sandbox.home},
		});
		const made = await tmuxThere(['new-window', '-d', '-P', '-F', '#{pane_id}', '-c', cwd, '--', 'claude', '--resume', id]);
		const pane = made.stdout.trim();
		const remote = Registry.open(scenario.registryPath);
		try {
			remote.insert({name: 'claude-idle', agent: 'claude', cwd, mux: 'tmux', paneId: pane, agentSessionId: id, status: 'running', epoch: Date.now()});
			// An agent at work is refused by the check the host runs on its own pane, and left as it was.
			const busyPane = (
				await tmuxThere([
					'new-window',
					'-d',
					'-P',
					'-F',
					'#{pane_id}',
					'-c',
					cwd,
					'-e',
					`MAM_STANDIN_OPTIONS=${JSON.stringify({startState: 'working'})}`,
					'--',
					'claude',
					'--resume',
					crypto.randomUUID(),
				])
			).stdout.trim();
			remote.insert({
				name: 'claude-busy',
				agent: 'claude',
				cwd,
				mux: 'tmux',
				paneId: busyPane,
				agentSessionId: crypto.randomUUID(),
				status: 'running',
				epoch: Date.now(),
			});
			const busy = await eventually(
				'claude-busy refused as working',
				async () => {
					const run = await cli(['--host', 'devbox', 'park', 'claude-busy', '--json', '--soak', '1']);
					const result = (JSON.parse(run.stdout) as {results: {outcome: string; check?: string; why?: string}[]}).results[0];
					return result?.check === 'idle' ? {run, result} : undefined;
				},
				{timeoutMs: 20_000},
			);
			expect(busy.run.exitCode).toBe(1);
			expect(busy.result).toMatchObject({outcome: 'refused', check: 'idle'});
			expect(remote.list().find(r => r.name === 'claude-busy')?.status).toBe('running');
			expect((await tmuxThere(['list-panes', '-a', '-F', '#{pane_id}'])).stdout.split('\n')).toContain(busyPane);
			// The idle one parks there (retried while its first second of idle soaks).
			const parked = await eventually(
				'claude-idle parked on the host',
				async () => {
					const run = await cli(['--host', 'devbox', 'park', 'claude-idle', '--json', '--soak', '1', '--grace', '5']);
					const result = (JSON.parse(run.stdout) as {results: {outcome: string; check?: string}[]}).results[0];
					return result?.outcome === 'parked'
						? result
						: result?.check === 'soak' || result?.check === 'idle'
							? undefined
							: (() => {
									throw new Error(run.stdout);
								})();
				},
				{timeoutMs: 30_000},
			);
			expect(parked).toMatchObject({outcome: 'parked'});
			expect(remote.list().find(r => r.name === 'claude-idle')?.status).toBe('parked');
			expect(remote.auditLog('claude-idle').some(a => a.action === 'park' && a.outcome === 'ok')).toBe(true);
			await eventually('the parked pane gone there', async () =>
				!(await tmuxThere(['list-panes', '-a', '-F', '#{pane_id}'])).stdout.split('\n').includes(pane) ? true : undefined,
			);
			const mine = Registry.open(path.join(localState, 'registry.db'));
			try {
				expect(
					mine
						.auditLog()
						.filter(a => a.action === 'remote:park')
						.map(a => a.outcome),
				).toEqual(expect.arrayContaining(['started', 'ok']));
			} finally {
				mine.close();
			}
			// Wake: a new pane on the host, on the same conversation.
			const woke = await cli(['--host', 'devbox', 'wake', 'claude-idle', '--json'], 60_000);
			const result = (JSON.parse(woke.stdout) as {results: {outcome: string; paneId?: string; argv?: string[]}[]}).results[0];
			expect(result).toMatchObject({outcome: 'woken'});
			expect(result?.argv).toEqual(expect.arrayContaining([id]));
			const row = remote.list().find(r => r.name === 'claude-idle');
			expect(row).toMatchObject({status: 'running', paneId: result?.paneId});
			expect((await tmuxThere(['list-panes', '-a', '-F', '#{pane_id}'])).stdout.split('\n')).toContain(result?.paneId);
		} finally {
			remote.close();
		}
	});
});
