import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {claudeAdapter, projectSlug} from '../../src/adapters/claude.js';
import {codexAdapter} from '../../src/adapters/codex.js';
import type {AgentAdapter} from '../../src/adapters/types.js';
import {makeSnippet, matchExpression, openSearchStore, searchConversations, searchIndexPath, syncIndex, usageByFolder} from '../../src/search/index.js';
import {rolloutRelPath} from '../adapters/fixtures/codex.js';
import {fixtureContext, makeTempLayout, type TempLayout} from '../adapters/fixtures/world.js';

// The search index against real adapters over fixture homes: what is found, what a purge
// leaves (nothing), and token counts by hand.

const layouts: TempLayout[] = [];
afterEach(() => {
	for (const l of layouts.splice(0)) fs.rmSync(l.base, {recursive: true, force: true});
});

const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.parse('2026-11-01T10:00:00Z');

function line(value: object): string {
	return `${JSON.stringify(value)}\n`;
}

/** A claude transcript: a prompt, then one API message written as three records (same id, same usage), then a second message. */
function claudeLines(id: string, cwd: string, prompt: string, reply: string): string {
	const common = {cwd, sessionId: id, version: '2.1.197', entrypoint: 'cli', userType: 'external'};
	const usageA = {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50};
	const usageB = {input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0};
	return [
		line({type: 'user', message: {role: 'user', content: prompt}, uuid: crypto.randomUUID(), timestamp: iso(T0), isSidechain: false, ...common}),
		line({
			type: 'assistant',
			message: {id: 'msg_A', role: 'assistant', content: [{type: 'thinking', thinking: 'hmm'}], usage: usageA},
			uuid: crypto.randomUUID(),
			timestamp: iso(T0 + 1000),
			...common,
		}),
		line({
			type: 'assistant',
			message: {id: 'msg_A', role: 'assistant', content: [{type: 'text', text: reply}], usage: usageA},
			uuid: crypto.randomUUID(),
			timestamp: iso(T0 + 1100),
			...common,
		}),
		line({
			type: 'assistant',
			message: {id: 'msg_A', role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Bash', input: {}}], usage: usageA},
			uuid: crypto.randomUUID(),
			timestamp: iso(T0 + 1200),
			...common,
		}),
		line({
			type: 'assistant',
			message: {id: 'msg_B', role: 'assistant', content: [{type: 'text', text: 'done'}], usage: usageB},
			uuid: crypto.randomUUID(),
			timestamp: iso(T0 + 2000),
			...common,
		}),
	].join('');
}

function writeClaude(layout: TempLayout, cwd: string, prompt: string, reply: string): {id: string; file: string} {
	const id = crypto.randomUUID();
	const file = path.join(layout.home, '.claude', 'projects', projectSlug(cwd), `${id}.jsonl`);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	fs.writeFileSync(file, claudeLines(id, cwd, prompt, reply));
	return {id, file};
}

/** A codex rollout whose token_count events are running totals (the last one is the answer). */
function writeCodex(layout: TempLayout, cwd: string, prompt: string): {id: string; file: string} {
	const id = '01a22b1d-90ae-71a0-9666-' + crypto.randomBytes(6).toString('hex');
	const file = path.join(layout.home, '.codex', rolloutRelPath(id, T0));
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const total = (input: number, cached: number, output: number) => ({
		type: 'event_msg',
		timestamp: iso(T0),
		payload: {
			type: 'token_count',
			info: {
				total_token_usage: {input_tokens: input, cached_input_tokens: cached, cache_write_input_tokens: 0, output_tokens: output, total_tokens: input + output},
				last_token_usage: {input_tokens: 1, output_tokens: 1},
			},
		},
	});
	fs.writeFileSync(
		file,
		[
			line({
				timestamp: iso(T0),
				type: 'session_meta',
				payload: {id, timestamp: iso(T0), cwd, originator: 'codex-tui', cli_version: '0.171.0', source: 'cli', model_provider: 'fake'},
			}),
			line({
				timestamp: iso(T0),
				type: 'response_item',
				payload: {type: 'message', role: 'user', content: [{type: 'input_text', text: '<environment_context>cwd</environment_context>'}]},
			}),
			line({timestamp: iso(T0), type: 'response_item', payload: {type: 'message', role: 'user', content: [{type: 'input_text', text: prompt}]}}),
			line(total(1000, 400, 50)),
			line({
				timestamp: iso(T0 + 500),
				type: 'response_item',
				payload: {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'first answer'}]},
			}),
			line(total(2500, 1200, 130)),
		].join(''),
	);
	return {id, file};
}

function world(adapters: AgentAdapter[] = [claudeAdapter, codexAdapter]) {
	const layout = makeTempLayout('search');
	layouts.push(layout);
	const stateDir = path.join(layout.base, 'state');
	const store = openSearchStore(stateDir);
	const deps = {context: fixtureContext(layout), adapters, store};
	return {layout, stateDir, store, deps};
}

