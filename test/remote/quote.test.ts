import fs from 'node:fs';
import path from 'node:path';
import {execa} from 'execa';
import {afterAll, afterEach, describe, expect, it} from 'vitest';
import {checkDestination, checkHostName, HostError, parseHosts} from '../../src/config/hosts.js';
import {ConfigError, parseConfig} from '../../src/config/config.js';
import {quoteRemoteArgv, sshArgv} from '../../src/remote/sshArgv.js';
import {explainExit} from '../../src/remote/channel.js';
import {backoffMs} from '../../src/remote/client.js';
import {tempDir} from '../helpers/tmp.js';

const shells = ['sh', 'bash', 'dash'].filter(s => fs.existsSync(`/bin/${s}`) || fs.existsSync(`/usr/bin/${s}`));

describe('quoteRemoteArgv: the one quoting of the remote command line', () => {
	const scratch = tempDir('mam-quote-');
	afterAll(() => scratch.dispose());
	afterEach(() => {
		for (const f of fs.readdirSync(scratch.dir)) fs.rmSync(path.join(scratch.dir, f), {force: true});
	});
	const canary = path.join(scratch.dir, 'CANARY');
	const hostile = [
		'plain',
		'',
		'with space',
		"it's",
		"''",
		'$(touch CANARY)',
		'`touch CANARY`',
		'; touch CANARY',
		'&& touch CANARY',
		'| touch CANARY',
		'> CANARY',
		'-oProxyCommand=touch CANARY',
		'$HOME ${HOME} $((1+1))',
		'*',
		'~',
		'"double" \'single\'',
		'ünïcödé ✓',
		'#comment',
		'!event',
	];

	for (const shell of shells) {
		it(`${shell} gets back exactly the argv given, and runs nothing of it`, async () => {
			const script = quoteRemoteArgv(['node', '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...hostile]);
			const result = await execa(shell, ['-c', script], {cwd: scratch.dir, reject: false});
			expect(result.stderr).toBe('');
			expect(JSON.parse(result.stdout)).toEqual(hostile);
			expect(fs.existsSync(canary)).toBe(false);
		});
	}

	it('refuses what it cannot carry the same way in every shell: control characters and backslashes', () => {
		for (const bad of ['a\nb', 'a\rb', 'a\0b', 'a\tb', 'a\u001bb', 'a\\b']) expect(() => quoteRemoteArgv([bad])).toThrow(/control character or a backslash/);
		expect(() => quoteRemoteArgv([])).toThrow(/empty/);
	});

	it('leaves plain words readable', () => {
		expect(quoteRemoteArgv(['mam-tui', 'serve', '--stdio'])).toBe('mam-tui serve --stdio');
		expect(quoteRemoteArgv(['/opt/node', "it's"])).toBe(`/opt/node 'it'\\''s'`);
	});
});

describe('hosts: validation (exit 2 naming the problem)', () => {
	it('refuses a leading "-", whitespace and control characters in names and destinations', () => {
		expect(() => checkHostName('-oProxyCommand=x')).toThrow(/starts with "-"/);
		expect(() => checkHostName('dev box')).toThrow(HostError);
		expect(() => checkHostName('dev\nbox')).toThrow(HostError);
		expect(() => checkHostName('local')).toThrow(/reserved/);
		expect(() => checkDestination('-oProxyCommand=touch /tmp/x')).toThrow(/starts with "-"/);
		expect(() => checkDestination('me@host evil')).toThrow(/whitespace/);
		expect(() => checkDestination('me@host\nevil')).toThrow(/control character/);
		expect(() => checkDestination('')).toThrow(/empty/);
		expect(checkDestination('me@devbox.example')).toBe('me@devbox.example');
	});

	it('validates sshOptions and refuses those that would weaken host keys or add a prompt', () => {
		expect(
			parseHosts([{name: 'a', ssh: 'h', sshOptions: {UserKnownHostsFile: '/k', ProxyJump: 'j', Compression: true, ConnectTimeout: 5}}])[0]?.sshOptions,
		).toEqual({
			UserKnownHostsFile: '/k',
			ProxyJump: 'j',
			Compression: 'yes',
			ConnectTimeout: '5',
		});
		expect(() => parseHosts([{name: 'a', ssh: 'h', sshOptions: {StrictHostKeyChecking: 'no'}}])).toThrow(/host-key checking/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', sshOptions: {BatchMode: 'no'}}])).toThrow(/BatchMode/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', sshOptions: {'Proxy Command': 'x'}}])).toThrow(/not an ssh option name/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', sshOptions: {ProxyJump: 'a\nb'}}])).toThrow(/control character/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', sshOptions: 'x'}])).toThrow(/mapping/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', port: 0}])).toThrow(/port/);
		expect(() => parseHosts([{name: 'a', ssh: 'h', bogus: 1}])).toThrow(/unknown key hosts\[0\]\.bogus/);
		expect(() =>
			parseHosts([
				{name: 'a', ssh: 'h'},
				{name: 'a', ssh: 'i'},
			]),
		).toThrow(/used twice/);
		expect(() => parseConfig({hosts: [{name: 'a', ssh: '-x'}]}, 'config.yaml')).toThrow(ConfigError);
		expect(() => parseConfig({hosts: [{name: 'a', ssh: '-x'}]}, 'config.yaml')).toThrow(/config\.yaml: hosts\[0\]: ssh destination "-x" starts with "-"/);
	});

	it("builds ssh's argv: ours first, BatchMode, no tty, `--` before the destination, one quoted command", () => {
		const [host] = parseHosts([
			{name: 'dev', ssh: 'me@dev', port: 2222, identityFile: '/k/id', sshOptions: {ProxyJump: 'j'}, command: ['/opt/my node', 'cli.js']},
		]);
		const argv = sshArgv(host!);
		expect(argv.slice(0, 3)).toEqual(['-T', '-o', 'BatchMode=yes']);
		expect(argv).toContain('ControlPath=none');
		expect(argv.indexOf('ProxyJump=j')).toBeLessThan(argv.indexOf('ControlPath=none'));
		expect(argv.slice(-3)).toEqual(['--', 'me@dev', `'/opt/my node' cli.js serve --stdio`]);
		expect(argv.join(' ')).not.toMatch(/StrictHostKeyChecking/);
	});
});

describe('the channel: backoff and what ssh said', () => {
	it('backs off doubling to a minute, jittered', () => {
		expect(backoffMs(0, () => 0)).toBe(500);
		expect(backoffMs(0, () => 1)).toBe(1000);
		expect(backoffMs(3, () => 1)).toBe(8000);
		expect(backoffMs(30, () => 1)).toBe(60_000);
		expect(backoffMs(30, () => 0)).toBe(30_000);
	});

	it("turns ssh's words into the user's", () => {
		expect(explainExit('@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.', 255)).toMatch(/^host key changed/);
		expect(explainExit('Host key verification failed.', 255)).toMatch(/^host key not trusted/);
		expect(explainExit('me@h: Permission denied (publickey).', 255)).toMatch(/^permission denied/);
		expect(explainExit('bash: line 1: mam-tui: command not found', 127)).toMatch(/^mam-tui not found on the host/);
		expect(explainExit('ssh: connect to host 127.0.0.1 port 9: Connection refused', 255)).toBe('connection refused');
	});
});
