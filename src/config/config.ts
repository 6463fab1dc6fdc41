import fs from 'node:fs';
import {createRequire} from 'node:module';
import {AGENT_IDS, isAgentId, type AgentId} from '../domain/types.js';
import {HostError, parseHosts, type HostConfig} from './hosts.js';

export interface AgentOverride {
	/** Replaces the adapter's exit text (agents rename their commands between versions). */
	readonly exitInput?: string;
	/** Appended to the spawn and resume argv. */
	readonly extraArgs?: readonly string[];
}

/** How the dashboard says a session needs you (turned blocked): the terminal bell, plus a desktop notification, or nothing. */
export const NOTIFY_MODES = ['bell', 'desktop', 'off'] as const;
export type NotifyMode = (typeof NOTIFY_MODES)[number];

export interface Config {
	readonly agents: Readonly<Partial<Record<AgentId, AgentOverride>>>;
	readonly notify: NotifyMode;
	readonly stop: {readonly graceSeconds: number; readonly killWaitSeconds: number};
	readonly refresh: {readonly discoverySeconds: number; readonly pollMs: number};
	/**
	 * Dashboard key overrides: command (e.g. `session.stop`) → its keys. Checked here for shape
	 * only; the dashboard checks commands, key names and collisions against its keymap.
	 */
	readonly keys: Readonly<Record<string, readonly string[]>>;
	/** `trashDays`: how long a purge stays restorable from the trash before the next purge or trash command empties it. */
	readonly purge: {readonly trashDays: number};
	/**
	 * Park (issue 28). Auto-park is on only when `agents` names at least one agent: the supervisor
	 * then parks that agent's sessions idle for `idleMinutes`, at most `maxPerMinute` a minute.
	 * `soakSeconds`: how long an agent must have been idle, by its own evidence, before any park.
	 */
	readonly park: {readonly idleMinutes: number; readonly maxPerMinute: number; readonly agents: readonly AgentId[]; readonly soakSeconds: number};
	/** `hosts:`: other machines reached over ssh (src/config/hosts.ts); empty: this machine only. */
	readonly hosts: readonly HostConfig[];
	/**
	 * `control`: the dashboard and `serve` read tmux through one control-mode client. Off, they
	 * poll with a process per tmux command: tmux before 3.7 has control-mode crashes (tmux PR
	 * 4980, issue 5243) that need a control client attached.
	 */
	readonly tmux: {readonly control: boolean};
}

export const DEFAULT_CONFIG: Config = {
	agents: {},
	notify: 'bell',
	stop: {graceSeconds: 10, killWaitSeconds: 3},
	// Discovery is cached by mtime, so 5 s is cheap; 1 s tmux polling feels live without burning CPU.
	refresh: {discoverySeconds: 5, pollMs: 1000},
	keys: {},
	purge: {trashDays: 7},
	park: {idleMinutes: 45, maxPerMinute: 2, agents: [], soakSeconds: 60},
	hosts: [],
	tmux: {control: true},
};

/** A bad config value; the message names the key and the file (exit 2). */
export class ConfigError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'ConfigError';
	}
}

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(obj: Raw, allowed: readonly string[], where: string, file: string): void {
	for (const key of Object.keys(obj)) {
		if (!allowed.includes(key)) throw new ConfigError(`${file}: unknown key ${where}${key}`);
	}
}

function positiveNumber(obj: Raw, key: string, where: string, file: string, fallback: number, max: number): number {
	const value = obj[key];
	if (value === undefined) return fallback;
	if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max) {
		throw new ConfigError(`${file}: ${where}${key} must be a number greater than 0 and at most ${max} (got ${JSON.stringify(value)})`);
	}
	return value;
}

