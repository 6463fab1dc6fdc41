// The in-process measurements: the live supervisor on the large world (refresh cost and herdr
// requests), and the real dashboard (App + store) rendered by Ink to a fake terminal (key latency).
import {EventEmitter} from 'node:events';
import fs from 'node:fs';
import {Session} from 'node:inspector/promises';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import React from 'react';
import {render} from 'ink';
import {App} from '../../components/App.js';
import {TRUNCATED} from '../../components/format.js';
import {AppProvider} from '../../components/StoreContext.js';
import {ParseCache} from '../../src/adapters/common/refresh.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {createHerdrMux} from '../../src/mux/herdr/index.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer, type Action} from '../../src/store/reducer.js';
import {visibleSessions} from '../../src/store/selectors.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore, type Store} from '../../src/store/store.js';
import type {UiActions} from '../../src/store/uiActions.js';
import {startSupervisor, type Supervisor} from '../../src/sync/supervisor.js';
import {realExec} from '../../src/system/exec.js';
import type {Logger} from '../../src/system/logger.js';
import {ParseMemo, parseMemoPath} from '../../src/system/parseMemo.js';
import {createProcessTable} from '../../src/system/processes.js';
import {packageVersion} from '../../src/system/version.js';
import {sleep, summarize, waitFor, type Summary} from './stats.js';
import type {BenchWorld, ConversationSpec} from './world.js';

/** What the bench asks of its herdr host. */
export interface HerdrCounter {
	/** Requests the fake herdr received so far, by method. */
	count(): Promise<Record<string, number>>;
	/** Change a pane's agent status, as herdr's detection would (a pane.agent_status_changed event). */
	setStatus(paneId: string, status: 'idle' | 'working'): void;
}

export interface LiveRig {
	readonly store: Store<AppState, Action>;
	readonly supervisor: Supervisor;
	readonly mux: Multiplexer;
	/** Wall time of the first complete refresh (everything read from disk for the first time). */
	readonly firstRefreshMs: number;
	/** This process's CPU time over that refresh (user + system): steadier than wall time on a busy machine. */
	readonly firstRefreshCpuMs: number;
	/** Refreshes in the store that listed the panes again (a disk-only refresh reuses the last listing). */
	listedSnapshots(): number;
	/** With MAM_BENCH_PROFILE: a CPU profile of `seconds` of the idle supervisor (DIR/idle.cpuprofile), and the ms its samples were busy. */
	profileIdle(seconds: number): Promise<number | undefined>;
	/** Stops everything; resolves to the CPU ms of writing the parse memo's last batch (as the dashboard does when it quits). */
	dispose(): Promise<number>;
}

