// The search index's own thread (a worker_thread started by worker.ts's startIndexWorker): it
// opens `$MAM_HOME/search.db`, reads the agents' files into it and answers queries, so a build
// of thousands of conversations never holds the dashboard's event loop. Jobs run one at a time,
// in the order they came.
import os from 'node:os';
import {parentPort, workerData} from 'node:worker_threads';
import {ADAPTERS} from '../adapters/index.js';
import type {AdapterContext} from '../adapters/types.js';
import {messageOf} from '../domain/result.js';
import {realExec} from '../system/exec.js';
import {createProcessTable} from '../system/processes.js';
import {openSearchStore} from './index.js';
import {searchConversations, syncIndex} from './search.js';
import type {SearchStore} from './store.js';
import type {WorkerReply, WorkerRequest, WorkerSetup} from './worker.js';

function serve(setup: WorkerSetup, port: NonNullable<typeof parentPort>): void {
	const context: AdapterContext = {
		home: setup.home,
		ownHome: setup.ownHome,
		env: setup.env,
		exec: realExec,
		processes: createProcessTable(),
		now: Date.now,
		tmpDir: setup.tmpDir,
	};
	let store: SearchStore | undefined;
	const post = (reply: WorkerReply) => port.postMessage(reply);
	const deps = (s: SearchStore) => ({context, adapters: Object.values(ADAPTERS), store: s, warn: (line: string) => post({kind: 'warn', line})});
	let queue: Promise<void> = Promise.resolve();
	port.on('message', (request: WorkerRequest) => {
		queue = queue.then(async () => {
			try {
				store ??= openSearchStore(setup.stateDir);
				if (request.kind === 'close') {
					store.close();
					post({kind: 'done', id: request.id, value: null});
					port.close();
					return;
				}
				const value =
					request.kind === 'usage'
						? store.usages()
						: request.kind === 'sync'
							? await syncIndex(deps(store), request.only)
							: await searchConversations(deps(store), request.query, request.options);
				post({kind: 'done', id: request.id, value});
			} catch (error) {
				post({kind: 'failed', id: request.id, message: messageOf(error)});
			}
		});
	});
}

/**
 * On Linux a nice value belongs to a thread, and setpriority(0) names the calling one: the build
 * then takes only what the dashboard's thread leaves (2 cores, agents and their panes besides).
 * Elsewhere it would lower the whole process, so it is left alone.
 */
function yieldCpuToTheDashboard(): void {
	if (process.platform !== 'linux') return;
	try {
		os.setPriority(0, 19);
	} catch {
		// not allowed here: the build runs at the dashboard's priority
	}
}

if (parentPort) {
	yieldCpuToTheDashboard();
	serve(workerData as WorkerSetup, parentPort);
}
