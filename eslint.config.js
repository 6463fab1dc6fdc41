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

export default tseslint.config(
	{ignores: ['dist/**', 'node_modules/**', 'bench-results.json']},
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
			'no-restricted-syntax': [
				'error',
				{selector: 'ExportDefaultDeclaration', message: 'Use named exports.'},
			],
		},
	},
	{
		files: ['src/**/*.ts', 'src/**/*.tsx', 'components/**/*.ts', 'components/**/*.tsx'],
		rules: {'no-console': 'error'},
	},
	{
		files: ['components/**'],
		rules: {
			'no-restricted-imports': [
				'error',
				{paths: ioModules.map(name => ({name, message: 'Components render; I/O lives in src/.'}))},
			],
		},
	},
	{
		files: ['src/**'],
		ignores: ['src/main.tsx'],
		rules: {
			'no-restricted-imports': [
				'error',
				{
					paths: [
						{name: 'react', message: 'Only src/main.tsx may import React.'},
						{name: 'ink', message: 'Only src/main.tsx may import Ink.'},
					],
					patterns: [{group: ['**/components/**'], message: 'Only src/main.tsx may import components.'}],
				},
			],
		},
	},
	{
		files: ['src/adapters/**'],
		rules: {
			'no-restricted-imports': [
				'error',
				{
					paths: [
						{name: 'node:os', message: 'Adapters get home from ctx.home.'},
						{name: 'os', message: 'Adapters get home from ctx.home.'},
						{name: 'execa', message: 'Adapters run commands through ctx.exec.'},
						{name: 'react', message: 'No React in src/.'},
						{name: 'ink', message: 'No Ink in src/.'},
					],
				},
			],
		},
	},
);
