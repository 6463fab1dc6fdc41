import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import type {StandinOptions} from './standin.js';

/**
 * The compiled stand-in, dist/src/demo/standin.js: next to this module in the tsc build, and one
 * folder over when this module runs from the bundle the bin starts (dist/bin/). The stand-in runs
 * as a script of its own (and starts itself again for its children), so it is never bundled.
 */
export function bundledStandinScript(): string {
	const beside = fileURLToPath(new URL('./standin.js', import.meta.url));
	return fs.existsSync(beside) ? beside : fileURLToPath(new URL('../src/demo/standin.js', import.meta.url));
}

export interface InstallStandinRequest {
	/** A private bin folder; put it first on the pane's PATH. */
	readonly binDir: string;
	/** The command name to install (`claude`, `codex`, …). */
	readonly name: string;
	readonly options?: Partial<StandinOptions>;
	/** The stand-in module to run (default: the bundled one). */
	readonly script?: string;
}

/**
 * Install an executable `binDir/<name>` that runs the stand-in under that name. The file is a
 * tiny CommonJS node script (no shell): its process shows as `node …/<name> args`, the way an
 * npm-installed agent does, so the adapters' process matching finds it.
 */
export function installStandin(request: InstallStandinRequest): string {
	const script = request.script ?? bundledStandinScript();
	const file = path.join(request.binDir, request.name);
	const options = {agent: request.name, ...request.options};
	const body = [
		`#!${process.execPath}`,
		'// mam-tui stand-in agent (generated)',
		`import(${JSON.stringify(pathToFileURL(script).href)}).then(m => m.runStandin(${JSON.stringify(request.name)}, process.argv.slice(2), ${JSON.stringify(options)}));`,
		'',
	].join('\n');
	fs.mkdirSync(request.binDir, {recursive: true});
	fs.writeFileSync(file, body, {mode: 0o755});
	return file;
}
