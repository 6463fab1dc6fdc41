import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {ActionDeps} from '../../../src/actions/types.js';
import type {AdapterContext, AgentAdapter} from '../../../src/adapters/types.js';
import {DEFAULT_CONFIG, type Config} from '../../../src/config/config.js';
import type {Multiplexer} from '../../../src/mux/types.js';
import {Registry} from '../../../src/registry/registry.js';
import {realExec} from '../../../src/system/exec.js';
import {createProcessTable} from '../../../src/system/processes.js';
import {createFixtureAdapter} from './fixtureAdapter.js';

/** A private world for one test: temp dir, home, project folder, registry, fixture adapter. */
export interface TestWorld {
	readonly dir: string;
	readonly home: string;
	readonly project: string;
	readonly binDir: string;
	readonly registry: Registry;
	readonly adapter: AgentAdapter;
	readonly context: AdapterContext;
	deps(mux: Multiplexer | undefined, overrides?: Partial<ActionDeps> & {config?: Config}): ActionDeps;
	dispose(): void;
}

export function createTestWorld(prefix = 'mam-actions-'): TestWorld {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	const home = path.join(dir, 'home');
	const project = path.join(dir, 'project');
	const binDir = path.join(dir, 'bin');
	for (const d of [home, project, binDir]) fs.mkdirSync(d, {recursive: true});
	const registry = Registry.open(path.join(dir, 'registry.db'));
	const adapter = createFixtureAdapter();
	const processes = createProcessTable();
	const context: AdapterContext = {
		home,
		ownHome: false,
		env: {PATH: `${binDir}:${process.env['PATH'] ?? '/usr/bin:/bin'}`},
		exec: (file, args, options) => realExec(file, args, {...options, env: {PATH: `${binDir}:${process.env['PATH'] ?? ''}`, ...options?.env}}),
		processes,
		now: Date.now,
		tmpDir: dir,
	};
	return {
		dir,
		home,
		project,
		binDir,
		registry,
		adapter,
		context,
		deps(mux, overrides = {}) {
			return {
				registry,
				mux: async () => {
					if (!mux) throw new Error('this test has no multiplexer');
					return mux;
				},
				adapterFor: agent => (agent === 'claude' ? adapter : undefined),
				context,
				processes,
				config: DEFAULT_CONFIG,
				now: Date.now,
				...overrides,
			};
		},
		dispose() {
			registry.close();
			fs.rmSync(dir, {recursive: true, force: true});
		},
	};
}
