// Claude Code's purge plan: transcripts, session folders, todos, telemetry, pasted contents,
// history lines and the config keys that name a conversation.

import fs from 'node:fs';
import path from 'node:path';
import {obj} from '../common/jsonl.js';
import {countJsonMembers} from '../common/jsonKey.js';
import {jsonFieldIn, parseJsonLine} from '../common/lines.js';
import {joinNames, listDir} from '../common/paths.js';
import {dirItem, fileItem, makePlan} from '../common/plan.js';
import type {AdapterContext, PlanItem} from '../types.js';
import {liveProcess, liveRecords} from './live.js';
import {claudeRoot, globalConfigFile, PASTE_HASH, projectDirs, roots, subAgentsIn, tempRoot, transcriptFiles} from './transcripts.js';

/** Hashes of pasted contents referenced by history lines that `match` selects (or does not). */
function pasteHashes(historyFile: string, wanted: (line: string) => boolean): Set<string> {
	const out = new Set<string>();
	let text: string;
	try {
		text = fs.readFileSync(historyFile, 'utf8');
	} catch {
		return out;
	}
	for (const line of text.split('\n')) {
		if (!wanted(line)) continue;
		const pasted = obj(parseJsonLine(line), 'pastedContents');
		for (const value of Object.values(pasted ?? {})) {
			const hash = (value as {contentHash?: unknown} | null)?.contentHash;
			if (typeof hash === 'string' && PASTE_HASH.test(hash)) out.add(hash);
		}
	}
	return out;
}

export async function planFor(ctx: AdapterContext, id: string) {
	const root = claudeRoot(ctx);
	const agents = subAgentsIn(ctx, root, id);
	const items: (PlanItem | undefined)[] = [];
	for (const file of transcriptFiles({}, root, id)) items.push(fileItem(file, id, 'transcript'));
	let counted = 0;
	for (const agent of agents) {
		const file = fileItem(agent.file, agent.id, agent.legacy ? 'sub-agent transcript (legacy)' : 'sub-agent transcript');
		const meta = agent.meta ? fileItem(agent.meta, agent.id, 'sub-agent metadata') : undefined;
		if (!agent.legacy) counted += (file?.bytes ?? 0) + (meta?.bytes ?? 0);
		items.push(file, meta);
	}
	for (const dir of projectDirs({}, root)) items.push(dirItem(joinNames(dir, id), id, 'session folder (sub-agents, tool results)', counted));
	for (const [folder, description] of [
		['tasks', 'task list'],
		['file-history', 'file checkpoints'],
		['session-env', 'session environment'],
		['teams', 'team state'],
	] as const) {
		items.push(dirItem(joinNames(root, folder, id), id, description));
	}
	items.push(fileItem(joinNames(root, 'debug', `${id}.txt`), id, 'debug log'));
	for (const entry of listDir(path.join(root, 'todos'))) {
		if (entry.name.startsWith(`${id}-agent-`)) items.push(fileItem(joinNames(root, 'todos', entry.name), id, 'todo list'));
	}
	for (const entry of listDir(path.join(root, 'telemetry'))) {
		if (entry.name.startsWith(`1p_failed_events.${id}.`)) items.push(fileItem(joinNames(root, 'telemetry', entry.name), id, 'unsent telemetry'));
	}
	for (const record of liveRecords({}, root)) {
		if (record.sessionId === id && !(await liveProcess(ctx, record))) items.push(fileItem(record.file, id, 'stale live-session record'));
	}
	items.push(...historyItems(root, id), ...configKeyItems(ctx, id));
	const tmp = tempRoot(ctx);
	if (tmp) {
		for (const slug of listDir(tmp).filter(e => e.isDirectory())) items.push(dirItem(joinNames(tmp, slug.name, id), id, 'temp task output'));
	}
	return makePlan(
		'claude',
		id,
		agents.map(a => a.id),
		items,
		roots(ctx),
	);
}

/** `.claude.json` and its backups under `backups/`: every copy of the file claude rewrites on each start. */
export function configFiles(ctx: AdapterContext): string[] {
	const backups = path.join(claudeRoot(ctx), 'backups');
	const copies = listDir(backups)
		.filter(e => e.isFile() && e.name.startsWith('.claude.json.backup'))
		.map(e => path.join(backups, e.name));
	return [globalConfigFile(ctx), ...copies];
}

/** `projects[<cwd>].lastSessionId` = the id (what `--continue` picks), in the config file and its backups. */
function configKeyItems(ctx: AdapterContext, id: string): PlanItem[] {
	const items: PlanItem[] = [];
	for (const file of configFiles(ctx)) {
		const count = countJsonMembers(file, 'lastSessionId', id);
		const backup = file !== globalConfigFile(ctx);
		if (count > 0)
			items.push({
				kind: 'key',
				path: file,
				count,
				bytes: 0,
				sessionId: id,
				description: backup ? 'lastSessionId in a backup of .claude.json' : 'lastSessionId in .claude.json (that key only)',
			});
	}
	return items;
}

/** Where a `key` item may be rewritten: `.claude.json` sits beside the claude folder, its backups inside. */
export function configRoots(ctx: AdapterContext): string[] {
	return [path.dirname(globalConfigFile(ctx)), claudeRoot(ctx)];
}

/** history.jsonl lines of the session, and pasted contents only it referenced. */
function historyItems(root: string, id: string): (PlanItem | undefined)[] {
	const history = path.join(root, 'history.jsonl');
	const mine = jsonFieldIn('sessionId', [id]);
	const lines = (() => {
		try {
			return fs.readFileSync(history, 'utf8').split('\n').filter(mine);
		} catch {
			return [];
		}
	})();
	if (lines.length === 0) return [];
	const items: (PlanItem | undefined)[] = [
		{
			kind: 'lines',
			path: history,
			count: lines.length,
			bytes: lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0),
			sessionId: id,
			description: 'history.jsonl lines',
		},
	];
	const others = pasteHashes(history, line => line.trim() !== '' && !mine(line));
	for (const hash of pasteHashes(history, mine)) {
		if (!others.has(hash)) items.push(fileItem(joinNames(root, 'paste-cache', `${hash}.txt`), id, 'pasted content'));
	}
	return items;
}
