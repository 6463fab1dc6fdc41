import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import ts from 'typescript';
import {installStandin} from '../../src/demo/installStandin.js';
import type {StandinOptions, StandinRecord} from '../../src/demo/standin.js';

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/demo/standin.ts');

let compiled: {dir: string; script: string} | undefined;

/**
 * The one stand-in implementation (src/demo/standin.ts), transpiled on its own into a private
 * .mjs so tests never depend on a stale dist/. It imports only node: builtins, so this is enough.
 */
export function standinScript(): string {
	if (compiled && fs.existsSync(compiled.script)) return compiled.script;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-standin-js-'));
	const output = ts.transpileModule(fs.readFileSync(SOURCE, 'utf8'), {
		compilerOptions: {module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022},
		fileName: SOURCE,
	});
	const script = path.join(dir, 'standin.mjs');
	fs.writeFileSync(script, output.outputText);
	compiled = {dir, script};
	// Suites that forget disposeStandinScript still leave no folder behind.
	process.once('exit', () => fs.rmSync(dir, {recursive: true, force: true}));
	return script;
}

/** Remove the transpiled copy (call from afterAll of the last suite that used it). */
export function disposeStandinScript(): void {
	if (compiled) fs.rmSync(compiled.dir, {recursive: true, force: true});
	compiled = undefined;
}

export interface StandinInstall {
	/** The bin folder; put it first on PATH. */
	readonly binDir: string;
	/** The installed executable. */
	readonly file: string;
	/** Where every start appends its StandinRecord. */
	readonly recordFile: string;
}

/** Install an executable `<binDir>/<name>` running the stand-in with `options`, recording into `<binDir>/../<name>.records`. */
export function installTestStandin(binDir: string, name: string, options: Partial<StandinOptions> = {}): StandinInstall {
	const recordFile = path.join(path.dirname(binDir), `${name}-${path.basename(binDir)}.records`);
	const file = installStandin({binDir, name, script: standinScript(), options: {recordFile, ...options}});
	return {binDir, file, recordFile};
}

/** Every start recorded so far. */
export function readStandinRecords(recordFile: string): StandinRecord[] {
	if (!fs.existsSync(recordFile)) return [];
	return fs
		.readFileSync(recordFile, 'utf8')
		.split('\n')
		.filter(line => line.trim().length > 0)
		.map(line => JSON.parse(line) as StandinRecord);
}

/** True when `pid` is alive with exactly `startTime` (field 22 of /proc/<pid>/stat) and not a zombie. */
export function aliveWithStart(pid: number, startTime: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return fields[0] !== 'Z' && Number(fields[19]) === startTime;
	} catch {
		return false;
	}
}
