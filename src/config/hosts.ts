/**
 * `hosts:` in config.yaml: the machines the dashboard reaches over the user's own ssh. Every
 * value here ends up on an ssh command line or in the remote shell's command line, so each is
 * checked before anything is run: a destination starting with `-` would be read by ssh as an
 * option, a newline or a space would split the remote command.
 */

export interface HostConfig {
	/** What the HOST column and `--host NAME` call it. */
	readonly name: string;
	/** ssh's destination: `user@host`, `host`, or an alias from ~/.ssh/config. */
	readonly ssh: string;
	readonly port?: number;
	readonly identityFile?: string;
	/** Extra `ssh -o KEY=VALUE` options (e.g. UserKnownHostsFile, ProxyJump), in the order given. */
	readonly sshOptions: Readonly<Record<string, string>>;
	/** How the remote runs mam-tui: a program and its first arguments (default `mam-tui`). */
	readonly command: readonly string[];
}

/** A bad host entry or name; the message names the problem (exit 2). */
export class HostError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'HostError';
	}
}

/** The local machine's name in the HOST column; no configured host may take it. */
export const LOCAL_HOST = 'local';

const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
// C0 controls, DEL and the C1 controls: none may reach a command line.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const WHITESPACE = /\s/;
const OPTION_KEY = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

/** Options mam-tui sets itself, or that would weaken what it promises (host keys as the user has them). */
const REFUSED_OPTIONS: Readonly<Record<string, string>> = {
	batchmode: 'mam-tui always runs ssh with BatchMode=yes (a password or host-key prompt would hang the channel)',
	stricthostkeychecking: 'mam-tui leaves host-key checking as your ssh config has it; set it there if you must',
	permitlocalcommand: 'mam-tui runs no local commands through ssh',
	localcommand: 'mam-tui runs no local commands through ssh',
	requesttty: 'the channel is JSON lines and must not get a terminal',
	remotecommand: 'mam-tui chooses the remote command itself (set `command:` instead)',
};

/** Why `text` cannot be used as `what`, or undefined when it can. */
function plainProblem(text: string, what: string): string | undefined {
	if (text.length === 0) return `${what} is empty`;
	if (CONTROL.test(text)) return `${what} ${JSON.stringify(text)} contains a control character`;
	return undefined;
}

/** A host name as `--host` and the HOST column use it. */
export function checkHostName(name: string): string {
	if (name === LOCAL_HOST) throw new HostError(`host name ${JSON.stringify(name)} is reserved for this machine`);
	if (name.startsWith('-')) throw new HostError(`host name ${JSON.stringify(name)} starts with "-"`);
	if (!HOST_NAME.test(name)) {
		throw new HostError(`host name ${JSON.stringify(name)} must be letters, digits, ".", "_" or "-" (at most 63, no spaces or control characters)`);
	}
	return name;
}

/** An ssh destination: never an option (leading `-`), never split (whitespace, control characters). */
export function checkDestination(destination: string): string {
	const problem = plainProblem(destination, 'ssh destination');
	if (problem) throw new HostError(problem);
	if (destination.startsWith('-')) throw new HostError(`ssh destination ${JSON.stringify(destination)} starts with "-" (ssh would read it as an option)`);
	if (WHITESPACE.test(destination)) throw new HostError(`ssh destination ${JSON.stringify(destination)} contains whitespace`);
	return destination;
}

type Raw = Record<string, unknown>;
const isObject = (value: unknown): value is Raw => typeof value === 'object' && value !== null && !Array.isArray(value);

function sshOptionsOf(raw: unknown, where: string): Record<string, string> {
	if (raw === undefined || raw === null) return {};
	if (!isObject(raw)) throw new HostError(`${where}.sshOptions must be a mapping of ssh option to value (e.g. UserKnownHostsFile: ~/.ssh/devbox_hosts)`);
	const out: Record<string, string> = {};
	for (const [key, value] of Object.entries(raw)) {
		if (!OPTION_KEY.test(key)) throw new HostError(`${where}.sshOptions: ${JSON.stringify(key)} is not an ssh option name`);
		const refused = REFUSED_OPTIONS[key.toLowerCase()];
		if (refused) throw new HostError(`${where}.sshOptions.${key} is not allowed: ${refused}`);
		if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
			throw new HostError(`${where}.sshOptions.${key} must be a string, number or yes/no`);
		}
		const text = typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value);
		const problem = plainProblem(text, `${where}.sshOptions.${key}`);
		if (problem) throw new HostError(problem);
		out[key] = text;
	}
	return out;
}

function commandOf(raw: unknown, where: string): readonly string[] {
	if (raw === undefined || raw === null) return ['mam-tui'];
	const argv = typeof raw === 'string' ? [raw] : raw;
	if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a): a is string => typeof a === 'string')) {
		throw new HostError(`${where}.command must be a program or a list of program and arguments (e.g. [node, /opt/mam-tui/dist/bin/cli.js])`);
	}
	for (const arg of argv) {
		const problem = plainProblem(arg, `${where}.command`);
		if (problem) throw new HostError(problem);
	}
	return argv;
}

/** One `hosts:` entry, validated. */
export function parseHost(raw: unknown, index: number): HostConfig {
	const where = `hosts[${index}]`;
	if (!isObject(raw)) throw new HostError(`${where} must be a mapping like {name: devbox, ssh: me@devbox.example}`);
	for (const key of Object.keys(raw)) {
		if (!['name', 'ssh', 'port', 'identityFile', 'sshOptions', 'command'].includes(key)) throw new HostError(`unknown key ${where}.${key}`);
	}
	const name = raw['name'];
	const ssh = raw['ssh'];
	if (typeof name !== 'string') throw new HostError(`${where}.name must be a string`);
	if (typeof ssh !== 'string') throw new HostError(`${where}.ssh must be a string (user@host or an ssh config alias)`);
	const prefix = (error: unknown) => new HostError(`${where}: ${(error as Error).message}`);
	try {
		checkHostName(name);
		checkDestination(ssh);
	} catch (error) {
		throw prefix(error);
	}
	const port = raw['port'];
	if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) {
		throw new HostError(`${where}.port must be a whole number from 1 to 65535 (got ${JSON.stringify(port)})`);
	}
	const identityFile = raw['identityFile'];
	if (identityFile !== undefined) {
		if (typeof identityFile !== 'string') throw new HostError(`${where}.identityFile must be a path`);
		const problem = plainProblem(identityFile, `${where}.identityFile`);
		if (problem) throw new HostError(problem);
	}
	return {
		name,
		ssh,
		...(typeof port === 'number' ? {port} : {}),
		...(typeof identityFile === 'string' ? {identityFile} : {}),
		sshOptions: sshOptionsOf(raw['sshOptions'], where),
		command: commandOf(raw['command'], where),
	};
}

/** The whole `hosts:` list: each entry valid, names unique. */
export function parseHosts(raw: unknown): readonly HostConfig[] {
	if (raw === undefined || raw === null) return [];
	if (!Array.isArray(raw)) throw new HostError('hosts must be a list of {name, ssh} entries');
	const hosts = raw.map((entry, i) => parseHost(entry, i));
	const seen = new Set<string>();
	for (const host of hosts) {
		if (seen.has(host.name)) throw new HostError(`hosts: the name ${JSON.stringify(host.name)} is used twice`);
		seen.add(host.name);
	}
	return hosts;
}
