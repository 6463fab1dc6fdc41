// Kept whole (about 415 lines): the one reader of /proc. The listing, the open-file passes and the
// table's snapshot share one rule for "the same process" (pid + start time, and what exec changes),
// which the kept argv and the kept open files both rely on: it is checked in one file.
import fs from 'node:fs';
import {monotonicMs} from './clock.js';
import {descendants} from './descendants.js';
import type {ProcessRef} from '../domain/types.js';

/**
 * The process-table port. Read from /proc directly: one pass gives pid, ppid, start time, argv
 * and cwd for every process, which ps-list cannot (it has no start time), and costs no subprocess.
 */
export interface ProcessTable {
	/** Every live process, with start times so a reused pid is told apart. */
	list(): Promise<readonly ProcessRef[]>;
	/** One process, or undefined when it is gone. */
	get(pid: number): Promise<ProcessRef | undefined>;
	/** Processes holding any of `paths` open (file descriptors), with the path each holds. */
	holders(paths: readonly string[]): Promise<readonly Holder[]>;
	/** Optional: every open file of every process in one pass (one entry per process and path). */
	openFiles?(): Promise<readonly OpenFile[]>;
	/**
	 * Optional: the open files of `pids` alone (one entry per process and path), read now. A
	 * caller that asks about its agent's few processes then reads their fd folders, not those of
	 * every process on the machine.
	 */
	openFilesOfPids?(pids: readonly number[]): Promise<readonly OpenFile[]>;
	/**
	 * Optional: `openFiles` for a view (a refresh's in-use column), not for a check that decides:
	 * a process whose pid, start time and number of open files (the size of `/proc/<pid>/fd`) are
	 * as at the table's last such pass keeps the files read then; only new or changed processes'
	 * fd folders are read. A minute's listing of a thousand quiet processes then costs a stat
	 * each. Purge, resume and stop ask `holders` and `openFiles`, which read every process now.
	 */
	openFilesKept?(): Promise<readonly OpenFile[]>;
	/**
	 * Optional: the last `list()` pass if it began at or after `since` (a `monotonicMs()`
	 * time), else undefined. Two readers of one moment (the mux's pane listing and the live
	 * refresh) then share one pass over /proc instead of making two.
	 */
	listedSince?(since: number): readonly ProcessRef[] | undefined;
}

/** A path some process holds open. */
export interface OpenFile {
	readonly pid: number;
	readonly path: string;
}

export interface Holder {
	readonly pid: number;
	readonly startTime: number;
	readonly command: string;
	readonly argv: readonly string[];
	readonly path: string;
}

/** Parse /proc/<pid>/stat: the comm field may contain spaces and parentheses. */
export function parseStat(
	text: string,
): {name: string; state: string; ppid: number; pgid: number; sid: number; startTime: number; startStack: number} | undefined {
	const open = text.indexOf('(');
	const close = text.lastIndexOf(')');
	if (open < 0 || close < open) return undefined;
	const name = text.slice(open + 1, close);
	// fields[0] is field 3 (state); field N is fields[N - 3]. Only the first twenty-six are cut out:
	// a table parses hundreds of these, and splitting all fifty-odd fields was most of that.
	const fields: string[] = [];
	for (let at = close + 2; fields.length < 26 && at <= text.length;) {
		const space = text.indexOf(' ', at);
		const end = space < 0 ? text.length : space;
		fields.push(text.slice(at, end));
		at = end + 1;
	}
	const state = fields[0] ?? '';
	const ppid = Number(fields[1]);
	const pgid = Number(fields[2]);
	const sid = Number(fields[3]);
	const startTime = Number(fields[19]);
	// Field 28: where the stack starts. exec places it anew (address-space randomisation); 0 when
	// the kernel hides it (another user's process) or there is none (a kernel thread).
	const startStack = Number(fields[25] ?? 0) || 0;
	if (!Number.isFinite(ppid) || !Number.isFinite(startTime)) return undefined;
	return {name, state, ppid, pgid, sid, startTime, startStack};
}

