import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {defineConfig} from 'vitest/config';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The real-agent suite (`npm run test:real`): only test/real, generous timeouts (a real TUI
 * takes seconds to start and to answer), and at most two files at once on this 2-core machine.
 * The CLIs are installed (or their install checked) once, before any file runs.
 */
// vitest finds its config by the default export.
// eslint-disable-next-line no-restricted-syntax
export default defineConfig({
	test: {
		root,
		include: ['test/real/**/*.test.ts'],
		globalSetup: ['test/real/support/globalSetup.ts'],
		testTimeout: 240_000,
		hookTimeout: 600_000,
		teardownTimeout: 60_000,
		fileParallelism: true,
		maxWorkers: 2,
		pool: 'forks',
	},
});
