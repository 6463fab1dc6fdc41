/**
 * Hermes Agent, the one real CLI published on PyPI only: `hermes-agent==0.19.0` installed with pip
 * into a venv inside the real suite's cache (`<cache>/hermes-venv`, about 230 MB, made with
 * `python3 -m venv`; Python ≥ 3.11), and a folder holding only a `hermes` link
 * (`<cache>/hermes-bin`) for a pane's PATH, so the venv's own `python3` and `pip` stay off it.
 *
 * `prepareHermes()` reuses the venv when the pinned version is installed there, else (under the
 * same kind of lock folder as the npm install, `<cache>/hermes-venv.lock`) makes the venv afresh
 * and pip-installs the pin, then starts `hermes --version` under a throwaway HOME. It never
 * skips: a venv that cannot be made, a pip that fails, a `hermes` that will not start all throw an
 * {@link InstallError} that names hermes and says why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {execa} from 'execa';
import {InstallError, withInstallLock} from './install.js';

export const HERMES_PIN = {agent: 'hermes', pkg: 'hermes-agent', version: '0.19.0', versionText: 'Hermes Agent v0.19.0'} as const;

const NAME = `hermes (${HERMES_PIN.pkg}==${HERMES_PIN.version})`;

export interface HermesInstall {
	/** `<cache>/hermes-bin/hermes`, a link to the venv's console script. */
	readonly hermes: string;
	/** The folder holding only that link: put it on a pane's PATH. */
	readonly binDir: string;
	readonly venvDir: string;
}

export function hermesVenvDir(cacheDir: string): string {
	return path.join(cacheDir, 'hermes-venv');
}

/** The hermes-agent version pip installed in the venv (its dist-info folder), or undefined. */
export function installedHermesVersion(venvDir: string): string | undefined {
	let libs: string[];
	try {
		libs = fs.readdirSync(path.join(venvDir, 'lib')).filter(name => /^python3\.\d+$/.test(name));
	} catch {
		return undefined;
	}
	for (const lib of libs) {
		let names: string[];
		try {
			names = fs.readdirSync(path.join(venvDir, 'lib', lib, 'site-packages'));
		} catch {
			continue;
		}
		const found = names.map(name => /^hermes_agent-(.+)\.dist-info$/.exec(name)?.[1]).find(v => v !== undefined);
		if (found) return found;
	}
	return undefined;
}

/** The last lines of a failed command's output, for the error. */
function tail(result: {stdout?: unknown; stderr?: unknown; message?: string}, lines = 8): string {
	return String(result.stderr || result.stdout || result.message || '')
		.trim()
		.split('\n')
		.slice(-lines)
		.join('\n');
}

/** A fresh venv with the pin in it; the venv is removed again when pip fails, so no half-install is reused. */
async function pipInstall(venvDir: string, env: NodeJS.ProcessEnv): Promise<void> {
	fs.rmSync(venvDir, {recursive: true, force: true});
	fs.mkdirSync(path.dirname(venvDir), {recursive: true});
	const python = env['MAM_REAL_PYTHON'] || 'python3';
	const venv = await execa(python, ['-m', 'venv', venvDir], {env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 5 * 60_000});
	if (venv.exitCode !== 0) {
		fs.rmSync(venvDir, {recursive: true, force: true});
		const why = venv.failed && venv.exitCode === undefined ? venv.message : `exit ${venv.exitCode}`;
		throw new InstallError(`could not make the venv for ${NAME} at ${venvDir}: \`${python} -m venv\` ${why}\n${tail(venv)}`);
	}
	const spec = `${HERMES_PIN.pkg}==${HERMES_PIN.version}`;
	const pip = await execa(path.join(venvDir, 'bin', 'pip'), ['install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', spec], {
		env,
		extendEnv: false,
		reject: false,
		stdin: 'ignore',
		timeout: 10 * 60_000,
	});
	if (pip.exitCode !== 0 || installedHermesVersion(venvDir) !== HERMES_PIN.version) {
		fs.rmSync(venvDir, {recursive: true, force: true});
		throw new InstallError(`could not install ${NAME} into ${venvDir}: pip exited ${pip.exitCode ?? 'by a signal'}\n${tail(pip)}`);
	}
}

/**
 * `hermes --version` under a throwaway HOME. Its update check (a PyPI request, no switch turns it
 * off) is answered by a fresh `.update_check` cache entry, so the check stays offline.
 */
async function checkVersion(hermes: string): Promise<void> {
	const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-real-hermes-version-'));
	try {
		seedUpdateCheck(path.join(home, '.hermes'));
		const env = {PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, NO_COLOR: '1', LANG: 'C.UTF-8'};
		const result = await execa(hermes, ['--version'], {env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000, cwd: home});
		const out = `${String(result.stdout)}\n${String(result.stderr)}`;
		if (result.exitCode === 0 && out.includes(HERMES_PIN.versionText)) return;
		const why = result.timedOut
			? 'timed out after 60 s'
			: `exit ${result.exitCode ?? result.signal ?? '?'}: ${out.trim().split('\n').slice(-4).join(' | ') || result.message}`;
		throw new InstallError(`${NAME} did not start: \`hermes --version\` ${why}`);
	} finally {
		fs.rmSync(home, {recursive: true, force: true});
	}
}

/**
 * hermes' own cache of its update check (`<HERMES_HOME>/.update_check`, trusted for 6 hours while
 * the version matches): written fresh, hermes does not ask PyPI at start.
 */
export function seedUpdateCheck(hermesHome: string): void {
	fs.mkdirSync(hermesHome, {recursive: true});
	const entry = {ts: Date.now() / 1000, behind: 0, rev: null, ver: HERMES_PIN.version};
	fs.writeFileSync(path.join(hermesHome, '.update_check'), JSON.stringify(entry));
}

/** The link folder: only `hermes`, pointing into the venv. */
function linkBin(cacheDir: string, venvDir: string): {hermes: string; binDir: string} {
	const binDir = path.join(cacheDir, 'hermes-bin');
	const hermes = path.join(binDir, 'hermes');
	const target = path.join(venvDir, 'bin', 'hermes');
	fs.mkdirSync(binDir, {recursive: true});
	let current: string | undefined;
	try {
		current = fs.readlinkSync(hermes);
	} catch {
		current = undefined;
	}
	if (current !== target) {
		// Another process may link it at the same moment: a temp link renamed over is atomic.
		const temp = `${hermes}.${process.pid}.tmp`;
		fs.rmSync(temp, {force: true});
		fs.symlinkSync(target, temp);
		fs.renameSync(temp, hermes);
	}
	return {hermes, binDir};
}

/**
 * Make hermes ready in `cacheDir`: pip installs the pin into `<cacheDir>/hermes-venv` when it is
 * missing or at another version (under the lock), then `hermes --version` must start. `env` is
 * pip's environment (tests point its index somewhere else).
 */
export async function prepareHermes(cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<HermesInstall> {
	const venvDir = hermesVenvDir(cacheDir);
	if (installedHermesVersion(venvDir) !== HERMES_PIN.version) {
		await withInstallLock(venvDir, async () => {
			if (installedHermesVersion(venvDir) !== HERMES_PIN.version) await pipInstall(venvDir, env);
		});
	}
	const {hermes, binDir} = linkBin(cacheDir, venvDir);
	await checkVersion(hermes);
	return {hermes, binDir, venvDir};
}
