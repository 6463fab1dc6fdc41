import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {argvUsers, fileUsers, uniqueHolders} from '../../src/adapters/common/inUse.js';
import {createRefresh, ParseCache} from '../../src/adapters/common/refresh.js';
import {
	ANY_FOLDER,
	agentProcessesOf,
	commandOf,
	cwdOf,
	environOf,
	flagValue,
	hasFlag,
	idsUse,
	needsFolders,
	openFilesOf,
	projectUse,
	rootForEnv,
	sameFolder,
	resolveFolder,
	sameResolvedTree,
	trimSlash,
	usersOf,
	wordAfter,
	type LiveUse,
} from '../../src/adapters/common/liveEvidence.js';
import type {AdapterContext, InUseHolder} from '../../src/adapters/types.js';
import type {ProcessRef} from '../../src/domain/types.js';
import type {Holder, OpenFile, ProcessTable} from '../../src/system/processes.js';
import {spawnFileHolder, type HeldProcess} from '../support/holders.js';
import {tempDir} from '../helpers/tmp.js';

// The pieces of the in-use rule (README "In use") on a table the test writes: who is a user of
// a conversation, by argv, by open file or by project, and who never is (ourselves).

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

function scratch(): string {
	const t = tempDir('mam-in-use-');
	cleanups.push(t.dispose);
	return t.dir;
}

const proc = (pid: number, argv: readonly string[], over: Partial<ProcessRef> = {}): ProcessRef => ({
	pid,
	ppid: 1,
	startTime: pid * 10,
	name: argv[0] ?? 'x',
	argv,
	...over,
});

function ctxOf(rows: readonly ProcessRef[], holders: readonly Holder[] = [], openFiles?: readonly OpenFile[]): AdapterContext {
	const table: ProcessTable = {list: async () => rows, get: async pid => rows.find(r => r.pid === pid), holders: async () => holders};
	if (openFiles) table.openFiles = async () => openFiles;
	return {home: '/h', ownHome: false, env: {}, exec: async () => ({exitCode: 0, stdout: '', stderr: ''}), processes: table, now: () => 0, tmpDir: '/t'};
}

const use = (pid: number, claim: LiveUse['claim']): LiveUse => ({pid, startTime: pid * 10, command: `agent ${pid}`, claim, reason: `why ${pid}`});

