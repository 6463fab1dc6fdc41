import type {AgentId} from '../domain/types.js';
import {agyAdapter} from './agy.js';
import {claudeAdapter} from './claude.js';
import {codexAdapter} from './codex.js';
import {geminiAdapter} from './gemini.js';
import {grokAdapter} from './grok.js';
import {hermesAdapter} from './hermes.js';
import {opencodeAdapter} from './opencode.js';
import type {AgentAdapter} from './types.js';

/** Every agent's adapter. `satisfies` makes a missing agent a compile error; there is no fallback. */
export const ADAPTERS = {
	claude: claudeAdapter,
	codex: codexAdapter,
	opencode: opencodeAdapter,
	agy: agyAdapter,
	hermes: hermesAdapter,
	grok: grokAdapter,
	gemini: geminiAdapter,
} as const satisfies Record<AgentId, AgentAdapter>;

/** The adapter for `agent`, or undefined for a name this build does not know (never a default). */
export function adapterFor(agent: string): AgentAdapter | undefined {
	return Object.hasOwn(ADAPTERS, agent) ? ADAPTERS[agent as AgentId] : undefined;
}
