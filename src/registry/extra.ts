import type {PanePlacement, ProcessRef, SessionRecord} from '../domain/types.js';

// The typed codecs of the registry row's `extra` JSON: ONE per key, used by every reader and every
// writer. A row may have been written by another mam-tui version (or edited by hand), so each
// reader validates and drops what it cannot trust; nothing here throws on a malformed value.
// Pure (no I/O): the drift engine and the store read rows through it too.

type Extra = Readonly<Record<string, unknown>>;

/** One key of `extra`: how to read it back (undefined when absent or malformed) and how to write it. */
export interface ExtraCodec<Read, Write = Read> {
	readonly key: string;
	read(extra: Extra): Read | undefined;
	/** `extra` with the key set (a copy; the other keys are kept). */
	write(extra: Extra, value: Write): Record<string, unknown>;
	/** `extra` without the key (a copy). */
	remove(extra: Extra): Record<string, unknown>;
}

function codec<Read, Write = Read>(key: string, read: (value: unknown) => Read | undefined): ExtraCodec<Read, Write> {
	return {
		key,
		read: extra => (Object.hasOwn(extra, key) ? read(extra[key]) : undefined),
		write: (extra, value) => ({...extra, [key]: value}),
		remove: extra => {
			const {[key]: _gone, ...rest} = extra;
			return rest;
		},
	};
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * A recorded process, when it can be matched safely: a positive integer pid and a start time
 * (a pid alone could name a process that reused it). Name and argv are for display only.
 */
export function decodeProcess(value: unknown): ProcessRef | undefined {
	if (!isObject(value)) return undefined;
	const {pid, ppid, startTime, name, argv, cwd} = value;
	if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || !finite(startTime)) return undefined;
	return {
		pid,
		ppid: typeof ppid === 'number' && Number.isInteger(ppid) && ppid >= 0 ? ppid : 0,
		startTime,
		name: typeof name === 'string' ? name : '',
		argv: Array.isArray(argv) ? argv.filter((a): a is string => typeof a === 'string') : [],
		...(typeof cwd === 'string' ? {cwd} : {}),
	};
}

function processList(value: unknown): ProcessRef[] {
	return Array.isArray(value) ? value.flatMap(item => decodeProcess(item) ?? []) : [];
}

/** The mux server a row's pane was recorded in (`Pane.server`). */
export const paneServerExtra = codec<string>('paneServer', value => (typeof value === 'string' && value !== '' ? value : undefined));

/** Which step ended a stop (see src/actions/stopSteps.ts). */
export type StopEndedBy = 'nothing-running' | 'exit-input' | 'close-pane' | 'sigkill';

const STOP_ENDINGS: readonly string[] = ['nothing-running', 'exit-input', 'close-pane', 'sigkill'] satisfies readonly StopEndedBy[];

/** What a stop recorded: the captured processes (drift and the next stop look for survivors among them). */
export interface StopRecord {
	readonly at: number;
	readonly endedBy: StopEndedBy;
	readonly processes: readonly ProcessRef[];
	readonly survivors: readonly number[];
}

/** A stop record read back: only the processes are needed; the rest may be missing in an old row. */
export interface StopRecordRead {
	readonly at?: number;
	readonly endedBy?: StopEndedBy;
	readonly processes: readonly ProcessRef[];
	readonly survivors: readonly number[];
}

export const stopExtra = codec<StopRecordRead, StopRecord>('stop', value => {
	if (!isObject(value)) return undefined;
	const {at, endedBy, processes, survivors} = value;
	return {
		...(finite(at) ? {at} : {}),
		...(typeof endedBy === 'string' && STOP_ENDINGS.includes(endedBy) ? {endedBy: endedBy as StopEndedBy} : {}),
		processes: processList(processes),
		survivors: Array.isArray(survivors) ? survivors.filter((p): p is number => typeof p === 'number' && Number.isInteger(p) && p > 0) : [],
	};
});

/** Processes recorded by older versions at the top level of `extra` (read only: nothing writes it now). */
export const legacyProcessesExtra = codec<readonly ProcessRef[], never>('processes', processList);

/**
 * Every process a stop of this row recorded (`extra.stop.processes`, and the older `extra.processes`):
 * drift's stale-process finding and the next stop's step 3 read the same list.
 */
export function recordedProcesses(row: Pick<SessionRecord, 'extra'>): ProcessRef[] {
	return [...(stopExtra.read(row.extra)?.processes ?? []), ...(legacyProcessesExtra.read(row.extra) ?? [])];
}

/** A resume in progress: across mam-tui processes, a second resume of the conversation is refused while it is recent. */
export interface ResumeClaim {
	readonly at: number;
	readonly pid: number;
	readonly paneId?: string;
}

export const resumeExtra = codec<ResumeClaim>('resume', value => {
	if (!isObject(value) || !finite(value['at'])) return undefined;
	const {at, pid, paneId} = value;
	return {at, pid: typeof pid === 'number' && Number.isInteger(pid) ? pid : 0, ...(typeof paneId === 'string' ? {paneId} : {})};
});

/** The purge bookkeeping, so an interrupted purge can be finished later. */
export interface PurgeMark {
	readonly state: 'purging' | 'done' | 'residual';
	readonly at: number;
	readonly items?: number;
	readonly residual?: readonly string[];
}

