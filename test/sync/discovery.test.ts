import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {DiscoveryCache} from '../../src/sync/discovery.js';
import type {OpenFile} from '../../src/system/processes.js';
import {cwdKey, inUseKey, pinKey} from '../../src/sync/discoveryResult.js';
import {conversationsOf} from '../../src/sync/snapshot.js';
import {adaptersWith, conversation, countingAdapter, ctx, proc, row, UUID, type CountingAdapter} from './support.js';

let dir: string;
let adapter: CountingAdapter;
let cache: DiscoveryCache;

beforeEach(() => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-disc-')));
	adapter = countingAdapter('claude');
	cache = new DiscoveryCache({ctx, adapters: adaptersWith(adapter)});
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

/** Bump a file's mtime the way a write would. */
function touch(file: string, mtimeSeconds: number): void {
	fs.writeFileSync(file, String(mtimeSeconds), {flag: 'a'});
	fs.utimesSync(file, mtimeSeconds, mtimeSeconds);
}

describe('DiscoveryCache', () => {
	it('re-reads a cwd on a tick only when a watched path changed', async () => {
		const store = path.join(dir, 'store.jsonl');
		touch(store, 1000);
		adapter.watch = [store, path.join(dir, 'missing-until-later')];
		adapter.conversations = [conversation(UUID(1), {cwd: dir})];
		const rows = [row({name: 'a', cwd: dir, status: 'running'})];
		const first = await cache.refresh(rows, {rescan: true});
		expect(first.byCwd.get(cwdKey('claude', dir))).toMatchObject({ok: true, conversations: [{id: UUID(1)}]});
		expect(adapter.calls.discover).toBe(1);
		await cache.refresh(rows, {rescan: true});
		await cache.refresh(rows, {rescan: false});
		expect(adapter.calls.discover).toBe(1);
		touch(store, 2000);
		adapter.conversations = [conversation(UUID(2), {cwd: dir}), conversation(UUID(1), {cwd: dir})];
		const after = await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(2);
		expect(after.conversations.map(c => c.id)).toEqual([UUID(2), UUID(1)]);
		fs.writeFileSync(path.join(dir, 'missing-until-later'), 'x');
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(3);
	});

	it("gives the join the folders of every resumable conversation, a re-read cwd's new ones included", async () => {
		const store = path.join(dir, 'store.jsonl');
		touch(store, 1000);
		adapter.watch = [store];
		const [a, b] = ['a', 'b'].map(name => path.join(dir, name)) as [string, string];
		adapter.conversations = [conversation(UUID(1), {cwd: a}), conversation(UUID(2), {cwd: b, resumeState: {kind: 'no', reason: 'empty'}})];
		const rows = [row({name: 'a', cwd: a, status: 'running'}), row({name: 'b', cwd: b, status: 'running'})];
		expect((await cache.refresh(rows, {rescan: true})).folders).toEqual([a]);
		touch(store, 2000);
		adapter.conversations = [conversation(UUID(3), {cwd: b}), conversation(UUID(1), {cwd: a})];
		const after = await cache.refresh(rows, {rescan: true});
		expect(after.folders).toEqual([a, b]);
		// The join then shows the conversation of the folder that is gone as not resumable.
		const shown = conversationsOf(after.conversations, cwd => cwd !== b, undefined, after.folders);
		expect(Object.fromEntries(shown.map(x => [x.id, x.resumeState.kind]))).toEqual({[UUID(1)]: 'yes', [UUID(3)]: 'no'});
	});

	it('a watch path that changed only its size, or only its mtime, or went away, is read again', async () => {
		const store = path.join(dir, 'store.jsonl');
		touch(store, 1000);
		adapter.watch = [store];
		const rows = [row({name: 'a', cwd: dir})];
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(1);
		fs.appendFileSync(store, 'more');
		fs.utimesSync(store, 1000, 1000);
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(2);
		fs.utimesSync(store, 1000.5, 1000.5);
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(3);
		fs.rmSync(store);
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(4);
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(4);
	});

	it('without watch paths, re-reads on every tick but never on a pane event', async () => {
		const rows = [row({name: 'a', cwd: dir})];
		await cache.refresh(rows, {rescan: true});
		await cache.refresh(rows, {rescan: false});
		await cache.refresh(rows, {rescan: false});
		expect(adapter.calls.discover).toBe(1);
		await cache.refresh(rows, {rescan: true});
		expect(adapter.calls.discover).toBe(2);
	});

	it('a new row on a pane event is read at once; one read serves every row of a cwd', async () => {
		await cache.refresh([row({name: 'a', cwd: dir})], {rescan: true});
		const other = path.join(dir, 'other');
		fs.mkdirSync(other);
		await cache.refresh([row({name: 'a', cwd: dir}), row({name: 'b', cwd: other}), row({name: 'c', cwd: other})], {rescan: false});
		expect(adapter.calls.discover).toBe(2);
	});

	it('verifies pins and asks inUse only when processes came or went', async () => {
		const rows = [row({name: 'p', cwd: dir, status: 'stopped', agentSessionId: UUID(3)})];
		const table = [proc(1, 'init'), proc(2, 'sh')];
		const first = await cache.refresh(rows, {rescan: true, processes: table});
		expect(first.verify.get(pinKey('claude', UUID(3), dir))).toEqual({kind: 'yes'});
		expect(first.inUse.get(inUseKey('claude', UUID(3)))).toEqual({ok: true, holders: []});
		expect(adapter.calls.inUse).toBe(1);
		await cache.refresh(rows, {rescan: true, processes: table});
		expect(adapter.calls.inUse).toBe(1);
		await cache.refresh(rows, {rescan: true, processes: [...table, proc(3, 'claude')]});
		expect(adapter.calls.inUse).toBe(2);
	});

	it('asks inUse again only for what a new listing can move: a new possible user, or a holder that left', async () => {
		const open: OpenFile[] = [
			{pid: 5, path: '/dev/null'},
			{pid: 5, path: 'pipe:[77]'},
			{pid: 5, path: '/usr/lib/libc.so.6'},
			{pid: 6, path: '/home/u/notes.txt'},
		];
		const processes = {...ctx.processes, openFilesOfPids: async (pids: readonly number[]) => open.filter(f => pids.includes(f.pid))};
		const viewed = new DiscoveryCache({ctx: {...ctx, processes}, adapters: adaptersWith(adapter)});
		const rows = [row({name: 'p', cwd: dir, status: 'stopped', agentSessionId: UUID(3)})];
		let table = [proc(1, 'init'), proc(2, 'sh')];
		const ask = async (next: typeof table, rescan = true) => {
			table = next;
			return (await viewed.refresh(rows, {rescan, processes: table})).inUse.get(inUseKey('claude', UUID(3)));
		};
		await ask(table);
		expect(adapter.calls.inUse).toBe(1);
		// A process holding nothing a store could be: the answer stands.
		await ask([...table, proc(5, 'sleep', ['sleep', '60'])]);
		expect(adapter.calls.inUse).toBe(1);
		// One holding a file outside the system's folders could be a user.
		adapter.holders = [{pid: 6, startTime: 60, command: 'tail', reason: 'holds it open'}];
		expect(await ask([...table, proc(6, 'tail', ['tail', '-f', 'notes.txt'])])).toEqual({ok: true, holders: adapter.holders});
		expect(adapter.calls.inUse).toBe(2);
		// One whose argv has a word shaped like an id.
		await ask([...table, proc(7, 'grep', ['grep', UUID(9)])]);
		expect(adapter.calls.inUse).toBe(3);
		// A process that is no holder leaves: the answer stands; the holder leaves: asked again.
		await ask(table.filter(p => p.pid !== 5));
		expect(adapter.calls.inUse).toBe(3);
		adapter.holders = [];
		expect(await ask(table.filter(p => p.pid !== 6))).toEqual({ok: true, holders: []});
		expect(adapter.calls.inUse).toBe(4);
		// A pane event's refresh never asks again, whatever came.
		await ask([...table, proc(8, 'claude')], false);
		expect(adapter.calls.inUse).toBe(4);
		// The next tick judges what came since the last answers: an agent's process.
		await ask(table);
		expect(adapter.calls.inUse).toBe(5);
	});

	it('never asks inUse for a conversation that did not verify, nor for a vanished cwd', async () => {
		adapter.verdict = {kind: 'no', reason: 'no messages'};
		await cache.refresh([row({name: 'p', cwd: dir, status: 'stopped', agentSessionId: UUID(4)})], {rescan: true});
		adapter.verdict = {kind: 'yes'};
		await cache.refresh([row({name: 'q', cwd: path.join(dir, 'gone'), status: 'stopped', agentSessionId: UUID(5)})], {rescan: true});
		expect(adapter.calls.inUse).toBe(0);
	});

	it('an adapter that throws becomes a per-row problem, never a failed refresh', async () => {
		adapter.failDiscover = 'database is locked';
		const rows = [row({name: 'a', cwd: dir})];
		const result = await cache.refresh(rows, {rescan: true});
		expect(result.byCwd.get(cwdKey('claude', dir))).toEqual({ok: false, error: expect.stringContaining('database is locked')});
	});

	it('skips purged rows and agents this build does not know', async () => {
		await cache.refresh([row({name: 'x', cwd: dir, status: 'purged', agentSessionId: UUID(6)}), row({name: 'y', cwd: dir, agent: 'someday' as never})], {
			rescan: true,
		});
		expect(adapter.calls).toEqual({discover: 0, verify: 0, inUse: 0});
	});
});
