import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {InstallError, PINS, prepareClis} from './support/install.js';
import {HERMES_PIN, hermesVenvDir, prepareHermes} from './support/installPython.js';

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

/** npm pointed at a registry nothing listens on, with its own cache: every install fails at once. */
async function unreachableRegistry(): Promise<NodeJS.ProcessEnv> {
	return {
		...process.env,
		npm_config_registry: `http://127.0.0.1:${await deadPort()}/`,
		npm_config_cache: tempDir(),
		npm_config_fetch_retries: '0',
		npm_config_fetch_timeout: '5000',
	};
}

describe('real CLI install never skips silently', () => {
	it('names every CLI npm could not install, and why', async () => {
		const cacheDir = tempDir();
		const env = await unreachableRegistry();
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
		const env = await unreachableRegistry();
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

/** pip's environment with every index and wheel folder this machine configures replaced by a dead port. */
async function deadIndex(): Promise<NodeJS.ProcessEnv> {
	return {
		...process.env,
		PIP_CONFIG_FILE: os.devNull,
		PIP_INDEX_URL: `http://127.0.0.1:${await deadPort()}/simple/`,
		PIP_EXTRA_INDEX_URL: '',
		PIP_FIND_LINKS: '',
		PIP_NO_CACHE_DIR: '1',
		PIP_RETRIES: '0',
		PIP_TIMEOUT: '5',
	};
}

/** A venv that looks like the pin is installed, its `hermes` a script with the given body. */
function fakeHermesVenv(cacheDir: string, body: string): void {
	const venv = hermesVenvDir(cacheDir);
	fs.mkdirSync(path.join(venv, 'lib/python3.11/site-packages', `hermes_agent-${HERMES_PIN.version}.dist-info`), {recursive: true});
	fs.mkdirSync(path.join(venv, 'bin'), {recursive: true});
	fs.writeFileSync(path.join(venv, 'bin/hermes'), `#!/bin/sh\n${body}\n`, {mode: 0o755});
}

describe('hermes install (pip, into a venv in the cache) never skips silently', () => {
	it('names hermes when pip cannot reach its index, in a cache whose parents do not exist yet', async () => {
		const cacheDir = path.join(tempDir(), 'not', 'yet', 'there', 'cli');
		const failure = await prepareHermes(cacheDir, await deadIndex()).catch((error: unknown) => error);
		// The venv was made (no mkdir failed); pip found no index, and the half-made venv is gone.
		expect(failure).toBeInstanceOf(InstallError);
		const message = (failure as Error).message;
		expect(message).toContain('hermes (hermes-agent==0.19.0)');
		expect(message).toMatch(/pip exited 1/);
		expect(message).toMatch(/No matching distribution found for hermes-agent==0\.19\.0/);
		expect(fs.existsSync(hermesVenvDir(cacheDir))).toBe(false);
		expect(fs.existsSync(`${hermesVenvDir(cacheDir)}.lock`)).toBe(false);
	});

	it('names hermes when it is installed but does not start', async () => {
		const cacheDir = tempDir();
		fakeHermesVenv(cacheDir, 'echo "hermes is broken" >&2; exit 3');
		const failure = await prepareHermes(cacheDir, await deadIndex()).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(InstallError);
		expect((failure as Error).message).toContain('hermes (hermes-agent==0.19.0) did not start');
		expect((failure as Error).message).toContain('hermes is broken');
	});

	it('takes a venv whose hermes starts at the pinned version as it is, linked alone onto PATH', async () => {
		const cacheDir = tempDir();
		fakeHermesVenv(cacheDir, 'echo "Hermes Agent v0.19.0 (stand-in)"');
		const hermes = await prepareHermes(cacheDir, await deadIndex());
		expect(hermes.hermes).toBe(path.join(cacheDir, 'hermes-bin/hermes'));
		expect(fs.readdirSync(hermes.binDir)).toEqual(['hermes']);
		expect(fs.realpathSync(hermes.hermes)).toBe(path.join(hermesVenvDir(cacheDir), 'bin/hermes'));
	});
});
