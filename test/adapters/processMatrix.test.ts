import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {AGENT_IDS, type AgentId, type ProcessRef} from '../../src/domain/types.js';

// The cross-agent matrix of the contract suite: every agent's process shapes, as measured
// (REAL.md "Processes"; the stand-ins as their launchers start them), against every adapter's
// `matchesProcess`. One program rule for all (common/programs.ts): the program word decides —
// argv[0], or the script a runtime runs — so an editor or a pager naming an agent is not it.

const ID = '0199a213-81c0-7800-8aa1-bbab2a035a53';
const BIN = '/root/.cache/mam-tui-real/cli/node_modules';

type Shape = Pick<ProcessRef, 'name' | 'argv'>;

const SHAPES: Record<AgentId, readonly Shape[]> = {
	claude: [
		{name: 'claude', argv: ['claude']},
		{name: 'claude', argv: [`${BIN}/.bin/claude`, '--resume', ID]},
		// The native build shows as claude.exe in ps, started by the name `claude`.
		{name: 'claude.exe', argv: ['claude', '--resume', ID]},
		{name: 'node', argv: ['node', `${BIN}/@anthropic-ai/claude-code/cli.js`, '--resume', ID]},
	],
	codex: [
		// The TUI: node running the launcher, and the native binary it starts.
		{name: 'node', argv: ['node', `${BIN}/.bin/codex`]},
		{name: 'codex', argv: [`${BIN}/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex`, 'resume', ID]},
		{name: 'codex-linux-x8', argv: ['/usr/local/bin/codex-linux-x86_64']},
		// Its daemon is a codex process too (inUse tells the service apart).
		{name: 'codex', argv: ['/root/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex', 'app-server', '--listen', 'unix://']},
	],
	opencode: [
		{name: 'opencode', argv: ['opencode']},
		{name: 'opencode', argv: [`${BIN}/.bin/opencode`, '--session', 'ses_1a2b3c']},
	],
	gemini: [
		// The wrapper and its child, both comm `node`.
		{name: 'node', argv: ['node', `${BIN}/.bin/gemini`]},
		{name: 'node', argv: ['/usr/bin/node', '--max-old-space-size=12052', `${BIN}/.bin/gemini`, '--resume', ID]},
	],
	agy: [
		{name: 'agy', argv: ['/usr/local/bin/agy', '--conversation', ID]},
		{name: 'antigravity', argv: ['antigravity']},
	],
	hermes: [{name: 'python3', argv: ['/usr/bin/python3', '/home/u/.local/bin/hermes', '--resume', ID]}],
	grok: [
		{name: 'grok', argv: ['grok']},
		{name: 'node', argv: ['node', `${BIN}/.bin/grok`]},
	],
};

/** What users run beside their agents, naming one: none of these is the agent. */
const NOT_AGENTS = (name: string): readonly Shape[] => [
	...['vim', 'nvim', 'vi', 'nano', 'emacs', 'less', 'more', 'cat', 'head', 'bat', 'code'].map(editor => ({name: editor, argv: [editor, name]})),
	{name: 'vim', argv: ['/usr/bin/vim', `/home/u/bin/${name}`]},
	{name: 'tail', argv: ['tail', '-f', name]},
	{name: 'grep', argv: ['grep', '-r', name, '.']},
	{name: 'node', argv: ['node', '/opt/mam/dist/src/cli.js', 'stop', name]},
	{name: 'bash', argv: ['bash', '-c', `${name} --resume ${ID}`]},
];

const asProc = (shape: Shape): ProcessRef => ({pid: 100, ppid: 1, startTime: 1, ...shape});

describe('which adapter a process belongs to (every agent × every adapter)', () => {
	describe.each(AGENT_IDS.map(agent => ({agent})))('a $agent process', ({agent}) => {
		it.each(SHAPES[agent].map(shape => ({shape, text: shape.argv.join(' ')})))('$text is $agent and no other agent', ({shape}) => {
			const claimed = AGENT_IDS.filter(a => ADAPTERS[a].matchesProcess(asProc(shape)));
			expect(claimed).toEqual([agent]);
		});
	});

	describe.each(AGENT_IDS.map(agent => ({agent})))('a program naming $agent in an argument', ({agent}) => {
		const names = [agent, ...ADAPTERS[agent].processNames];
		it.each([...new Set(names)].flatMap(NOT_AGENTS).map(shape => ({shape, text: shape.argv.join(' ')})))('$text is no agent', ({shape}) => {
			expect(AGENT_IDS.filter(a => ADAPTERS[a].matchesProcess(asProc(shape)))).toEqual([]);
		});
	});
});
