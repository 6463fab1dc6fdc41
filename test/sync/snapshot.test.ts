import {describe, expect, it} from 'vitest';
import type {Pane, ProcessRef, SessionRecord} from '../../src/domain/types.js';
import type {Multiplexer} from '../../src/mux/types.js';
import {cwdKey, inUseKey, pinKey, type DiscoveryResult} from '../../src/sync/discoveryResult.js';
import {readListing} from '../../src/sync/refresh.js';
import {conversationsOf, createConversationsMemo, createRowsMemo, joinSnapshot, type JoinInputs} from '../../src/sync/snapshot.js';
import {createProcessTable, type ProcessTable} from '../../src/system/processes.js';
import {conversation, pane, proc, row, UUID} from './support.js';

const health = {kind: 'herdr', ok: true, message: 'ok'} as const;

function discovery(partial: Partial<DiscoveryResult> = {}): DiscoveryResult {
	return {byCwd: new Map(), verify: new Map(), inUse: new Map(), conversations: [], ...partial};
}

function join(sessions: readonly SessionRecord[], panes: readonly Pane[] | null, extra: Partial<JoinInputs> = {}) {
	return joinSnapshot({
		at: 5,
		sessions,
		muxKind: 'herdr',
		health,
		panes,
		discovery: discovery(),
		processes: [],
		cwdExists: () => true,
		...extra,
	});
}

const claudePane = (id: string, extra: Partial<Pane> = {}) =>
	pane(id, {agent: 'claude', agentStatus: 'working', processes: [proc(10, 'sh'), proc(11, 'claude', ['claude'], 10)], ...extra});

describe('joinSnapshot: live status', () => {
	it("a running row whose pane runs its agent shows herdr's status", () => {
		const s = row({name: 'a', paneId: 'w1:p1'});
		expect(join([s], [claudePane('w1:p1')]).live['a']).toMatchObject({liveStatus: 'working', pane: {id: 'w1:p1'}});
	});

	it('a pane left with only a shell is exited; a missing pane is exited; a stopped row without a pane is stopped', () => {
		const shell = pane('w1:p2', {processes: [proc(20, 'sh')]});
		const rows = [row({name: 'shell', paneId: 'w1:p2'}), row({name: 'gone', paneId: 'w1:p9'}), row({name: 'off', status: 'stopped'})];
		const live = join(rows, [shell]).live;
		expect(live['shell']?.liveStatus).toBe('exited');
		expect(live['gone']?.liveStatus).toBe('exited');
		expect(live['off']?.liveStatus).toBe('stopped');
	});

	it('with the mux unreachable a running row is unknown, never "exited"', () => {
		const snap = join([row({name: 'a', paneId: 'w1:p1'})], null, {muxProblem: 'no herdr socket'});
		expect(snap.live['a']?.liveStatus).toBe('unknown');
		expect(snap.muxProblem).toBe('no herdr socket');
		expect(snap.findings.some(f => f.kind === 'pane-gone')).toBe(false);
	});

	it("a row of the other backend is not matched to this backend's pane with the same id", () => {
		const s = row({name: 't', mux: 'tmux', paneId: 'w1:p1'});
		expect(join([s], [claudePane('w1:p1')]).live['t']?.pane).toBeUndefined();
	});

	it('finds a pinned row in a pane that reports its conversation (a moved herdr pane has a new id)', () => {
		const s = row({name: 'moved', paneId: 'w1:p1', agentSessionId: UUID(1)});
		const moved = claudePane('w2:p1', {agentSessionId: UUID(1)});
		expect(join([s], [moved]).live['moved']).toMatchObject({liveStatus: 'working', pane: {id: 'w2:p1'}});
	});

	it("mam-tui's own pane is never a session's live pane nor an untracked agent pane", () => {
		const self = claudePane('w1:p1', {isSelf: true});
		const snap = join([row({name: 'a', paneId: 'w1:p1'})], [self]);
		expect(snap.live['a']?.liveStatus).toBe('exited');
		expect(snap.untracked).toEqual([]);
	});
});

