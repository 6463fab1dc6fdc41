import path from 'node:path';
import type {AgentId, ProcessRef} from '../domain/types.js';
import {assertValidId, type AgentAdapter, type ExitInput} from './types.js';

interface StubSpec {
	readonly id: AgentId;
	readonly label: string;
	readonly idPattern: RegExp;
	readonly processNames: readonly string[];
	readonly exitInput: ExitInput;
	readonly resumeArgv: (id: string) => readonly string[];
}

/** The basenames `argvNames` compares, once per process: a listing asks every adapter about every pane's processes. */
const candidatesOf = new WeakMap<ProcessRef, readonly string[]>();

/** True when argv[0] (or the script a runtime runs) has one of `names` as basename. */
export function argvNames(proc: ProcessRef, names: readonly string[]): boolean {
	let candidates = candidatesOf.get(proc);
	if (!candidates) {
		candidates = [proc.name, ...proc.argv.slice(0, 2)].map(a => path.basename(a ?? ''));
		candidatesOf.set(proc, candidates);
	}
	return candidates.some(c => names.includes(c));
}

/**
 * A placeholder adapter that knows the agent's id pattern, argv and exit input but finds
 * nothing on disk. Replaced agent by agent; it never deletes anything.
 */
export function stubAdapter(spec: StubSpec): AgentAdapter {
	const adapter: AgentAdapter = {
		id: spec.id,
		label: spec.label,
		capabilities: {resume: true, purge: false},
		idPattern: spec.idPattern,
		processNames: spec.processNames,
		residentChildren: [],
		exitInput: spec.exitInput,
		spawn: () => ({argv: [spec.processNames[0] ?? spec.id]}),
		resume: (_ctx, id) => {
			assertValidId(adapter, id);
			return {argv: spec.resumeArgv(id)};
		},
		matchesProcess: proc => argvNames(proc, spec.processNames),
		discover: async () => ({conversations: [], problems: []}),
		verify: async (_ctx, id) => {
			assertValidId(adapter, id);
			return {kind: 'unknown', reason: `${spec.label} discovery is not implemented yet`};
		},
		artifacts: async (_ctx, id) => {
			assertValidId(adapter, id);
			return {agent: spec.id, id, descendants: [], items: [], totalBytes: 0};
		},
		purge: async (_ctx, id) => {
			assertValidId(adapter, id);
			return {removed: [], warnings: [`${spec.label} purge is not implemented yet`]};
		},
		residual: async (_ctx, id) => {
			assertValidId(adapter, id);
			return [];
		},
		inUse: async (_ctx, id) => {
			assertValidId(adapter, id);
			return [];
		},
	};
	return adapter;
}
