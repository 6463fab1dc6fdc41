import {describe, expect, it} from 'vitest';
import {resolveFolder, type LiveUse} from '../../src/adapters/common/liveEvidence.js';
import type {AgentAdapter} from '../../src/adapters/types.js';
import type {Conversation, ProcessRef} from '../../src/domain/types.js';
import {idsNamed, withUse, withUseEach} from '../../src/sync/conversationUse.js';
import {adaptersWith, conversation, countingAdapter, ctx, proc, staticProcesses, UUID} from './support.js';

// The conversations list's in-use pass: which conversations it asks the rule about, and what it
// keeps between refreshes. The rule itself (usersOf, each adapter's inUse) is tested per adapter.

const holder = {pid: 42, startTime: 420, command: 'claude', reason: 'a claude process in /w/app keeps no record'};

/** The counting claude adapter, its live uses set by the test. */
function withUses(uses: LiveUse[]) {
	const adapter = countingAdapter('claude');
	const live: AgentAdapter = {...adapter, liveUses: async () => uses};
	Object.defineProperty(live, 'calls', {get: () => adapter.calls});
	adapter.holders = [holder];
	return {adapter, adapters: adaptersWith(live)};
}

const project = (cwd: string): LiveUse => ({
	pid: 42,
	startTime: 420,
	command: 'claude',
	claim: {kind: 'project', cwd, folder: resolveFolder(cwd)},
	reason: holder.reason,
});

const on = (processes: readonly ProcessRef[]) => ({...ctx, processes: staticProcesses(processes)});

describe('the conversations list and the in-use rule', () => {
	it('asks about the conversations of a project claim, its subfolders and its parents, and no others', async () => {
		const {adapter, adapters} = withUses([project('/w/app/')]);
		const list: Conversation[] = [
			conversation(UUID(1), {cwd: '/w/app'}),
			conversation(UUID(2), {cwd: '/w/app/sub'}),
			conversation(UUID(3), {cwd: '/w'}),
			conversation(UUID(4), {cwd: '/w/application'}),
			conversation(UUID(5), {cwd: '/x'}),
		];
		const {conversations} = await withUse(on([]), list, adapters);
		expect(adapter.calls.inUse).toBe(3);
		expect(conversations.map(c => c.resumeState.kind)).toEqual(['no', 'no', 'no', 'yes', 'yes']);
	});

	it('asks about a conversation some argv names, also inside a file name', async () => {
		const {adapter, adapters} = withUses([]);
		const list = [conversation(UUID(1)), conversation(UUID(2)), conversation(UUID(3))];
		const tail = proc(7, 'tail', ['tail', '-f', `/h/.codex/sessions/rollout-2026-01-01T10-00-00-${UUID(2)}.jsonl`]);
		const resume = proc(8, 'claude', ['claude', `--resume=${UUID(3)}`]);
		const {conversations} = await withUse(on([tail, resume]), list, adapters);
		expect(adapter.calls.inUse).toBe(2);
		expect(conversations.map(c => c.resumeState.kind)).toEqual(['yes', 'no', 'no']);
	});

	it('keeps its answers while the live uses stand, and asks only about conversations read again', async () => {
		const {adapter, adapters} = withUses([project('/w/app')]);
		const list = [conversation(UUID(1)), conversation(UUID(2))];
		const first = await withUse(on([]), list, adapters);
		expect(adapter.calls.inUse).toBe(2);
		const again = await withUse(on([]), list, adapters, first.memo);
		expect(adapter.calls.inUse).toBe(2);
		expect(again.conversations[0]).toBe(first.conversations[0]);
		const reread = [conversation(UUID(1)), list[1] as Conversation];
		await withUse(on([]), reread, adapters, again.memo);
		expect(adapter.calls.inUse).toBe(3);
	});

	it('asks again about every conversation when the live uses change', async () => {
		const uses = [project('/w/app')];
		const {adapter, adapters} = withUses(uses);
		const list = [conversation(UUID(1)), conversation(UUID(2))];
		const first = await withUse(on([]), list, adapters);
		uses.push({...project('/w/other'), pid: 43});
		await withUse(on([]), list, adapters, first.memo);
		expect(adapter.calls.inUse).toBe(4);
	});
});