describe('usersOf: the rule', () => {
	const uses = [
		use(1, {kind: 'ids', ids: ['a', 'b']}),
		use(2, {kind: 'project', cwd: '/w/p', folder: resolveFolder('/w/p')}),
		use(3, {kind: 'any'}),
		use(4, {kind: 'ids', ids: ['z']}),
	];

	it('an ids claim naming the conversation or a descendant, a project claim on its folder, and any claim', () => {
		expect(usersOf({}, uses, {ids: ['b'], cwds: ['/w/p']}).map(h => h.pid)).toEqual([1, 2, 3]);
		expect(usersOf({}, uses, {ids: ['c', 'z'], cwds: ['/elsewhere']}).map(h => h.pid)).toEqual([3, 4]);
		expect(usersOf({}, uses, {ids: ['c'], cwds: []})).toEqual([{pid: 3, startTime: 30, command: 'agent 3', reason: 'why 3'}]);
	});

	it("'tree': a claim at the root is on every conversation, even one whose folder is written relative or empty", () => {
		const root = [use(1, {kind: 'project', cwd: '/', folder: '/'}), use(2, {kind: 'project', cwd: '/w', folder: '/w'})];
		for (const cwd of ['rel/x', '', '/', '/w/p', '/v']) expect(usersOf({}, root, {ids: [], cwds: [cwd]}, 'tree').map(h => h.pid)).toContain(1);
		expect(usersOf({}, root, {ids: [], cwds: ['/']}, 'tree').map(h => h.pid)).toEqual([1, 2]);
		expect(usersOf({}, root, {ids: [], cwds: ['/v']}, 'tree').map(h => h.pid)).toEqual([1]);
		expect(usersOf({}, root, {ids: [], cwds: ['rel/x']}, 'folder').map(h => h.pid)).toEqual([]);
	});

	it("holders come once each, in the uses' order, whichever claims name them; the answer is the caller's to change", () => {
		const later = [
			use(1, {kind: 'project', cwd: '/w/p', folder: resolveFolder('/w/p')}),
			use(2, {kind: 'ids', ids: ['a']}),
			use(3, {kind: 'ids', ids: ['a', 'b']}),
		];
		const ctx = {refresh: createRefresh()};
		// The ids' list (2, 3) comes before the folder's (1); the same folder twice is one list.
		expect(usersOf(ctx, later, {ids: ['a', 'b'], cwds: ['/w/p', '/w/p/']}).map(h => h.pid)).toEqual([1, 2, 3]);
		const one = usersOf(ctx, later, {ids: [], cwds: ['/w/p']});
		expect(one.map(h => h.pid)).toEqual([1]);
		one.push(...usersOf(ctx, later, {ids: ['b'], cwds: []}));
		expect(usersOf(ctx, later, {ids: [], cwds: ['/w/p']}).map(h => h.pid)).toEqual([1]);
		expect(usersOf(ctx, later, {ids: ['b'], cwds: []}).map(h => h.pid)).toEqual([3]);
		expect(usersOf(ctx, later, {ids: ['x'], cwds: ['/elsewhere']})).toEqual([]);
	});

	it('what "its project" means is the agent\'s: a sub-folder counts only with sameTree', () => {
		expect(usersOf({}, uses.slice(1, 2), {ids: [], cwds: ['/w/p/sub']}).map(h => h.pid)).toEqual([]);
		expect(usersOf({}, uses.slice(1, 2), {ids: [], cwds: ['/w/p/sub']}, 'tree').map(h => h.pid)).toEqual([2]);
	});

	it("'tree': the claim's folder, one above or below the conversation's, or the root; ANY_FOLDER is on every project", () => {
		const tree = [
			use(5, {kind: 'project', cwd: '/w/p', folder: '/w/p'}),
			use(6, {kind: 'project', cwd: '/', folder: '/'}),
			use(7, {kind: 'project', cwd: '/v', folder: '/v'}),
		];
		const pids = (cwds: string[], project: 'folder' | 'tree' = 'tree') => usersOf({}, tree, {ids: [], cwds}, project).map(h => h.pid);
		expect(pids(['/w/p'])).toEqual([5, 6]);
		expect(pids(['/w/p/sub/deeper'])).toEqual([5, 6]);
		expect(pids(['/w'])).toEqual([5, 6]);
		expect(pids(['/w/pq'])).toEqual([6]);
		expect(pids(['/'])).toEqual([5, 6, 7]);
		expect(pids(['/w/p'], 'folder')).toEqual([5]);
		expect(pids([ANY_FOLDER], 'folder')).toEqual([5, 6, 7]);
		expect(pids([ANY_FOLDER])).toEqual([5, 6, 7]);
		// Inside a refresh (the index kept for the list of uses), the same answers.
		const ctx = {refresh: createRefresh()};
		expect(usersOf(ctx, tree, {ids: [], cwds: ['/w']}, 'tree').map(h => h.pid)).toEqual([5, 6]);
		expect(usersOf(ctx, tree, {ids: [], cwds: ['/v/x']}, 'tree').map(h => h.pid)).toEqual([6, 7]);
	});

	it("an ids claim naming none of the conversation's ids is no use of it, whatever the agent's project rule", () => {
		const onOthers = [use(4, {kind: 'ids', ids: ['z']})];
		expect(usersOf({}, onOthers, {ids: ['c'], cwds: ['/w/p']}, 'tree')).toEqual([]);
		expect(usersOf({}, onOthers, {ids: ['c'], cwds: ['/']}, 'tree')).toEqual([]);
	});

	it('needsFolders only when some claim is by project or on anything', () => {
		expect(needsFolders([uses[0] as LiveUse, uses[3] as LiveUse])).toBe(false);
		expect(needsFolders([uses[0] as LiveUse, uses[1] as LiveUse])).toBe(true);
		expect(needsFolders([uses[2] as LiveUse])).toBe(true);
		expect(needsFolders([])).toBe(false);
	});
});

