import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {InstallError, PINS, prepareClis} from './support/install.js';

const dirs: string[] = [];
function tempDir(): string {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-install-')));
	dirs.push(dir);
	return dir;
}

afterEach(() => {
	for (const dir of dirs.splice(0)) fs.rmSync(dir, {recursive: true, force: true});
});

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
	const server = net.createServer();
	await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
	const port = (server.address() as net.AddressInfo).port;
	await new Promise<void>(resolve => server.close(() => resolve()));
	return port;
}

/** A cache that looks installed at the pinned versions, each CLI a script with the given body. */
function fakeInstalled(cacheDir: string, body: (pin: (typeof PINS)[number]) => string): void {
	fs.mkdirSync(path.join(cacheDir, 'node_modules/.bin'), {recursive: true});
	for (const pin of PINS) {
		const pkgDir = path.join(cacheDir, 'node_modules', pin.pkg);
		fs.mkdirSync(pkgDir, {recursive: true});
		fs.writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify({name: pin.pkg, version: pin.version}));
		fs.writeFileSync(path.join(cacheDir, 'node_modules/.bin', pin.agent), `#!/bin/sh\n${body(pin)}\n`, {mode: 0o755});
	}
}

describe('real CLI install never skips silently', () => {
	it('names every CLI npm could not install, and why', async () => {
		const cacheDir = tempDir();
		const npmCache = tempDir();
		const env = {
			...process.env,
			npm_config_registry: `http://127.0.0.1:${await deadPort()}/`,
			npm_config_cache: npmCache,
			npm_config_fetch_retries: '0',
			npm_config_fetch_timeout: '5000',
		};
		const failure = await prepareClis(cacheDir, env).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(InstallError);
		const message = (failure as Error).message;
		for (const pin of PINS) expect(message).toContain(`${pin.agent} (${pin.pkg}@${pin.version})`);
		expect(message).toMatch(/npm exited/);
	});

	it('names the CLI that is installed but does not start', async () => {
		const cacheDir = tempDir();
		fakeInstalled(cacheDir, pin => (pin.agent === 'gemini' ? 'echo "gemini is broken" >&2; exit 3' : `echo ${pin.version}`));
		const failure = await prepareClis(cacheDir).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(InstallError);
		const message = (failure as Error).message;
		expect(message).toContain('gemini (@google/gemini-cli@0.61.0) did not start');
		expect(message).toContain('gemini is broken');
		for (const other of ['claude', 'codex', 'opencode']) expect(message).not.toContain(`${other} (`);
	});

	it('installs into a cache whose parent folders do not exist yet', async () => {
		const cacheDir = path.join(tempDir(), 'not', 'yet', 'there', 'cli');
		const npmCache = tempDir();
		const env = {
			...process.env,
			npm_config_registry: `http://127.0.0.1:${await deadPort()}/`,
			npm_config_cache: npmCache,
			npm_config_fetch_retries: '0',
			npm_config_fetch_timeout: '5000',
		};
		const failure = await prepareClis(cacheDir, env).catch((error: unknown) => error);
		// The lock and the folder were made: what fails is npm (no registry), not a mkdir.
		expect(failure).toBeInstanceOf(InstallError);
		expect((failure as Error).message).toMatch(/npm exited/);
		expect(fs.existsSync(path.join(cacheDir, 'package.json'))).toBe(true);
	});

	it('takes a cache whose CLIs start at the pinned versions as it is', async () => {
		const cacheDir = tempDir();
		fakeInstalled(cacheDir, pin => `echo "${pin.version} (stand-in)"`);
		const clis = await prepareClis(cacheDir);
		expect(clis.gemini).toBe(path.join(cacheDir, 'node_modules/.bin/gemini'));
		expect(fs.existsSync(path.join(cacheDir, 'package-lock.json'))).toBe(false);
	});
});