describe('the in-use rule over many lists (one per agent and cwd)', () => {
	const ids = (id: string): LiveUse => ({pid: 42, startTime: 420, command: 'claude', claim: {kind: 'ids', ids: [id]}, reason: holder.reason});

	it('asks again only about a list that changed; the others come back as the same arrays', async () => {
		const {adapter, adapters} = withUses([project('/w/app')]);
		const a = [conversation(UUID(1))];
		const b = [conversation(UUID(2))];
		const first = await withUseEach(on([]), [a, b], adapters);
		expect(adapter.calls.inUse).toBe(2);
		const b2 = [conversation(UUID(3))];
		const next = await withUseEach(on([]), [a, b2], adapters, first.memo);
		expect(adapter.calls.inUse).toBe(3);
		expect(next.lists[0]).toBe(first.lists[0]);
		expect(next.lists[1]?.[0]?.resumeState.kind).toBe('no');
	});

	it("one agent's live uses changing asks its conversations again, not another agent's", async () => {
		const claudeUses = [project('/w/app')];
		const claude = countingAdapter('claude');
		claude.holders = [holder];
		const codex = countingAdapter('codex');
		const adapters = {
			...adaptersWith(claude),
			claude: {...claude, liveUses: async () => claudeUses},
			codex: {...codex, liveUses: async () => [{...project('/w/app'), command: 'codex'}]},
		};
		const a = [conversation(UUID(1), {cwd: '/w/app'})];
		const b = [conversation(UUID(2), {cwd: '/w/app', agent: 'codex'})];
		const first = await withUseEach(on([]), [a, b], adapters);
		expect([claude.calls.inUse, codex.calls.inUse]).toEqual([1, 1]);
		claudeUses.push({...project('/w/other'), pid: 43});
		const next = await withUseEach(on([]), [a, b], adapters, first.memo);
		expect([claude.calls.inUse, codex.calls.inUse]).toEqual([2, 1]);
		expect(next.lists[1]).toBe(first.lists[1]);
	});

	it('a changed list adds its ids to those argv can name', async () => {
		const {adapters} = withUses([]);
		const resume = proc(8, 'claude', ['claude', '--resume', UUID(7)]);
		const a = [conversation(UUID(1))];
		const first = await withUseEach(on([resume]), [a, [conversation(UUID(2))]], adapters);
		const next = await withUseEach(on([resume]), [a, [conversation(UUID(7))]], adapters, first.memo);
		expect(next.lists[1]?.[0]?.resumeState.kind).toBe('no');
	});

	it('a claimed id that a changed list now holds no longer makes every parent a candidate', async () => {
		const {adapters} = withUses([ids(UUID(9))]);
		const parent = [conversation(UUID(1), {childCount: 1, cwd: '/x'})];
		const first = await withUseEach(on([]), [parent, [conversation(UUID(2), {cwd: '/y'})]], adapters);
		// UUID(9) is not listed: a sub-agent of some listed parent, so the parent may be in use.
		expect(first.lists[0]?.[0]?.resumeState.kind).toBe('no');
		const next = await withUseEach(on([]), [parent, [conversation(UUID(9), {cwd: '/y'})]], adapters, first.memo);
		expect(next.lists[0]?.[0]?.resumeState.kind).toBe('yes');
		expect(next.lists[1]?.[0]?.resumeState.kind).toBe('no');
	});

	it('a list that left takes its ids with it: a claim on one of them makes the parents candidates again', async () => {
		const {adapters} = withUses([ids(UUID(9))]);
		const parent = [conversation(UUID(1), {childCount: 1, cwd: '/x'})];
		const first = await withUseEach(on([]), [parent, [conversation(UUID(9), {cwd: '/y'})]], adapters);
		expect(first.lists[0]?.[0]?.resumeState.kind).toBe('yes');
		const next = await withUseEach(on([]), [parent, [conversation(UUID(8), {cwd: '/y'})]], adapters, first.memo);
		expect(next.lists[0]?.[0]?.resumeState.kind).toBe('no');
		// Fewer lists than before: the one gone leaves too.
		const fewer = await withUseEach(on([]), [parent], adapters, first.memo);
		expect(fewer.lists[0]?.[0]?.resumeState.kind).toBe('no');
	});

	it('a list that comes after the others joins them', async () => {
		const {adapters} = withUses([ids(UUID(9))]);
		const parent = [conversation(UUID(1), {childCount: 1, cwd: '/x'})];
		const first = await withUseEach(on([]), [parent], adapters);
		expect(first.lists[0]?.[0]?.resumeState.kind).toBe('no');
		const next = await withUseEach(on([]), [parent, [conversation(UUID(9), {cwd: '/y'})]], adapters, first.memo);
		expect(next.lists[0]?.[0]?.resumeState.kind).toBe('yes');
	});

	it('an id argv names is found whatever the length of the other ids listed before or after it', async () => {
		const {adapters} = withUses([]);
		const long = 'ses_0123456789abAAAAAAAAAAAAAA';
		const table = [proc(8, 'opencode', ['opencode', '--session', long])];
		const opencode = {...adapters.claude, id: 'opencode' as const};
		const mixed = {...adapters, opencode};
		const {lists} = await withUseEach(on(table), [[conversation(long, {agent: 'opencode'})], [conversation('a1')]], mixed);
		expect(lists[0]?.[0]?.resumeState.kind).toBe('no');
	});

	it('on the same listing, a longer id listed later is still found in argv', async () => {
		const {adapters} = withUses([]);
		const long = `${UUID(1)}-x`;
		const table = [proc(8, 'claude', ['claude', '--resume', long])];
		const context = on(table);
		const first = await withUseEach(context, [[conversation('ab')]], adapters);
		const next = await withUseEach(context, [[conversation('ab')], [conversation(long)]], adapters, first.memo);
		expect(next.lists[1]?.[0]?.resumeState.kind).toBe('no');
	});

	it('asks again when a live process claims another folder (same pid, same count of uses)', async () => {
		const uses = [project('/w/app')];
		const {adapters} = withUses(uses);
		const list = [conversation(UUID(1))];
		const first = await withUseEach(on([]), [list], adapters);
		expect(first.lists[0]?.[0]?.resumeState.kind).toBe('no');
		uses[0] = project('/w/other');
		const next = await withUseEach(on([]), [list], adapters, first.memo);
		expect(next.lists[0]?.[0]?.resumeState.kind).toBe('yes');
	});

	it('asks again when a new process names a listed conversation in its argv', async () => {
		const {adapters} = withUses([]);
		const list = [conversation(UUID(1))];
		const first = await withUseEach(on([]), [list], adapters);
		expect(first.lists[0]).toBe(list);
		const next = await withUseEach(on([proc(8, 'claude', ['claude', '--resume', UUID(1)])]), [list], adapters, first.memo);
		expect(next.lists[0]?.[0]?.resumeState.kind).toBe('no');
	});

	it('a process whose argv names no listed id keeps every answer', async () => {
		const {adapter, adapters} = withUses([project('/w/app')]);
		const list = [conversation(UUID(1))];
		const first = await withUseEach(on([]), [list], adapters);
		expect(adapter.calls.inUse).toBe(1);
		await withUseEach(on([proc(9, 'vim', ['vim', 'notes-2026.txt'])]), [list], adapters, first.memo);
		expect(adapter.calls.inUse).toBe(1);
	});

	it('an unreadable cwd (an empty list) beside the others: the others are still answered', async () => {
		const {adapters} = withUses([project('/w/app')]);
		const {lists} = await withUseEach(on([]), [[], [conversation(UUID(1))]], adapters);
		expect(lists[0]).toEqual([]);
		expect(lists[1]?.[0]?.resumeState.kind).toBe('no');
	});

	it('no conversation at all: the empty lists back, the memo kept', async () => {
		const {adapters} = withUses([project('/w/app')]);
		const first = await withUseEach(on([]), [[conversation(UUID(1))]], adapters);
		const empty: readonly Conversation[] = [];
		const none = await withUseEach(on([]), [empty], adapters, first.memo);
		expect(none.lists[0]).toBe(empty);
		expect(none.memo).toBe(first.memo);
		expect((await withUse(on([]), empty, adapters)).conversations).toBe(empty);
	});

	it('a list in which nobody is in use comes back as the same array', async () => {
		const {adapters} = withUses([project('/elsewhere')]);
		const list = [conversation(UUID(1)), conversation(UUID(2))];
		const {lists} = await withUseEach(on([]), [list], adapters);
		expect(lists[0]).toBe(list);
	});

	it('answers each list as the union asked at once would', async () => {
		const {adapters} = withUses([project('/w/app'), ids(UUID(5))]);
		const lists = [
			[conversation(UUID(1)), conversation(UUID(2), {cwd: '/o'})],
			[conversation(UUID(5), {cwd: '/o'}), conversation(UUID(6), {cwd: '/o', childCount: 2})],
		];
		const each = await withUseEach(on([]), lists, adapters);
		const union = await withUse(on([]), lists.flat(), adapters);
		expect(each.lists.flat().map(c => c.resumeState.kind)).toEqual(union.conversations.map(c => c.resumeState.kind));
	});
});

