import type {Pane, ProcessRef} from '../../domain/types.js';
import {pidIndex, processTree} from '../../system/processes.js';
import {ADAPTERS} from '../../adapters/index.js';
import {treeAgent} from '../../domain/paneAgent.js';
import {MuxError} from '../types.js';
import {sameShells, trusted, type RememberedShell, type ShellCache} from './shellCache.js';
import type {HerdrConnection} from './connection.js';
import {parseProcessInfo, type WirePane} from './wire.js';

// herdr's panes as mam-tui's: the wire pane plus the process tree under its shell. A terminal's
// shell pid never changes for the terminal's life, so it is kept by `terminal_id` (checked
// against the pid's start time, so a reused pid is noticed) and saved for the next mam-tui
// process (shellCache.ts); the tree under it is re-read from /proc each listing.

/** How many `pane.process_info` calls run at once when many new terminals appear together. */
const PROCESS_INFO_CONCURRENCY = 8;

interface ShellEntry {
	readonly pid: number;
	startTime?: number;
}

async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
	const queue = [...items];
	const workers = Array.from({length: Math.min(limit, queue.length)}, async () => {
		for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
	});
	await Promise.all(workers);
}

/** The shell pid of each herdr terminal, learned once (from herdr, or a remembered file /proc confirms). */
export class HerdrShells {
	private readonly shells = new Map<string, ShellEntry>();
	private readonly connection: HerdrConnection;
	private readonly cache: ShellCache | undefined;
	private readonly readCache: boolean;
	private remembered: readonly RememberedShell[] | undefined;
	private savedShells: readonly RememberedShell[] | undefined;

	constructor(connection: HerdrConnection, cache: ShellCache | undefined, readCache: boolean) {
		this.connection = connection;
		this.cache = cache;
		this.readCache = readCache;
	}

	private get socketPath(): string {
		return this.connection.socketPath;
	}

	/** The remembered shells still to check against /proc (read from the cache file once). */
	pendingRemembered(): boolean {
		if (this.remembered === undefined) {
			this.remembered = this.readCache ? (this.cache?.load(this.socketPath) ?? []) : [];
			// The file as read: an unchanged set of shells is not written back (each status run rewrote it).
			if (this.remembered.length > 0) this.savedShells = this.remembered;
		}
		return this.remembered.length > 0;
	}

	/** The shell of a terminal, when known. */
	of(terminalId: string): ShellEntry | undefined {
		return this.shells.get(terminalId);
	}

	/** Fetch shell pids for terminals not seen before (concurrently: one round, not one per pane). How many were asked. */
	async fillShells(panes: readonly WirePane[]): Promise<number> {
		const fresh = panes.filter(p => !this.shells.has(p.terminalId));
		await mapLimit(fresh, PROCESS_INFO_CONCURRENCY, async pane => {
			try {
				const info = await this.connection.ask('pane.process_info', {pane_id: pane.paneId}, parseProcessInfo);
				if (info.shellPid) this.shells.set(pane.terminalId, {pid: info.shellPid});
			} catch (error) {
				// A pane that closed between the snapshot and this call is simply gone.
				if (error instanceof MuxError && error.code === 'pane_not_found') return;
				throw error;
			}
		});
		return fresh.length;
	}

	/** Shells remembered by an earlier process, for terminals we have not asked about, once /proc confirms them. */
	adoptRemembered(panes: readonly WirePane[], table: readonly ProcessRef[]): void {
		const checked = trusted(this.remembered ?? [], table);
		for (const pane of panes) {
			const shell = checked.get(pane.terminalId);
			if (shell && !this.shells.has(pane.terminalId)) this.shells.set(pane.terminalId, {pid: shell.pid, startTime: shell.startTime});
		}
		this.remembered = [];
	}

	/** Save the confirmed shells (with their parent's identity) when they changed since the last save. */
	saveShells(table: readonly ProcessRef[]): void {
		const cache = this.cache;
		if (!cache) return;
		const byPid = pidIndex(table);
		const shells: RememberedShell[] = [];
		for (const [terminalId, entry] of this.shells) {
			const proc = byPid.get(entry.pid);
			const parent = proc ? byPid.get(proc.ppid) : undefined;
			if (!proc || !parent || entry.startTime === undefined) continue;
			shells.push({terminalId, pid: entry.pid, startTime: entry.startTime, ppid: proc.ppid, parentStartTime: parent.startTime});
		}
		if (this.savedShells !== undefined && sameShells(shells, this.savedShells)) return;
		this.savedShells = shells;
		cache.save(this.socketPath, shells);
	}

	/** Forget terminals that left, and shells whose pid died or was reused. */
	pruneShells(panes: readonly WirePane[], table: readonly ProcessRef[]): void {
		const live = new Set(panes.map(p => p.terminalId));
		const byPid = pidIndex(table);
		for (const [terminal, entry] of this.shells) {
			const proc = byPid.get(entry.pid);
			if (!live.has(terminal) || !proc || (entry.startTime !== undefined && entry.startTime !== proc.startTime)) {
				this.shells.delete(terminal);
				continue;
			}
			entry.startTime ??= proc.startTime;
		}
	}
}

/** What mapping a wire pane needs to know besides the pane. */
export interface PaneMapping {
	readonly shells: HerdrShells;
	readonly socketPath: string;
	/** HERDR_PANE_ID, when issued by this server. */
	readonly selfPaneId: string | undefined;
	/** mam-tui's own pid and its ancestors: a pane whose shell is one of them is mam-tui's own. */
	readonly self: ReadonlySet<number>;
}

/** One wire pane with its process tree, agent and server. */
export function toPane(wire: WirePane, table: readonly ProcessRef[], map: PaneMapping): Pane {
	const shell = map.shells.of(wire.terminalId);
	const tree = shell ? processTree(table, shell.pid) : [];
	const isSelf = wire.paneId === map.selfPaneId || (shell !== undefined && map.self.has(shell.pid));
	// herdr's own detection first; a process match covers what it cannot see (background jobs).
	const agent = isSelf ? undefined : (wire.agent ?? treeAgent(tree, ADAPTERS));
	const title = wire.label ?? wire.title ?? wire.terminalTitle;
	const cwd = wire.cwd ?? wire.foregroundCwd;
	return {
		id: wire.paneId,
		mux: 'herdr',
		...(cwd ? {cwd} : {}),
		...(wire.foregroundCwd ? {foregroundCwd: wire.foregroundCwd} : {}),
		...(title ? {title} : {}),
		...(agent ? {agent} : {}),
		agentStatus: isSelf ? 'unknown' : wire.agentStatus,
		// Only id references are session ids; a path reference (pi, omp) is not.
		...(!isSelf && wire.agentSession?.kind === 'id' ? {agentSessionId: wire.agentSession.value} : {}),
		...(shell ? {shellPid: shell.pid} : {}),
		processes: tree,
		isSelf,
		placement: {workspace: wire.workspaceId, tab: wire.tabId},
		...serverOf(tree, table, map.socketPath),
	};
}

/** The herdr server is the parent of every pane's shell: its pid and start time, with the socket, say which server. */
function serverOf(tree: readonly ProcessRef[], table: readonly ProcessRef[], socketPath: string): {server?: string} {
	const shell = tree[0];
	const server = shell ? pidIndex(table).get(shell.ppid) : undefined;
	return server ? {server: `herdr:${socketPath}:${server.pid}:${server.startTime}`} : {};
}
