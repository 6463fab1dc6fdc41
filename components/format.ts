import type {LiveStatus, ResumeState} from '../src/domain/types.js';
import type {HostRow, PlanLine} from '../src/store/state.js';
import {printable} from '../src/domain/printable.js';

// Components import the one printable() from here, with the rest of their formatting.
export {printable};

/**
 * Why a host's rows are as it last reported them, or undefined while it is up (or the row is
 * this machine's): `down since 16:40:12: connection refused`, `connecting since ...`.
 */
export function hostAway(host: HostRow | undefined): string | undefined {
	if (!host || host.state === 'up') return undefined;
	const since = new Date(host.since).toTimeString().slice(0, 8);
	return host.state === 'down' ? `down since ${since}: ${host.message}` : `connecting since ${since}`;
}

/**
 * Table cells are plain ASCII where we choose the characters: Ink measures every text node on
 * every frame, and a line holding any other character takes string-width's Unicode segmentation
 * path (several times slower; at 500 rows most of a keystroke's frame). So a cut cell ends in
 * `~` (as in PROGRA~1), not `…`, and an empty one is `-`.
 */
export const TRUNCATED = '~';
export const EMPTY_CELL = '-';

/** Pad or cut to exactly `width` characters. */
export function fit(raw: string, width: number): string {
	if (width <= 0) return '';
	const text = printable(raw);
	if (text.length <= width) return text.padEnd(width);
	return `${text.slice(0, Math.max(0, width - 1))}${TRUNCATED}`;
}

export function shortenPath(p: string, home: string): string {
	return p === home ? '~' : p.startsWith(`${home}/`) ? `~${p.slice(home.length)}` : p;
}

/** `3s`, `5m`, `2h`, `4d`. */
export function age(fromMs: number, nowMs: number): string {
	const s = Math.max(0, Math.round((nowMs - fromMs) / 1000));
	if (s < 60) return `${s}s`;
	if (s < 3600) return `${Math.floor(s / 60)}m`;
	if (s < 86_400) return `${Math.floor(s / 3600)}h`;
	return `${Math.floor(s / 86_400)}d`;
}

/**
 * When `age(fromMs, …)` next reads differently, at or after `nowMs`. Seconds count as one step up
 * to the first minute: an idle screen redraws for an age at most once a minute (a row's first
 * seconds show as they were drawn, `0s`…`59s`, until it turns `1m`).
 */
export function nextAgeChange(fromMs: number, nowMs: number): number {
	const s = Math.max(0, Math.round((nowMs - fromMs) / 1000));
	const unit = s < 3600 ? 60 : s < 86_400 ? 3600 : 86_400;
	// `age` rounds to the second: the shown value steps half a second before each whole one.
	return fromMs + ((Math.floor(s / unit) + 1) * unit - 0.5) * 1000;
}

/** The first moment the age of any of `items` (its time by `timeOf`) reads differently; undefined: no items. */
export function nextAgesChange<T>(items: readonly T[], timeOf: (item: T) => number, nowMs: number): number | undefined {
	let next: number | undefined;
	for (const item of items) {
		const at = nextAgeChange(timeOf(item), nowMs);
		if (next === undefined || at < next) next = at;
	}
	return next;
}

export function bytes(n: number): string {
	if (n < 1024) return `${n} B`;
	if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
	return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** What a plan line of each kind counts; files and folders are sized in bytes instead. */
const COUNTED: Partial<Record<PlanLine['kind'], string>> = {rows: 'row', lines: 'line', key: 'key'};

/** `n thing(s)`, or `? things` when nobody counted. */
function counted(n: number | undefined, thing: string): string {
	return n === undefined ? `? ${thing}s` : `${n} ${thing}${n === 1 ? '' : 's'}`;
}

/**
 * What one plan line deletes: a file's or folder's bytes; for rows, lines and JSON keys in a
 * shared file, how many (their bytes are an estimate, often 0: "0 B" read as "nothing").
 */
export function planSize(line: PlanLine): string {
	const noun = COUNTED[line.kind];
	if (noun === undefined) return bytes(line.bytes);
	const of = line.kind === 'rows' ? ` of ${line.table ?? '?'}` : '';
	return `${counted(line.count, noun)}${of}${line.bytes > 0 ? `, ${bytes(line.bytes)}` : ''}`;
}

/** A plan's size: its item count, and its bytes when it has some (rows and lines alone count 0). */
export function planTotal(items: number, totalBytes: number): string {
	return `${counted(items, 'item')}${totalBytes > 0 ? `, ${bytes(totalBytes)}` : ''}`;
}

export function resumeText(state: ResumeState | undefined): string {
	if (!state) return '...';
	return state.kind === 'yes' ? 'yes' : `${state.kind}: ${state.reason}`;
}

export const RESUME_COLOR = {yes: 'green', no: 'red', unknown: 'yellow'} as const;

export const LIVE_COLOR: Record<LiveStatus, string> = {
	working: 'green',
	blocked: 'magenta',
	idle: 'cyan',
	done: 'blue',
	unknown: 'gray',
	exited: 'red',
	stopped: 'yellow',
};

export function seconds(ms: number): string {
	return `${(ms / 1000).toFixed(1)}s`;
}

/** Memory as people say it: `812 MB`, `2.1 GB` (binary units, as free(1) counts them). */
export function memory(n: number): string {
	const mb = n / 1024 / 1024;
	return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${Math.round(mb)} MB`;
}
