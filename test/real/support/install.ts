/**
 * The real agent CLIs, at pinned versions, in a cache folder outside the repository:
 * `$MAM_REAL_CACHE`, else `${XDG_CACHE_HOME:-$HOME/.cache}/mam-tui-real/cli` (about 1.3 GB of npm
 * packages, plus hermes' Python venv, about 230 MB: `./installPython.ts`).
 *
 * `installRealClis()` reuses what is there when every version matches, else runs one
 * `npm install` (argv, no shell) for the packages that are missing or at another version, then
 * starts each CLI once with `--version` under a throwaway HOME. It never skips: a CLI that
 * cannot be installed or started throws an {@link InstallError} that names it and says why.
 * Several test processes may call it at once: a lock folder lets one install at a time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {execa} from 'execa';
import {prepareHermes} from './installPython.js';

export type RealAgent = 'claude' | 'codex' | 'opencode' | 'gemini' | 'grok' | 'hermes';
export const REAL_AGENTS: readonly RealAgent[] = ['claude', 'codex', 'opencode', 'gemini', 'grok', 'hermes'];

/** The agents npm installs (hermes comes from PyPI). */
export type NpmAgent = Exclude<RealAgent, 'hermes'>;

interface Pin {
	readonly agent: NpmAgent;
	readonly pkg: string;
	readonly version: string;
	/** What `--version` prints (its first line contains it). */
	readonly versionText: string;
}

/** The versions the suite was written against (REAL.md). Change them together with the tests. */
export const PINS: readonly Pin[] = [
	{agent: 'claude', pkg: '@anthropic-ai/claude-code', version: '2.1.197', versionText: '2.1.197'},
	{agent: 'codex', pkg: '@openai/codex', version: '0.171.0', versionText: '0.171.0'},
	{agent: 'opencode', pkg: 'opencode-ai', version: '1.18.33', versionText: '1.18.33'},
	{agent: 'gemini', pkg: '@google/gemini-cli', version: '0.61.0', versionText: '0.61.0'},
	// Grok Build: a launcher whose postinstall unpacks the static binary of @xai-official/grok-linux-x64
	// beside it (`bin/grok` → `grok-native`); `grok --version` prints `grok 1.0.41 (4220f3b224a6)`.
	{agent: 'grok', pkg: '@xai-official/grok', version: '1.0.41', versionText: '1.0.41'},
];

/**
 * Packages whose install script must run: npm 11 warns about install scripts not named in the
 * project's `allowScripts` (and its documentation says they are skipped): without grok's
 * postinstall `bin/grok` stays a node launcher that unpacks the binary into `$GROK_HOME/bin` at
 * its first start, inside every test's throwaway HOME.
 */
const ALLOW_SCRIPTS: Readonly<Record<string, true>> = {'@xai-official/grok@1.0.41': true};

/** Absolute paths of the npm CLIs, as `node_modules/.bin` links (the way npm puts them on PATH). */
export interface NpmClis {
	readonly claude: string;
	readonly codex: string;
	readonly opencode: string;
	readonly gemini: string;
	readonly grok: string;
	/** The folder holding the npm links: put it on a pane's PATH. */
	readonly binDir: string;
	/** The cache folder (holds package.json and node_modules). */
	readonly cacheDir: string;
}

/** Every real CLI: the npm ones, and hermes (a link into its venv, in a folder of its own). */
export interface RealClis extends NpmClis {
	readonly hermes: string;
	/** The folder holding only the `hermes` link: on a pane's PATH after {@link NpmClis.binDir}. */
	readonly hermesBinDir: string;
}

export class InstallError extends Error {
	override readonly name = 'InstallError';
}

export function realCacheDir(env: NodeJS.ProcessEnv = process.env): string {
	if (env['MAM_REAL_CACHE']) return path.resolve(env['MAM_REAL_CACHE']);
	const cacheHome = env['XDG_CACHE_HOME'] || path.join(env['HOME'] || os.homedir(), '.cache');
	return path.join(cacheHome, 'mam-tui-real', 'cli');
}

