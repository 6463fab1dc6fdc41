import type {HostConfig} from '../config/hosts.js';
import {checkDestination} from '../config/hosts.js';

/**
 * The one function that quotes the remote command line. ssh hands its command to the remote
 * user's login shell as one string, so every argument is single-quoted for it (a `'` becomes
 * `'\''`). Control characters (a newline ends a command) and backslashes (fish reads `\\` and
 * `\'` inside single quotes) are refused rather than quoted, so the result means the same argv in
 * sh, bash, zsh, dash and fish. Plain words stay unquoted for a readable `ps` line.
 */
export function quoteRemoteArgv(argv: readonly string[]): string {
	if (argv.length === 0) throw new Error('the remote command is empty');
	return argv.map(quoteOne).join(' ');
}

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\\]/;

function quoteOne(arg: string): string {
	if (UNSAFE.test(arg)) throw new Error(`the remote command argument ${JSON.stringify(arg)} contains a control character or a backslash`);
	if (arg.length > 0 && PLAIN.test(arg)) return arg;
	return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** What the remote runs: the host's mam-tui command, then `serve --stdio`. Nothing else ever. */
export function remoteArgv(host: HostConfig): readonly string[] {
	return [...host.command, 'serve', '--stdio'];
}

/**
 * ssh's argv for one host's channel. Ours first where ours must win (ssh keeps the first value
 * it sees for an option): no terminal, BatchMode so a password, passphrase or unknown host key
 * fails at once instead of waiting for a prompt nobody sees. Then the user's options, then
 * defaults they may override: no connection sharing (a stale ControlMaster socket hangs ssh), a
 * connect timeout and keep-alives so a dead link is noticed. `--` ends the options, and the
 * destination was checked to not look like one.
 */
export function sshArgv(host: HostConfig): string[] {
	return [
		'-T',
		'-o',
		'BatchMode=yes',
		...(host.port !== undefined ? ['-p', String(host.port)] : []),
		...(host.identityFile !== undefined ? ['-i', host.identityFile] : []),
		...Object.entries(host.sshOptions).flatMap(([key, value]) => ['-o', `${key}=${value}`]),
		'-o',
		'ControlPath=none',
		'-o',
		'ConnectTimeout=10',
		'-o',
		'ServerAliveInterval=15',
		'-o',
		'ServerAliveCountMax=3',
		'--',
		checkDestination(host.ssh),
		quoteRemoteArgv(remoteArgv(host)),
	];
}
