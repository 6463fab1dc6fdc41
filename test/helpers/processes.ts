import type {ProcessRef} from '../../src/domain/types.js';
import {createProcessTable, processTree, type ProcessTable} from '../../src/system/processes.js';

/**
 * The real process table, seen only through this test process and what it started: the
 * in-use rule reads every process of the machine, and on a shared machine another run's
 * `claude` stand-in (one whose folder cannot be read "could be on any conversation") would
 * otherwise become a holder of every fixture conversation. The holders a test spawns are
 * its children, so every process a test means is still seen, with its real argv, cwd and fds.
 */
export function ownProcessTable(root = process.pid, base: ProcessTable = createProcessTable()): ProcessTable {
	const ours = async (): Promise<readonly ProcessRef[]> => processTree(await base.list(), root);
	const ourPids = async () => new Set((await ours()).map(p => p.pid));
	const table: ProcessTable = {
		list: ours,
		async get(pid) {
			return (await ourPids()).has(pid) ? base.get(pid) : undefined;
		},
		async holders(paths) {
			const pids = await ourPids();
			return (await base.holders(paths)).filter(h => pids.has(h.pid));
		},
	};
	const openFiles = base.openFiles?.bind(base);
	if (openFiles) {
		table.openFiles = async () => {
			const pids = await ourPids();
			return (await openFiles()).filter(f => pids.has(f.pid));
		};
	}
	const openFilesOfPids = base.openFilesOfPids?.bind(base);
	if (openFilesOfPids) {
		table.openFilesOfPids = async wanted => {
			const pids = await ourPids();
			return openFilesOfPids(wanted.filter(pid => pids.has(pid)));
		};
	}
	const openFilesKept = base.openFilesKept?.bind(base);
	if (openFilesKept) {
		table.openFilesKept = async () => {
			const pids = await ourPids();
			return (await openFilesKept()).filter(f => pids.has(f.pid));
		};
	}
	return table;
}