describe('joinSnapshot: resume state (SPEC 6.1)', () => {
	const pinned = (extra: Partial<SessionRecord> = {}) => row({name: 'p', status: 'stopped', agentSessionId: UUID(2), ...extra});

	it('yes only when verified, the cwd exists and nobody uses it', () => {
		const s = pinned();
		const d = discovery({
			verify: new Map([[pinKey('claude', UUID(2), s.cwd), {kind: 'yes'}]]),
			inUse: new Map([[inUseKey('claude', UUID(2)), {ok: true, holders: []}]]),
		});
		expect(join([s], [], {discovery: d}).live['p']?.resumeState).toEqual({kind: 'yes'});
		expect(join([s], [], {discovery: d, cwdExists: () => false}).live['p']?.resumeState).toMatchObject({
			kind: 'no',
			reason: expect.stringContaining('no longer exists'),
		});
	});

	it('no when in use, naming the holder', () => {
		const s = pinned();
		const d = discovery({
			verify: new Map([[pinKey('claude', UUID(2), s.cwd), {kind: 'yes'}]]),
			inUse: new Map([
				[inUseKey('claude', UUID(2)), {ok: true, holders: [{pid: 77, startTime: 1, command: 'claude --resume x', reason: 'argv names the id'}]}],
			]),
		});
		expect(join([s], [], {discovery: d}).live['p']?.resumeState).toMatchObject({kind: 'no', reason: expect.stringContaining('pid 77')});
	});

	it("the adapter's verdict passes through; unpinned, live, purged and unknown agents say why", () => {
		const s = pinned();
		const d = discovery({verify: new Map([[pinKey('claude', UUID(2), s.cwd), {kind: 'unknown', reason: 'database is locked'}]])});
		expect(join([s], [], {discovery: d}).live['p']?.resumeState).toEqual({kind: 'unknown', reason: 'database is locked'});
		expect(join([row({name: 'u'})], []).live['u']?.resumeState).toMatchObject({kind: 'no', reason: 'no conversation pinned yet'});
		const live = row({name: 'l', paneId: 'w1:p1', agentSessionId: UUID(3)});
		expect(join([live], [claudePane('w1:p1')]).live['l']?.resumeState).toMatchObject({kind: 'no', reason: 'live in pane w1:p1'});
		expect(join([pinned({name: 'gone', status: 'purged'})], []).live['gone']?.resumeState).toMatchObject({kind: 'no', reason: 'purged'});
		expect(join([row({name: 'x', agent: 'newagent' as never})], []).live['x']?.resumeState).toMatchObject({kind: 'unknown'});
		expect(join([pinned({name: 'fresh'})], []).live['fresh']?.resumeState).toMatchObject({kind: 'unknown', reason: 'not checked yet'});
	});
});

describe('joinSnapshot: untracked panes, conversations, findings', () => {
	it('lists agent panes no active row references (by pane or by pin)', () => {
		const tracked = row({name: 'a', paneId: 'w1:p1'});
		const byPin = row({name: 'b', paneId: null, agentSessionId: UUID(4), status: 'stopped'});
		const panes = [claudePane('w1:p1'), claudePane('w1:p2'), claudePane('w1:p3', {agentSessionId: UUID(4)}), pane('w1:p4', {processes: [proc(40, 'bash')]})];
		expect(join([tracked, byPin], panes).untracked.map(p => p.id)).toEqual(['w1:p2']);
	});

	it('detects an agent by its process when the mux does not name it', () => {
		const bare = pane('w1:p5', {processes: [proc(50, 'sh'), proc(51, 'codex', ['codex'], 50)]});
		expect(join([], [bare]).untracked.map(p => p.id)).toEqual(['w1:p5']);
	});

	it('passes conversations through and feeds the drift engine (pane-gone, untracked-pane)', () => {
		const c = conversation(UUID(5));
		const snap = join([row({name: 'gone', paneId: 'w1:p9'})], [claudePane('w1:p2')], {
			discovery: discovery({conversations: [c], byCwd: new Map([[cwdKey('claude', '/w/app'), {ok: true, conversations: [c], problems: []}]])}),
		});
		expect(snap.conversations).toEqual([c]);
		expect(snap.findings.map(f => f.kind)).toEqual(expect.arrayContaining(['pane-gone', 'untracked-pane']));
	});
});

describe('readListing: one pass over /proc per listing', () => {
	const muxListing = (table: ProcessTable, readsTable: boolean): Multiplexer =>
		({
			kind: 'herdr',
			listPanes: async () => {
				if (readsTable) await table.list();
				return [];
			},
		}) as unknown as Multiplexer;

	it("takes the mux's own pass over the process table when it began after the listing did", async () => {
		const table = createProcessTable();
		let muxPass: readonly ProcessRef[] | undefined;
		const mux = {kind: 'herdr', listPanes: async () => ((muxPass = await table.list()), [])} as unknown as Multiplexer;
		const listing = await readListing({mux, processes: table});
		expect(muxPass).toBeDefined();
		expect(listing.processes).toBe(muxPass);
	});

	it('never takes a pass older than the listing: it reads its own', async () => {
		const table = createProcessTable();
		const before = await table.list();
		const listing = await readListing({mux: muxListing(table, false), processes: table});
		expect(listing.processes).not.toBe(before);
		expect(listing.processes?.some(p => p.pid === process.pid)).toBe(true);
		// And a table that cannot say (no listedSince) is simply asked.
		const plain: ProcessTable = {list: async () => before, get: async () => undefined, holders: async () => []};
		expect((await readListing({mux: muxListing(plain, true), processes: plain})).processes).toBe(before);
	});
});