describe('folders', () => {
	it('sameFolder: literally, with trailing slashes, or through a link; not a prefix', () => {
		const dir = scratch();
		const real = path.join(dir, 'real');
		fs.mkdirSync(real);
		const link = path.join(dir, 'link');
		fs.symlinkSync(real, link);
		expect(sameFolder('/a/b/', '/a/b')).toBe(true);
		expect(sameFolder('/a/b//', '/a/b')).toBe(true);
		expect(sameFolder('/', '/')).toBe(true);
		expect(sameFolder(link, real)).toBe(true);
		expect(sameFolder(`${link}/`, real)).toBe(true);
		expect(sameFolder('/a/b', '/a/bc')).toBe(false);
		expect(sameFolder('/a/b', '/a')).toBe(false);
	});

	it('trimSlash drops trailing slashes and keeps the root', () => {
		expect(trimSlash('/a/b//')).toBe('/a/b');
		expect(trimSlash('/a')).toBe('/a');
		expect(trimSlash('/')).toBe('/');
		expect(trimSlash('//')).toBe('/');
		expect(trimSlash('///')).toBe('/');
		expect(trimSlash('a/')).toBe('a');
		expect(trimSlash('')).toBe('');
		expect(resolveFolder('/')).toBe('/');
	});

	it('sameTree: one inside the other either way, the root is every tree; a look-alike prefix is not', () => {
		// As usersOf compares folders: both resolved first.
		const sameTree = (a: string, b: string) => sameResolvedTree(resolveFolder(a), resolveFolder(b));
		expect(sameTree('/a/b', '/a/b/c')).toBe(true);
		expect(sameTree('/a/b/c', '/a/b')).toBe(true);
		expect(sameTree('/a/b/', '/a/b/c')).toBe(true);
		expect(sameTree('/a/b', '/a/bc')).toBe(false);
		expect(sameTree('/a/bc', '/a/b')).toBe(false);
		expect(sameTree('/', '/x/y')).toBe(true);
		expect(sameTree('/x/y', '/')).toBe(true);
		expect(sameTree('/x', '/y')).toBe(false);
	});
});

