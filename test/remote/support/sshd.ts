import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {execa} from 'execa';
import type {HostConfig} from '../../../src/config/hosts.js';
import {eventually} from '../../helpers/poll.js';
import {tempDir} from '../../helpers/tmp.js';

/**
 * A real OpenSSH server for one test file: /usr/sbin/sshd started by the test on 127.0.0.1 and a
 * free port, with a host key and a client key it generates, never a system service. Its logins get
 * the environment `env` (sshd's SetEnv), so the "other machine" is a HOME of its own with its own
 * agents' data, registry and tmux server.
 */
export interface SshServer {
	readonly port: number;
	readonly dir: string;
	/** The client's private key and the known_hosts file that trusts this server's host key. */
	readonly clientKey: string;
	readonly knownHosts: string;
	/** A hosts: entry reaching this server, running the built mam-tui with `args` before `serve`. */
	host(name: string, args?: readonly string[]): HostConfig;
	stop(): Promise<void>;
}

export const REPO = path.resolve(import.meta.dirname, '../../..');
export const BUILT_CLI = path.join(REPO, 'dist/bin/cli.js');

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
		});
	});
}

export function sshdAvailable(): boolean {
	return fs.existsSync('/usr/sbin/sshd') && process.getuid?.() === 0;
}

async function keygen(file: string): Promise<string> {
	await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'mam-test', '-f', file]);
	return fs.readFileSync(`${file}.pub`, 'utf8').trim();
}

const quoteSetEnv = (key: string, value: string) => `"${key}=${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

export async function startSshd(env: Readonly<Record<string, string>>): Promise<SshServer> {
	const tmp = tempDir('mam-sshd-');
	const dir = tmp.dir;
	// sshd's privilege separation needs this; the package makes it when its service starts, which we never do.
	fs.mkdirSync('/run/sshd', {recursive: true, mode: 0o755});
	const hostKey = path.join(dir, 'host_key');
	const clientKey = path.join(dir, 'client_key');
	const hostPub = await keygen(hostKey);
	const clientPub = await keygen(clientKey);
	fs.writeFileSync(path.join(dir, 'authorized_keys'), `${clientPub}\n`, {mode: 0o600});
	const port = await freePort();
	const knownHosts = path.join(dir, 'known_hosts');
	fs.writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub.split(' ').slice(0, 2).join(' ')}\n`);
	const config = path.join(dir, 'sshd_config');
	fs.writeFileSync(
		config,
		[
			'ListenAddress 127.0.0.1',
			`HostKey ${hostKey}`,
			`PidFile ${path.join(dir, 'sshd.pid')}`,
			`AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
			'StrictModes no',
			'PubkeyAuthentication yes',
			'PasswordAuthentication no',
			'KbdInteractiveAuthentication no',
			'PermitRootLogin prohibit-password',
			'UsePAM no',
			'PrintMotd no',
			'PermitUserEnvironment no',
			'MaxStartups 100',
			'LogLevel ERROR',
			`SetEnv ${Object.entries(env)
				.map(([k, v]) => quoteSetEnv(k, v))
				.join(' ')}`,
			'',
		].join('\n'),
	);
	const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config, '-p', String(port)], {stdio: ['ignore', 'ignore', 'pipe']});
	let log = '';
	child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
	await eventually(
		`sshd listening on ${port} (${log})`,
		() =>
			new Promise<boolean>(resolve => {
				const socket = net.connect(port, '127.0.0.1');
				socket.once('connect', () => {
					socket.destroy();
					resolve(true);
				});
				socket.once('error', () => resolve(false));
			}),
		{timeoutMs: 10_000},
	);
	return {
		port,
		dir,
		clientKey,
		knownHosts,
		host: (name, args = []) => ({
			name,
			ssh: 'root@127.0.0.1',
			port,
			identityFile: clientKey,
			sshOptions: {UserKnownHostsFile: knownHosts, GlobalKnownHostsFile: '/dev/null', IdentitiesOnly: 'yes'},
			command: [process.execPath, BUILT_CLI, ...args],
		}),
		async stop() {
			if (child.exitCode === null) {
				const exited = new Promise(resolve => child.once('exit', resolve));
				child.kill('SIGTERM');
				await exited;
			}
			tmp.dispose();
		},
	};
}