function installedVersion(cacheDir: string, pkg: string): string | undefined {
	try {
		const manifest = JSON.parse(fs.readFileSync(path.join(cacheDir, 'node_modules', pkg, 'package.json'), 'utf8')) as {version?: unknown};
		return typeof manifest.version === 'string' ? manifest.version : undefined;
	} catch {
		return undefined;
	}
}

/** The pins whose package is missing from the cache or at another version. */
export function missingPins(cacheDir: string): Pin[] {
	return PINS.filter(pin => installedVersion(cacheDir, pin.pkg) !== pin.version);
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** The pid that holds the lock, 0 while it is still writing it (or the lock just went). */
function lockHolder(lock: string): number {
	try {
		return Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8')) || 0;
	} catch {
		return 0;
	}
}

/** Hold `<cacheDir>.lock` (a folder: mkdir is atomic) while `work` runs; a dead holder's lock is taken over. */
export async function withInstallLock<T>(cacheDir: string, work: () => Promise<T>): Promise<T> {
	const lock = `${cacheDir}.lock`;
	// On a machine nobody prepared, the cache's parent does not exist yet: the lock lives there.
	fs.mkdirSync(path.dirname(lock), {recursive: true});
	const deadline = Date.now() + 15 * 60_000;
	for (;;) {
		try {
			fs.mkdirSync(lock);
			fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
			const holder = lockHolder(lock);
			if (holder > 0 && !isAlive(holder)) fs.rmSync(lock, {recursive: true, force: true});
			else if (Date.now() > deadline) throw new InstallError(`another install (pid ${holder || '?'}) has held ${lock} for 15 minutes`);
			else await sleep(1000);
		}
	}
	try {
		return await work();
	} finally {
		fs.rmSync(lock, {recursive: true, force: true});
	}
}

/** The cache's package.json, with the install scripts it allows (added to one an earlier run wrote). */
function writeManifest(file: string): void {
	let manifest: Record<string, unknown> = {name: 'mam-tui-real-clis', private: true};
	try {
		manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
	} catch {
		// missing (or unreadable): a new one
	}
	const allowed =
		typeof manifest['allowScripts'] === 'object' && manifest['allowScripts'] !== null ? (manifest['allowScripts'] as Record<string, unknown>) : {};
	if (Object.entries(ALLOW_SCRIPTS).every(([key, value]) => allowed[key] === value) && fs.existsSync(file)) return;
	fs.writeFileSync(file, `${JSON.stringify({...manifest, allowScripts: {...allowed, ...ALLOW_SCRIPTS}}, null, 2)}\n`);
}

async function npmInstall(cacheDir: string, pins: readonly Pin[], env: NodeJS.ProcessEnv): Promise<void> {
	fs.mkdirSync(cacheDir, {recursive: true});
	writeManifest(path.join(cacheDir, 'package.json'));
	const specs = pins.map(pin => `${pin.pkg}@${pin.version}`);
	// grok's postinstall also copies its 166 MB binary and a config.toml into `$GROK_HOME` (else
	// the installing user's ~/.grok): a folder of its own, removed after the install.
	const grokHome = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-grok-install-'));
	const result = await execa('npm', ['install', '--no-audit', '--no-fund', '--save-exact', '--loglevel=error', ...specs], {
		cwd: cacheDir,
		env: {...env, GROK_HOME: grokHome},
		extendEnv: false,
		reject: false,
		stdin: 'ignore',
		timeout: 10 * 60_000,
	}).finally(() => fs.rmSync(grokHome, {recursive: true, force: true}));
	const still = missingPins(cacheDir).filter(pin => pins.includes(pin));
	if (result.exitCode !== 0 || still.length > 0) {
		const names = (still.length > 0 ? still : pins).map(pin => `${pin.agent} (${pin.pkg}@${pin.version})`).join(', ');
		const why = String(result.stderr || result.stdout || result.message)
			.trim()
			.split('\n')
			.slice(-8)
			.join('\n');
		throw new InstallError(`could not install ${names} into ${cacheDir}: npm exited ${result.exitCode ?? 'by a signal'}\n${why}`);
	}
}

/** Start each CLI with `--version` under a throwaway HOME; every failure is collected, then thrown together. */
async function checkVersions(binDir: string): Promise<void> {
	const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-version-'));
	const env = {
		PATH: `${binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
		HOME: home,
		XDG_CONFIG_HOME: path.join(home, '.config'),
		XDG_DATA_HOME: path.join(home, '.local/share'),
		XDG_STATE_HOME: path.join(home, '.local/state'),
		XDG_CACHE_HOME: path.join(home, '.cache'),
		TMPDIR: home,
		NO_COLOR: '1',
	};
	try {
		const failures = await Promise.all(
			PINS.map(async pin => {
				const result = await execa(path.join(binDir, pin.agent), ['--version'], {
					env,
					extendEnv: false,
					reject: false,
					stdin: 'ignore',
					timeout: 60_000,
					cwd: home,
				});
				const out = `${String(result.stdout)}\n${String(result.stderr)}`;
				if (result.exitCode === 0 && out.includes(pin.versionText)) return undefined;
				const why = result.timedOut
					? 'timed out after 60 s'
					: `exit ${result.exitCode ?? result.signal ?? '?'}: ${out.trim().split('\n').slice(-4).join(' | ') || result.message}`;
				return `${pin.agent} (${pin.pkg}@${pin.version}) did not start: \`${pin.agent} --version\` ${why}`;
			}),
		);
		const bad = failures.filter((f): f is string => f !== undefined);
		if (bad.length > 0) throw new InstallError(bad.join('\n'));
	} finally {
		fs.rmSync(home, {recursive: true, force: true});
	}
}