function parseAgents(value: unknown, file: string): Config['agents'] {
	if (value === undefined) return {};
	if (!isObject(value)) throw new ConfigError(`${file}: agents must be a mapping of agent name to settings`);
	const out: Partial<Record<AgentId, AgentOverride>> = {};
	for (const [name, raw] of Object.entries(value)) {
		if (!isAgentId(name)) throw new ConfigError(`${file}: agents.${name} is not a known agent (${AGENT_IDS.join(', ')})`);
		if (!isObject(raw)) throw new ConfigError(`${file}: agents.${name} must be a mapping`);
		checkKeys(raw, ['exitInput', 'extraArgs'], `agents.${name}.`, file);
		const exitInput = raw['exitInput'];
		if (exitInput !== undefined && (typeof exitInput !== 'string' || exitInput.length === 0 || /[\r\n\0]/.test(exitInput))) {
			throw new ConfigError(`${file}: agents.${name}.exitInput must be a one-line, non-empty string`);
		}
		const extraArgs = raw['extraArgs'];
		if (extraArgs !== undefined && (!Array.isArray(extraArgs) || !extraArgs.every(a => typeof a === 'string' && !a.includes('\0')))) {
			throw new ConfigError(`${file}: agents.${name}.extraArgs must be a list of strings`);
		}
		out[name] = {
			...(typeof exitInput === 'string' ? {exitInput} : {}),
			...(Array.isArray(extraArgs) ? {extraArgs: extraArgs as string[]} : {}),
		};
	}
	return out;
}

/** `keys:` — each command maps to one key or a list of keys, all plain one-line strings. */
function parseKeys(value: unknown, file: string): Config['keys'] {
	if (value === undefined || value === null) return {};
	if (!isObject(value)) throw new ConfigError(`${file}: keys must be a mapping of command to key (e.g. session.stop: x)`);
	const out: Record<string, readonly string[]> = {};
	for (const [command, raw] of Object.entries(value)) {
		const keys = typeof raw === 'string' ? [raw] : raw;
		if (!Array.isArray(keys) || !keys.every(k => typeof k === 'string' && k.length > 0 && !/[\r\n\0]/.test(k))) {
			throw new ConfigError(`${file}: keys.${command} must be a key or a list of keys (got ${JSON.stringify(raw)})`);
		}
		out[command] = keys as string[];
	}
	return out;
}

function parsePark(value: unknown, file: string): Config['park'] {
	if (value === undefined || value === null) return DEFAULT_CONFIG.park;
	if (!isObject(value)) throw new ConfigError(`${file}: park must be a mapping`);
	checkKeys(value, ['idleMinutes', 'maxPerMinute', 'agents', 'soakSeconds'], 'park.', file);
	const agents = value['agents'] ?? [];
	if (!Array.isArray(agents) || !agents.every(a => typeof a === 'string' && isAgentId(a))) {
		throw new ConfigError(`${file}: park.agents must be a list of agents (${AGENT_IDS.join(', ')}) (got ${JSON.stringify(agents)})`);
	}
	const maxPerMinute = positiveNumber(value, 'maxPerMinute', 'park.', file, DEFAULT_CONFIG.park.maxPerMinute, 60);
	if (!Number.isInteger(maxPerMinute)) throw new ConfigError(`${file}: park.maxPerMinute must be a whole number (got ${maxPerMinute})`);
	return {
		idleMinutes: positiveNumber(value, 'idleMinutes', 'park.', file, DEFAULT_CONFIG.park.idleMinutes, 7 * 24 * 60),
		maxPerMinute,
		agents: [...new Set(agents as AgentId[])],
		soakSeconds: positiveNumber(value, 'soakSeconds', 'park.', file, DEFAULT_CONFIG.park.soakSeconds, 24 * 3600),
	};
}

