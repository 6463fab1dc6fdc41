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

/** A thread running indexWorker, from compiled JavaScript, or from TypeScript (tests, `npm run dev`) through tsx. */
function spawnThread(setup: WorkerSetup): Worker {
	configureSqliteHere();
	// No limit on the old generation: at 64 MB a build of 20,000 conversations spent three times
	// as long collecting (its discovery lists are live for the whole build), and a larger history
	// would run out. The young one is kept small: a build makes garbage by the file (each
	// transcript read, parsed and dropped), and V8's default nursery of up to 48 MB added as much
	// to the peak RSS (a process building the bench world's index: 180 MB, 151 MB with 4) for no CPU saved.
	const options = {workerData: setup, resourceLimits: {maxYoungGenerationSizeMb: 4}};
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
	const thread = spawnThread(setup);
	// The dashboard may quit while a build runs: the thread never keeps the process alive.
	thread.unref();
	let next = 0;
	const waiting = new Map<number, {resolve: (value: unknown) => void; reject: (error: Error) => void}>();
	const failAll = (error: Error) => {
		for (const w of waiting.values()) w.reject(error);
		waiting.clear();
	};
	thread.on('message', (reply: WorkerReply) => {
		if (reply.kind === 'warn') return warn(reply.line);
		const w = waiting.get(reply.id);
		waiting.delete(reply.id);
		if (reply.kind === 'done') w?.resolve(reply.value);
		else w?.reject(new Error(reply.message));
	});
	thread.on('error', error => failAll(error));
	thread.on('exit', code => failAll(new Error(`search index thread exited (${code})`)));
	let ended = false;
	const ask = <T>(request: Job): Promise<T> => {
		if (ended) return Promise.reject(new Error('search index thread closed'));
		const id = next++;
		return new Promise<T>((resolve, reject) => {
			waiting.set(id, {resolve: resolve as (value: unknown) => void, reject});
			thread.postMessage({...request, id});
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
