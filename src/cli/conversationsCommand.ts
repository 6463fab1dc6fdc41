import path from 'node:path';
import {ADAPTERS} from '../adapters/index.js';
import {createRefresh} from '../adapters/common/refresh.js';
import {withUse} from '../sync/conversationUse.js';
import {perRefresh} from '../sync/refresh.js';
import {conversationsOf} from '../sync/snapshot.js';
import {folderExists} from '../system/folder.js';
import {snapshotTable} from '../system/processes.js';
import {AGENT_IDS, formatResumeState, isAgentId, type AgentId, type Conversation} from '../domain/types.js';
import {CliError, EXIT} from '../domain/exitCodes.js';
import {messageOf} from '../domain/result.js';
import type {Command} from './commands.js';
import {out, outJson, shortPath, table} from './output.js';
import type {World} from '../world/world.js';

/**
 * The stable shape of `mam-tui conversations --json`. `version` changes only when a field is
 * removed or changes meaning; new fields may appear at any time.
 */
export interface ConversationsJson {
	readonly version: 1;
	/** Whose agent data was read. */
	readonly home: string;
	/** Newest first. */
	readonly conversations: readonly ConversationJson[];
	/** One entry per agent: `ok`, or `unknown: <reason>` when (part of) its store could not be read. */
	readonly agents: readonly {readonly agent: AgentId; readonly state: string}[];
}

export interface ConversationJson {
	readonly agent: AgentId;
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: string;
	readonly updatedAt: string;
	readonly title: string | null;
	readonly parentId: string | null;
	readonly childCount: number;
	/** `yes`, `no: <reason>` or `unknown: <reason>`. */
	readonly resumeState: string;
}

interface AgentResult {
	readonly agent: AgentId;
	readonly conversations: readonly Conversation[];
	readonly problems: readonly string[];
}

/** One agent's discovery; a store that cannot be read (or an adapter bug) becomes a problem, never a crash. */
async function discoverAgent(world: World, agent: AgentId, cwd: string | undefined): Promise<AgentResult> {
	try {
		const result = await ADAPTERS[agent].discover(world.adapterContext(), cwd === undefined ? {} : {cwd});
		return {agent, ...result};
	} catch (error) {
		world.logger.error(`${agent} discovery failed`, error);
		return {agent, conversations: [], problems: [messageOf(error)]};
	}
}

function toJson(c: Conversation): ConversationJson {
	return {
		agent: c.agent,
		id: c.id,
		cwd: c.cwd,
		createdAt: new Date(c.createdAt).toISOString(),
		updatedAt: new Date(c.updatedAt).toISOString(),
		title: c.title ?? null,
		parentId: c.parentId ?? null,
		childCount: c.childCount,
		resumeState: formatResumeState(c.resumeState),
	};
}

function stateOf(result: AgentResult): string {
	return result.problems.length === 0 ? 'ok' : `unknown: ${result.problems.join('; ')}`;
}

function parseAgent(value: unknown): AgentId | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'string' || !isAgentId(value)) {
		throw new CliError(`--agent must be one of ${AGENT_IDS.join(', ')} (got ${JSON.stringify(value)})`, EXIT.usage);
	}
	return value;
}

function parseCwd(value: unknown): string | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) throw new CliError('--cwd needs a folder', EXIT.usage);
	return path.resolve(value);
}

export const conversationsCommand: Command = {
	name: 'conversations',
	summary: 'list the conversations the agents keep on disk, with resume state',
	usage: 'mam-tui conversations [--agent A] [--cwd DIR] [--json]',
	options: {agent: {type: 'string'}, cwd: {type: 'string'}},
	async run(world, values) {
		const agent = parseAgent(values['agent']);
		const cwd = parseCwd(values['cwd']);
		const agents = agent ? [agent] : [...AGENT_IDS];
		const results = await Promise.all(agents.map(a => discoverAgent(world, a, cwd)));
		const found = results.flatMap(r => r.conversations).sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
		// The in-use rule, as purge and resume apply it: one process table and one refresh for all.
		const ctx = world.adapterContext();
		const {conversations: used} = await withUse({...ctx, refresh: createRefresh(), processes: snapshotTable(ctx.processes)}, found);
		// Then the rest of the one resume rule (SPEC 6.1), as the dashboard applies it: the folder.
		const conversations = conversationsOf(used, perRefresh(folderExists));
		const home = world.adapterContext().home;
		if (world.options.json) {
			const body: ConversationsJson = {
				version: 1,
				home,
				conversations: conversations.map(toJson),
				agents: results.map(r => ({agent: r.agent, state: stateOf(r)})),
			};
			outJson(body);
			return EXIT.ok;
		}
		const rows = conversations.map(c => [
			c.agent,
			c.id,
			new Date(c.createdAt).toISOString().slice(0, 16).replace('T', ' '),
			new Date(c.updatedAt).toISOString().slice(0, 16).replace('T', ' '),
			String(c.childCount),
			formatResumeState(c.resumeState),
			shortPath(c.cwd, home),
			c.title ?? '',
		]);
		for (const r of results.filter(x => x.problems.length > 0)) rows.push([r.agent, '—', '', '', '', stateOf(r), '', '']);
		if (rows.length === 0) {
			out(`No conversations found under ${home}${cwd ? ` for ${cwd}` : ''}.`);
			return EXIT.ok;
		}
		out(table(['AGENT', 'ID', 'CREATED', 'UPDATED', 'CHILDREN', 'RESUME', 'CWD', 'TITLE'], rows));
		return EXIT.ok;
	},
};
