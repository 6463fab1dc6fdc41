import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {grepHome, isTmpLitter, makeWorld, processTable, sleep, startModel, type Model, type RealWorld} from './support/harness.js';

/** The harness itself, without any agent: what cleanup and grepHome promise the other tests. */
describe('real-agent harness', () => {
	let model: Model | undefined;
	let world: RealWorld | undefined;

	afterEach(async () => {
		await world?.cleanup();
		await model?.close();
		world = undefined;
		model = undefined;
	});

	it('takes only files right in /tmp as litter, never a CLI installed in a folder under /tmp', () => {
		expect(isTmpLitter('/tmp/.1f2e3d4c5b6a7980-00000000.so', '/tmp')).toBe(true);
		expect(isTmpLitter('/tmp/tmp.8XaOgbdPYw/mam-tui-real/cli/node_modules/opencode-ai/bin/opencode.exe', '/tmp')).toBe(false);
		expect(isTmpLitter('/tmp/mam-real-abc/home/x.so', '/tmp')).toBe(false);
		expect(isTmpLitter('/tmp/.1f2e3d4c5b6a7980-00000000.so (deleted)', '/tmp')).toBe(false);
		expect(isTmpLitter('/usr/lib/x86_64-linux-gnu/libc.so.6', '/tmp')).toBe(false);
	});

	it('cleanup kills every process of the world, even one that left its pane, and removes it', async () => {
		model = await startModel();
		world = await makeWorld(model);
		const w = world;
		// A duration no one else uses, to find exactly these sleeps in the process table.
		const seconds = `600.${Date.now() % 100_000}${process.pid}`;
		// setsid -f: a child in its own session, reparented to init, as codex's daemon would be.
		const opened = await w.tmux(['new-window', '-d', '--', 'sh', '-c', `setsid -f sleep ${seconds}; exec sleep ${seconds}`]);
		expect(opened.exitCode, opened.stderr).toBe(0);
		const ours = () => processTable().filter(p => p.args === `sleep ${seconds}`);
		for (let i = 0; i < 50 && ours().length < 2; i++) await sleep(100);
		const sleepers = ours().map(p => p.pid);
		expect(sleepers).toHaveLength(2);
		expect(ours().some(p => p.ppid === 1 || !w.processes().some(q => q.pid === p.ppid))).toBe(true);

		await w.cleanup();
		world = undefined;
		const alive = processTable().filter(p => sleepers.includes(p.pid) && !fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8').includes(') Z'));
		expect(alive).toEqual([]);
		expect(fs.existsSync(w.dir)).toBe(false);
		expect(fs.existsSync(w.tmuxPath)).toBe(false);
	});

	it('grepHome lists the files under HOME and TMPDIR that hold the needle, and nothing else', async () => {
		model = await startModel();
		world = await makeWorld(model);
		const needle = 'needle-5f0c1e';
		const inHome = path.join(world.home, '.local/share/x/deep/file.bin');
		const inTmp = path.join(world.tmpdir, 'scratch.txt');
		fs.mkdirSync(path.dirname(inHome), {recursive: true});
		fs.writeFileSync(inHome, Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(needle), Buffer.from([255])]));
		fs.writeFileSync(inTmp, `x ${needle} y`);
		fs.writeFileSync(path.join(world.home, 'other.txt'), 'needle-5f0c1');
		fs.writeFileSync(path.join(world.alpha, 'outside-home.txt'), needle);
		expect(await grepHome(world, needle)).toEqual([inHome, inTmp].sort());
	});

	it('mamTui runs the built CLI against the world: its tmux server and its own registry', async () => {
		model = await startModel();
		world = await makeWorld(model);
		const status = await world.mamTui(['status', '--json']);
		expect(status.exitCode, status.stderr).toBe(0);
		const parsed = JSON.parse(status.stdout) as {registry: string; mux: {kind: string; ok: boolean}; panes: Array<{title: string}>};
		expect(parsed.registry).toBe(world.registry);
		expect(parsed.mux).toMatchObject({kind: 'tmux', ok: true});
		expect(parsed.panes.map(p => p.title)).toEqual(['keeper']);
	});

	it("a pane's PATH starts with the real CLIs and holds none of the repository's tools", async () => {
		model = await startModel();
		world = await makeWorld(model);
		const entries = (world.env['PATH'] ?? '').split(':');
		expect(entries[0]).toBe(world.clis.binDir);
		expect(entries.filter(e => e.includes('node_modules/.bin') && e !== world?.clis.binDir)).toEqual([]);
	});
});
