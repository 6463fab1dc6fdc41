// The "many machines" lines of `npm run bench`: three hosts over loopback ssh (a real sshd each,
// test/remote/support/sshd.ts), 100 sessions each. Run alone: `node --import tsx test/bench/remote.ts`.
import fs from 'node:fs';
import path from 'node:path';
import {stringify} from 'yaml';
import type {HostConfig} from '../../src/config/hosts.js';
import {Registry} from '../../src/registry/registry.js';
import {HostConnection} from '../../src/remote/client.js';
import {privateTmux} from '../support/privateTmux.js';
import {tempDir} from '../helpers/tmp.js';
import {BUILT_CLI, startSshd, type SshServer} from '../remote/support/sshd.js';
import {cpuSeconds, sleep, summarize, waitFor} from './stats.js';

export interface RemoteLine {
	readonly metric: string;
	readonly value: string;
	readonly target: string;
	readonly pass: boolean | null;
	readonly detail?: string;
}

const HOSTS = 3;
const SESSIONS = 100;
const MARKER = 'MAM_BENCH_REMOTE';

/** The pids of processes whose environment carries `marker=value` and whose argv has `serve --stdio`. */
function servePids(value: string): number[] {
	const out: number[] = [];
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
			if (!argv.includes('serve\0--stdio')) continue;
			if (fs.readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`${MARKER}=${value}`)) out.push(Number(entry));
		} catch {
			// gone, or not ours to read
		}
	}
	return out;
}