/**
 * What one table keeps between listings: each process's argv under what tells a process from
 * another and from its own later exec — the start time (a reused pid), the name (exec and
 * `process.title` rename it) and the stack's start (exec moves it). A listing then reads a known
 * process's stat alone, not its cmdline: a minute's listing of a thousand unchanged processes
 * costs half the file reads.
 */
type ArgvCache = Map<number, {readonly key: string; readonly argv: readonly string[]}>;

function readArgv(pid: number): string[] {
	try {
		const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
		if (argv.at(-1) === '') argv.pop();
		return argv;
	} catch {
		// kernel threads and zombies have no cmdline
		return [];
	}
}

function readCwd(pid: number): string | undefined {
	try {
		return fs.readlinkSync(`/proc/${pid}/cwd`);
	} catch {
		// other users' processes hide their cwd; a process that ended has none
		return undefined;
	}
}

function readProcess(pid: number, known?: ArgvCache): ProcessRef | undefined {
	try {
		const stat = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
		// A zombie has exited; it only waits to be reaped (slowly, by some inits). It is not live.
		if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
		let argv: readonly string[];
		// Without the stack's start (hidden) an exec under the same name could not be told: read it.
		const key = stat.startStack === 0 ? undefined : `${stat.startTime} ${stat.startStack} ${stat.name}`;
		const cached = key === undefined ? undefined : known?.get(pid);
		if (cached && cached.key === key) argv = cached.argv;
		else {
			argv = readArgv(pid);
			if (key !== undefined) known?.set(pid, {key, argv});
		}
		// The cwd is read when first asked for: only a pane's agent processes ever are, and a
		// readlink for every process on the machine was a quarter of each table's cost.
		let cwd: string | null | undefined = null;
		return {
			pid,
			ppid: stat.ppid,
			startTime: stat.startTime,
			name: stat.name,
			argv,
			get cwd(): string | undefined {
				if (cwd === null) cwd = readCwd(pid);
				return cwd;
			},
		};
	} catch {
		return undefined;
	}
}

function allPids(): number[] {
	try {
		return fs
			.readdirSync('/proc')
			.filter(entry => /^\d+$/.test(entry))
			.map(Number);
	} catch {
		return [];
	}
}