/** Validate parsed YAML into a Config; every error names the key and the file. */
export function parseConfig(raw: unknown, file: string): Config {
	if (raw === null || raw === undefined) return DEFAULT_CONFIG;
	if (!isObject(raw)) throw new ConfigError(`${file}: the top level must be a mapping`);
	checkKeys(raw, ['agents', 'notify', 'stop', 'refresh', 'keys', 'purge', 'park', 'hosts', 'tmux'], '', file);
	const notify = raw['notify'] ?? DEFAULT_CONFIG.notify;
	if (typeof notify !== 'string' || !(NOTIFY_MODES as readonly string[]).includes(notify)) {
		throw new ConfigError(`${file}: notify must be one of ${NOTIFY_MODES.join(', ')} (got ${JSON.stringify(notify)})`);
	}
	const stop = raw['stop'] ?? {};
	const refresh = raw['refresh'] ?? {};
	const purge = raw['purge'] ?? {};
	if (!isObject(purge)) throw new ConfigError(`${file}: purge must be a mapping`);
	checkKeys(purge, ['trashDays'], 'purge.', file);
	if (!isObject(stop)) throw new ConfigError(`${file}: stop must be a mapping`);
	if (!isObject(refresh)) throw new ConfigError(`${file}: refresh must be a mapping`);
	checkKeys(stop, ['graceSeconds', 'killWaitSeconds'], 'stop.', file);
	checkKeys(refresh, ['discoverySeconds', 'pollMs'], 'refresh.', file);
	return {
		agents: parseAgents(raw['agents'], file),
		notify: notify as NotifyMode,
		stop: {
			graceSeconds: positiveNumber(stop, 'graceSeconds', 'stop.', file, DEFAULT_CONFIG.stop.graceSeconds, 600),
			killWaitSeconds: positiveNumber(stop, 'killWaitSeconds', 'stop.', file, DEFAULT_CONFIG.stop.killWaitSeconds, 600),
		},
		refresh: {
			discoverySeconds: positiveNumber(refresh, 'discoverySeconds', 'refresh.', file, DEFAULT_CONFIG.refresh.discoverySeconds, 3600),
			pollMs: positiveNumber(refresh, 'pollMs', 'refresh.', file, DEFAULT_CONFIG.refresh.pollMs, 60_000),
		},
		keys: parseKeys(raw['keys'], file),
		purge: {trashDays: positiveNumber(purge, 'trashDays', 'purge.', file, DEFAULT_CONFIG.purge.trashDays, 3650)},
		park: parsePark(raw['park'], file),
		hosts: hostsOf(raw['hosts'], file),
		tmux: parseTmux(raw['tmux'], file),
	};
}

function parseTmux(raw: unknown, file: string): Config['tmux'] {
	if (raw === undefined || raw === null) return DEFAULT_CONFIG.tmux;
	if (!isObject(raw)) throw new ConfigError(`${file}: tmux must be a mapping`);
	checkKeys(raw, ['control'], 'tmux.', file);
	const control = raw['control'] ?? DEFAULT_CONFIG.tmux.control;
	if (typeof control !== 'boolean') throw new ConfigError(`${file}: tmux.control must be true or false (got ${JSON.stringify(control)})`);
	return {control};
}

function hostsOf(raw: unknown, file: string): readonly HostConfig[] {
	try {
		return parseHosts(raw);
	} catch (error) {
		if (error instanceof HostError) throw new ConfigError(`${file}: ${error.message}`);
		throw error;
	}
}

/**
 * The YAML parser, loaded only when there is a config file to parse: importing it costs more
 * than a whole `mam-tui status` should (most users have no config file).
 */
function parseYaml(text: string): unknown {
	const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
	return yaml.parse(text);
}

/** Load the optional config file; absent means defaults. */
export function loadConfig(file: string): Config {
	let text: string;
	try {
		text = fs.readFileSync(file, 'utf8');
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_CONFIG;
		throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`);
	}
	let raw: unknown;
	try {
		raw = parseYaml(text);
	} catch (error) {
		throw new ConfigError(`${file}: not valid YAML (${(error as Error).message.split('\n')[0]})`);
	}
	return parseConfig(raw, file);
}
