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

	it('a kept pass reads new processes and those whose open files changed in number; holders and openFiles read every process now', async () => {
		const t = tempDir('mam-kept-');
		const [a, b, c] = ['a.txt', 'b.txt', 'c.txt'].map(name => path.join(t.dir, name)) as [string, string, string];
		for (const file of [a, b, c]) fs.writeFileSync(file, 'x');
		// A child that opens and closes files when told: its fd count changes only then.
		const script = `const fs=require('fs');const fds={};require('readline').createInterface({input:process.stdin}).on('line',l=>{const [op,p]=l.split(' ');if(op==='open')fds[p]=fs.openSync(p,'r');else{fs.closeSync(fds[p]);delete fds[p];}process.stdout.write('ok\\n');});process.stdout.write('ok\\n');`;
		child = execa('node', ['-e', script], {stdin: 'pipe', reject: false});
		const pid = child.pid as number;
		const lines = child.stdout as NodeJS.ReadableStream;
		let oks = 0;
		lines.on('data', (chunk: Buffer) => (oks += chunk.toString().split('ok').length - 1));
		const tell = async (line: string) => {
			const want = oks + 1;
			child?.stdin?.write(`${line}\n`);
			await eventually(line, () => (oks >= want ? true : undefined));
		};
		await eventually('child up', () => (oks >= 1 ? true : undefined));
		const table = createProcessTable();
		const ofChild = (files: readonly OpenFile[] | undefined) =>
			(files ?? [])
				.filter(f => f.pid === pid && f.path.startsWith(t.dir))
				.map(f => f.path)
				.sort();
		try {
			await tell(`open ${a}`);
			// New to the table: read.
			expect(ofChild(await table.openFilesKept?.())).toEqual([a]);
			await tell(`open ${b}`);
			// One more open file: read again.
			expect(ofChild(await table.openFilesKept?.())).toEqual([a, b]);
			// As many open files as at the last pass, another one among them: the view keeps what it read...
			await tell(`close ${a}`);
			await tell(`open ${c}`);
			expect(ofChild(await table.openFilesKept?.())).toEqual([a, b]);
			// ...a check never does.
			expect(ofChild(await table.openFiles?.())).toEqual([b, c]);
			expect((await table.holders([c])).map(h => h.pid)).toContain(pid);
			await tell(`close ${b}`);
			expect(ofChild(await table.openFilesKept?.())).toEqual([c]);
		} finally {
			child.kill('SIGKILL');
			t.dispose();
		}
	});

	it("a refresh's kept pass is its fresh pass when that was made, else the base's kept pass, once", async () => {
		const asked: string[] = [];
		const base: ProcessTable = {
			list: async () => [],
			get: async () => undefined,
			holders: async () => [],
			openFiles: async () => (asked.push('fresh'), [{pid: 1, path: '/fresh'}]),
			openFilesKept: async () => (asked.push('kept'), [{pid: 1, path: '/kept'}]),
		};
		const viewFirst = snapshotTable(base);
		expect(await viewFirst.openFilesKept?.()).toEqual([{pid: 1, path: '/kept'}]);
		expect(await viewFirst.openFilesKept?.()).toEqual([{pid: 1, path: '/kept'}]);
		expect(await viewFirst.openFiles?.()).toEqual([{pid: 1, path: '/fresh'}]);
		expect(asked).toEqual(['kept', 'fresh']);
		const freshFirst = snapshotTable(base);
		await freshFirst.openFiles?.();
		expect(await freshFirst.openFilesKept?.()).toEqual([{pid: 1, path: '/fresh'}]);
		expect(asked).toEqual(['kept', 'fresh', 'fresh']);
	});
});