describe('idsNamed', () => {
	it('finds listed ids as words and as dash- or underscore-separated parts of one', () => {
		const listed = new Set([UUID(1), UUID(2), 'ses_0123456789abAAAAAAAAAAAAAA', '20260101_101010_abcdef', UUID(9)]);
		const found = idsNamed(
			[
				proc(1, 'x', ['x', UUID(1)]),
				proc(2, 'x', ['x', `--session=${UUID(2)}`]),
				proc(3, 'x', ['x', 'export-ses_0123456789abAAAAAAAAAAAAAA.json']),
				proc(4, 'x', ['x', 'hermes_20260101_101010_abcdef']),
				proc(5, 'x', ['x', `a${UUID(9)}`]),
			],
			listed,
		);
		expect([...found].sort()).toEqual([UUID(1), UUID(2), '20260101_101010_abcdef', 'ses_0123456789abAAAAAAAAAAAAAA'].sort());
	});

	it('finds an id followed by a dash or an underscore in its word, and nothing cut out of an id', () => {
		const listed = new Set([UUID(1), UUID(2), UUID(3), '00000']);
		const found = idsNamed([proc(1, 'x', ['x', `${UUID(1)}-backup`, `${UUID(2)}_old`, `${UUID(3)}x`])], listed);
		// UUID(3)x is no id; '00000' is no part: it is cut out of a group of UUID(…), not between separators.
		expect([...found].sort()).toEqual([UUID(1), UUID(2)].sort());
	});

	it('finds an id at the end of a word of a thousand dashes', () => {
		expect(idsNamed([proc(1, 'x', ['x', `${'-'.repeat(1000)}${UUID(1)}`])], new Set([UUID(1)]))).toEqual(new Set([UUID(1)]));
	});
});
