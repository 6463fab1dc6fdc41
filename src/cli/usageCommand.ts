import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import type {TokenUsage} from '../adapters/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {openSearchStore, syncIndex, usageByFolder} from '../search/index.js';
import type {Command} from './commands.js';
import {out, outJson, shortPath, table} from './output.js';
import {tokens} from '../domain/usage.js';

/** `mam-tui usage --json`: tokens summed per folder (fields may be added). */
export interface UsageJson {
	readonly folders: readonly {
		readonly cwd: string;
		readonly conversations: number;
		/** How many of them record tokens at all; the sums cover those only. */
		readonly withUsage: number;
		readonly usage: TokenUsage | null;
	}[];
}

export const usageCommand: Command = {
	name: 'usage',
	summary: "tokens per folder, from each agent's own records (no money figures)",
	usage: 'mam-tui usage [--cwd DIR] [--json]',
	options: {cwd: {type: 'string'}},
	async run(world, values) {
		const cwdValue = values['cwd'];
		if (cwdValue !== undefined && (typeof cwdValue !== 'string' || cwdValue === '' || cwdValue.includes('\0')))
			throw new CliError('--cwd needs a folder', EXIT.usage);
		const store = openSearchStore(world.stateDir);
		try {
			await syncIndex({context: world.adapterContext(), adapters: Object.values(ADAPTERS), store, warn: line => world.logger.warn(line)});
			const want = typeof cwdValue === 'string' ? path.resolve(cwdValue) : undefined;
			const folders = [...usageByFolder(store.all()).entries()]
				.filter(([cwd]) => want === undefined || cwd === want || cwd.startsWith(`${want}/`))
				.sort(
					(a, b) => (b[1].usage?.input ?? 0) + (b[1].usage?.output ?? 0) - ((a[1].usage?.input ?? 0) + (a[1].usage?.output ?? 0)) || a[0].localeCompare(b[0]),
				);
			if (world.options.json) {
				const body: UsageJson = {folders: folders.map(([cwd, f]) => ({cwd, conversations: f.conversations, withUsage: f.known, usage: f.usage ?? null}))};
				outJson(body);
				return EXIT.ok;
			}
			const home = world.adapterContext().home;
			const rows = folders.map(([cwd, f]) => [
				shortPath(cwd, home),
				`${f.known}/${f.conversations}`,
				tokens(f.usage?.input),
				tokens(f.usage?.output),
				tokens(f.usage?.cacheRead),
				tokens(f.usage?.cacheWrite),
			]);
			out(rows.length === 0 ? 'No conversations indexed yet.' : table(['CWD', 'WITH TOKENS', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE'], rows));
			return EXIT.ok;
		} finally {
			store.close();
		}
	},
};
