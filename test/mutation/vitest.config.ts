import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {defineConfig} from 'vitest/config';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The tests of a single Stryker run over the whole safety core (`npx stryker run`; the groups of
 * `npm run test:mutation` each have their own, narrower set).
 * Only in-process tests that reach those modules: a test that spawns the built CLI
 * (dist/bin/cli.js) runs unmutated code and could never kill a mutant, and the tmux,
 * e2e and real suites would make one run take hours on this 2-core machine.
 */
// vitest finds its config by the default export.
// eslint-disable-next-line no-restricted-syntax
export default defineConfig({
	test: {
		root,
		include: [
			// Not contract.test.ts (190 tests over every adapter: half a minute for every mutant of
			// the shared helpers), nor the sqlite-heavy agy, grok, hermes and opencode files (each
			// covers the same helpers for seconds per mutant); claude, codex and gemini reach the
			// helpers in about a second; the rules files test the shared helpers directly.
			'test/adapters/{adapterHelpers,claude,codex,common,gemini,ids,inUseRules,liveEvidence,purgeHelpers,sqliteRead}.test.ts',
			'test/actions/purge.test.ts',
			'test/actions/purgeGeminiStub.test.ts',
			'test/actions/purgeTrash.test.ts',
			'test/actions/stopSteps.test.ts',
			'test/actions/stopSequence.test.ts',
			'test/registry/{compareAndSet,registry}.test.ts',
			'test/sync/conversationUse.test.ts',
		],
		testTimeout: 30_000,
		hookTimeout: 60_000,
		pool: 'forks',
	},
});
