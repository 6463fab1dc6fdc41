import type {AgentStatus} from '../../domain/types.js';
import {MuxError} from '../types.js';

/**
 * Tolerant readers for herdr's wire shapes (PROTOCOL 3). They take what mam-tui needs, ignore
 * unknown fields, treat `null` like an absent optional key, and fail with a readable MuxError
 * only when a required field is missing or has the wrong type.
 */

type Obj = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is Obj {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bad(what: string): MuxError {
	return new MuxError(`herdr sent a malformed ${what}`, 'bad_response');
}

function str(obj: Obj, key: string): string | undefined {
	const value = obj[key];
	return typeof value === 'string' ? value : undefined;
}

function requiredStr(obj: Obj, key: string, what: string): string {
	const value = str(obj, key);
	if (value === undefined) throw bad(`${what} (no ${key})`);
	return value;
}

function uint(obj: Obj, key: string): number | undefined {
	const value = obj[key];
	return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

const STATUSES: readonly AgentStatus[] = ['working', 'blocked', 'idle', 'done', 'unknown'];

/** An unknown status (a newer herdr) reads as `unknown` rather than failing the listing. */
export function agentStatusOf(value: unknown): AgentStatus {
	return STATUSES.find(s => s === value) ?? 'unknown';
}

/** `agent_session`: the native session reference an official integration reported (PROTOCOL 3, 8). */
export interface WireAgentSession {
	readonly source: string;
	readonly agent: string;
	readonly kind: 'id' | 'path';
	readonly value: string;
}

/** The PaneInfo fields mam-tui uses. */
export interface WirePane {
	readonly paneId: string;
	readonly terminalId: string;
	readonly workspaceId: string;
	readonly tabId: string;
	readonly focused: boolean;
	readonly agentStatus: AgentStatus;
	readonly revision: number;
	readonly cwd?: string;
	readonly foregroundCwd?: string;
	readonly label?: string;
	readonly agent?: string;
	readonly title?: string;
	readonly terminalTitle?: string;
	readonly agentSession?: WireAgentSession;
}

function agentSessionOf(value: unknown): WireAgentSession | undefined {
	if (!isObject(value)) return undefined;
	const source = str(value, 'source');
	const agent = str(value, 'agent');
	const kind = value['kind'];
	const ref = str(value, 'value');
	if (source === undefined || agent === undefined || ref === undefined || (kind !== 'id' && kind !== 'path')) return undefined;
	return {source, agent, kind, value: ref};
}

export function parsePaneInfo(value: unknown): WirePane {
	if (!isObject(value)) throw bad('pane');
	const optional = (key: string) => str(value, key);
	const session = agentSessionOf(value['agent_session']);
	const fields: Record<string, string | undefined> = {
		cwd: optional('cwd'),
		foregroundCwd: optional('foreground_cwd'),
		label: optional('label'),
		agent: optional('agent'),
		title: optional('title'),
		terminalTitle: optional('terminal_title_stripped') ?? optional('terminal_title'),
	};
	const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== ''));
	return {
		paneId: requiredStr(value, 'pane_id', 'pane'),
		terminalId: requiredStr(value, 'terminal_id', 'pane'),
		workspaceId: requiredStr(value, 'workspace_id', 'pane'),
		tabId: requiredStr(value, 'tab_id', 'pane'),
		focused: value['focused'] === true,
		agentStatus: agentStatusOf(value['agent_status']),
		revision: uint(value, 'revision') ?? 0,
		...present,
		...(session ? {agentSession: session} : {}),
	};
}

export interface WireSnapshot {
	readonly version: string;
	readonly protocol: number;
	readonly focusedPaneId?: string;
	readonly panes: readonly WirePane[];
}

/** `session.snapshot` → `session_snapshot`. */
export function parseSnapshot(result: Obj): WireSnapshot {
	const snapshot = result['snapshot'];
	if (!isObject(snapshot) || !Array.isArray(snapshot['panes'])) throw bad('session snapshot');
	const focused = str(snapshot, 'focused_pane_id');
	return {
		version: str(snapshot, 'version') ?? '?',
		protocol: uint(snapshot, 'protocol') ?? 0,
		...(focused ? {focusedPaneId: focused} : {}),
		panes: snapshot['panes'].map(parsePaneInfo),
	};
}

export interface WirePong {
	readonly version: string;
	readonly protocol: number;
}

/** `ping` → `pong`. */
export function parsePong(result: Obj): WirePong {
	const protocol = uint(result, 'protocol');
	if (protocol === undefined) throw bad('pong (no protocol)');
	return {version: str(result, 'version') ?? '?', protocol};
}

export interface WireProcessInfo {
	readonly paneId: string;
	readonly shellPid?: number;
	readonly foregroundPgid?: number;
}

/** `pane.process_info` → `pane_process_info`. Only the pids: the tree itself comes from /proc. */
export function parseProcessInfo(result: Obj): WireProcessInfo {
	const info = result['process_info'];
	if (!isObject(info)) throw bad('process info');
	const shellPid = uint(info, 'shell_pid');
	const foregroundPgid = uint(info, 'foreground_process_group_id');
	return {
		paneId: requiredStr(info, 'pane_id', 'process info'),
		...(shellPid ? {shellPid} : {}),
		...(foregroundPgid ? {foregroundPgid} : {}),
	};
}

/** `pane.read` → `pane_read`: the text. */
export function parseRead(result: Obj): string {
	const read = result['read'];
	if (!isObject(read)) throw bad('pane read');
	return requiredStr(read, 'text', 'pane read');
}

/** `pane.split` → `pane_info`; `workspace.create` → `workspace_created` (its `root_pane`). */
export function parseNewPane(result: Obj): WirePane {
	return parsePaneInfo(result['pane'] ?? result['root_pane']);
}

/** One line of an `events.subscribe` stream: `event` plus `data`, both required. */
export interface WireEvent {
	readonly event: string;
	readonly data: Obj;
}

export function parseEvent(value: unknown): WireEvent | undefined {
	if (!isObject(value) || typeof value['event'] !== 'string' || !isObject(value['data'])) return undefined;
	return {event: value['event'], data: value['data']};
}