describe('argv evidence', () => {
	const ID = /^[a-f0-9]{4}$/;

	it('flagValue: `--f V`, `--f=V`, a short flag only as its own word, and only a value that is an id', () => {
		expect(flagValue(['claude', '--resume', 'ab12'], ['--resume', '-r'], ID)).toBe('ab12');
		expect(flagValue(['claude', '--resume=ab12'], ['--resume', '-r'], ID)).toBe('ab12');
		expect(flagValue(['gemini', '-r', 'ab12'], ['--resume', '-r'], ID)).toBe('ab12');
		expect(flagValue(['gemini', '-r=ab12'], ['--resume', '-r'], ID)).toBeUndefined();
		expect(flagValue(['gemini', '-r', 'latest'], ['--resume', '-r'], ID)).toBeUndefined();
		expect(flagValue(['claude', '--resume'], ['--resume'], ID)).toBeUndefined();
		expect(flagValue(['claude', '--resumex=ab12'], ['--resume'], ID)).toBeUndefined();
		// The second flag's value when the first is not an id.
		expect(flagValue(['x', '--resume', 'nope', '-r', 'cd34'], ['--resume', '-r'], ID)).toBe('cd34');
		// Another flag's `=` value is never this flag's, even one of the same length.
		expect(flagValue(['x', '--g=ab12'], ['--f'], ID)).toBeUndefined();
		expect(flagValue(['x', '--session=ab12'], ['--resume'], ID)).toBeUndefined();
	});

	it('hasFlag: the flag itself or `--flag=…`, not a longer flag or a short `-f=…`', () => {
		expect(hasFlag(['c', '--continue'], ['--continue', '-c'])).toBe(true);
		expect(hasFlag(['c', '--continue=1'], ['--continue'])).toBe(true);
		expect(hasFlag(['c', '-c'], ['-c'])).toBe(true);
		expect(hasFlag(['c', '-c=1'], ['-c'])).toBe(false);
		expect(hasFlag(['c', '--continues'], ['--continue'])).toBe(false);
		expect(hasFlag([], ['--continue'])).toBe(false);
	});

	it('wordAfter: the word after a subcommand, when it is an id; not past the end', () => {
		expect(wordAfter(['codex', 'resume', 'ab12'], ['resume'], ID)).toBe('ab12');
		expect(wordAfter(['codex', 'exec', 'resume', 'ab12'], ['resume'], ID)).toBe('ab12');
		expect(wordAfter(['codex', 'resume', '--last'], ['resume'], ID)).toBeUndefined();
		expect(wordAfter(['codex', 'resume'], ['resume'], /.*/)).toBeUndefined();
		expect(wordAfter(['ab12', 'x'], ['resume'], ID)).toBeUndefined();
	});

	it('commandOf and cwdOf', () => {
		expect(commandOf({argv: ['a', 'b'], name: 'n'})).toBe('a b');
		expect(commandOf({argv: [], name: 'kthread'})).toBe('kthread');
		expect(cwdOf(proc(1, ['x'], {cwd: '/w'}))).toBe('/w');
		expect(cwdOf(proc(1, ['x'], {cwd: 'relative'}))).toBeUndefined();
		expect(cwdOf(proc(1, ['x']))).toBeUndefined();
	});

	it('a process with no evidence claims its folder, or everything when its folder is hidden', () => {
		expect(projectUse(proc(5, ['codex'], {cwd: '/w/p'}), 'codex')).toEqual({
			pid: 5,
			startTime: 50,
			command: 'codex',
			claim: {kind: 'project', cwd: '/w/p', folder: resolveFolder('/w/p')},
			reason: 'a codex process in /w/p keeps no record of which conversation it is on',
		});
		expect(projectUse(proc(6, ['codex']), 'codex')).toEqual({
			pid: 6,
			startTime: 60,
			command: 'codex',
			claim: {kind: 'any'},
			reason: 'a codex process whose folder cannot be read could be on any conversation',
		});
		expect(idsUse(proc(7, ['c', '-r', 'x']), ['x'], 'argv -r x')).toEqual({
			pid: 7,
			startTime: 70,
			command: 'c -r x',
			claim: {kind: 'ids', ids: ['x']},
			reason: 'argv -r x',
		});
	});
});