const PURGE_STATES: readonly string[] = ['purging', 'done', 'residual'] satisfies readonly PurgeMark['state'][];

export const purgeExtra = codec<PurgeMark>('purge', value => {
	if (!isObject(value) || typeof value['state'] !== 'string' || !PURGE_STATES.includes(value['state']) || !finite(value['at'])) return undefined;
	const {state, at, items, residual} = value;
	return {
		state: state as PurgeMark['state'],
		at,
		...(finite(items) ? {items} : {}),
		...(Array.isArray(residual) ? {residual: residual.filter((r): r is string => typeof r === 'string')} : {}),
	};
});

/** Who created a row that mam-tui did not start (`adopt` or a drift fix). */
export type AdoptedBy = 'adopt' | 'drift';

export const adoptedByExtra = codec<AdoptedBy>('adoptedBy', value => (value === 'adopt' || value === 'drift' ? value : undefined));

/** The mux server the row's pane was recorded in, when the row says (rows made before it was recorded do not). */
export function paneServerOf(row: Pick<SessionRecord, 'extra'>): string | undefined {
	return paneServerExtra.read(row.extra);
}

/** `extra` with the pane's server recorded (or left as it is when the backend cannot tell). */
export function withPaneServer(extra: Extra, server: string | undefined): Record<string, unknown> {
	return server ? paneServerExtra.write(extra, server) : {...extra};
}

/** What a park recorded: when, what it freed, how long the agent had been idle, and how to wake it. */
export interface ParkRecord {
	readonly at: number;
	/** Memory of the pane's agent tree just before it exited (PSS, else RSS), in bytes. */
	readonly freedBytes: number;
	/** How long the agent had been idle, by its own evidence, when it was parked. */
	readonly idleSeconds: number;
	/** The argv that wakes it (the adapter's resume argv plus the config's extra args). */
	readonly argv: readonly string[];
	readonly cwd: string;
	/** The pane it ran in, and where that pane sat (tmux session/window, herdr workspace/tab). */
	readonly paneId?: string;
	readonly placement?: PanePlacement;
}

function placementOf(value: unknown): PanePlacement | undefined {
	if (!isObject(value)) return undefined;
	const out: Record<string, string> = {};
	for (const key of ['session', 'window', 'workspace', 'tab'] as const) {
		const v = value[key];
		if (typeof v === 'string' && v !== '') out[key] = v;
	}
	return Object.keys(out).length > 0 ? out : undefined;
}

export const parkedExtra = codec<ParkRecord>('parked', value => {
	if (!isObject(value) || !finite(value['at'])) return undefined;
	const {at, freedBytes, idleSeconds, argv, cwd, paneId, placement} = value;
	if (!Array.isArray(argv) || argv.length === 0 || !argv.every(a => typeof a === 'string') || typeof cwd !== 'string') return undefined;
	const where = placementOf(placement);
	return {
		at,
		freedBytes: finite(freedBytes) && freedBytes >= 0 ? freedBytes : 0,
		idleSeconds: finite(idleSeconds) && idleSeconds >= 0 ? idleSeconds : 0,
		argv: argv as string[],
		cwd,
		...(typeof paneId === 'string' ? {paneId} : {}),
		...(where ? {placement: where} : {}),
	};
});

/**
 * A host's parked row as its `status --json` says it (`parked.freedBytes`): what this dashboard
 * shows of a park made on another machine, whose park record (argv, placement) stays there.
 */
export const hostParkedExtra = codec<{readonly freedBytes: number}>('hostParked', value =>
	isObject(value) && finite(value['freedBytes']) && value['freedBytes'] >= 0 ? {freedBytes: value['freedBytes']} : undefined,
);

/**
 * A park in progress (set in the same compare-and-set that checks the row's version): a second
 * mam-tui process sees it and leaves the row alone while its owner lives. Cleared when the park
 * ends either way. `pending` is written just before the exit input is typed: what the row becomes
 * once that agent process is gone, so a park whose mam-tui was killed after typing is finished by
 * the next one that looks (park.ts `settleInterruptedParks`).
 */
export interface ParkClaim {
	readonly at: number;
	readonly pid: number;
	/** The owner's start time (field 22 of /proc/<pid>/stat): a reused pid is not the owner. */
	readonly start?: number;
	readonly pending?: {readonly record: ParkRecord; readonly agent: {readonly pid: number; readonly startTime: number}};
}

function pendingOf(value: unknown): ParkClaim['pending'] {
	if (!isObject(value) || !isObject(value['agent'])) return undefined;
	const record = parkedExtra.read({parked: value['record']});
	const {pid, startTime} = value['agent'];
	if (!record || !finite(pid) || !finite(startTime)) return undefined;
	return {record, agent: {pid, startTime}};
}

export const parkingExtra = codec<ParkClaim>('parking', value => {
	if (!isObject(value) || !finite(value['at'])) return undefined;
	const pid = value['pid'];
	const pending = pendingOf(value['pending']);
	return {
		at: value['at'],
		pid: typeof pid === 'number' && Number.isInteger(pid) ? pid : 0,
		...(finite(value['start']) ? {start: value['start']} : {}),
		...(pending ? {pending} : {}),
	};
});
