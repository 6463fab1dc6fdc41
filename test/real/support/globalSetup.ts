import {installRealClis} from './install.js';

/**
 * Install the pinned CLIs (or check the cached ones) once per run, before any test file: a CLI
 * that cannot be installed or started fails the whole run with its name and the reason.
 */
export async function setup(): Promise<void> {
	const started = Date.now();
	const clis = await installRealClis();
	process.stdout.write(`real CLIs ready in ${clis.binDir} and ${clis.hermesBinDir} (${Date.now() - started} ms)\n`);
}
