// `npm run bench -- --only search`: the search index on the bench world (issue 29). Measured in
// this process: building the index from nothing, its size against the transcripts it covers, an
// appended message becoming searchable, query latency, and what came first for ten queries.
import fs from 'node:fs';
import path from 'node:path';
import {ADAPTERS} from '../../src/adapters/index.js';
import {ParseCache} from '../../src/adapters/common/refresh.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import {realExec} from '../../src/system/exec.js';
import {createProcessTable} from '../../src/system/processes.js';
import {openSearchStore, searchConversations, syncIndex} from '../../src/search/index.js';
import {Registry} from '../../src/registry/registry.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {startTextSearch} from '../../src/ui/textSearch.js';
import {startIndexWorker} from '../../src/search/worker.js';
import {sleep, summarize} from './stats.js';
import type {BenchWorld} from './world.js';

export interface SearchLine {
	readonly metric: string;
	readonly value: string;
	readonly target: string;
	readonly pass: boolean | null;
	readonly detail?: string;
}

/** Bytes of every file under `dir` (the agents' stores: transcripts, chat files, databases). */
function bytesUnder(dir: string): number {
	let total = 0;
	for (const entry of fs.readdirSync(dir, {withFileTypes: true, recursive: true})) {
		if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
	}
	return total;
}

const QUERIES = ['flaky test', 'parser', 'json flag', 'stack trace', 'README', 'build', 'stand-in model', 'hello', 'subagent', 'refactor'];

const quietLogger = {debug: () => {}, info: () => {}, warn: () => {}, error: () => {}};

/**
 * The dashboard while its index builds from nothing: the real App rendered to a fake terminal,
 * the background build (src/ui/textSearch.ts) running in the same event loop, keys pressed
 * through it. RSS is sampled over the run (the bench's own world data is in it too).
 */
async function keysWhileBuilding(
	world: BenchWorld,
	presses: number,
): Promise<{keys: ReturnType<typeof summarize>; rssBaseMb: number; rssPeakMb: number; built: boolean}> {
	const {measureKeys} = await import('./inProcess.js');
	world.writeRegistry(() => undefined);
	const registry = Registry.open(world.registryPath);
	const store = createStore(reducer, initialState({sessions: registry.list(), lastRefresh: Date.now()}));
	registry.close();
	const stateDir = path.join(world.base, 'search-dashboard');
	const rssBaseMb = process.memoryUsage().rss / 1e6;
	let rssPeakMb = rssBaseMb;
	const sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, process.memoryUsage().rss / 1e6)), 50);
	const stop = startTextSearch({
		store,
		startIndex: () => startIndexWorker({stateDir, home: world.home, ownHome: false, env: {}, tmpDir: world.base}, () => {}),
		logger: quietLogger,
	});
	try {
		// The build starts when the conversations view first opens; back on the sessions list, the
		// keys are pressed while it runs.
		store.dispatch({type: 'mode/set', mode: 'conversations'});
		store.dispatch({type: 'mode/set', mode: 'sessions'});
		await sleep(500);
		const keys = await measureKeys(store, world.home, presses, {columns: 100, rows: 24});
		const check = openSearchStore(stateDir);
		const built = check.all().length >= world.conversations.length * 0.9;
		check.close();
		return {keys, rssBaseMb, rssPeakMb, built};
	} finally {
		clearInterval(sampler);
		stop();
		await sleep(200);
	}
}