/** Every byte of the index's files (the database, its WAL and shared memory). */
function indexBytes(stateDir: string): Buffer {
	const file = searchIndexPath(stateDir);
	return Buffer.concat([file, `${file}-wal`, `${file}-shm`].filter(f => fs.existsSync(f)).map(f => fs.readFileSync(f)));
}

describe('search index', () => {
	it('finds a conversation by a word only its message bodies hold, with the word marked', async () => {
		const w = world();
		const [alpha, beta] = w.layout.cwds;
		const hit = writeClaude(w.layout, alpha, 'please tidy the zanzibarite parser', 'I tidied it');
		writeClaude(w.layout, beta, 'something else entirely', 'ok');
		const hits = await searchConversations(w.deps, 'zanzibarite');
		expect(hits.map(h => h.id)).toEqual([hit.id]);
		expect(hits[0]?.snippet).toContain('[zanzibarite]');
		expect(hits[0]?.cwd).toBe(alpha);
		w.store.close();
	});

	it('reads an appended message from the byte offset on, and counts a repeated usage once', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const c = writeClaude(w.layout, alpha, 'first words', 'reply');
		const first = await syncIndex(w.deps);
		expect(first.messages).toBe(3);
		const common = {cwd: alpha, sessionId: c.id, entrypoint: 'cli'};
		// msg_B's usage written once more (claude repeats it per content block): still counted once.
		fs.appendFileSync(
			c.file,
			line({
				type: 'assistant',
				message: {id: 'msg_B', role: 'assistant', content: [{type: 'text', text: 'the quokkaberry step'}], usage: {input_tokens: 7, output_tokens: 3}},
				timestamp: iso(T0 + 3000),
				...common,
			}),
		);
		const second = await syncIndex(w.deps);
		expect(second.read).toBe(1);
		expect(second.messages).toBe(1);
		expect((await searchConversations(w.deps, 'quokkaberry', {noSync: true})).map(h => h.id)).toEqual([c.id]);
		// Hand count: msg_A (three records, one usage) 100/20/1000/50 + msg_B 7/3/0/0.
		expect(w.store.get('claude', c.id)?.usage).toEqual({input: 107, output: 23, cacheRead: 1000, cacheWrite: 50});
		w.store.close();
	});

	it('reads a rewritten transcript again from the start and forgets what it no longer says', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const c = writeClaude(w.layout, alpha, 'the original gooseberry prompt', 'ok');
		expect((await searchConversations(w.deps, 'gooseberry')).length).toBe(1);
		// Shorter than what was read (a rewind or a rewrite): the cursor no longer continues it.
		fs.writeFileSync(c.file, claudeLines(c.id, alpha, 'a new prompt', 'ok').split('\n').slice(0, 2).join('\n') + '\n');
		fs.utimesSync(c.file, new Date(), new Date(Date.now() + 60_000));
		expect(await searchConversations(w.deps, 'gooseberry')).toEqual([]);
		expect((await searchConversations(w.deps, 'new prompt')).map(h => h.id)).toEqual([c.id]);
		w.store.close();
	});

	it("takes codex's last cumulative token_count, not their sum, and skips injected context", async () => {
		const w = world([codexAdapter]);
		const alpha = w.layout.cwds[0];
		const c = writeCodex(w.layout, alpha, 'codex prompt about hyacinthine');
		const hits = await searchConversations(w.deps, 'hyacinthine');
		expect(hits.map(h => h.id)).toEqual([c.id]);
		// Last total: input 2500 of which 1200 cached, output 130 (the sum would be 3500/1600/180).
		expect(hits[0]?.usage).toEqual({input: 1300, output: 130, cacheRead: 1200, cacheWrite: 0});
		expect(await searchConversations(w.deps, 'environment_context', {noSync: true})).toEqual([]);
		expect(usageByFolder(w.store.all()).get(alpha)).toEqual({conversations: 1, known: 1, usage: {input: 1300, output: 130, cacheRead: 1200, cacheWrite: 0}});
		w.store.close();
	});

	it('does not list a conversation whose source is gone, and erases it', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const c = writeClaude(w.layout, alpha, 'the vanished marmalade plan', 'ok');
		expect((await searchConversations(w.deps, 'marmalade')).length).toBe(1);
		fs.rmSync(c.file);
		// Not even a sync: the hit is re-checked against its source before it is shown.
		expect(await searchConversations(w.deps, 'marmalade', {noSync: true})).toEqual([]);
		expect(w.store.get('claude', c.id)).toBeUndefined();
		w.store.close();
	});

	it('leaves no byte of a forgotten conversation in its files (FTS index, pages, WAL)', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const word = 'xylophonequartz';
		// Enough other conversations that the word's pages are not simply the whole file.
		for (let i = 0; i < 30; i++) writeClaude(w.layout, alpha, `ordinary prompt ${i} about parsers and tests`, `ordinary reply ${i}`);
		await syncIndex(w.deps);
		// Its own sync: its words land in an FTS segment of their own, as an appended conversation's do.
		const c = writeClaude(w.layout, alpha, `purge me: ${word} secret`, `reply with ${word} too`);
		await syncIndex(w.deps);
		expect(indexBytes(w.stateDir).includes(word)).toBe(true);
		expect(w.store.forget('claude', [c.id])).toBe(1);
		// Checked with the index still open (as the dashboard holds it): no close-time checkpoint helps.
		const bytes = indexBytes(w.stateDir);
		w.store.close();
		expect(bytes.includes(word)).toBe(false);
		expect(bytes.includes(word.slice(3))).toBe(false);
		// The rest is still found.
		const again = openSearchStore(w.stateDir);
		expect(again.query(matchExpression('ordinary'), {limit: 100}).length).toBe(30);
		again.close();
	});

	it('rebuilds an index whose FTS5 secure-delete option is off, and then erases a word it forgets', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const word = 'zephyrwhistle';
		for (let i = 0; i < 10; i++) writeClaude(w.layout, alpha, `ordinary prompt ${i}`, `ordinary reply ${i}`);
		await syncIndex(w.deps);
		w.store.close();
		const db = (await import('better-sqlite3')).default(searchIndexPath(w.stateDir));
		db.prepare("INSERT INTO fts (fts, rank) VALUES ('secure-delete', 0)").run();
		db.close();
		const reopened = openSearchStore(w.stateDir);
		expect(reopened.rebuilt).toBe(true);
		const deps = {...w.deps, store: reopened};
		await syncIndex(deps);
		const c = writeClaude(w.layout, alpha, `purge me: ${word}`, 'ok');
		await syncIndex(deps);
		expect(indexBytes(w.stateDir).includes(word)).toBe(true);
		reopened.forget('claude', [c.id]);
		// Only the FTS5 option takes the word out of the index's own segments (the row's text is
		// zeroed by the secure_delete pragma either way).
		expect(indexBytes(w.stateDir).includes(word)).toBe(false);
		reopened.close();
	});

	it('rebuilds a corrupt or foreign index instead of trusting it', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		writeClaude(w.layout, alpha, 'the gingerly word', 'ok');
		await syncIndex(w.deps);
		w.store.close();
		fs.writeFileSync(searchIndexPath(w.stateDir), 'not a database at all, just bytes'.repeat(200));
		const reopened = openSearchStore(w.stateDir);
		expect(reopened.rebuilt).toBe(true);
		expect((await searchConversations({...w.deps, store: reopened}, 'gingerly')).length).toBe(1);
		reopened.close();
		// A sqlite file of another application: not ours, rebuilt too.
		const foreign = openSearchStore(path.join(w.layout.base, 'other'));
		foreign.close();
		fs.copyFileSync(searchIndexPath(path.join(w.layout.base, 'other')), searchIndexPath(w.stateDir));
		const db = (await import('better-sqlite3')).default(searchIndexPath(w.stateDir));
		db.pragma('application_id = 1');
		db.close();
		const third = openSearchStore(w.stateDir);
		expect(third.rebuilt).toBe(true);
		third.close();
	});

	it('hides sub-agent and headless conversations unless asked for all', async () => {
		const w = world([claudeAdapter]);
		const alpha = w.layout.cwds[0];
		const c = writeClaude(w.layout, alpha, 'a headless pomegranate run', 'ok');
		fs.writeFileSync(c.file, fs.readFileSync(c.file, 'utf8').replaceAll('"entrypoint":"cli"', '"entrypoint":"sdk-cli"'));
		expect(await searchConversations(w.deps, 'pomegranate')).toEqual([]);
		expect((await searchConversations(w.deps, 'pomegranate', {all: true})).map(h => h.id)).toEqual([c.id]);
		w.store.close();
	});

	it('quotes every word, so query syntax in the input is text', () => {
		expect(matchExpression('foo OR bar-baz pre*')).toBe('"foo" "OR" "bar" "baz" "pre"*');
		expect(() => matchExpression('  "" -- ')).toThrow(/at least one word/);
		expect(makeSnippet('a long text where Parser appears once', ['parser'])).toBe('a long text where [Parser] appears once');
	});
});

