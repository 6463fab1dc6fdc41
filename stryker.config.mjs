/**
 * Mutation testing of the safety core (issue 22 item 5). Stryker changes one expression at a time
 * in these files and runs the tests that cover it; a mutant no test notices is a rule nothing
 * checks. `npm run test:mutation` runs the groups of test/mutation/groups one after another, each
 * against the tests written for its files (one run over all files with every test took over an
 * hour on a 2-core machine); `npx stryker run` runs everything at once. Not in `npm test` or CI.
 */

// Stryker's vitest runner runs the tests in worker threads, where `process.env` is a copy: the
// `SQLITE_USE_URI` that src/system/sqliteUri.ts sets there never reaches the sqlite addon, and
// every trace-free `file:…?immutable=1` open would fail. Set it here, before the runners start.
process.env.SQLITE_USE_URI = '1';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const shared = {
	testRunner: 'vitest',
	// Only the tests that cover a mutant run against it.
	coverageAnalysis: 'perTest',
	// A static mutant (a module-level constant, run once at import) is covered by every test and
	// would rerun the whole set each time; the constants of these files are checked by reading.
	ignoreStatic: true,
	// Two cores shared with other work.
	concurrency: 2,
	// Reruns test only the mutants whose code or covering tests changed.
	incremental: true,
	reporters: ['clear-text', 'progress', 'html', 'json'],
	clearTextReporter: {allowColor: false, logTests: false, maxTestsToLog: 0},
	// The sandbox copy needs the sources and the tests, not the build or the docs.
	ignorePatterns: ['dist', 'docs', 'reports', 'bench-results.json'],
	thresholds: {high: 90, low: 85, break: null},
	// A mutant times out after (its tests' time without mutation) × timeoutFactor + timeoutMS. The
	// constant is large because the machine is shared: a test slowed by other work must not count
	// as a timeout (a mutant that loops still does, after 30 s more). The dry run of a group's
	// tests with coverage takes minutes when the cores are busy; Stryker's 5-minute default aborts it.
	timeoutMS: 30_000,
	timeoutFactor: 2,
	dryRunTimeoutMinutes: 30,
	tempDirName: '.stryker-tmp',
};

/** One group: its files, the tests in `test/mutation/groups/<name>.vitest.config.ts`, its own reports. */
export function group(name, mutate) {
	return {
		...shared,
		vitest: {configFile: `test/mutation/groups/${name}.vitest.config.ts`},
		mutate,
		incrementalFile: `reports/mutation/${name}.incremental.json`,
		htmlReporter: {fileName: `reports/mutation/${name}.html`},
		jsonReporter: {fileName: `reports/mutation/${name}.json`},
	};
}

export default {
	...shared,
	vitest: {configFile: 'test/mutation/vitest.config.ts'},
	mutate: [
		// Purge planning and deletion.
		'src/adapters/common/plan.ts',
		'src/adapters/common/purgeDb.ts',
		'src/adapters/common/sqlitePurge.ts',
		'src/adapters/common/rewrite.ts',
		'src/adapters/common/residual.ts',
		'src/actions/purge.ts',
		// In use.
		'src/adapters/common/inUse.ts',
		'src/adapters/common/liveEvidence.ts',
		'src/sync/conversationUse.ts',
		// Stop escalation.
		'src/actions/stopSteps.ts',
		'src/actions/stopSequence.ts',
		// Id validation: assertValidId (the rest of types.ts is types).
		'src/adapters/types.ts',
		// Trace-free sqlite reads.
		'src/system/sqliteRead.ts',
		// The registry's compare-and-set.
		'src/registry/registry.ts',
	],
	incrementalFile: 'reports/mutation/incremental.json',
	htmlReporter: {fileName: 'reports/mutation/index.html'},
	jsonReporter: {fileName: 'reports/mutation/index.json'},
};