/** The distinct files one process holds open (fd links), or undefined when it is gone or not ours to read. */
function fdTargets(pid: number): string[] | undefined {
	let fds: string[];
	try {
		fds = fs.readdirSync(`/proc/${pid}/fd`);
	} catch {
		return undefined;
	}
	const targets = new Set<string>();
	for (const fd of fds) {
		try {
			targets.add(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
		} catch {
			// closed meanwhile
		}
	}
	return [...targets];
}

/** The distinct files each of `pids` holds open; a process that is gone or not ours to read has none. */
function openFilesIn(pids: Iterable<number>): OpenFile[] {
	const found: OpenFile[] = [];
	for (const pid of pids) for (const target of fdTargets(pid) ?? []) found.push({pid, path: target});
	return found;
}

/** What `openFilesKept` keeps per pid: the files read, under the process's start time and fd count then. */
type FdCache = Map<number, {readonly key: string; readonly targets: readonly string[]}>;

/**
 * The process's identity and number of open files: `/proc/<pid>/fd`'s size is its count of open
 * fds (Linux 6.2 and later; 0 before, when only a new start time reads the folder again).
 */
function fdKey(pid: number): string | undefined {
	try {
		const stat = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
		const fds = fs.statSync(`/proc/${pid}/fd`);
		return stat ? `${stat.startTime} ${fds.size} ${fds.ino}` : undefined;
	} catch {
		return undefined;
	}
}

/** Every open file, reading only the fd folders of processes not in `known` under the same key; `known` becomes this pass's. */
function openFilesKeptIn(known: FdCache): {readonly files: OpenFile[]; readonly next: FdCache} {
	const files: OpenFile[] = [];
	const next: FdCache = new Map();
	for (const pid of allPids()) {
		const key = fdKey(pid);
		if (key === undefined) continue;
		const kept = known.get(pid);
		const targets = kept?.key === key ? kept.targets : fdTargets(pid);
		if (targets === undefined) continue;
		next.set(pid, {key, targets});
		for (const target of targets) files.push({pid, path: target});
	}
	return {files, next};
}

/**
 * Whether exec places each program's stack anew. With address-space randomisation off, an exec
 * under the same name leaves the stack's start where it was, so the argv kept under it could be
 * a former program's: then every listing reads each cmdline.
 */
function execMovesStack(): boolean {
	try {
		return fs.readFileSync('/proc/sys/kernel/randomize_va_space', 'utf8').trim() !== '0';
	} catch {
		return false;
	}
}

export function createProcessTable(): ProcessTable {
	const keepArgv = execMovesStack();
	let last: {readonly began: number; readonly rows: readonly ProcessRef[]} | undefined;
	let argvs: ArgvCache = new Map();
	let fdsKept: FdCache = new Map();
	return {
		async list() {
			const began = monotonicMs();
			const out: ProcessRef[] = [];
			const seen: ArgvCache = new Map();
			for (const pid of allPids()) {
				const proc = readProcess(pid, keepArgv ? argvs : undefined);
				if (proc) out.push(proc);
				const kept = argvs.get(pid);
				if (kept) seen.set(pid, kept);
			}
			// Only this listing's processes stay: the cache is as big as the machine's table.
			argvs = seen;
			const rows = asListing(out);
			last = {began, rows};
			return rows;
		},
		listedSince: since => (last && last.began >= since ? last.rows : undefined),
		async get(pid) {
			return readProcess(pid);
		},
		async openFiles() {
			// Only the fd links: who the holders are comes from the process table, and only for the
			// few paths asked about (reading stat, cmdline and cwd of every process with an open
			// file cost more than the fd scan itself).
			return openFilesIn(allPids());
		},
		async openFilesOfPids(pids) {
			return openFilesIn(new Set(pids));
		},
		async openFilesKept() {
			const {files, next} = openFilesKeptIn(fdsKept);
			fdsKept = next;
			return files;
		},
		async holders(paths) {
			if (paths.length === 0) return [];
			const wanted = new Set(paths);
			const found: Holder[] = [];
			for (const pid of allPids()) {
				let fds: string[];
				try {
					fds = fs.readdirSync(`/proc/${pid}/fd`);
				} catch {
					continue;
				}
				for (const fd of fds) {
					let target: string;
					try {
						target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
					} catch {
						continue;
					}
					if (!wanted.has(target)) continue;
					const proc = readProcess(pid);
					if (proc) {
						found.push({pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, argv: proc.argv, path: target});
					}
					break;
				}
			}
			return found;
		},
	};
}

interface TableIndex {
	readonly byPid: ReadonlyMap<number, ProcessRef>;
	readonly byParent: ReadonlyMap<number, readonly ProcessRef[]>;
}

/** Where a listing keeps its indexes (`asListing`): a symbol, so the rows read as a plain array. */
const INDEXES = Symbol('process table indexes');

/** A table's rows that keep their indexes, built on first ask. */
type Listing = readonly ProcessRef[] & {readonly [INDEXES]?: {value?: TableIndex}};

/**
 * `rows` (a table's own fresh array, never changed once listed) made a listing that keeps its
 * indexes: 500 panes' trees then cost one pass, not 500, and the index goes when the rows do.
 */
function asListing(rows: ProcessRef[]): readonly ProcessRef[] {
	Object.defineProperty(rows, INDEXES, {value: {}});
	return rows;
}

function buildIndex(all: readonly ProcessRef[]): TableIndex {
	const byPid = new Map<number, ProcessRef>();
	const byParent = new Map<number, ProcessRef[]>();
	for (const proc of all) {
		if (!byPid.has(proc.pid)) byPid.set(proc.pid, proc);
		const siblings = byParent.get(proc.ppid);
		if (siblings) siblings.push(proc);
		else byParent.set(proc.ppid, [proc]);
	}
	return {byPid, byParent};
}

/** The listing's kept indexes; rows that are not a table's listing (a test's, a copy) are indexed afresh. */
function indexOf(all: readonly ProcessRef[]): TableIndex {
	const kept = (all as Listing)[INDEXES];
	return kept ? (kept.value ??= buildIndex(all)) : buildIndex(all);
}

/** One table's processes by pid (built once per table, shared by every reader of that table). */
export function pidIndex(all: readonly ProcessRef[]): ReadonlyMap<number, ProcessRef> {
	return indexOf(all).byPid;
}

/** The subtree rooted at `rootPid` (root first), from one process-table snapshot. */
export function processTree(all: readonly ProcessRef[], rootPid: number): ProcessRef[] {
	const {byPid, byParent} = indexOf(all);
	const root = byPid.get(rootPid);
	if (!root) return [];
	return [root, ...descendants(root, proc => byParent.get(proc.pid) ?? [])];
}

/**
 * One process table for one refresh: `list` and `get` answer from a single pass over /proc
 * (`rows`, or the first `list()` of `base`), and `holders` reads every process's open files once,
 * however many conversations ask. A refresh that asks `inUse` for hundreds of rows then costs
 * two /proc passes instead of two per row. Processes that start after the pass are not seen
 * until the next refresh, which makes its own table.
 */
export function snapshotTable(base: ProcessTable, rows?: readonly ProcessRef[]): ProcessTable {
	let listing: Promise<readonly ProcessRef[]> | undefined = rows ? Promise.resolve(rows) : undefined;
	let byPid: Promise<ReadonlyMap<number, ProcessRef>> | undefined;
	let fds: Promise<Map<string, number[]>> | undefined;
	const list = () => (listing ??= base.list());
	const index = () => (byPid ??= list().then(pidIndex));
	const everyOpenFile = base.openFiles?.bind(base);
	const openFiles = (all: () => Promise<readonly OpenFile[]>) =>
		(fds ??= all().then(files => {
			const byPath = new Map<string, number[]>();
			for (const f of files) {
				const same = byPath.get(f.path);
				if (same) same.push(f.pid);
				else byPath.set(f.path, [f.pid]);
			}
			return byPath;
		}));
	/** The process behind a pid seen holding a file: from the table, else read now (it started after the table). */
	const processOf = async (pid: number) => (await index()).get(pid) ?? (await base.get(pid));
	// The open-file pass, shared by `holders` and by callers that scan every open file themselves.
	let allOpen: Promise<readonly OpenFile[]> | undefined;
	const openOnce = everyOpenFile ? () => (allOpen ??= everyOpenFile()) : undefined;
	const someOpen = base.openFilesOfPids?.bind(base);
	/** A few processes' open files: from the one pass when it was made already (the same moment), else read for them alone. */
	const openOfPids = async (pids: readonly number[]): Promise<readonly OpenFile[]> => {
		const wanted = new Set(pids);
		if (allOpen || !someOpen) return ((await openOnce?.()) ?? []).filter(f => wanted.has(f.pid));
		return someOpen(pids);
	};
	const everyKept = base.openFilesKept?.bind(base);
	let keptOpen: Promise<readonly OpenFile[]> | undefined;
	/** For a view: this table's fresh pass when it was made anyway, else the base's kept pass, once. */
	const keptOnce = everyKept ? () => allOpen ?? (keptOpen ??= everyKept()) : undefined;
	return {
		list,
		get: async pid => (await index()).get(pid),
		...(openOnce ? {openFiles: openOnce} : {}),
		...(openOnce || someOpen ? {openFilesOfPids: openOfPids} : {}),
		...(keptOnce ? {openFilesKept: keptOnce} : {}),
		async holders(paths) {
			if (paths.length === 0) return [];
			// A table that cannot list every open file at once is asked per call, as before.
			if (!openOnce) return base.holders(paths);
			const byPath = await openFiles(openOnce);
			const seen = new Set<number>();
			const out: Holder[] = [];
			for (const p of new Set(paths)) {
				for (const pid of byPath.get(p) ?? []) {
					if (seen.has(pid)) continue;
					seen.add(pid);
					const proc = await processOf(pid);
					if (proc) out.push({pid, startTime: proc.startTime, command: proc.argv.join(' ') || proc.name, argv: proc.argv, path: p});
				}
			}
			return out;
		},
	};
}
