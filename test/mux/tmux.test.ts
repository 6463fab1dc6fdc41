import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {createTmuxMux, type TmuxMuxOptions} from '../../src/mux/tmux.js';
import {escapeTmuxArg, escapeTmuxFormat, execWrapper, parsePaneRows, splitScreens} from '../../src/mux/tmuxArgs.js';
import type {MuxEvent} from '../../src/mux/types.js';
import type {Exec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {isolatedExec, paneScratch, privateTmux, type PrivateTmux} from '../helpers/tmux.js';
import {muxContract} from './contract.js';
import {eventually} from '../helpers/poll.js';

/** Running, not a zombie (an unreaped zombie still answers kill 0). */
function isAlive(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
	} catch {
		return false;
	}
}

function options(tmux: PrivateTmux, extra: Partial<TmuxMuxOptions> = {}): TmuxMuxOptions {
	return {server: {socketName: tmux.name}, exec: isolatedExec, processes: createProcessTable(), env: {}, pollMs: 100, ...extra};
}

describe('tmux backend: the mux contract on a private server', {timeout: 30_000}, () => {
	muxContract(async () => {
		const tmux = privateTmux();
		const s = paneScratch();
		// A keeper session so the server outlives the contract's panes.
		await tmux.run(['new-session', '-d', '-s', 'keeper', '--', 'sleep', '3600']);
		const socketPath = (await tmux.run(['display-message', '-p', '#{socket_path}'])).stdout.trim();
		return {
			mux: createTmuxMux(options(tmux)),
			cwd: s.dir,
			path: s.path,
			selfByEnv: paneId => createTmuxMux(options(tmux, {env: {TMUX: `${socketPath},1,0`, TMUX_PANE: paneId}})),
			selfByPid: pid => createTmuxMux(options(tmux, {selfPid: pid})),
			async dispose() {
				await tmux.kill();
				s.dispose();
			},
		};
	});
});

