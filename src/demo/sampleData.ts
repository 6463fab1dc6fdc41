import crypto from 'node:crypto';
import path from 'node:path';
import {projectSlug} from '../adapters/claude.js';
import type {AgentId} from '../domain/types.js';
import {agyId, writeAgyConversation} from './samples/agy.js';
import {claudeHistoryLine, claudeSubagentTranscript, claudeTranscript} from './samples/claude.js';
import {codexRollout, fillCodexHistory, fillCodexLogs, fillCodexState, rolloutRelPath, uuidV7, type CodexThread} from './samples/codex.js';
import {CODEX_LOGS_SCHEMA, CODEX_STATE_SCHEMA, CODEX_THREAD_HISTORY_SCHEMA} from './samples/codexSchema.js';
import {writeDb, writeFile} from './samples/files.js';
import {writeGeminiMain, writeGeminiProject} from './samples/gemini.js';
import {grokBuildId, writeGrokBuildSession} from './samples/grok.js';
import {createHermesStore, hermesId, insertHermesSession} from './samples/hermes.js';
import {opencodeId, writeOpencodeDb, type OcSession} from './samples/opencode.js';

/** One conversation the demo writes, in its agent's real on-disk format. */
export interface SampleConversation {
	readonly agent: AgentId;
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly title: string;
	/** Child (sub-agent) conversations written with it, so a purge plan shows descendants. */
	readonly children?: readonly string[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The conversations of one demo, by role; `missing` is a valid agy id that exists nowhere. */
export interface SampleIds {
	readonly claudeLive: string;
	readonly claudeOld: string;
	readonly claudeLoose: string;
	readonly codexLive: string;
	readonly codexOld: string;
	readonly codexLoose: string;
	readonly opencodeLive: string;
	readonly opencodeOld: string;
	readonly geminiGone: string;
	readonly geminiShared: string;
	readonly geminiLoose: string;
	readonly hermesExited: string;
	readonly hermesDone: string;
	readonly agyLive: string;
	readonly agyMissing: string;
	readonly grokStale: string;
	/** Conversations of the parked rows (idle agents that exited to free their memory). */
	readonly claudeParked: string;
	readonly codexParked: string;
	readonly geminiParked: string;
}

export interface SampleData {
	readonly ids: SampleIds;
	readonly conversations: readonly SampleConversation[];
}

/** The project folders, one per agent (plus one where a fresh claude starts). */
export const PROJECTS = {
	claude: 'webapp',
	claudeFresh: 'landing-page',
	codex: 'api-server',
	opencode: 'cli-tool',
	gemini: 'docs-site',
	hermes: 'data-pipeline',
	agy: 'mobile-app',
	grok: 'infra',
} as const;

function writeClaude(home: string, list: readonly SampleConversation[]): void {
	const root = path.join(home, '.claude');
	const history: string[] = [];
	for (const c of list) {
		const dir = path.join(root, 'projects', projectSlug(c.cwd));
		writeFile(path.join(dir, `${c.id}.jsonl`), claudeTranscript(c.id, c.cwd, c.createdAt, c.title, [], 'cli'));
		for (const [i, child] of (c.children ?? []).entries()) {
			writeFile(
				path.join(dir, c.id, 'subagents', `${child}.jsonl`),
				claudeSubagentTranscript(c.id, child.slice('agent-'.length), c.cwd, c.createdAt + 300 + i),
			);
			writeFile(
				path.join(dir, c.id, 'subagents', `${child}.meta.json`),
				JSON.stringify({agentType: 'general-purpose', description: 'look around', spawnDepth: 1}),
			);
		}
		history.push(claudeHistoryLine(c.id, c.cwd, c.title, c.createdAt));
		writeFile(path.join(root, 'todos', `${c.id}-agent-${c.id}.json`), '[]');
	}
	writeFile(path.join(root, 'history.jsonl'), history.join(''));
}

function writeCodex(home: string, list: readonly SampleConversation[]): void {
	const root = path.join(home, '.codex');
	const threads: CodexThread[] = list.flatMap(c => [
		// The demo's sessions were typed by a person: the dashboard's text search lists them.
		{id: c.id, cwd: c.cwd, createdAt: c.createdAt, prompt: c.title, rollout: path.join(root, rolloutRelPath(c.id, c.createdAt)), interactive: true},
		...(c.children ?? []).map((child, i) => ({
			id: child,
			cwd: c.cwd,
			createdAt: c.createdAt + 300 + i,
			prompt: 'Look at the failing test.',
			rollout: path.join(root, rolloutRelPath(child, c.createdAt + 300 + i)),
			parent: c.id,
		})),
	]);
	for (const t of threads) {
		writeFile(
			t.rollout,
			codexRollout({
				id: t.id,
				cwd: t.cwd,
				createdAt: t.createdAt,
				prompt: t.prompt,
				...(t.parent ? {parent: {id: t.parent, depth: 1}} : {interactive: t.interactive === true}),
			}),
		);
	}
	writeDb(path.join(root, 'state_5.sqlite'), CODEX_STATE_SCHEMA, db => fillCodexState(db, threads));
	writeDb(path.join(root, 'thread_history_1.sqlite'), CODEX_THREAD_HISTORY_SCHEMA, db => fillCodexHistory(db, threads));
	writeDb(path.join(root, 'logs_2.sqlite'), CODEX_LOGS_SCHEMA, db => fillCodexLogs(db, threads));
	const parents = threads.filter(t => !t.parent);
	writeFile(
		path.join(root, 'history.jsonl'),
		parents.map(t => `${JSON.stringify({session_id: t.id, ts: Math.floor(t.createdAt / 1000), text: t.prompt})}\n`).join(''),
	);
	writeFile(path.join(root, 'config.toml'), 'model = "demo-model"\n');
}

function writeOpencode(home: string, list: readonly SampleConversation[]): void {
	const worktree = list[0]?.cwd ?? home;
	const project = crypto.createHash('sha1').update(worktree).digest('hex');
	const sessions: OcSession[] = list.map(c => ({id: c.id, projectId: project, directory: c.cwd, createdAt: c.createdAt, title: c.title, gen: 'v1'}));
	writeOpencodeDb(path.join(home, '.local', 'share', 'opencode', 'opencode.db'), 'v1', sessions, [{id: project, worktree}]);
}

function writeGemini(home: string, list: readonly SampleConversation[]): void {
	for (const c of list) {
		const projectDir = writeGeminiProject(home, path.basename(c.cwd), c.cwd);
		writeGeminiMain(projectDir, {id: c.id, cwd: c.cwd, createdAt: c.createdAt, prompt: c.title});
	}
}

function writeHermes(home: string, list: readonly SampleConversation[]): void {
	const root = path.join(home, '.hermes');
	createHermesStore(root);
	for (const c of list)
		insertHermesSession(root, {
			id: c.id,
			startedAt: c.createdAt,
			cwd: c.cwd,
			endedAt: c.createdAt + 20 * MINUTE,
			endReason: 'user_exit',
			title: c.title,
			turns: 2,
		});
}

function writeAgy(home: string, list: readonly SampleConversation[]): void {
	for (const c of list) writeAgyConversation(home, {id: c.id, workspaces: [c.cwd], createdAt: c.createdAt, title: c.title});
}

function writeGrok(home: string, list: readonly SampleConversation[]): void {
	for (const c of list) writeGrokBuildSession(home, {id: c.id, cwd: c.cwd, createdAt: c.createdAt, title: c.title, turns: 2});
}

const WRITERS: Record<AgentId, (home: string, list: readonly SampleConversation[]) => void> = {
	claude: writeClaude,
	codex: writeCodex,
	opencode: writeOpencode,
	gemini: writeGemini,
	hermes: writeHermes,
	agy: writeAgy,
	grok: writeGrok,
};

/**
 * Write the demo's conversations under `home`, each in its agent's real format, for every
 * agent mam-tui knows. `work` holds the project folders (they must exist: resume runs there).
 */
export function writeSampleData(home: string, work: string, now = Date.now()): SampleData {
	const cwd = (key: keyof typeof PROJECTS) => path.join(work, PROJECTS[key]);
	const ago = (ms: number) => now - ms;
	const agentHex = () => `agent-${crypto.randomBytes(9).toString('hex').slice(0, 17)}`;
	const ids: SampleIds = {
		claudeLive: crypto.randomUUID(),
		claudeOld: crypto.randomUUID(),
		claudeLoose: crypto.randomUUID(),
		codexLive: uuidV7(ago(20 * MINUTE)),
		codexOld: uuidV7(ago(26 * HOUR)),
		codexLoose: uuidV7(ago(3 * HOUR)),
		opencodeLive: opencodeId(),
		opencodeOld: opencodeId(),
		geminiGone: crypto.randomUUID(),
		geminiShared: crypto.randomUUID(),
		geminiLoose: crypto.randomUUID(),
		hermesExited: hermesId(ago(2 * HOUR)),
		hermesDone: hermesId(ago(30 * HOUR)),
		agyLive: agyId(),
		agyMissing: agyId(),
		grokStale: grokBuildId(),
		claudeParked: crypto.randomUUID(),
		codexParked: uuidV7(ago(4 * HOUR)),
		geminiParked: crypto.randomUUID(),
	};
	const conversations: SampleConversation[] = [
		{agent: 'claude', id: ids.claudeLive, cwd: cwd('claude'), createdAt: ago(25 * MINUTE), title: 'add a dark mode toggle'},
		{
			agent: 'claude',
			id: ids.claudeOld,
			cwd: cwd('claude'),
			createdAt: ago(28 * HOUR),
			title: 'why is the login form slow?',
			children: [agentHex(), agentHex()],
		},
		{agent: 'claude', id: ids.claudeLoose, cwd: cwd('claude'), createdAt: ago(5 * HOUR), title: 'write tests for the cart'},
		{agent: 'codex', id: ids.codexLive, cwd: cwd('codex'), createdAt: ago(20 * MINUTE), title: 'paginate GET /orders'},
		{
			agent: 'codex',
			id: ids.codexOld,
			cwd: cwd('codex'),
			createdAt: ago(26 * HOUR),
			title: 'fix the flaky auth test',
			children: [uuidV7(ago(26 * HOUR - MINUTE))],
		},
		{agent: 'codex', id: ids.codexLoose, cwd: cwd('codex'), createdAt: ago(3 * HOUR), title: 'add request logging'},
		{agent: 'opencode', id: ids.opencodeLive, cwd: cwd('opencode'), createdAt: ago(15 * MINUTE), title: 'add a --json flag'},
		{agent: 'opencode', id: ids.opencodeOld, cwd: cwd('opencode'), createdAt: ago(50 * HOUR), title: 'port the parser to zod'},
		{agent: 'gemini', id: ids.geminiGone, cwd: cwd('gemini'), createdAt: ago(70 * MINUTE), title: 'proofread the install guide'},
		{agent: 'gemini', id: ids.geminiShared, cwd: cwd('gemini'), createdAt: ago(4 * HOUR), title: 'draft the changelog'},
		{agent: 'gemini', id: ids.geminiLoose, cwd: cwd('gemini'), createdAt: ago(9 * HOUR), title: 'summarise open issues'},
		{agent: 'hermes', id: ids.hermesExited, cwd: cwd('hermes'), createdAt: ago(2 * HOUR), title: 'backfill the March events'},
		{agent: 'hermes', id: ids.hermesDone, cwd: cwd('hermes'), createdAt: ago(30 * HOUR), title: 'speed up the nightly job'},
		{agent: 'agy', id: ids.agyLive, cwd: cwd('agy'), createdAt: ago(40 * MINUTE), title: 'fix the onboarding crash'},
		{agent: 'grok', id: ids.grokStale, cwd: cwd('grok'), createdAt: ago(6 * HOUR), title: 'tidy the terraform modules'},
		{agent: 'claude', id: ids.claudeParked, cwd: cwd('claude'), createdAt: ago(3 * HOUR), title: 'cache the token refresh'},
		{agent: 'codex', id: ids.codexParked, cwd: cwd('codex'), createdAt: ago(4 * HOUR), title: 'retry the token refresh webhook'},
		{agent: 'gemini', id: ids.geminiParked, cwd: cwd('gemini'), createdAt: ago(5 * HOUR), title: 'explain the token refresh flow'},
	];
	for (const key of Object.keys(PROJECTS) as (keyof typeof PROJECTS)[])
		writeFile(path.join(cwd(key), 'README.md'), `# ${PROJECTS[key]}\n\nA sample project of the mam-tui demo.\n`);
	for (const agent of Object.keys(WRITERS) as AgentId[]) {
		WRITERS[agent](
			home,
			conversations.filter(c => c.agent === agent),
		);
	}
	return {ids, conversations};
}
