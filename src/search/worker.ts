// Starting the index thread (indexWorker.ts) and talking to it: the dashboard's side. The
// thread's file is found beside this module's: in tsc's output (dist/src/search/) and in the
// bundle, where src/build/bundle.mjs writes it as dist/bin/indexWorker.js beside the chunks.
import {createRequire} from 'node:module';
import {pathToFileURL} from 'node:url';
import {Worker} from 'node:worker_threads';
import type {TokenUsage} from '../adapters/types.js';
import type {Conversation} from '../domain/types.js';
import {configureSqliteHere} from '../system/sqlite.js';
import type {SearchHit, SearchOptions, SyncStats} from './search.js';

/** What the thread needs to read the agents' files and open the index: plain data only. */
export interface WorkerSetup {
	readonly stateDir: string;
	readonly home: string;
	readonly ownHome: boolean;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly tmpDir: string;
	/** The thread's old-generation limit in MB (default `HEAP_LIMIT_MB`); tests pass a tiny one. */
	readonly heapLimitMb?: number;
}

export type WorkerRequest =
	| {readonly kind: 'sync'; readonly id: number; readonly only?: readonly Conversation[]}
	| {readonly kind: 'search'; readonly id: number; readonly query: string; readonly options: SearchOptions}
	| {readonly kind: 'usage'; readonly id: number}
	| {readonly kind: 'close'; readonly id: number};

/** A request before it is numbered. */
type Job = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id'> : never) : never;

export type WorkerReply =
	| {readonly kind: 'done'; readonly id: number; readonly value: unknown}
	| {readonly kind: 'failed'; readonly id: number; readonly message: string}
	| {readonly kind: 'warn'; readonly line: string};

/** The index, answered from its own thread. */
export interface IndexWorker {
	/** Bring the index up to date (every conversation, or only these). */
	sync(only?: readonly Conversation[]): Promise<SyncStats>;
	search(query: string, options: SearchOptions): Promise<SearchHit[]>;
	/** Every indexed conversation's tokens, by `agent:id`. */
	usage(): Promise<Map<string, TokenUsage>>;
	/** Finish the jobs sent, close the index, end the thread. */
	close(): Promise<void>;
}

/**
 * The old generation's limit. A build lists one agent at a time, and what stays live is one
 * agent's discovery (about 10 MB for the bench world's 5,900 claude conversations): without a
 * limit V8 let the heap grow to 60 MB before collecting (the thread added 85 MB to the
 * dashboard's RSS; 53 MB with this limit, for about 50 ms more of full collections on a build of
 * 3-4 CPU seconds: --trace-gc, loaded machine). A larger history can run out: the
 * thread is then started again without the limit (`startIndexWorker`).
 */
const HEAP_LIMIT_MB = 48;

/** A thread running indexWorker, from compiled JavaScript, or from TypeScript (tests, `npm run dev`) through tsx. */
function spawnThread(setup: WorkerSetup, limited: boolean): Worker {
	configureSqliteHere();
	// The young generation is kept small: a build makes garbage by the file (each transcript
	// read, parsed and dropped), and V8's default nursery of up to 48 MB added as much to the
	// peak RSS (a process building the bench world's index: 180 MB, 151 MB with 4) for no CPU saved.
	const old = limited ? {maxOldGenerationSizeMb: setup.heapLimitMb ?? HEAP_LIMIT_MB} : {};
	const options = {workerData: setup, resourceLimits: {maxYoungGenerationSizeMb: 4, ...old}};
	const here = import.meta.url;
	if (!here.endsWith('.ts')) return new Worker(new URL('./indexWorker.js', here), options);
	// A worker ignores the parent's loader hooks: it registers tsx itself, then loads the source.
	const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm/api')).href;
	const entry = new URL('./indexWorker.ts', here).href;
	return new Worker(`import(${JSON.stringify(tsx)}).then(t => (t.register ?? t.default.register)()).then(() => import(${JSON.stringify(entry)}))`, {
		...options,
		eval: true,
	});
}

/** Start the index thread; `warn` gets its problem lines. */
export function startIndexWorker(setup: WorkerSetup, warn: (line: string) => void): IndexWorker {
	let next = 0;
	const waiting = new Map<number, {request: WorkerRequest; resolve: (value: unknown) => void; reject: (error: Error) => void}>();
	const failAll = (error: Error) => {
		for (const w of waiting.values()) w.reject(error);
		waiting.clear();
	};
	const start = (limited: boolean): Worker => {
		const started = spawnThread(setup, limited);
		// The dashboard may quit while a build runs: the thread never keeps the process alive.
		started.unref();
		started.on('message', (reply: WorkerReply) => {
			if (reply.kind === 'warn') return warn(reply.line);
			const w = waiting.get(reply.id);
			waiting.delete(reply.id);
			if (reply.kind === 'done') w?.resolve(reply.value);
			else w?.reject(new Error(reply.message));
		});
		started.on('error', error => {
			// Out of its limited heap (a history larger than the limit was made for): the same jobs
			// again, in a thread without the limit. What the first one committed stays in the index.
			if (limited && (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
				warn('search index thread ran out of its heap limit: started again without it');
				thread = start(false);
				for (const w of waiting.values()) thread.postMessage(w.request);
				return;
			}
			failAll(error);
		});
		started.on('exit', code => {
			if (started !== thread) return;
			// Later jobs fail at once rather than wait for a thread that is gone.
			exited = new Error(`search index thread exited (${code})`);
			failAll(exited);
		});
		return started;
	};
	let exited: Error | undefined;
	let thread = start(true);
	let ended = false;
	const ask = <T>(job: Job): Promise<T> => {
		if (ended) return Promise.reject(new Error('search index thread closed'));
		if (exited) return Promise.reject(exited);
		const request = {...job, id: next++} as WorkerRequest;
		return new Promise<T>((resolve, reject) => {
			waiting.set(request.id, {request, resolve: resolve as (value: unknown) => void, reject});
			thread.postMessage(request);
		});
	};
	return {
		sync: only => ask<SyncStats>({kind: 'sync', ...(only ? {only} : {})}),
		search: (query, options) => ask<SearchHit[]>({kind: 'search', query, options}),
		usage: async () => new Map(await ask<[string, TokenUsage][]>({kind: 'usage'})),
		async close() {
			if (ended) return;
			const done = ask<void>({kind: 'close'}).catch(() => undefined);
			ended = true;
			await done;
			await thread.terminate();
		},
	};
}
