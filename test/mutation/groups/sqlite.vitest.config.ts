import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {defineConfig} from 'vitest/config';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The tests Stryker runs against the mutants of group `sqlite` (sqlite.stryker.mjs). */
// vitest finds its config by the default export.
// eslint-disable-next-line no-restricted-syntax
export default defineConfig({
	test: {
		root,
		include: ['test/adapters/{sqliteRead,common,purgeRows,purgeHelpers}.test.ts'],
		testTimeout: 30_000,
		hookTimeout: 60_000,
		pool: 'forks',
	},
});
