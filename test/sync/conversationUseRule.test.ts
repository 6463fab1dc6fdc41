import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {resolveFolder, type LiveUse} from '../../src/adapters/common/liveEvidence.js';
import type {AdapterContext, AgentAdapter, InUseHolder} from '../../src/adapters/types.js';
import type {AgentId, Conversation, ProcessRef} from '../../src/domain/types.js';
import {inUseText, withUse} from '../../src/sync/conversationUse.js';

// The conversations view's in-use rule (README "In use"), case by case: which conversations are asked `inUse`,
// and what a holder, none, or a failing adapter makes of each row.

function conv(id: string, cwd: string, childCount = 0): Conversation {
	return {agent: 'claude', id, cwd, createdAt: 1, updatedAt: 2, childCount, resumeState: {kind: 'yes'}};
}

function use(claim: LiveUse['claim'], pid = 40): LiveUse {
	return {pid, startTime: 7, command: 'claude', claim, reason: 'a claude TUI'};
}

interface Stand {
	readonly asked: string[];
	readonly adapters: Readonly<Record<AgentId, AgentAdapter>>;
	readonly ctx: AdapterContext;
}

/**
 * claude's answers replaced: `uses` are its live processes' claims, `holders` what `inUse` finds
 * for an id (a thrown Error for `fails`). Every `inUse` call is recorded in `asked`.
 */
function stand(
	uses: readonly LiveUse[] | undefined,
	holders: Readonly<Record<string, readonly InUseHolder[]>> = {},
	argvs: readonly (readonly string[])[] = [],
	fails?: string,
): Stand {
	const asked: string[] = [];
	const claude: AgentAdapter = {
		...ADAPTERS.claude,
		...(uses ? {liveUses: async () => uses} : {liveUses: undefined}),
		async inUse(_ctx, id) {
			asked.push(id);
			if (id === fails) throw new Error('the store is locked');
			return holders[id] ?? [];
		},
	};
	const table: ProcessRef[] = argvs.map((argv, i) => ({pid: 100 + i, ppid: 1, startTime: 5, name: 'node', argv}));
	const ctx: AdapterContext = {
		home: '/nonexistent-home',
		ownHome: false,
		env: {},
		exec: async () => ({exitCode: undefined, stdout: '', stderr: '', failure: 'no exec in this test'}),
		processes: {list: async () => table, get: async () => undefined, holders: async () => []},
		now: () => 0,
		tmpDir: '/nonexistent-tmp',
	};
	return {asked, adapters: {...ADAPTERS, claude}, ctx};
}

const holder = (pid: number, command = 'claude --resume x'): InUseHolder => ({pid, startTime: 9, command, reason: 'argv names x'});