describe('tmux backend specifics', {timeout: 30_000}, () => {
	let tmux: PrivateTmux;
	let s: ReturnType<typeof paneScratch>;
	beforeAll(() => {
		tmux = privateTmux();
		s = paneScratch();
	});
	afterAll(async () => {
		await tmux.kill();
		s.dispose();
	});

	it('escapes what tmux would re-parse: a trailing ; and # in formats', () => {
		expect(escapeTmuxArg('echo hi;')).toBe('echo hi\\;');
		expect(escapeTmuxArg(';')).toBe('\\;');
		expect(escapeTmuxArg('a;b')).toBe('a;b');
		expect(escapeTmuxFormat('/tmp/#S/x')).toBe('/tmp/##S/x');
		expect(execWrapper(['claude', '--resume', 'a b'])).toEqual(['/bin/sh', '-c', 'exec "$@"', 'sh', 'claude', '--resume', 'a b']);
	});

	it('parses list-panes rows and keeps separators inside titles', () => {
		const line = ['%3', '42', '0', 'claude', '/w', 's', '$1', '1', 'win', '/tmp/tmux-0/x', '900', '1764580000', 'ti\x1ftle'].join('\x1f');
		const rows = parsePaneRows(`${line}\nnot a pane\n`);
		expect(rows).toEqual([
			expect.objectContaining({id: '%3', pid: 42, dead: false, command: 'claude', cwd: '/w', serverPid: '900', serverStart: '1764580000', title: 'ti\x1ftle'}),
		]);
	});

	it("names each pane's server (socket, server pid and start time): a restarted server is another server", async () => {
		const mux = createTmuxMux(options(tmux));
		const first = await mux.openPane({argv: ['codex'], cwd: s.dir, env: {PATH: s.path}});
		const before = (await mux.listPanes()).find(p => p.id === first)?.server;
		expect(before).toMatch(/^tmux:\/.+:\d+:\d+$/);
		await tmux.run(['kill-server']);
		// kill-server returns before the old server has exited: a client started meanwhile meets
		// the dying server ("server exited unexpectedly"), as seen under load in CI.
		const oldPid = Number(before?.split(':').at(-2));
		await eventually('the old server exited', () => !isAlive(oldPid));
		const again = await mux.openPane({argv: ['codex'], cwd: s.dir, env: {PATH: s.path}});
		const after = (await mux.listPanes()).find(p => p.id === again)?.server;
		expect(after).toMatch(/^tmux:/);
		expect(after).not.toBe(before);
		await mux.closePane(again);
	});

	it('with no server running lists nothing and stays healthy; the first pane starts a session', async () => {
		const mux = createTmuxMux(options(tmux));
		expect(await mux.listPanes()).toEqual([]);
		expect(mux.health()).toMatchObject({kind: 'tmux', ok: true, message: expect.stringContaining('no server')});
		const id = await mux.openPane({argv: ['codex'], cwd: s.dir, env: {PATH: s.path}});
		expect(id).toMatch(/^%\d+$/);
		expect((await mux.listPanes()).map(p => p.id)).toContain(id);
		await mux.closePane(id);
	});

	it('a listing that finds every pane as it was hands back the same panes; a changed pane is new', async () => {
		const mux = createTmuxMux(options(tmux));
		await tmux.run(['new-session', '-d', '-s', 'still', '--', 'sleep', '3600']);
		const id = await mux.openPane({argv: ['codex'], cwd: s.dir, env: {PATH: s.path}});
		await eventually('pane listed with its tree', async () => ((await mux.listPanes()).find(p => p.id === id)?.processes.length ?? 0) > 0, {retryErrors: true});
		// Nothing moves in a quiet server: two listings in a row are one array (the first may still see the control client settle).
		const [before, again] = await eventually('two equal listings', async () => {
			const a = await mux.listPanes();
			const b = await mux.listPanes();
			return a === b ? [a, b] : undefined;
		});
		expect(again).toBe(before);
		await tmux.run(['select-pane', '-t', id, '-T', 'renamed']);
		const after = await eventually('the new title listed', async () => {
			const listed = await mux.listPanes();
			return listed.find(p => p.id === id)?.title === 'renamed' ? listed : undefined;
		});
		expect(after).not.toBe(before);
		expect(after.find(p => p.id === id)).not.toBe(before.find(p => p.id === id));
		// The other panes are the objects they were.
		for (const pane of after.filter(p => p.id !== id)) expect(before).toContain(pane);
		await mux.closePane(id);
	});

	it('a cwd with # and a title with #S are taken literally', async () => {
		const dir = path.join(s.dir, 'a#S b');
		fs.mkdirSync(dir);
		const mux = createTmuxMux(options(tmux));
		await tmux.run(['new-session', '-d', '-s', 'keep2', '--', 'sleep', '3600']);
		const id = await mux.openPane({argv: ['codex'], cwd: dir, env: {PATH: s.path}, title: 'n#S'});
		const pane = await eventually('pane listed', async () => (await mux.listPanes()).find(p => p.id === id && p.processes.length > 0), {retryErrors: true});
		expect(pane.processes[0]?.cwd).toBe(dir);
		expect(pane.title).toBe('n#S');
		await mux.closePane(id);
	});

	it("splits one process's screens at its markers, keeping empty screens and blank lines", () => {
		const m = 'mam-screen-00ff ';
		expect([...splitScreens(`${m}%1\nhello\n\n$ \n${m}%2\n${m}%3\nlast\n`, m)]).toEqual([
			['%1', 'hello\n\n$ \n'],
			['%2', ''],
			['%3', 'last\n'],
		]);
		// A line that only looks like a marker of another nonce is screen text.
		expect(splitScreens(`${m}%1\nmam-screen-1234 %9\n`, m).get('%1')).toBe('mam-screen-1234 %9\n');
		expect(splitScreens('', m).size).toBe(0);
	});

	it('reads every screen in one process; a pane closed meanwhile has none and the panes after it are still read', async () => {
		const mux = createTmuxMux(options(tmux));
		await tmux.run(['new-session', '-d', '-s', 'screens', '--', 'sleep', '3600']);
		try {
			const open = async (word: string) => mux.openPane({argv: ['sh', '-c', `echo ${word}; exec sleep 3600`], cwd: s.dir, env: {PATH: s.path}});
			const [a, b, c] = [await open('alpha-screen'), await open('beta-screen'), await open('gamma-screen')];
			if (!a || !b || !c) throw new Error('panes not opened');
			await eventually('printed', async () => ((await tmux.run(['capture-pane', '-p', '-t', c])).stdout.includes('gamma') ? true : undefined));
			const before = mux.cost.processes;
			const all = await mux.readScreens([a, b, c]);
			expect(mux.cost.processes - before).toBe(1);
			expect([a, b, c].map(id => all.get(id)?.text.split('\n')[0])).toEqual(['alpha-screen', 'beta-screen', 'gamma-screen']);
			// The same text one capture-pane process prints.
			expect(all.get(a)?.text).toBe((await isolatedExec('tmux', ['-L', tmux.name, 'capture-pane', '-p', '-t', a])).stdout);
			await tmux.run(['kill-pane', '-t', b]);
			const after = await mux.readScreens([a, b, c]);
			expect([...after.keys()]).toEqual([a, c]);
			expect(after.get(c)?.text.split('\n')[0]).toBe('gamma-screen');
		} finally {
			await tmux.run(['kill-session', '-t', 'screens']);
			await mux.dispose();
		}
	});

	it('reports a pane whose program ended as pane-exited, and one it closed as pane-closed', async () => {
		const mux = createTmuxMux(options(tmux));
		await tmux.run(['new-session', '-d', '-s', 'keep3', '--', 'sleep', '3600']);
		const events: MuxEvent[] = [];
		const stop = mux.subscribe(e => events.push(e));
		try {
			const a = await mux.openPane({argv: ['claude'], cwd: s.dir, env: {PATH: s.path}});
			await eventually('a listed', async () => ((await mux.listPanes()).some(p => p.id === a) ? true : undefined), {retryErrors: true});
			const b = await mux.openPane({argv: ['codex'], cwd: s.dir, env: {PATH: s.path}});
			// The poll that reports b was created has seen a too: both exist for the poller.
			await eventually('b created', () => (events.some(e => e.type === 'pane-created' && e.paneId === b) ? true : undefined), {retryErrors: true});
			await mux.sendText(a, '/exit');
			await mux.sendKeys(a, ['Enter']);
			await mux.closePane(b);
			await eventually('exit seen', () => (events.some(e => e.type === 'pane-exited' && e.paneId === a) ? true : undefined), {retryErrors: true});
			await eventually('close seen', () => (events.some(e => e.type === 'pane-closed' && e.paneId === b) ? true : undefined), {retryErrors: true});
			expect(events.some(e => e.type === 'pane-closed' && e.paneId === a)).toBe(false);
		} finally {
			stop();
			await mux.dispose();
		}
	});

	it('does not trust TMUX_PANE from another server (pane ids repeat across servers)', async () => {
		await tmux.run(['new-session', '-d', '-s', 'keep4', '--', 'sleep', '3600']);
		const probe = createTmuxMux(options(tmux));
		const first = (await probe.listPanes())[0];
		expect(first).toBeDefined();
		const other = createTmuxMux(options(tmux, {env: {TMUX: '/tmp/tmux-0/some-other-server,1,0', TMUX_PANE: first?.id}}));
		expect((await other.listPanes()).find(p => p.id === first?.id)?.isSelf).toBe(false);
	});

	it('reads panes right in a C locale (without -u tmux writes non-ASCII and separators as _)', async () => {
		const dirUtf8 = path.join(s.dir, 'café ünï');
		fs.mkdirSync(dirUtf8);
		const cLocale: Exec = (file, args, opts = {}) => isolatedExec(file, args, {...opts, env: {...opts.env, LANG: 'C', LC_ALL: 'C'}});
		const mux = createTmuxMux(options(tmux, {exec: cLocale}));
		await tmux.run(['new-session', '-d', '-s', 'keep6', '--', 'sleep', '3600']);
		const id = await mux.openPane({argv: ['codex'], cwd: dirUtf8, env: {PATH: s.path}});
		const pane = await eventually('listed with its cwd', async () => (await mux.listPanes()).find(p => p.id === id && p.processes.length > 0), {
			retryErrors: true,
		});
		expect(pane.cwd).toBe(dirUtf8);
		expect(pane.agent).toBe('codex');
		await mux.closePane(id);
	});

	it('a missing tmux binary is a clear, unhealthy backend, not a crash', async () => {
		const mux = createTmuxMux(options(tmux, {bin: path.join(s.dir, 'no-such-tmux')}));
		await expect(mux.listPanes()).rejects.toThrow(/tmux is not installed/);
		expect(mux.health()).toMatchObject({ok: false});
	});

	it('talks to a server given by socket path (-S)', async () => {
		await tmux.run(['new-session', '-d', '-s', 'keep5', '--', 'sleep', '3600']);
		const socketPath = (await tmux.run(['display-message', '-p', '#{socket_path}'])).stdout.trim();
		const mux = createTmuxMux({...options(tmux), server: {socketPath}});
		const panes = await mux.listPanes();
		expect(panes.length).toBeGreaterThan(0);
		expect(mux.health().message).toContain(socketPath);
	});
});
