import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import type {TokenUsage} from '../adapters/types.js';
import {AGENT_IDS, isAgentId} from '../domain/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {messageOf} from '../domain/result.js';
import {openSearchStore, parseSince, searchConversations, type SearchHit} from '../search/index.js';
import {usageLine} from '../domain/usage.js';
import type {Command} from './commands.js';
import {errOut, out, outJson, shortPath, table} from './output.js';

/** The stable shape of `mam-tui search --json` (fields may be added). */
export interface SearchJson {
	readonly hits: readonly SearchHitJson[];
}

export interface SearchHitJson {
	readonly agent: string;
	readonly id: string;
	readonly cwd: string;
	readonly title: string;
	readonly snippet: string;
	readonly score: number;
	/** ISO time. */
	readonly updatedAt: string;
	/** Tokens from the agent's own records; null when it records none (unknown, never 0). */
	readonly usage: TokenUsage | null;
}

function toJson(hit: SearchHit): SearchHitJson {
	return {
		agent: hit.agent,
		id: hit.id,
		cwd: hit.cwd,
		title: hit.title,
		snippet: hit.snippet,
		score: hit.score,
		updatedAt: new Date(hit.updatedAt).toISOString(),
		usage: hit.usage ?? null,
	};
}

export const searchCommand: Command = {
	name: 'search',
	summary: "find conversations by the words in their messages (every agent's, one index)",
	usage: 'mam-tui search QUERY [--agent A] [--cwd DIR] [--since 7d] [--all] [--limit N] [--json]',
	options: {agent: {type: 'string'}, cwd: {type: 'string'}, since: {type: 'string'}, all: {type: 'boolean'}, limit: {type: 'string'}},
	positionals: {min: 1, max: 64},
	async run(world, values, positionals) {
		const query = positionals.join(' ').trim();
		if (query === '') throw new CliError('search needs a word to look for', EXIT.usage);
		const agent = values['agent'];
		if (agent !== undefined && (typeof agent !== 'string' || !isAgentId(agent)))
			throw new CliError(`--agent must be one of ${AGENT_IDS.join(', ')}`, EXIT.usage);
		const cwdValue = values['cwd'];
		if (cwdValue !== undefined && (typeof cwdValue !== 'string' || cwdValue === '' || cwdValue.includes('\0')))
			throw new CliError('--cwd needs a folder', EXIT.usage);
		const sinceValue = values['since'];
		const since = typeof sinceValue === 'string' ? parseSince(sinceValue, world.now()) : undefined;
		if (typeof sinceValue === 'string' && since === undefined)
			throw new CliError(`--since takes 30m, 12h, 7d, 2w or a date (got ${JSON.stringify(sinceValue)})`, EXIT.usage);
		const limitValue = values['limit'];
		const limit = typeof limitValue === 'string' ? Number(limitValue) : 20;
		if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError('--limit takes a number from 1 to 1000', EXIT.usage);
		const store = openSearchStore(world.stateDir);
		try {
			if (store.rebuilt) errOut(`search index ${store.file} was not trusted (corrupt or foreign); rebuilt from the agents' files`);
			let hits: SearchHit[];
			try {
				hits = await searchConversations(
					{context: world.adapterContext(), adapters: Object.values(ADAPTERS), store, warn: line => world.logger.warn(line)},
					query,
					{
						...(typeof agent === 'string' ? {agent} : {}),
						...(typeof cwdValue === 'string' ? {cwd: path.resolve(cwdValue)} : {}),
						...(since !== undefined ? {since} : {}),
						...(values['all'] === true ? {all: true} : {}),
						limit,
					},
				);
			} catch (error) {
				throw new CliError(`search failed: ${messageOf(error)}`, EXIT.usage);
			}
			if (world.options.json) {
				const body: SearchJson = {hits: hits.map(toJson)};
				outJson(body);
				return EXIT.ok;
			}
			if (hits.length === 0) {
				out(`No conversation mentions ${JSON.stringify(query)}.`);
				return EXIT.ok;
			}
			const home = world.adapterContext().home;
			const rows = hits.map(h => [
				h.agent,
				h.id,
				new Date(h.updatedAt).toISOString().slice(0, 16).replace('T', ' '),
				usageLine(h.usage),
				shortPath(h.cwd, home),
				h.title,
			]);
			const lines = table(['AGENT', 'ID', 'UPDATED', 'TOKENS', 'CWD', 'TITLE'], rows).split('\n');
			const withSnippets = [lines[0] ?? '', ...hits.flatMap((h, i) => [lines[i + 1] ?? '', `    ${h.snippet}`])];
			out(withSnippets.join('\n'));
			return EXIT.ok;
		} finally {
			store.close();
		}
	},
};