/**
 * Make the pinned CLIs ready in `cacheDir`: npm installs what is missing or at another version
 * (under the lock), then every CLI must start. `env` is npm's environment (tests point its
 * registry somewhere else).
 */
export async function prepareClis(cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<NpmClis> {
	if (missingPins(cacheDir).length > 0) {
		await withInstallLock(cacheDir, async () => {
			const missing = missingPins(cacheDir);
			if (missing.length > 0) await npmInstall(cacheDir, missing, env);
		});
	}
	const binDir = path.join(cacheDir, 'node_modules', '.bin');
	await checkVersions(binDir);
	return {
		claude: path.join(binDir, 'claude'),
		codex: path.join(binDir, 'codex'),
		opencode: path.join(binDir, 'opencode'),
		gemini: path.join(binDir, 'gemini'),
		grok: path.join(binDir, 'grok'),
		binDir,
		cacheDir,
	};
}

let installed: Promise<RealClis> | undefined;

/** Every real CLI ready in `cacheDir`: the npm ones and hermes' venv, installed side by side. */
export async function prepareRealClis(cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<RealClis> {
	const [npm, hermes] = await Promise.allSettled([prepareClis(cacheDir, env), prepareHermes(cacheDir, env)]);
	const failures = [npm, hermes].flatMap(r => (r.status === 'rejected' ? [r.reason instanceof Error ? r.reason.message : String(r.reason)] : []));
	if (npm.status === 'rejected' || hermes.status === 'rejected') throw new InstallError(failures.join('\n'));
	return {...npm.value, hermes: hermes.value.hermes, hermesBinDir: hermes.value.binDir};
}

/** {@link prepareRealClis} in {@link realCacheDir}, memoised per process. */
export function installRealClis(): Promise<RealClis> {
	installed ??= prepareRealClis(realCacheDir());
	// A failed install is not remembered: the next caller tries again and gets its own error.
	void installed.catch(() => (installed = undefined));
	return installed;
}