describe('argvUsers and fileUsers', () => {
	it('names every process whose argv holds one of the ids, not ourselves', async () => {
		const rows = [
			proc(11, ['vim', 'notes-ab12.md']),
			proc(12, ['sleep', '5']),
			proc(process.pid, ['node', 'ab12']),
			proc(13, [], {name: 'cd34'}),
			proc(14, ['x', 'cd34']),
		];
		expect(await argvUsers(ctxOf(rows), ['ab12', 'cd34'])).toEqual([
			{pid: 11, startTime: 110, command: 'vim notes-ab12.md', reason: 'argv names ab12'},
			{pid: 14, startTime: 140, command: 'x cd34', reason: 'argv names cd34'},
		]);
		expect(await argvUsers(ctxOf(rows), ['zz99'])).toEqual([]);
		expect(await argvUsers(ctxOf(rows), [''])).toEqual([]);
	});

	it('an id is matched inside one argument only, never across two', async () => {
		expect(await argvUsers(ctxOf([proc(11, ['ab', '12'])]), ['ab12'])).toEqual([]);
		expect(await argvUsers(ctxOf([proc(11, ['x', 'ab']), proc(12, ['12'])]), ['ab12'])).toEqual([]);
		expect(await argvUsers(ctxOf([proc(11, ['ab'])]), ['ab\0'])).toEqual([]);
	});

	it('the first id named is the reason', async () => {
		expect(await argvUsers(ctxOf([proc(11, ['x', 'cd34', 'ab12'])]), ['ab12', 'cd34'])).toEqual([
			{pid: 11, startTime: 110, command: 'x cd34 ab12', reason: 'argv names ab12'},
		]);
	});

	it('skips the wrappers that started us with our own arguments, not an ancestor that runs something else', async () => {
		const saved = process.argv;
		process.argv = ['node', '/x/mam-tui', 'purge', '--id', 'ab12'];
		try {
			const me = proc(process.pid, ['node', '/x/mam-tui', 'purge', '--id', 'ab12'], {ppid: 900});
			const wrapper = proc(900, ['sh', '-c', 'mam-tui purge --id ab12'], {ppid: 901});
			const agent = proc(901, ['claude', '--resume', 'ab12'], {ppid: 902});
			const above = proc(902, ['sh', '-c', 'mam-tui purge --id ab12'], {ppid: 1});
			// The agent ran mam-tui: it is a user; the shell above it is not reached (the walk stops at the agent).
			expect((await argvUsers(ctxOf([me, wrapper, agent, above]), ['ab12'])).map(h => h.pid)).toEqual([901, 902]);
			// `npx mam-tui purge --id ab12`: our arguments spread over its words.
			const npx = proc(900, ['npx', 'mam-tui', 'purge', '--id', 'ab12'], {ppid: 901});
			expect((await argvUsers(ctxOf([me, npx, agent]), ['ab12'])).map(h => h.pid)).toEqual([901]);
			// With no arguments of our own, only we are left out.
			process.argv = ['node', '/x/mam-tui'];
			expect((await argvUsers(ctxOf([me, wrapper, agent]), ['ab12'])).map(h => h.pid)).toEqual([900, 901]);
		} finally {
			process.argv = saved;
		}
	});

	// pid 1's parent is 0: a container whose start command is the wrapper (`npx mam-tui purge --id X`).
	it.each([
		{
			name: 'the wrapper is pid 1',
			rows: [
				[process.pid, 1],
				[1, 0, 'npx mam-tui purge --id ab12'],
			],
			users: [],
		},
		{
			name: 'a shell under a pid-1 wrapper',
			rows: [
				[process.pid, 900],
				[900, 1, 'sh -c mam-tui purge --id ab12'],
				[1, 0, 'npx mam-tui purge --id ab12'],
			],
			users: [],
		},
		{
			name: 'pid 1 is an agent that ran us',
			rows: [
				[process.pid, 1],
				[1, 0, 'claude --resume ab12'],
			],
			users: [1],
		},
		{
			name: 'pid 1 is init above a wrapper',
			rows: [
				[process.pid, 900],
				[900, 1, 'npx mam-tui purge --id ab12'],
				[1, 0, '/sbin/init ab12'],
			],
			users: [1],
		},
		{
			name: 'a table whose parents loop',
			rows: [
				[process.pid, 900],
				[900, 901, 'sh -c mam-tui purge --id ab12'],
				[901, 900, 'sh -c mam-tui purge --id ab12'],
			],
			users: [],
		},
	] as {name: string; rows: [number, number, string?][]; users: number[]}[])('skips our wrappers up to and including pid 1: $name', async ({rows, users}) => {
		const saved = process.argv;
		process.argv = ['node', '/x/mam-tui', 'purge', '--id', 'ab12'];
		try {
			const table = rows.map(([pid, ppid, command]) => proc(pid, command?.split(' ') ?? ['node', '/x/mam-tui', 'purge', '--id', 'ab12'], {ppid}));
			expect((await argvUsers(ctxOf(table), ['ab12'])).map(h => h.pid)).toEqual(users);
		} finally {
			process.argv = saved;
		}
	});

	it('with our own arguments but our process not in the table (a listing from before we started), names every user', async () => {
		const saved = process.argv;
		process.argv = ['node', '/x/mam-tui', 'purge', '--id', 'ab12'];
		try {
			const wrapper = proc(900, ['sh', '-c', 'mam-tui purge --id ab12'], {ppid: 901});
			const agent = proc(901, ['claude', '--resume', 'ab12'], {ppid: 1});
			expect((await argvUsers(ctxOf([wrapper, agent]), ['ab12'])).map(h => h.pid)).toEqual([900, 901]);
		} finally {
			process.argv = saved;
		}
	});

	it('inside a refresh, a new process table is read afresh, never through what the last one gave', async () => {
		let rows: readonly ProcessRef[] = [proc(11, ['x', 'ab12'])];
		const ctx: AdapterContext = {...ctxOf([]), processes: {...ctxOf([]).processes, list: async () => rows}, refresh: createRefresh()};
		expect((await argvUsers(ctx, ['ab12'])).map(h => h.pid)).toEqual([11]);
		// The same table again: the same answer.
		expect((await argvUsers(ctx, ['ab12'])).map(h => h.pid)).toEqual([11]);
		// A later listing in the same refresh: process 11 is gone, 12 runs something else, 13 names the id.
		rows = [proc(12, ['y']), proc(13, ['z', 'ab12'])];
		expect(await argvUsers(ctx, ['ab12'])).toEqual([{pid: 13, startTime: 130, command: 'z ab12', reason: 'argv names ab12'}]);
		expect(await argvUsers(ctx, ['cd34'])).toEqual([]);
	});

	it('fileUsers: every holder but ourselves and those ignored, each with the path it holds (resolved)', async () => {
		const dir = fs.realpathSync(scratch());
		const db = path.join(dir, 'a.db');
		fs.writeFileSync(db, '');
		const holders: Holder[] = [
			{pid: 21, startTime: 1, command: 'agent', argv: ['agent'], path: db},
			{pid: process.pid, startTime: 2, command: 'us', argv: ['us'], path: db},
			{pid: 22, startTime: 3, command: 'daemon', argv: ['daemon'], path: db},
		];
		const ctx = ctxOf([], holders);
		expect(await fileUsers(ctx, [])).toEqual([]);
		expect(await fileUsers(ctx, [db], h => h.command === 'daemon')).toEqual([{pid: 21, startTime: 1, command: 'agent', reason: `holds ${db} open`}]);
		expect((await fileUsers(ctx, [db])).map(h => h.pid)).toEqual([21, 22]);
		// A path that does not exist is held by nobody (the table is not even asked).
		expect(await fileUsers(ctx, [path.join(dir, 'gone.db')])).toEqual([]);
	});

	it('fileUsers in a refresh: a file that is none of the open files is skipped, a link to one is not', async () => {
		const dir = fs.realpathSync(scratch());
		const held = path.join(dir, 'held.jsonl');
		fs.writeFileSync(held, '');
		const link = path.join(dir, 'link.jsonl');
		fs.symlinkSync(held, link);
		const other = path.join(dir, 'other.jsonl');
		fs.writeFileSync(other, '');
		const asked: string[][] = [];
		const base = ctxOf([], [], [{pid: 21, path: held}]);
		const table: ProcessTable = {
			...base.processes,
			holders: async paths => {
				asked.push([...paths]);
				return paths.includes(held) ? [{pid: 21, startTime: 1, command: 'agent', argv: ['agent'], path: held}] : [];
			},
		};
		const ctx: AdapterContext = {...base, processes: table, refresh: createRefresh()};
		expect((await fileUsers(ctx, [link])).map(h => h.reason)).toEqual([`holds ${held} open`]);
		expect(await fileUsers(ctx, [other])).toEqual([]);
		// Nobody holds `other` open: it was never resolved nor asked about.
		expect(asked).toEqual([[held]]);
	});

	it("fileUsers: a refresh's view filters by the table's kept pass; outside a refresh (purge, resume) only holders, read now, answer", async () => {
		const dir = fs.realpathSync(scratch());
		const held = path.join(dir, 'held.jsonl');
		fs.writeFileSync(held, '');
		const holder: Holder = {pid: 21, startTime: 1, command: 'agent', argv: ['agent'], path: held};
		// The kept pass is from before process 21 opened the file; a pass made now would show it.
		const table: ProcessTable = {
			...ctxOf([], [holder], [{pid: 21, path: held}]).processes,
			openFilesKept: async () => [],
		};
		const check: AdapterContext = {...ctxOf([]), processes: table};
		expect((await fileUsers(check, [held])).map(h => h.pid)).toEqual([21]);
		expect(await fileUsers({...check, refresh: createRefresh()}, [held])).toEqual([]);
	});

	it('fileUsers in a refresh: a file only we hold open is held by nobody, and no pass over every process is made for it', async () => {
		const dir = fs.realpathSync(scratch());
		const ours = path.join(dir, 'state.db');
		fs.writeFileSync(ours, '');
		const asked: string[][] = [];
		const table: ProcessTable = {
			...ctxOf([], [], [{pid: process.pid, path: ours}]).processes,
			openFilesKept: async () => [{pid: process.pid, path: ours}],
			holders: async paths => {
				asked.push([...paths]);
				return [{pid: process.pid, startTime: 1, command: 'us', argv: ['us'], path: ours}];
			},
		};
		expect(await fileUsers({...ctxOf([]), processes: table, refresh: createRefresh()}, [ours])).toEqual([]);
		expect(asked).toEqual([]);
	});

	it('uniqueHolders keeps the first reason per process', () => {
		const h = (pid: number, reason: string): InUseHolder => ({pid, startTime: 1, command: 'c', reason});
		expect(uniqueHolders([h(1, 'first'), h(2, 'x'), h(1, 'second')])).toEqual([h(1, 'first'), h(2, 'x')]);
	});
});