/** The dashboard's live side, as src/main.tsx wires it, on the bench world. */
export async function startLive(world: BenchWorld, herdrSocket: string, profileName = 'first-refresh'): Promise<LiveRig> {
	const env = world.env({HERDR_SOCKET_PATH: herdrSocket});
	const processes = createProcessTable();
	// A refresh that fails is logged, not thrown: the bench says so rather than timing out in silence.
	const say = (level: string) => (message: string, detail?: unknown) =>
		process.stderr.write(`[bench live ${level}] ${message}${detail === undefined ? '' : ` ${String(detail)}`}\n`);
	const logger: Logger = {debug: () => undefined, info: () => undefined, warn: say('warn'), error: say('error')};
	// One parse cache for the process, with the parse memo under MAM_HOME, as src/world/world.ts
	// hands it to every caller: a second startLive on the same world is a restart.
	const parses = new ParseCache(new ParseMemo(parseMemoPath(world.stateDir), {appVersion: packageVersion(), log: logger}));
	const ctx: AdapterContext = {parses, home: world.home, ownHome: true, env, exec: realExec, processes, now: Date.now, tmpDir: os.tmpdir()};
	const registry = Registry.open(world.registryPath);
	const store = createStore(reducer, initialState({sessions: registry.list(), lastRefresh: Date.now()}));
	registry.close();
	const mux = createHerdrMux({socketPath: herdrSocket, env, processes});
	let snapshots = 0;
	// Listings finished, and snapshots that came after a new one (the supervisor dispatches right after).
	let listings = 0;
	let listingsSeen = 0;
	let listedSnapshots = 0;
	const listPanes = mux.listPanes.bind(mux);
	mux.listPanes = async () => {
		const panes = await listPanes();
		listings += 1;
		return panes;
	};
	// A start measured after another in this process (the run without a memo) begins with an empty
	// heap, as a new process does: the last rig's garbage is not this start's GC cost.
	collectGarbage();
	// MAM_BENCH_PROFILE=DIR: a V8 CPU profile of the first complete refresh (open it in Chrome's DevTools).
	const profile = await startProfile(process.env['MAM_BENCH_PROFILE']);
	const started = performance.now();
	const cpuBefore = process.cpuUsage();
	// No coalescing delay: the figure is the refresh itself, not the wait for a burst to end.
	const onSnapshot = () => {
		snapshots += 1;
		if (listings > listingsSeen) listedSnapshots += 1;
		listingsSeen = listings;
	};
	const supervisor = startSupervisor({store, mux, ctx, processes, discoverySeconds: 5, coalesceMs: 0, onSnapshot, logger});
	await waitFor('the first complete refresh', () => (snapshots > 0 ? true : undefined), 600_000, 20);
	const firstRefreshMs = performance.now() - started;
	const cpu = process.cpuUsage(cpuBefore);
	const firstRefreshCpuMs = (cpu.user + cpu.system) / 1000;
	await profile?.(profileName);
	return {
		store,
		supervisor,
		mux,
		firstRefreshMs,
		firstRefreshCpuMs,
		listedSnapshots: () => listedSnapshots,
		async profileIdle(seconds) {
			const idle = await startProfile(process.env['MAM_BENCH_PROFILE']);
			if (!idle) return undefined;
			await sleep(seconds * 1000);
			return idle('idle');
		},
		async dispose() {
			await supervisor.dispose();
			await mux.dispose();
			// The memo's last batch, as the dashboard writes it when it quits.
			const before = process.cpuUsage();
			parses.close();
			const spent = process.cpuUsage(before);
			return (spent.user + spent.system) / 1000;
		},
	};
}

/** A full GC now (V8's `gc()`, made reachable at run time: the bench runs without --expose-gc). */
function collectGarbage(): void {
	v8.setFlagsFromString('--expose-gc');
	(vm.runInNewContext('gc') as () => void)();
}

/**
 * Start V8's sampling profiler when `dir` is set; the returned function writes `dir/<name>.cpuprofile`
 * and says how long the samples found the thread busy (not idle) in ms: the profiler's own sampling
 * thread makes the process's CPU time useless while it runs.
 */