describe('the index thread', () => {
	it('builds the index and answers a query off the main thread', async () => {
		const {startIndexWorker} = await import('../../src/search/worker.js');
		const w = world([claudeAdapter]);
		w.store.close();
		const c = writeClaude(w.layout, w.layout.cwds[0], 'the threadbare quillwort note', 'ok');
		const warnings: string[] = [];
		const index = startIndexWorker({stateDir: w.stateDir, home: w.layout.home, ownHome: false, env: {}, tmpDir: w.layout.base}, line => warnings.push(line));
		try {
			expect((await index.sync()).read).toBe(1);
			expect((await index.search('quillwort', {noSync: true})).map(h => h.id)).toEqual([c.id]);
		} finally {
			await index.close();
		}
		expect(warnings).toEqual([]);
		await expect(index.search('quillwort', {noSync: true})).rejects.toThrow(/closed/);
	});

	it('is started again without its heap limit when it runs out, and answers the same jobs', async () => {
		const {startIndexWorker} = await import('../../src/search/worker.js');
		const w = world([claudeAdapter]);
		w.store.close();
		const c = writeClaude(w.layout, w.layout.cwds[0], 'the overgrown hornwort note', 'ok');
		const warnings: string[] = [];
		// 1 MB of old generation: the thread cannot even load its modules.
		const setup = {stateDir: w.stateDir, home: w.layout.home, ownHome: false, env: {}, tmpDir: w.layout.base, heapLimitMb: 1};
		const index = startIndexWorker(setup, line => warnings.push(line));
		try {
			expect((await index.sync()).read).toBe(1);
			expect((await index.search('hornwort', {noSync: true})).map(h => h.id)).toEqual([c.id]);
		} finally {
			await index.close();
		}
		expect(warnings).toEqual(['search index thread ran out of its heap limit: started again without it']);
	});
});

