import type {SessionRecord} from '../domain/types.js';
import {EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {out, shortPath, table} from './output.js';
import type {World} from './world.js';

/**
 * The stable shape of `mam-tui status --json` (documented in the README). `version` changes only
 * when a field is removed or changes meaning; new fields may appear at any time.
 */
export interface StatusJson {
	readonly version: 1;
	readonly registry: string;
	readonly sessions: readonly StatusSession[];
}

export interface StatusSession {
	readonly name: string;
	readonly agent: string;
	readonly status: SessionRecord['status'];
	readonly cwd: string;
	readonly mux: string | null;
	readonly paneId: string | null;
	readonly agentSessionId: string | null;
	readonly epoch: string;
	readonly createdAt: string;
	readonly updatedAt: string;
	readonly resumeState: string | null;
}

export function toStatusSession(s: SessionRecord): StatusSession {
	return {
		name: s.name,
		agent: s.agent,
		status: s.status,
		cwd: s.cwd,
		mux: s.mux,
		paneId: s.paneId,
		agentSessionId: s.agentSessionId,
		epoch: new Date(s.epoch).toISOString(),
		createdAt: new Date(s.createdAt).toISOString(),
		updatedAt: new Date(s.updatedAt).toISOString(),
		resumeState: null,
	};
}

export const statusCommand: Command = {
	name: 'status',
	summary: 'list the registry sessions',
	usage: 'mam-tui status [--json]',
	options: {},
	async run(world: World) {
		const sessions = world.registry().list();
		if (world.options.json) {
			const body: StatusJson = {version: 1, registry: world.registryPath, sessions: sessions.map(toStatusSession)};
			out(JSON.stringify(body, null, 2));
			return EXIT.ok;
		}
		if (sessions.length === 0) {
			out(`No sessions in ${world.registryPath}. Start one with \`mam-tui new --agent claude --cwd DIR\`, or run \`mam-tui\` for the dashboard.`);
			return EXIT.ok;
		}
		const home = world.adapterContext().home;
		out(
			table(
				['NAME', 'AGENT', 'STATUS', 'PANE', 'PIN', 'CWD'],
				sessions.map(s => [s.name, s.agent, s.status, s.paneId ?? '—', s.agentSessionId?.slice(0, 12) ?? '—', shortPath(s.cwd, home)]),
			),
		);
		return EXIT.ok;
	},
};