describe('which conversations are asked inUse', () => {
	const a = conv('a-1', '/w/app');
	const b = conv('b-2', '/w/app/sub');
	const c = conv('c-3', '/w/apple');
	const d = conv('d-4', '/w');

	it('nobody when nothing runs: the same array comes back', async () => {
		const s = stand([]);
		const list = [a, b];
		expect((await withUse(s.ctx, list, s.adapters)).conversations).toBe(list);
		expect(s.asked).toEqual([]);
	});

	it('an empty list asks nothing, not even the process table', async () => {
		const s = stand([use({kind: 'any'})]);
		const empty: Conversation[] = [];
		expect(
			(
				await withUse(
					{...s.ctx, processes: {list: () => Promise.reject(new Error('listed')), get: async () => undefined, holders: async () => []}},
					empty,
					s.adapters,
				)
			).conversations,
		).toBe(empty);
	});

	it('an ids claim: only the conversations it names', async () => {
		const s = stand([use({kind: 'ids', ids: ['b-2']})]);
		await withUse(s.ctx, [a, b, c], s.adapters);
		expect(s.asked).toEqual(['b-2']);
	});

	it('a project claim: its folder, the folders inside it and the one around it, not a look-alike name', async () => {
		const s = stand([use({kind: 'project', cwd: '/w/app', folder: resolveFolder('/w/app')})]);
		await withUse(s.ctx, [a, b, c, d], s.adapters);
		expect(s.asked).toEqual(['a-1', 'b-2', 'd-4']);
	});

	it('a project claim in a sub-folder reaches the conversation of the folder around it only', async () => {
		const s = stand([use({kind: 'project', cwd: '/w/app/sub', folder: resolveFolder('/w/app/sub')})]);
		await withUse(s.ctx, [a, b, c], s.adapters);
		expect(s.asked).toEqual(['a-1', 'b-2']);
	});

	it('a conversation recorded in / is around every claimed folder; a relative cwd is around none', async () => {
		const root = conv('r-6', '/');
		const odd = conv('o-7', 'app');
		const s = stand([use({kind: 'project', cwd: '/w/app', folder: resolveFolder('/w/app')})]);
		await withUse(s.ctx, [root, odd], s.adapters);
		expect(s.asked).toEqual(['r-6']);
	});

	it('a conversation recorded through a link to the claimed folder is asked too', async () => {
		const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-use-link-')));
		const real = path.join(dir, 'real');
		fs.mkdirSync(real);
		fs.symlinkSync(real, path.join(dir, 'link'));
		const s = stand([use({kind: 'project', cwd: real, folder: resolveFolder(real)})]);
		try {
			await withUse(s.ctx, [conv('l-8', path.join(dir, 'link'))], s.adapters);
			expect(s.asked).toEqual(['l-8']);
		} finally {
			fs.rmSync(dir, {recursive: true, force: true});
		}
	});

	it('an any claim: every conversation', async () => {
		const s = stand([use({kind: 'any'})]);
		await withUse(s.ctx, [a, b, c], s.adapters);
		expect(s.asked).toEqual(['a-1', 'b-2', 'c-3']);
	});

	it('a claim on an id not listed (a sub-agent) makes every parent a candidate, not a childless one', async () => {
		const parent = conv('p-5', '/x', 2);
		const s = stand([use({kind: 'ids', ids: ['sub-agent-9']})]);
		await withUse(s.ctx, [a, parent], s.adapters);
		expect(s.asked).toEqual(['p-5']);
	});

	it('a claim on a listed id and a sub-agent id reaches that conversation and every parent', async () => {
		const parent = conv('p-5', '/x', 2);
		const s = stand([use({kind: 'ids', ids: ['a-1', 'sub-agent-9']})]);
		await withUse(s.ctx, [a, parent], s.adapters);
		expect(s.asked).toEqual(['a-1', 'p-5']);
	});

	it('a claim on a listed id does not make the other parents candidates', async () => {
		const parent = conv('p-5', '/x', 2);
		const s = stand([use({kind: 'ids', ids: ['a-1']})]);
		await withUse(s.ctx, [a, parent], s.adapters);
		expect(s.asked).toEqual(['a-1']);
	});

	it('any process whose argv names the id, even with no claim at all', async () => {
		const s = stand(undefined, {}, [
			['vim', '/notes/about-c-3.md'],
			['sleep', '9'],
		]);
		await withUse(s.ctx, [a, b, c], s.adapters);
		expect(s.asked).toEqual(['c-3']);
	});

	it('an id split across two arguments, or across two processes, is named by nobody', async () => {
		const s = stand(undefined, {}, [['echo', 'c-', '3'], ['echo', 'b-'], ['2']]);
		await withUse(s.ctx, [a, b, c], s.adapters);
		expect(s.asked).toEqual([]);
	});
});

describe('what the answer makes of a row', () => {
	it('a holder: `no: in use by pid …`; every other row is the same object as before', async () => {
		const a = conv('a-1', '/w');
		const b = conv('b-2', '/w');
		const s = stand([use({kind: 'any'})], {'b-2': [holder(41)]});
		const {conversations: out} = await withUse(s.ctx, [a, b], s.adapters);
		expect(out[0]).toBe(a);
		expect(out[1]).toEqual({...b, resumeState: {kind: 'no', reason: 'in use by pid 41 (claude --resume x: argv names x)'}});
	});

	it('asked but nobody holds it: the list comes back unchanged', async () => {
		const list = [conv('a-1', '/w')];
		const s = stand([use({kind: 'any'})]);
		expect((await withUse(s.ctx, list, s.adapters)).conversations).toBe(list);
		expect(s.asked).toEqual(['a-1']);
	});

	it('an adapter that cannot tell: `unknown`, naming the agent and why', async () => {
		const a = conv('a-1', '/w');
		const s = stand([use({kind: 'any'})], {}, [], 'a-1');
		const [row] = (await withUse(s.ctx, [a], s.adapters)).conversations;
		expect(row?.resumeState).toEqual({kind: 'unknown', reason: 'Claude Code could not tell who uses it: the store is locked'});
	});
});

describe('the in-use wording', () => {
	it('is empty with no holder', () => {
		expect(inUseText([])).toBe('');
	});

	it('names the first holder and counts the others', () => {
		expect(inUseText([holder(41), holder(42), holder(43)])).toBe('in use by pid 41 (claude --resume x: argv names x) and 2 more');
		expect(inUseText([holder(41)])).toBe('in use by pid 41 (claude --resume x: argv names x)');
	});

	it('cuts a long command at 60 characters', () => {
		const long = `node ${'x'.repeat(80)}`;
		expect(inUseText([holder(41, long)])).toBe(`in use by pid 41 (${long.slice(0, 60)}: argv names x)`);
	});
});