describe('the conversations view with message search', () => {
	it('shows conversations the index found for the current text, and only for that text', async () => {
		const {visibleConversations, textSnippet} = await import('../../src/store/conversations.js');
		const {initialState, initialUi} = await import('../../src/store/state.js');
		const conv = (id: string, title: string) => ({
			agent: 'claude' as const,
			id,
			cwd: '/p',
			createdAt: 1,
			updatedAt: 1,
			title,
			childCount: 0,
			resumeState: {kind: 'yes' as const},
		});
		const a = conv('a', 'tidy the parser');
		const b = conv('b', 'unrelated title');
		const snippets = new Map([['claude:b', 'the [kumquat] in the body']]);
		const base = initialState({conversations: [a, b], ui: {...initialUi, conversationFilter: 'kumquat'}});
		expect(visibleConversations(base).map(c => c.id)).toEqual([]);
		const found = {...base, textHits: {query: 'kumquat', snippets}};
		expect(visibleConversations(found).map(c => c.id)).toEqual(['b']);
		expect(textSnippet(found, b)).toBe('the [kumquat] in the body');
		// A late answer for other text counts for nothing.
		const stale = {...found, ui: {...found.ui, conversationFilter: 'parser'}};
		expect(visibleConversations(stale).map(c => c.id)).toEqual(['a']);
		expect(textSnippet(stale, b)).toBeUndefined();
	});

	it('with H, lists the sub-agent and headless conversations the index found, and only for an answer asked with H', async () => {
		const {visibleConversations} = await import('../../src/store/conversations.js');
		const {reducer} = await import('../../src/store/reducer.js');
		const {initialState, initialUi} = await import('../../src/store/state.js');
		const {resolveCommand} = await import('../../components/input/keymap.js');
		expect(resolveCommand('conversations', 'H', {})).toBe('conversations.all');
		const conv = (id: string, title: string, parentId?: string) => ({
			agent: 'claude' as const,
			id,
			cwd: '/p',
			createdAt: 1,
			updatedAt: 1,
			title,
			childCount: 0,
			resumeState: {kind: 'yes' as const},
			...(parentId ? {parentId} : {}),
		});
		const a = conv('a', 'the lychee plan');
		const child = conv('k', 'a sub-agent', 'a');
		const base = initialState({conversations: [a], ui: {...initialUi, mode: 'conversations', conversationFilter: 'lychee'}});
		const withAll = reducer(base, {type: 'conversations/toggleAll'});
		expect(withAll.ui.conversationsAll).toBe(true);
		// An answer asked without H does not count once H is on, nor the other way round.
		const plain = reducer(withAll, {type: 'conversations/textHits', query: 'lychee', snippets: new Map([['claude:a', 's']])});
		expect(visibleConversations(plain).map(c => c.id)).toEqual(['a']);
		const found = reducer(withAll, {
			type: 'conversations/textHits',
			query: 'lychee',
			snippets: new Map([
				['claude:a', 's'],
				['claude:k', 't'],
			]),
			all: true,
			hidden: [child],
		});
		expect(visibleConversations(found).map(c => c.id)).toEqual(['a', 'k']);
		const off = reducer(found, {type: 'conversations/toggleAll'});
		expect(visibleConversations(off).map(c => c.id)).toEqual(['a']);
	});
});
