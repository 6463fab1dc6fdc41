// The transport under a host connection (client.ts): ssh's stdin and stdout as a channel, and
// ssh's own words on stderr turned into why a host is down.
import {spawn, type ChildProcess} from 'node:child_process';
import type {Readable, Writable} from 'node:stream';
import type {HostConfig} from '../config/hosts.js';
import {sshArgv} from './sshArgv.js';

/** The two ends of a channel: ssh's stdin/stdout, or a test's streams. */
export interface Channel {
	readonly input: Readable;
	readonly output: Writable;
	/** Standard error, read for why a channel ended (ssh's own messages). */
	readonly errors?: Readable;
	/** Resolves with the exit code when the channel is gone. */
	readonly ended: Promise<number | null>;
	close(): void;
}

/** ssh's own words (stderr) and exit code -> why the host is down, in the user's words. */
export function explainExit(stderr: string, code: number | null): string {
	if (/REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(stderr))
		return 'host key changed: ssh refused to connect (check the host, then fix ~/.ssh/known_hosts yourself)';
	if (/Host key verification failed/i.test(stderr)) return 'host key not trusted: unknown or changed (connect once with ssh yourself to check it)';
	if (/Permission denied/i.test(stderr)) return 'permission denied: ssh could not log in without a prompt (use a key or an ssh agent)';
	if (code === 127 || /command not found|: not found|No such file or directory/i.test(stderr))
		return 'mam-tui not found on the host (install it there, or set command: for this host)';
	if (code === 126) return 'mam-tui on the host cannot be run (permission denied on the program)';
	if (/Connection refused/i.test(stderr)) return 'connection refused';
	if (/Could not resolve hostname/i.test(stderr)) return 'host name not resolved';
	if (/timed out/i.test(stderr)) return 'connection timed out';
	if (/Connection closed|Connection reset|Broken pipe/i.test(stderr)) return 'connection closed by the host';
	const last = stderr.trim().split('\n').filter(Boolean).at(-1);
	return last ? `ssh: ${last.slice(0, 200)}` : `the channel ended (exit ${code ?? 'by signal'})`;
}

/** The user's ssh as a channel: argv only, no shell on this side. */
export function sshChannel(host: HostConfig): Channel {
	const child: ChildProcess = spawn('ssh', sshArgv(host), {stdio: ['pipe', 'pipe', 'pipe']});
	const ended = new Promise<number | null>(resolve => {
		child.once('error', () => resolve(255));
		child.once('close', code => resolve(code));
	});
	// A write after ssh died (EPIPE) is noticed through `ended`, not thrown.
	child.stdin?.on('error', () => undefined);
	return {
		input: child.stdout as Readable,
		output: child.stdin as Writable,
		errors: child.stderr as Readable,
		ended,
		close: () => {
			if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
		},
	};
}
