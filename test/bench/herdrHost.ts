// The benchmark's herdr: the fake herdr of test/support in a process of its own (so its work
// is not timed as mam-tui's), with one pane per entry of the pane plan. Started with fork();
// talks over the IPC channel:
//   → {type: 'ready', panes: [pane ids, in plan order], pid}
//   ← {type: 'count'}            → {type: 'count', requests, methods: {name: n}}
//   ← {type: 'status', paneId, status}   (a pane event: the agent's status changes, as herdr's screen detection reports it)
//   ← {type: 'stop'}             (kills the tmux server with every pane, then exits; also when the bench goes away)
import fs from 'node:fs';
import {startFakeHerdr, type FakeHerdr} from '../support/fakeHerdr.js';
import {privateTmux} from '../support/privateTmux.js';

/** One pane to open: its cwd and the command its shell execs (`/bin/sh -i` for a plain shell). */
export interface PanePlan {
	readonly cwd: string;
	readonly command: readonly string[];
}

export interface HostArgs {
	readonly socket: string;
	readonly tmuxSocket: string;
	readonly planFile: string;
}

type HostMessage = {type: 'count'} | {type: 'status'; paneId: string; status: 'idle' | 'working' | 'blocked' | 'done'} | {type: 'stop'};

/** Panes opened side by side, a few at a time (each is a tmux window and a process). */
const OPEN_CONCURRENCY = 8;

/** Open the panes: one workspace per cwd (as a developer's herdr has), every further pane a split of it. */
async function openPanes(fake: FakeHerdr, plan: readonly PanePlan[]): Promise<string[]> {
	const ids: (string | undefined)[] = plan.map(() => undefined);
	const envOf = (pane: PanePlan) => ({MAM_BENCH_PANE: pane.command.join(' ')});
	const roots = new Map<string, string>();
	for (const [i, pane] of plan.entries()) {
		if (roots.has(pane.cwd)) continue;
		const id = await fake.openWorkspace(pane.cwd, envOf(pane));
		roots.set(pane.cwd, id);
		ids[i] = id;
	}
	const rest = plan.flatMap((pane, i) => (ids[i] === undefined ? [{i, pane}] : []));
	let cursor = 0;
	await Promise.all(
		Array.from({length: OPEN_CONCURRENCY}, async () => {
			for (let item = rest[cursor++]; item !== undefined; item = rest[cursor++]) {
				ids[item.i] = await fake.split(roots.get(item.pane.cwd) ?? '', item.pane.cwd, envOf(item.pane));
			}
		}),
	);
	return ids.map(id => id ?? '');
}

async function main(): Promise<void> {
	const [socket, tmuxSocket, planFile] = process.argv.slice(2);
	if (!socket || !tmuxSocket || !planFile || !process.send) throw new Error('usage: fork(herdrHost.ts, [socket, tmuxSocket, planFile])');
	const plan = JSON.parse(fs.readFileSync(planFile, 'utf8')) as PanePlan[];
	const fake = await startFakeHerdr({
		socketPath: socket,
		tmux: privateTmux('mam-bench', tmuxSocket),
		// The tests validate every line against herdr's schema; here that would time the validator.
		validate: false,
		// Stand-in agents never exit: looking for exits (500 panes) ten times a second would only
		// burn a core of this shared machine and keep the fake from answering.
		watchMs: 30_000,
		// A pane's shell execs its command: the stand-in agent, or an interactive shell.
		shell: ['/bin/sh', '-c', 'exec $MAM_BENCH_PANE'],
	});
	const panes = await openPanes(fake, plan);
	const send = (message: unknown) => process.send?.(message);
	process.on('message', (raw: HostMessage) => {
		if (raw.type === 'count') {
			const methods: Record<string, number> = {};
			for (const m of fake.methods) methods[m] = (methods[m] ?? 0) + 1;
			send({type: 'count', requests: fake.methods.length, methods});
		} else if (raw.type === 'status') {
			fake.setAgentStatus(raw.paneId, raw.status);
		} else if (raw.type === 'stop') {
			void stop();
		}
	});
	// Killing the tmux server ends every pane at once (SIGHUP); the fake's pane-by-pane close
	// would take minutes at 500 panes. Also when the bench itself went away.
	const stop = async () => {
		await fake.stopListening().catch(() => undefined);
		await fake.tmux.kill().catch(() => undefined);
		process.exit(0);
	};
	process.on('SIGTERM', () => void stop());
	process.on('disconnect', () => void stop());
	send({type: 'ready', panes, pid: process.pid});
}

await main();
