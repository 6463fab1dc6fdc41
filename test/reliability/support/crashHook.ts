import fs from 'node:fs';
import path from 'node:path';

/**
 * A module preloaded into the built CLI (`node --import <hook> dist/src/cli.js …`) that counts
 * every write the process makes — file removals, renames, writes, truncations, and sqlite
 * statements that run — and SIGKILLs its own process right before write number MAM_CRASH_AT
 * (of every kind, or with MAM_CRASH_KIND=rm|sql of that kind only: file removals, sqlite writes).
 * With MAM_CRASH_COUNT_FILE set, the counts are written there on a normal exit, so a test can
 * first learn how many writes a purge makes and then kill it before any one of them: a crash
 * at every point of a purge, not only where a timer happens to land.
 */
const HOOK_SOURCE = `
import fs from 'node:fs';
import {createRequire, syncBuiltinESMExports} from 'node:module';

const crashAt = Number(process.env.MAM_CRASH_AT || 0);
const crashKind = process.env.MAM_CRASH_KIND || 'any';
const countFile = process.env.MAM_CRASH_COUNT_FILE;
const writeCount = fs.writeFileSync;
const counts = {any: 0, rm: 0, sql: 0};
const step = kind => {
	counts.any += 1;
	if (kind !== 'any') counts[kind] += 1;
	if (counts[crashKind] === crashAt && (crashKind === 'any' || crashKind === kind)) process.kill(process.pid, 'SIGKILL');
};
const wrap = (owner, name, kind) => {
	const original = owner[name];
	if (typeof original !== 'function') return;
	owner[name] = function (...args) {
		step(kind);
		return original.apply(this, args);
	};
};
for (const name of ['rmSync', 'unlinkSync', 'rmdirSync']) wrap(fs, name, 'rm');
for (const name of ['renameSync', 'writeFileSync', 'truncateSync', 'ftruncateSync', 'copyFileSync', 'appendFileSync', 'writeSync']) wrap(fs, name, 'any');
for (const name of ['rm', 'unlink', 'rmdir']) wrap(fs.promises, name, 'rm');
for (const name of ['rename', 'writeFile', 'truncate', 'copyFile', 'appendFile']) wrap(fs.promises, name, 'any');
syncBuiltinESMExports();

// The product sets this before its first database; loading the addon here first must not lose it.
process.env.SQLITE_USE_URI = '1';
const require = createRequire(import.meta.url);
const Database = require(process.env.MAM_BETTER_SQLITE3);
wrap(Database.prototype, 'exec', 'sql');
const probe = new Database(':memory:');
wrap(Object.getPrototypeOf(probe.prepare('SELECT 1')), 'run', 'sql');
probe.close();

process.on('exit', () => {
	if (countFile) writeCount(countFile, JSON.stringify(counts));
});
`;

/** What the hook counted in a run that was not killed. */
export interface WriteCounts {
	readonly any: number;
	readonly rm: number;
	readonly sql: number;
}

/** Write the hook into `dir`; returns its path (pass it to node's --import). */
export function writeCrashHook(dir: string): string {
	const file = path.join(dir, 'crash-hook.mjs');
	fs.writeFileSync(file, HOOK_SOURCE);
	return file;
}