async function startProfile(dir: string | undefined): Promise<((name: string) => Promise<number>) | undefined> {
	if (!dir) return undefined;
	const session = new Session();
	session.connect();
	await session.post('Profiler.enable');
	await session.post('Profiler.setSamplingInterval', {interval: 200});
	await session.post('Profiler.start');
	return async name => {
		const {profile} = await session.post('Profiler.stop');
		fs.mkdirSync(dir, {recursive: true});
		fs.writeFileSync(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
		session.disconnect();
		const idle = new Set(profile.nodes.filter(n => n.callFrame.functionName === '(idle)').map(n => n.id));
		let busy = 0;
		profile.samples?.forEach((id, i) => {
			if (!idle.has(id)) busy += profile.timeDeltas?.[i] ?? 0;
		});
		return busy / 1000;
	};
}

export interface RefreshResult {
	/** A conversation file grew: write → store shows the new turn (inotify, then a disk-only refresh). */
	readonly fileChange: Summary;
	/** herdr requests made while the file changes were taken in. */
	readonly fileChangeRequests: Summary;
	/** A pane event (herdr pane.agent_status_changed): status set → store shows it. Includes herdr's 100 ms event tick. */
	readonly paneEvent: Summary;
	/** The same event → the full refresh it asks for (pane listing, /proc, join) is in the store. */
	readonly paneEventListing: Summary;
	readonly paneEventRequests: Summary;
}

const total = (counts: Record<string, number>, except: readonly string[] = []) =>
	Object.entries(counts)
		.filter(([method]) => !except.includes(method))
		.reduce((n, [, c]) => n + c, 0);

/** A claude conversation in a registered cwd: the conversations view lists it, so its new turn must show. */
function targetConversation(world: BenchWorld, rig: LiveRig, run: number): ConversationSpec {
	const listed = new Set(rig.store.getState().conversations.map(c => `${c.agent}\0${c.id}`));
	const candidates = world.conversations.filter(c => c.agent === 'claude' && !c.parentId && c.file && listed.has(`claude\0${c.id}`));
	const chosen = candidates[(run * 7919) % Math.max(1, candidates.length)];
	if (!chosen) throw new Error('no listed claude conversation to change');
	return chosen;
}

/** `runs` file changes and `runs` pane events, one at a time, each waited for in the store. */
export async function measureRefresh(world: BenchWorld, rig: LiveRig, herdr: HerdrCounter, runs: number): Promise<RefreshResult> {
	// Steady state: the refreshes start-up queued (a full one follows the first) are done first.
	await rig.supervisor.refresh();
	const fileProfile = await startProfile(process.env['MAM_BENCH_KEYS_PROFILE']);
	const fileChange: number[] = [];
	const fileChangeRequests: number[] = [];
	for (let run = 0; run < runs; run++) {
		const conversation = targetConversation(world, rig, run);
		// A turn timestamped in the future makes a distinctive updatedAt to wait for.
		const at = Date.now() + 86_400_000 + run;
		const before = await herdr.count();
		const t0 = performance.now();
		world.appendTurn(conversation, at);
		// The list is looked through only when the store has a new one: scanning 20,000
		// conversations every millisecond would time the bench's own polling (it shares the thread).
		let seen: AppState['conversations'] | undefined;
		const updated = () => {
			const {conversations} = rig.store.getState();
			if (conversations === seen) return undefined;
			seen = conversations;
			return conversations.some(c => c.id === conversation.id && c.updatedAt === at) ? true : undefined;
		};
		await waitFor(`conversation ${conversation.id} updated`, updated, 30_000, 1);
		fileChange.push(performance.now() - t0);
		await sleep(300);
		fileChangeRequests.push(total(await herdr.count()) - total(before));
	}
	await fileProfile?.('file-change');
	const paneEvent: number[] = [];
	const paneEventListing: number[] = [];
	const paneEventRequests: number[] = [];
	const panes = rig.store.getState().panes.filter(p => !p.isSelf && p.agent !== undefined);
	for (let run = 0; run < runs; run++) {
		const pane = panes[run % panes.length];
		if (!pane) break;
		const current = rig.store.getState().panes.find(p => p.id === pane.id)?.agentStatus;
		const status = current === 'working' ? 'idle' : 'working';
		const before = await herdr.count();
		const listedBefore = rig.listedSnapshots();
		const t0 = performance.now();
		herdr.setStatus(pane.id, status);
		let seenPanes: AppState['panes'] | undefined;
		const shown = () => {
			const {panes: now} = rig.store.getState();
			if (now === seenPanes) return undefined;
			seenPanes = now;
			return now.some(p => p.id === pane.id && p.agentStatus === status) ? true : undefined;
		};
		await waitFor(`pane ${pane.id} ${status}`, shown, 30_000, 1);
		paneEvent.push(performance.now() - t0);
		// The status may show from the event alone; the refresh it asks for lands after.
		await waitFor(
			`a listing after pane ${pane.id}'s event`,
			() => (rig.listedSnapshots() > listedBefore && rig.store.getState().panes.some(p => p.id === pane.id && p.agentStatus === status) ? true : undefined),
			30_000,
			1,
		);
		paneEventListing.push(performance.now() - t0);
		await sleep(300);
		paneEventRequests.push(total(await herdr.count()) - total(before));
	}
	return {
		fileChange: summarize(fileChange),
		fileChangeRequests: summarize(fileChangeRequests),
		paneEvent: summarize(paneEvent),
		paneEventListing: summarize(paneEventListing),
		paneEventRequests: summarize(paneEventRequests),
	};
}

/** A terminal for Ink: records every write with its time. */
class FakeStdout extends EventEmitter {
	readonly isTTY = true;
	readonly columns: number;
	readonly rows: number;
	readonly writes: {at: number; text: string}[] = [];
	constructor(size: TerminalSize) {
		super();
		this.columns = size.columns;
		this.rows = size.rows;
	}
	write = (text: string): boolean => {
		this.writes.push({at: performance.now(), text});
		return true;
	};
}

/** Keystrokes for Ink, delivered the way a raw-mode TTY does. */
class FakeStdin extends EventEmitter {
	readonly isTTY = true;
	private data: string | null = null;
	press(data: string): void {
		this.data = data;
		this.emit('readable');
		this.emit('data', data);
	}
	read = (): string | null => {
		const {data} = this;
		this.data = null;
		return data;
	};
	setEncoding(): void {}
	setRawMode(): void {}
	resume(): void {}
	pause(): void {}
	ref(): void {}
	unref(): void {}
}

const noop = () => undefined;
const NO_ACTIONS: UiActions = {
	quit: noop,
	refresh: noop,
	focus: noop,
	resume: noop,
	stop: noop,
	park: noop,
	wake: noop,
	openPurge: noop,
	confirmPurge: noop,
	applyFix: noop,
	newSession: noop,
	adopt: noop,
	resumeConversation: noop,
	openPurgeConversation: noop,
	openStop: noop,
	loadAllConversations: noop,
	undoPurge: noop,
	loadTrash: noop,
	restoreTrash: noop,
	emptyTrash: noop,
};

const ANSI = /\u001B\[[0-9;?]*[A-Za-z]/g;
const DOWN = '\u001B[B';
const UP = '\u001B[A';

/** The name cell as the table shows it: the whole name, or its start cut with `…` when the column is narrower. */
function nameCellMatches(cell: string, name: string): boolean {
	return cell === name || (cell.endsWith(TRUNCATED) && cell.length > 4 && name.startsWith(cell.slice(0, -1)));
}

/** Does this write show `name`'s row selected (the `>` marker the table puts on the cursor row)? */
function showsSelected(text: string, name: string): boolean {
	return text
		.replace(ANSI, '')
		.split('\n')
		.some(line => line.startsWith('>') && nameCellMatches(line.slice(3).split(' ')[0] ?? '', name));
}

/** Terminal geometry for the key-latency run. */
export interface TerminalSize {
	readonly columns: number;
	readonly rows: number;
}

/**
 * Key latency: the real App on `store` (500 rows, live data in), rendered by Ink as in the
 * dashboard (not debug mode: throttled at 30 fps, first frame of a burst at once). Each press
 * waits `gapMs` after the last frame, so every one is a fresh keystroke, not a held key.
 */
export async function measureKeys(store: Store<AppState, Action>, home: string, presses: number, size: TerminalSize, gapMs = 60): Promise<Summary> {
	const stdout = new FakeStdout(size);
	const stdin = new FakeStdin();
	const instance = render(React.createElement(AppProvider, {store, actions: NO_ACTIONS, children: React.createElement(App, {home})}), {
		stdout: stdout as unknown as NodeJS.WriteStream,
		stdin: stdin as unknown as NodeJS.ReadStream,
		stderr: stdout as unknown as NodeJS.WriteStream,
		exitOnCtrlC: false,
		patchConsole: false,
	});
	try {
		await sleep(500);
		const keyProfile = await startProfile(process.env['MAM_BENCH_KEYS_PROFILE']);
		const latencies: number[] = [];
		for (let i = 0; i < presses; i++) {
			// Down through the list, then back up: the window scrolls both ways.
			const key = Math.floor(i / 40) % 2 === 0 ? DOWN : UP;
			const state = store.getState();
			const rows = visibleSessions(state);
			const next = Math.max(0, Math.min(rows.length - 1, state.ui.cursor + (key === DOWN ? 1 : -1)));
			const name = rows[next]?.name;
			if (!name || next === state.ui.cursor) continue;
			const from = stdout.writes.length;
			const t0 = performance.now();
			stdin.press(key);
			const frame = await waitFor(`the cursor on ${name}`, () => stdout.writes.slice(from).find(w => showsSelected(w.text, name)), 5_000, 0);
			latencies.push(frame.at - t0);
			await sleep(gapMs);
		}
		await keyProfile?.(`keys-${size.columns}`);
		return summarize(latencies);
	} finally {
		instance.unmount();
	}
}
