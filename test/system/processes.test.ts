import {execa} from 'execa';
import fs from 'node:fs';
import {afterEach, describe, expect, it} from 'vitest';
import path from 'node:path';
import {createProcessTable, parseStat, snapshotTable, type OpenFile, type ProcessTable} from '../../src/system/processes.js';
import {eventually} from '../helpers/poll.js';
import {tempDir} from '../helpers/tmp.js';
import {spawnFileHolder} from '../support/holders.js';

// A real child that execs itself under the same name (sh → sh) with another argv: the
// pid, start time and name stay, only exec tells it apart. The table keeps argv between
// listings, so this is the case it must not get wrong.
const REEXEC = ['-c', 'read line; exec sh -c "sleep 30" second-life', 'first-life'];

let child: ReturnType<typeof execa> | undefined;
afterEach(() => {
	child?.kill('SIGKILL');
	child = undefined;
});

describe('the process table', () => {
	it('sees a new argv after an exec under the same name', async () => {
		child = execa('sh', REEXEC, {stdin: 'pipe', reject: false});
		const pid = child.pid as number;
		const table = createProcessTable();
		const argvOf = async () => (await table.list()).find(p => p.pid === pid)?.argv ?? [];
		await eventually('sh started', async () => ((await argvOf()).includes('first-life') ? true : undefined));
		const before = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
		child.stdin?.write('\n');
		await eventually('sh re-exec’d', () => (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('second-life') ? true : undefined));
		const after = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
		// The case under test: nothing but exec changed.
		expect(after?.name).toBe(before?.name);
		expect(after?.startTime).toBe(before?.startTime);
		expect(await argvOf()).toContain('second-life');
	});

	it('a listing of unchanged processes gives each the argv it had', async () => {
		const table = createProcessTable();
		const first = new Map((await table.list()).map(p => [`${p.pid}:${p.startTime}`, p.argv.join('\0')]));
		const second = await table.list();
		const same = second.filter(p => first.get(`${p.pid}:${p.startTime}`) === p.argv.join('\0'));
		const mine = second.find(p => p.pid === process.pid);
		expect(mine?.argv.join(' ')).toContain(process.argv[1] ?? 'node');
		// Processes come and go between two listings on a busy machine; nearly all are the same.
		expect(same.length).toBeGreaterThan(second.length * 0.5);
	});

	it('reads the open files of the processes asked about, and of no other', async () => {
		const t = tempDir('mam-open-');
		const file = path.join(t.dir, 'held.txt');
		fs.writeFileSync(file, 'x');
		const held = await spawnFileHolder([file]);
		try {
			const gone = 2 ** 22 + 13;
			const files = await createProcessTable().openFilesOfPids?.([held.pid, gone]);
			expect(files?.filter(f => f.path === file)).toEqual([{pid: held.pid, path: file}]);
			expect(new Set(files?.map(f => f.pid))).toEqual(new Set([held.pid]));
		} finally {
			await held.stop();
			t.dispose();
		}
	});

	it("a refresh's table reads a few processes' open files alone, or takes them from its one pass once made", async () => {
		const every: OpenFile[] = [
			{pid: 1, path: '/a'},
			{pid: 2, path: '/b'},
		];
		const asked: string[] = [];
		const base: ProcessTable = {
			list: async () => [],
			get: async () => undefined,
			holders: async () => [],
			openFiles: async () => (asked.push('all'), every),
			openFilesOfPids: async pids => (asked.push(`some ${pids.join(',')}`), every.filter(f => pids.includes(f.pid))),
		};
		const table = snapshotTable(base);
		expect(await table.openFilesOfPids?.([2])).toEqual([{pid: 2, path: '/b'}]);
		expect(asked).toEqual(['some 2']);
		await table.openFiles?.();
		expect(await table.openFilesOfPids?.([1])).toEqual([{pid: 1, path: '/a'}]);
		expect(asked).toEqual(['some 2', 'all']);
	});
});