describe('joinSnapshot: unchanged live data keeps its objects', () => {
	it('an equal row keeps its object, a changed one does not, and the values equal a join from scratch', () => {
		const a = row({name: 'a', agentSessionId: UUID(2)});
		const b = row({name: 'b', agentSessionId: UUID(3)});
		const panes = [claudePane('w1:p9')];
		const d = (bVerify: {kind: 'yes'} | {kind: 'no'; reason: string}) =>
			discovery({
				verify: new Map([
					[pinKey('claude', UUID(2), a.cwd), {kind: 'yes'}],
					[pinKey('claude', UUID(3), b.cwd), bVerify],
				]),
				inUse: new Map([
					[inUseKey('claude', UUID(2)), {ok: true, holders: []}],
					[inUseKey('claude', UUID(3)), {ok: true, holders: []}],
				]),
			});
		const first = join([a, b], panes, {discovery: d({kind: 'yes'})});
		// Equal again (new objects from the adapters): the very same record.
		const again = join([a, b], panes, {discovery: d({kind: 'yes'}), previousLive: first.live});
		expect(again.live).toBe(first.live);
		// b changed: a keeps its object, b does not, and both equal a join without the previous record.
		const changed = join([a, b], panes, {discovery: d({kind: 'no', reason: 'no transcript on disk'}), previousLive: first.live});
		expect(changed.live).toEqual(join([a, b], panes, {discovery: d({kind: 'no', reason: 'no transcript on disk'})}).live);
		expect(changed.live['a']).toBe(first.live['a']);
		expect(changed.live['b']).not.toBe(first.live['b']);
		expect(changed.live['b']?.resumeState).toMatchObject({kind: 'no'});
		// A new pane object (a new listing: herdr says idle now) is never hidden behind an old one.
		const inPane = row({name: 'c', paneId: 'w1:p9'});
		const before = join([a, b, inPane], panes, {discovery: d({kind: 'yes'})});
		const idle = join([a, b, inPane], [claudePane('w1:p9', {agentStatus: 'idle'})], {discovery: d({kind: 'yes'}), previousLive: before.live});
		expect(idle.live['c']?.liveStatus).toBe('idle');
		expect(idle.live['a']).toBe(before.live['a']);
		// A row that left: not the old record.
		expect(join([a], panes, {discovery: d({kind: 'yes'}), previousLive: first.live}).live).toEqual({a: first.live['a']});
	});
});

describe('joinSnapshot: the conversations view by the same resume rule', () => {
	// Gemini, agy, grok and hermes never looked at the folder: their conversations read "yes" in
	// the conversations view while resume refused them (cwd-missing).
	it("a conversation whose folder is gone is not resumable there either; the adapter's no stays", () => {
		const gone = conversation(UUID(7), {cwd: '/w/gone'});
		const here = conversation(UUID(8), {cwd: '/w/here'});
		const empty = conversation(UUID(9), {cwd: '/w/gone', resumeState: {kind: 'no', reason: 'the session holds no messages'}});
		const list = [gone, here, empty];
		const snap = join([], [], {discovery: discovery({conversations: list}), cwdExists: cwd => cwd !== '/w/gone'});
		expect(snap.conversations.map(c => c.resumeState)).toEqual([{kind: 'no', reason: 'its folder /w/gone no longer exists'}, {kind: 'yes'}, empty.resumeState]);
		expect(snap.conversations[1]).toBe(here);
	});

	it('hands back the same list while every folder is there, and the same result while the same ones are missing', () => {
		const list = [conversation(UUID(7), {cwd: '/w/gone'})];
		const all = join([], [], {discovery: discovery({conversations: list})});
		expect(all.conversations).toBe(list);
		const conversationsMemo = {};
		const first = join([], [], {discovery: discovery({conversations: list}), cwdExists: () => false, conversationsMemo});
		const again = join([], [], {discovery: discovery({conversations: list}), cwdExists: () => false, conversationsMemo});
		expect(again.conversations).toBe(first.conversations);
	});
});