export async function measureSearch(world: BenchWorld, log: (line: string) => void): Promise<{lines: SearchLine[]; quality: string}> {
	const context: AdapterContext = {
		home: world.home,
		ownHome: false,
		env: {},
		exec: realExec,
		processes: createProcessTable(),
		now: Date.now,
		tmpDir: world.base,
		parses: new ParseCache(),
	};
	const stateDir = path.join(world.base, 'search-state');
	const store = openSearchStore(stateDir);
	const deps = {context, adapters: Object.values(ADAPTERS), store};
	const covered = bytesUnder(world.home);
	const rssBefore = process.memoryUsage().rss;
	const started = performance.now();
	const stats = await syncIndex(deps);
	const buildMs = performance.now() - started;
	const rssAfter = process.memoryUsage().rss;
	store.compact();
	const size = store.size();
	const mbps = covered / 1e6 / (buildMs / 1000);
	log(
		`index: ${stats.conversations} conversations, ${stats.messages} messages in ${(buildMs / 1000).toFixed(1)} s; ${(size / 1e6).toFixed(1)} MB for ${(covered / 1e6).toFixed(1)} MB`,
	);
	const lines: SearchLine[] = [
		{
			metric: `search index build from nothing (${stats.conversations} conversations, ${(covered / 1e6).toFixed(0)} MB under HOME)`,
			value: `${mbps.toFixed(1)} MB/s`,
			target: '≥ 50 MB/s',
			pass: mbps >= 50,
			detail: `${(buildMs / 1000).toFixed(1)} s, RSS +${((rssAfter - rssBefore) / 1e6).toFixed(0)} MB`,
		},
		{
			metric: 'search index size / transcript bytes covered',
			value: `${((size / covered) * 100).toFixed(1)} %`,
			target: '≤ 15 %',
			pass: size / covered <= 0.15,
			detail: `${(size / 1e6).toFixed(1)} MB`,
		},
	];
	// One appended message: write → the watch's conversation synced → a query finds it.
	const claude = world.conversations.filter(c => c.agent === 'claude' && c.file && !c.parentId).slice(0, 20);
	const appendMs: number[] = [];
	for (const [i, c] of claude.entries()) {
		const word = `benchword${i}zq`;
		const t0 = performance.now();
		fs.appendFileSync(
			c.file ?? '',
			`${JSON.stringify({type: 'user', isSidechain: false, message: {role: 'user', content: `please look at ${word}`}, timestamp: new Date().toISOString(), cwd: c.cwd, sessionId: c.id})}\n`,
		);
		await syncIndex(deps, [
			{agent: c.agent, id: c.id, cwd: c.cwd, createdAt: c.createdAt, updatedAt: Date.now() + i, childCount: 0, resumeState: {kind: 'yes'}},
		]);
		const hits = await searchConversations(deps, word, {noSync: true, all: true});
		if (hits[0]?.id !== c.id) throw new Error(`appended ${word} not found`);
		appendMs.push(performance.now() - t0);
	}
	const append = summarize(appendMs);
	lines.push({
		metric: 'appended message searchable (write → sync of that conversation → hit)',
		value: `p50 ${append.median.toFixed(1)} ms, p95 ${append.p95.toFixed(1)} ms`,
		target: '≤ 50 ms',
		pass: append.p95 <= 50,
		detail: `n=${append.n}`,
	});
	const queryMs: number[] = [];
	for (let round = 0; round < 10; round++) {
		for (const q of QUERIES) {
			const t0 = performance.now();
			await searchConversations(deps, q, {noSync: true, all: true});
			queryMs.push(performance.now() - t0);
		}
	}
	const query = summarize(queryMs);
	lines.push({
		metric: 'query (ranked, snippets, each hit re-read at its source)',
		value: `p50 ${query.median.toFixed(1)} ms, p95 ${query.p95.toFixed(1)} ms`,
		target: 'p95 ≤ 30 ms',
		pass: query.p95 <= 30,
		detail: `n=${query.n}`,
	});
	const quality: string[] = ['search quality on the bench world (--all; first hit of each query):'];
	for (const q of QUERIES) {
		const hits = await searchConversations(deps, q, {noSync: true, all: true, limit: 3});
		const top = hits[0];
		quality.push(
			`  ${JSON.stringify(q).padEnd(18)} ${hits.length} shown; first: ${top ? `${top.agent} ${top.id.slice(0, 12)} score ${top.score} "${top.snippet.slice(0, 70)}"` : '—'}`,
		);
	}
	store.close();
	const during = await keysWhileBuilding(world, 120);
	log(`keys while building: index ${during.built ? 'finished during the presses' : 'still building after the presses'}`);
	lines.push({
		metric: 'key latency while the index builds (100×24, in process)',
		value: `p50 ${during.keys.median.toFixed(1)} ms, p95 ${during.keys.p95.toFixed(1)} ms`,
		target: 'p95 ≤ 16 ms',
		pass: during.keys.p95 <= 16,
		detail: `n=${during.keys.n}`,
	});
	lines.push({
		metric: 'RSS while the index builds (bench process, world data included)',
		value: `peak ${during.rssPeakMb.toFixed(0)} MB (before ${during.rssBaseMb.toFixed(0)} MB)`,
		target: '≤ 200 MB',
		pass: during.rssPeakMb <= 200,
	});
	return {lines, quality: quality.join('\n')};
}