export async function measureRemote(log: (line: string) => void, idleSeconds = 30): Promise<RemoteLine[]> {
	const base = tempDir('mam-bench-remote-');
	const servers: SshServer[] = [];
	const hosts: HostConfig[] = [];
	const tmux = privateTmux('mam-bench-remote');
	const lines: RemoteLine[] = [];
	try {
		for (let h = 0; h < HOSTS; h++) {
			const home = path.join(base.dir, `host${h}`, 'home');
			const state = path.join(base.dir, `host${h}`, 'state');
			fs.mkdirSync(home, {recursive: true});
			fs.mkdirSync(state, {recursive: true});
			const registry = Registry.open(path.join(state, 'registry.db'));
			for (let i = 0; i < SESSIONS; i++)
				registry.insert({
					name: `s${h}-${String(i).padStart(3, '0')}`,
					agent: 'claude',
					cwd: home,
					mux: 'tmux',
					agentSessionId: null,
					status: 'stopped',
					epoch: Date.now(),
				});
			registry.close();
			const server = await startSshd({HOME: home, MAM_HOME: state, PATH: process.env['PATH'] ?? '/usr/bin:/bin', TMUX_TMPDIR: base.dir, [MARKER]: base.dir});
			servers.push(server);
			hosts.push(server.host(`host${h}`, ['--mux', 'tmux', '--tmux-socket', `mam-bench-remote-none-${h}`]));
		}
		// A host's rows appear: start → its first snapshot, all three at once.
		const appear: number[] = [];
		// As the dashboard asks: the rows at once, live data after them.
		const connections = hosts.map(host => new HostConnection({host, reconnect: false, wholeFirst: false}));
		const t0 = performance.now();
		await Promise.all(
			connections.map(async c => {
				c.start();
				await c.settled();
				if (c.state().state !== 'up' || (c.snapshot()?.sessions.length ?? 0) < SESSIONS) throw new Error(`${c.host.name}: ${c.state().message}`);
				appear.push(performance.now() - t0);
			}),
		);
		const rows = summarize(appear);
		lines.push({
			metric: `a host's rows appear after start (${HOSTS} hosts × ${SESSIONS} sessions, loopback ssh)`,
			value: `max ${rows.max.toFixed(0)} ms`,
			target: '≤ 1500 ms',
			pass: rows.max <= 1500,
			detail: `per host: ${appear.map(a => a.toFixed(0)).join(', ')} ms`,
		});
		log(`remote: rows appear max ${rows.max.toFixed(0)} ms`);
		// A change the host saw (its serve pushed it, stamped with its clock) → here, in the rows.
		const first = connections[0];
		if (!first) throw new Error('no host');
		const latencies: number[] = [];
		for (let i = 0; i < 10; i++) {
			const name = `new-${i}`;
			const seen = new Promise<number>(resolve => {
				const off = first.onChange(() => {
					if (first.snapshot()?.sessions.some(s => s['name'] === name)) {
						off();
						resolve(Date.now() - (first.snapshotAt() ?? Date.now()));
					}
				});
			});
			const registry = Registry.open(path.join(base.dir, 'host0', 'state', 'registry.db'));
			registry.insert({name, agent: 'claude', cwd: base.dir, mux: 'tmux', agentSessionId: null, status: 'stopped', epoch: Date.now()});
			registry.close();
			latencies.push(await seen);
		}
		const change = summarize(latencies);
		lines.push({
			metric: 'a change on a host → here (serve pushes it → rows updated locally)',
			value: `p50 ${change.median.toFixed(1)} ms, max ${change.max.toFixed(1)} ms`,
			target: '≤ 100 ms',
			pass: change.max <= 100,
			detail: `n=${change.n}`,
		});
		log(`remote: change latency p50 ${change.median.toFixed(1)} ms`);
		for (const c of connections) c.close();
		// Idle: the dashboard with three hosts in a private tmux window, and each host's serve.
		const localHome = path.join(base.dir, 'local');
		fs.mkdirSync(path.join(localHome, '.config', 'mam'), {recursive: true});
		fs.writeFileSync(path.join(localHome, '.config', 'mam', 'config.yaml'), stringify({hosts: hosts.map(h => ({...h, command: [...h.command]}))}));
		await tmux.run(['new-session', '-d', '-s', 'bench', '-x', '120', '-y', '36']);
		const made = await tmux.run([
			'new-window',
			'-d',
			'-P',
			'-F',
			'#{pane_pid}',
			'-t',
			'bench:',
			'-e',
			`HOME=${localHome}`,
			'-e',
			`MAM_HOME=${path.join(localHome, 'state')}`,
			'-e',
			'NODE_ENV=production',
			'--',
			process.execPath,
			BUILT_CLI,
			'--mux',
			'tmux',
			'--tmux-socket',
			tmux.name,
		]);
		const dashboard = Number(made.stdout.trim());
		// Past start-up (first refreshes, the first GC; the serves of the connections above have ended), then a quiet window.
		await sleep(15_000);
		const serves = await waitFor(
			'three serves',
			() => {
				const pids = servePids(base.dir);
				return pids.length === HOSTS ? pids : undefined;
			},
			20_000,
			100,
		);
		const before = {dashboard: cpuSeconds(dashboard), serves: serves.map(cpuSeconds)};
		await sleep(idleSeconds * 1000);
		const dash = ((cpuSeconds(dashboard) - before.dashboard) / idleSeconds) * 100;
		const each = serves.map((pid, i) => ((cpuSeconds(pid) - (before.serves[i] ?? 0)) / idleSeconds) * 100);
		lines.push({metric: `idle CPU over ${idleSeconds} s, dashboard with ${HOSTS} hosts`, value: `${dash.toFixed(2)} %`, target: '≤ 1 %', pass: dash <= 1});
		lines.push({
			metric: `idle CPU over ${idleSeconds} s, each remote serve`,
			value: `max ${Math.max(...each).toFixed(2)} %`,
			target: '≤ 1 %',
			pass: Math.max(...each) <= 1,
			detail: each.map(e => `${e.toFixed(2)} %`).join(', '),
		});
		const screen = await tmux.run(['capture-pane', '-p', '-t', 'bench:1']);
		fs.writeFileSync(path.join(process.cwd(), 'bench-remote-screen.txt'), screen.stdout);
		log(`remote: idle dashboard ${dash.toFixed(2)} %, serves ${each.map(e => e.toFixed(2)).join(', ')} %`);
		return lines;
	} finally {
		await tmux.kill();
		for (const s of servers) await s.stop();
		base.dispose();
	}
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const lines = await measureRemote(line => process.stderr.write(`${line}\n`), Number(process.env['IDLE_SECONDS'] ?? 30));
	for (const l of lines)
		process.stdout.write(`${l.metric}  ${l.value}  ${l.target}  ${l.pass === null ? 'info' : l.pass ? 'PASS' : 'MISS'}${l.detail ? `  (${l.detail})` : ''}\n`);
}