describe('the conversation list and its folders', () => {
	it('asks each folder of the same list again on every refresh, so a folder gone since shows', () => {
		const list = [conversation(UUID(1), {cwd: '/w/a'}), conversation(UUID(2), {cwd: '/w/b'}), conversation(UUID(3), {cwd: '/w/a'})];
		const memo = createConversationsMemo();
		const asked: string[] = [];
		const present = (gone: string) => (cwd: string) => {
			asked.push(cwd);
			return cwd !== gone;
		};
		expect(conversationsOf(list, present(''), memo)).toBe(list);
		// One question per folder, not per conversation.
		expect(asked).toEqual(['/w/a', '/w/b']);
		const after = conversationsOf(list, present('/w/b'), memo);
		expect(after.map(c => c.resumeState.kind)).toEqual(['yes', 'no', 'yes']);
		expect(conversationsOf(list, present('/w/a'), memo).map(c => c.resumeState.kind)).toEqual(['no', 'yes', 'no']);
	});

	it('copies a conversation of a missing folder once: a new list keeps the copies of the same conversations and shows the changed one', () => {
		const memo = createConversationsMemo();
		const gone = () => false;
		const kept = conversation(UUID(1), {cwd: '/w/gone'});
		const before = conversation(UUID(2), {cwd: '/w/gone', updatedAt: 1});
		const first = conversationsOf([kept, before], gone, memo);
		// One file changed: the adapter hands back a new object for it, the same one for the rest.
		const after = conversation(UUID(2), {cwd: '/w/gone', updatedAt: 2});
		const second = conversationsOf([kept, after], gone, memo);
		expect(second[0]).toBe(first[0]);
		expect(second[1]).toMatchObject({id: UUID(2), updatedAt: 2, resumeState: {kind: 'no'}});
		// The folder back, then gone again: a copy follows the folder check of its own refresh.
		expect(conversationsOf([kept, after], () => true, memo)[1]?.resumeState.kind).toBe('yes');
		expect(conversationsOf([kept, after], gone, memo)[1]).toMatchObject({updatedAt: 2, resumeState: {kind: 'no'}});
	});
});

describe('joinSnapshot: the rows memo (a file change re-reads a list, not the rows)', () => {
	const pinned = row({name: 'p', status: 'stopped', agentSessionId: UUID(1), cwd: '/w/p'});
	const sessions = [pinned, row({name: 'a', paneId: 'w1:p1'})];
	const panes = [claudePane('w1:p1')];
	const yes = {kind: 'yes'} as const;
	const nobody = {ok: true, holders: []} as const;
	const answers = (verdict: DiscoveryResult['verify'] extends ReadonlyMap<string, infer V> ? V : never = yes) =>
		discovery({verify: new Map([[pinKey('claude', UUID(1), '/w/p'), verdict]]), inUse: new Map([[inUseKey('claude', UUID(1)), nobody]])});

	it('rows, panes and answers (the same objects) as last time: no row is judged again', () => {
		const rowsMemo = createRowsMemo();
		// Without findings: drift reads the answers on its own.
		const first = join(sessions, panes, {rowsMemo, findings: false, discovery: answers()});
		expect(first.live['p']?.resumeState.kind).toBe('yes');
		const again = answers();
		let asked = 0;
		const verify = again.verify;
		const counted = {...again, verify: Object.assign(new Map(verify), {get: (key: string) => ((asked += 1), verify.get(key))})};
		const second = join(sessions, panes, {rowsMemo, findings: false, discovery: {...counted, conversations: [conversation(UUID(9))]}});
		expect(asked).toBe(0);
		expect(second.live).toBe(first.live);
	});

	it('a new answer, a folder gone or another row list joins the rows again', () => {
		const rowsMemo = createRowsMemo();
		join(sessions, panes, {rowsMemo, discovery: answers()});
		const unknown = {kind: 'unknown', reason: 'locked'} as const;
		expect(join(sessions, panes, {rowsMemo, discovery: answers(unknown)}).live['p']?.resumeState.kind).toBe('unknown');
		expect(join(sessions, panes, {rowsMemo, discovery: answers()}).live['p']?.resumeState.kind).toBe('yes');
		expect(join(sessions, panes, {rowsMemo, discovery: answers(), cwdExists: cwd => cwd !== '/w/p'}).live['p']?.resumeState.kind).toBe('no');
		const renamed = [{...pinned, name: 'q'}, ...sessions.slice(1)];
		expect(Object.keys(join(renamed, panes, {rowsMemo, discovery: answers()}).live)).toEqual(['q', 'a']);
	});
});
