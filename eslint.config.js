// Flat config. Layer rules (STYLE.md 3): components do no I/O; src/ (but the composition
// root) imports no React/Ink; adapters get their world injected.
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

const ioModules = [
	'execa',
	'ps-list',
	'better-sqlite3',
	'node:child_process',
	'child_process',
	'node:net',
	'net',
	'node:fs',
	'fs',
	'node:fs/promises',
	'fs/promises',
];

// The layers, bottom up (README "Where to change what"). A folder may import only the folders it
// lists: everything else under src/ is a layer above it (or beside it, where that would cycle).
// cli, demo, ui and the composition roots sit on top: cli > actions > sync > world > mux/registry/
// adapters/config > system/domain. drift and store are pure: no I/O module, no I/O layer.
const SRC_FOLDERS = [
	'actions',
	'adapters',
	'cli',
	'config',
	'demo',
	'domain',
	'drift',
	'mux',
	'registry',
	'remote',
	'search',
	'store',
	'sync',
	'system',
	'ui',
	'world',
];
const MAY_IMPORT = {
	domain: [],
	system: ['domain'],
	config: ['domain'],
	adapters: ['domain', 'system'],
	registry: ['domain', 'system'],
	mux: ['domain', 'system', 'adapters'],
	// Pure: the row codecs (registry/extra.ts) are pure too; adapters give the agents' pure knowledge.
	drift: ['domain', 'adapters', 'registry/extra'],
	// The row codecs are pure: the status bar sums what parks freed (extra.parked).
	store: ['domain', 'registry/extra'],
	world: ['domain', 'system', 'config', 'adapters', 'registry'],
	search: ['domain', 'system', 'adapters'],
	sync: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'store'],
	actions: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'world', 'sync'],
	ui: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'store', 'sync', 'actions', 'world'],
	demo: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'store', 'sync', 'actions', 'world'],
	// The wire to other machines: the serve (a headless dashboard) and the client; status's JSON shapes (sync/statusJson.ts) are the view.
	remote: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'store', 'sync', 'actions', 'world'],
	cli: ['domain', 'system', 'config', 'adapters', 'search', 'mux', 'registry', 'drift', 'store', 'sync', 'actions', 'world', 'demo', 'ui', 'remote'],
};
const PURE = new Set(['domain', 'drift', 'store']);

/** The ban every file under src/ (but the composition root) carries: a flat-config override replaces it, so each block repeats it. */
const srcBase = {
	paths: [
		{name: 'react', message: 'Only src/main.tsx may import React.'},
		{name: 'ink', message: 'Only src/main.tsx may import Ink.'},
	],
	patterns: [{group: ['**/components/**'], message: 'Only src/main.tsx may import components.'}],
};

const ioBans = message => ioModules.map(name => ({name, message}));

const NAMED_EXPORTS = {selector: 'ExportDefaultDeclaration', message: 'Use named exports.'};

// Issue 27: no module-level mutable state in product code. A cache or a flag lives in the object
// that owns its lifetime (the refresh, the drift memo, the store's memo, a listing, a connection);
// a module-level Map or Set is a constant, declared ReadonlyMap/ReadonlySet so nothing writes it.
const STATE_MESSAGE =
	'No module-level mutable state: keep it in the object that owns its lifetime (the refresh, a memo, the store). Constants are ReadonlyMap/ReadonlySet.';
const topLevel = ['Program > ', 'Program > ExportNamedDeclaration > '];
const moduleState = topLevel.flatMap(at => [
	{selector: `${at}VariableDeclaration[kind=/^(let|var)$/]`, message: STATE_MESSAGE},
	{
		selector: `${at}VariableDeclaration > VariableDeclarator > NewExpression[callee.name=/^(WeakMap|WeakSet|WeakRef|AsyncLocalStorage)$/]`,
		message: STATE_MESSAGE,
	},
	{
		selector: `${at}VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Map|Set)$/]) > NewExpression.init[callee.name=/^(Map|Set)$/]`,
		message: STATE_MESSAGE,
	},
]);
const moduleEnvWrites = {
	selector: "Program > ExpressionStatement > AssignmentExpression[left.object.object.name='process'][left.object.property.name='env']",
	message: 'No environment writes at import: set a variable for the length of the step that needs it (src/system/sqlite.ts).',
};

function upward(folder) {
	const allowed = MAY_IMPORT[folder];
	const banned = SRC_FOLDERS.filter(f => f !== folder && !allowed.includes(f));
	// A module a folder may import from a banned one (registry/extra for drift) is un-ignored.
	const exceptions = allowed.filter(a => a.includes('/')).map(a => `!**/${a}.js`);
	return banned.length === 0
		? []
		: [{group: [...banned.map(f => `**/${f}/**`), ...exceptions], message: `src/${folder} sits below these layers (eslint.config.js MAY_IMPORT).`}];
}

function layerBlocks() {
	const blocks = Object.keys(MAY_IMPORT).map(folder => ({
		files: [`src/${folder}/**`],
		rules: {
			'no-restricted-imports': [
				'error',
				{
					paths: [
						...srcBase.paths,
						...(PURE.has(folder) ? ioBans(`src/${folder} is pure: its I/O lives in src/sync or src/actions.`) : []),
						...(folder === 'adapters'
							? [
									{name: 'node:os', message: 'Adapters get home from ctx.home.'},
									{name: 'os', message: 'Adapters get home from ctx.home.'},
									{name: 'execa', message: 'Adapters run commands through ctx.exec.'},
								]
							: []),
					],
					patterns: [...srcBase.patterns, ...upward(folder)],
				},
			],
		},
	}));
	return [
		{files: ['src/**'], ignores: ['src/main.tsx'], rules: {'no-restricted-imports': ['error', srcBase]}},
		...blocks,
		{
			files: ['components/**'],
			rules: {
				'no-restricted-imports': [
					'error',
					{
						paths: ioBans('Components render; I/O lives in src/.'),
						patterns: [
							{
								group: SRC_FOLDERS.filter(f => f !== 'domain' && f !== 'store').map(f => `**/src/${f}/**`),
								message: 'Components read src/domain and src/store only; actions reach them through the store context.',
							},
						],
					},
				],
			},
		},
	];
}

export default tseslint.config(
	{ignores: ['dist/**', 'node_modules/**', 'bench-results.json', '.stryker-tmp/**', 'reports/**']},
	...tseslint.configs.recommended,
	{
		files: ['**/*.ts', '**/*.tsx'],
		languageOptions: {
			parserOptions: {
				projectService: {allowDefaultProject: ['eslint.config.js']},
				tsconfigRootDir: import.meta.dirname,
			},
		},
		plugins: {'react-hooks': reactHooks},
		rules: {
			'@typescript-eslint/no-floating-promises': 'error',
			'@typescript-eslint/switch-exhaustiveness-check': 'error',
			'@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
			'react-hooks/rules-of-hooks': 'error',
			'react-hooks/exhaustive-deps': 'error',
			'no-restricted-syntax': ['error', NAMED_EXPORTS],
		},
	},
	{
		files: ['src/**/*.ts', 'src/**/*.tsx', 'components/**/*.ts', 'components/**/*.tsx'],
		rules: {'no-console': 'error', 'no-restricted-syntax': ['error', NAMED_EXPORTS, ...moduleState, moduleEnvWrites]},
	},
	...layerBlocks(),
);