describe('whose processes', () => {
	it("environOf reads a live process's environment, and nothing of a gone one", async () => {
		const held: HeldProcess = await spawnFileHolder([], 'holder', [], undefined, {
			PATH: '/usr/bin:/bin',
			HOME: '/home/who',
			EMPTY: '',
			'A=B': 'x',
			// An entry with no name (`=x`): nothing to read it under.
			'': 'x',
		});
		cleanups.push(() => held.stop());
		const env = environOf(held.pid);
		expect(env?.['HOME']).toBe('/home/who');
		expect(env?.['EMPTY']).toBe('');
		expect(env?.['A']).toBe('B=x');
		expect(Object.keys(env ?? {})).not.toContain('');
		expect(environOf(2 ** 22 + 7)).toBeUndefined();
	});

	it("rootForEnv runs the root rule on the process's HOME and variables; no HOME, no answer", () => {
		const rootOf = (c: {home: string; ownHome: boolean; env: Readonly<Record<string, string | undefined>>}) =>
			c.env['OVERRIDE'] ?? `${c.home}/.agent${c.ownHome ? '' : '-not-own'}`;
		expect(rootForEnv({HOME: '/h'}, rootOf)).toBe('/h/.agent');
		expect(rootForEnv({HOME: '/h', OVERRIDE: '/o'}, rootOf)).toBe('/o');
		expect(rootForEnv({}, rootOf)).toBeUndefined();
		expect(rootForEnv({HOME: ''}, rootOf)).toBeUndefined();
	});

	it("agentProcessesOf: the agent's processes of this store, the named ones, and those whose env is hidden; never us", async () => {
		const dir = scratch();
		const root = path.join(dir, 'home', '.agent');
		fs.mkdirSync(root, {recursive: true});
		const mine = await spawnFileHolder([], 'agent', [], undefined, {PATH: '/usr/bin:/bin', HOME: path.join(dir, 'home')});
		const theirs = await spawnFileHolder([], 'agent', [], undefined, {PATH: '/usr/bin:/bin', HOME: path.join(dir, 'other')});
		const named = await spawnFileHolder([], 'named', [], undefined, {PATH: '/usr/bin:/bin', HOME: path.join(dir, 'other')});
		cleanups.push(
			() => mine.stop(),
			() => theirs.stop(),
			() => named.stop(),
		);
		const hidden = 2 ** 22 + 11;
		const rows = [mine, theirs, named]
			.map(h => proc(h.pid, ['node', `/x/${h === named ? 'named' : 'agent'}`]))
			.concat([proc(hidden, ['node', '/x/agent']), proc(process.pid, ['node', '/x/agent'])]);
		const store = {root, rootOf: (c: {home: string}) => `${c.home}/.agent`};
		const isAgent = (p: ProcessRef) => p.argv[1] === '/x/agent';
		const found = await agentProcessesOf(ctxOf([]), isAgent, rows, store, p => p.pid === named.pid);
		expect(found.map(p => p.pid).sort((a, b) => a - b)).toEqual([mine.pid, named.pid, hidden].sort((a, b) => a - b));
		// Never us, even named; never a process that is not the agent's.
		const stranger = proc(mine.pid, ['node', '/x/other']);
		expect(await agentProcessesOf(ctxOf([]), isAgent, [proc(process.pid, ['node', '/x/agent']), stranger], store, p => p.pid === process.pid)).toEqual([]);
		// Without a table handed in, the context's table is read.
		expect((await agentProcessesOf(ctxOf(rows), isAgent, undefined, store)).map(p => p.pid)).toContain(mine.pid);
		// With a parse cache kept across listings (the environments kept), the same answer every time;
		// a process that is gone leaves nothing behind.
		const parses = new ParseCache();
		const kept = {...ctxOf([]), parses};
		for (let listing = 0; listing < 2; listing++) {
			const again = await agentProcessesOf({...kept, refresh: createRefresh({parses})}, isAgent, rows, store, p => p.pid === named.pid);
			expect(again).toEqual(found);
		}
		expect([...parses.parsed.keys()].filter(k => k.includes(`/proc/${hidden}/`))).toEqual([]);
		expect([...parses.parsed.keys()].filter(k => k.includes(`/proc/${mine.pid}/`))).toHaveLength(1);
	});

	it('openFilesOf: for the pids alone when the table can, else from its one pass, else from /proc; nothing asked, nothing read', async () => {
		const files: OpenFile[] = [
			{pid: 1, path: '/a'},
			{pid: 2, path: '/b'},
			{pid: 1, path: '/c'},
		];
		const ctx = ctxOf([], [], files);
		expect(await openFilesOf(ctx, [])).toEqual(new Map());
		expect(await openFilesOf(ctx, [1])).toEqual(new Map([[1, ['/a', '/c']]]));
		const dir = scratch();
		const file = path.join(dir, 'held.txt');
		fs.writeFileSync(file, 'x');
		const held = await spawnFileHolder([file]);
		cleanups.push(() => held.stop());
		// A table that reads a few processes alone is asked for those, never for every process's files.
		const few: AdapterContext = {
			...ctx,
			processes: {
				...ctx.processes,
				openFiles: () => Promise.reject(new Error('a pass over every process')),
				openFilesOfPids: async pids => files.filter(f => pids.includes(f.pid)),
			},
		};
		expect(await openFilesOf(few, [2])).toEqual(new Map([[2, ['/b']]]));
		const fromProc = await openFilesOf(ctxOf([]), [held.pid, 2 ** 22 + 13]);
		expect(fromProc.get(held.pid)).toContain(file);
		expect(fromProc.has(2 ** 22 + 13)).toBe(false);
	});
});
