import fs from 'node:fs';
import path from 'node:path';
import {runsProgram} from '../../../src/adapters/common/programs.js';
import {assertPlanOf, assertValidId, type AdapterContext, type AgentAdapter, type PlanItem, type PurgePlan} from '../../../src/adapters/types.js';
import type {Conversation} from '../../../src/domain/types.js';

/**
 * A small agent with a real on-disk layout, posing as `claude` (uuid ids, `claude --resume <id>`),
 * so the actions are tested without waiting on the real adapters:
 *
 *   <home>/.fixture/convs/<id>.jsonl   transcript; line 1 {id, cwd, parent?, createdAt}, then messages
 *   <home>/.fixture/convs/<id>/        per-conversation folder (sub-agent files)
 *   <home>/.fixture/index.jsonl        shared index, one {"id"} line per conversation
 *   <home>/.fixture/store/<id>.row     "database rows": only the agent's delete command removes them
 *
 * Purge runs `fixture-agent delete <id>...` through ctx.exec (a fake binary on PATH), then removes
 * files one by one (`FIXTURE_PURGE_DELAY_MS` between them, so a test can kill it half-way), then
 * rewrites the index. Every step only deletes what is still there, so running it again finishes.
 */
export const FIXTURE_DELETE_COMMAND = 'fixture-agent';

export function fixtureRoot(home: string): string {
	return path.join(home, '.fixture');
}

interface Header {
	id: string;
	cwd: string;
	parent?: string;
	createdAt: number;
}

function readHeader(file: string): Header | undefined {
	try {
		const first = fs.readFileSync(file, 'utf8').split('\n')[0] ?? '';
		return JSON.parse(first) as Header;
	} catch {
		return undefined;
	}
}

function lineCount(file: string): number {
	return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
}

function headers(root: string): Header[] {
	const dir = path.join(root, 'convs');
	if (!fs.existsSync(dir)) return [];
	return fs
		.readdirSync(dir)
		.filter(n => n.endsWith('.jsonl'))
		.map(n => readHeader(path.join(dir, n)))
		.filter((h): h is Header => h !== undefined);
}

/** Parent links from transcripts and store rows (a row outlives its transcript when the delete command fails). */
function parentLinks(root: string): Array<{id: string; parent?: string}> {
	const links: Array<{id: string; parent?: string}> = headers(root);
	const dir = path.join(root, 'store');
	if (fs.existsSync(dir)) {
		for (const name of fs.readdirSync(dir)) {
			try {
				links.push(JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as {id: string; parent?: string});
			} catch {
				// a half-written row names nothing
			}
		}
	}
	return links;
}

function descendantsOf(root: string, id: string): string[] {
	const all = parentLinks(root);
	const out: string[] = [];
	const queue = [id];
	while (queue.length > 0) {
		const parent = queue.shift();
		for (const h of all)
			if (h.parent === parent && !out.includes(h.id)) {
				out.push(h.id);
				queue.push(h.id);
			}
	}
	return out;
}

function sizeOf(p: string): number {
	const stat = fs.lstatSync(p);
	if (!stat.isDirectory()) return stat.size;
	return fs.readdirSync(p).reduce((sum, name) => sum + sizeOf(path.join(p, name)), 0);
}

function indexLines(root: string): string[] {
	const file = path.join(root, 'index.jsonl');
	return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

export function createFixtureAdapter(): AgentAdapter {
	const adapter: AgentAdapter = {
		id: 'claude',
		label: 'Fixture Agent',
		capabilities: {resume: true, purge: true},
		idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
		processNames: ['claude'],
		residentChildren: [],
		exitInput: {
			text: '/exit',
			// The stand-in reads whole lines, so the command and Enter at once are enough.
			steps: [{kind: 'command'}, {kind: 'keys', keys: ['Enter']}],
			evidence: 'test fixture: the stand-in TUI reads whole lines',
		},
		spawn: () => ({argv: ['claude']}),
		resume: (_ctx, id) => {
			assertValidId(adapter, id);
			return {argv: ['claude', '--resume', id]};
		},
		matchesProcess: proc => runsProgram(proc, ['claude']),
		async discover(ctx, query = {}) {
			const root = fixtureRoot(ctx.home);
			const conversations: Conversation[] = headers(root)
				.filter(h => (query.includeChildren ? true : !h.parent) && (!query.cwd || h.cwd === query.cwd) && (!query.since || h.createdAt >= query.since))
				.map((h): Conversation => ({
					agent: 'claude',
					id: h.id,
					cwd: h.cwd,
					createdAt: h.createdAt,
					updatedAt: h.createdAt,
					...(h.parent ? {parentId: h.parent} : {}),
					childCount: descendantsOf(root, h.id).length,
					resumeState: {kind: 'yes'},
				}))
				.sort((a, b) => b.createdAt - a.createdAt);
			return {conversations, problems: []};
		},
		// The fixture keeps no messages: nothing to index.
		async messages() {
			return undefined;
		},
		async verify(ctx, id, cwd) {
			assertValidId(adapter, id);
			const file = path.join(fixtureRoot(ctx.home), 'convs', `${id}.jsonl`);
			const header = readHeader(file);
			if (!header) return {kind: 'no', reason: `no transcript ${file}`};
			if (lineCount(file) < 2) return {kind: 'no', reason: 'the transcript holds no message'};
			if (cwd && header.cwd !== cwd) return {kind: 'no', reason: `it belongs to ${header.cwd}, not ${cwd}`};
			return {kind: 'yes'};
		},
		async artifacts(ctx, id) {
			assertValidId(adapter, id);
			return planFor(ctx, id);
		},
		async purge(ctx, plan) {
			assertPlanOf(adapter, plan);
			const id = plan.id;
			const root = fixtureRoot(ctx.home);
			const delay = Number(ctx.env['FIXTURE_PURGE_DELAY_MS'] ?? 0);
			const warnings: string[] = [];
			const ids = [id, ...plan.descendants];
			const result = await ctx.exec(FIXTURE_DELETE_COMMAND, ['delete', ...ids], {env: {FIXTURE_HOME: ctx.home}});
			if (result.failure || result.exitCode !== 0) warnings.push(`${FIXTURE_DELETE_COMMAND} delete failed: ${result.failure ?? `exit ${result.exitCode}`}`);
			const removed: PlanItem[] = [];
			for (const item of plan.items.filter(i => i.kind === 'file' || i.kind === 'dir')) {
				if (delay > 0) await sleep(delay);
				fs.rmSync(item.path, {recursive: true, force: true});
				removed.push(item);
			}
			const keep = indexLines(root).filter(line => !ids.some(x => line.includes(x)));
			const tmp = path.join(root, `index.jsonl.tmp-${process.pid}`);
			fs.writeFileSync(tmp, keep.map(l => `${l}\n`).join(''));
			fs.renameSync(tmp, path.join(root, 'index.jsonl'));
			return {removed, warnings};
		},
		async residual(ctx, id) {
			assertValidId(adapter, id);
			const root = fixtureRoot(ctx.home);
			const out: string[] = [];
			for (const x of [id, ...descendantsOf(root, id)]) {
				const tag = x === id ? '' : ` [child session ${x}]`;
				for (const sub of ['convs', 'store']) {
					const dir = path.join(root, sub);
					if (!fs.existsSync(dir)) continue;
					for (const name of fs.readdirSync(dir)) if (name.includes(x)) out.push(`${path.join(dir, name)}${tag}`);
				}
				if (indexLines(root).some(l => l.includes(x))) out.push(`${path.join(root, 'index.jsonl')}: a line names ${x}${tag}`);
			}
			return out;
		},
		async inUse(ctx, id) {
			assertValidId(adapter, id);
			const procs = await ctx.processes.list();
			return procs
				.filter(p => p.pid !== process.pid && p.argv.includes(id))
				.map(p => ({pid: p.pid, startTime: p.startTime, command: p.argv.join(' '), reason: 'argv names the id'}));
		},
	};
	return adapter;
}

function planFor(ctx: AdapterContext, id: string): PurgePlan {
	const root = fixtureRoot(ctx.home);
	const descendants = descendantsOf(root, id);
	const items: PlanItem[] = [];
	for (const x of [id, ...descendants]) {
		const child = x !== id;
		const transcript = path.join(root, 'convs', `${x}.jsonl`);
		const folder = path.join(root, 'convs', x);
		const row = path.join(root, 'store', `${x}.row`);
		if (fs.existsSync(row)) items.push({kind: 'rows', path: row, table: 'store', count: 1, bytes: sizeOf(row), sessionId: x, description: 'store row'});
		if (fs.existsSync(transcript))
			items.push({kind: 'file', path: transcript, bytes: sizeOf(transcript), sessionId: x, description: child ? 'sub-agent transcript' : 'transcript'});
		if (fs.existsSync(folder)) items.push({kind: 'dir', path: folder, bytes: sizeOf(folder), sessionId: x, description: 'conversation folder'});
		const lines = indexLines(root).filter(l => l.includes(x)).length;
		if (lines > 0) items.push({kind: 'lines', path: path.join(root, 'index.jsonl'), count: lines, bytes: 0, sessionId: x, description: 'index.jsonl lines'});
	}
	return {agent: 'claude', id, descendants, items, totalBytes: items.reduce((s, i) => s + i.bytes, 0)};
}

export interface FixtureConversation {
	readonly id: string;
	readonly cwd: string;
	readonly parent?: string;
	/** Message lines after the header (default 2). */
	readonly messages?: number;
	readonly createdAt?: number;
}

/** Write one conversation (transcript, folder, index line, store row) into `home`. */
export function writeFixtureConversation(home: string, conv: FixtureConversation): void {
	const root = fixtureRoot(home);
	fs.mkdirSync(path.join(root, 'convs', conv.id, 'subagents'), {recursive: true});
	fs.mkdirSync(path.join(root, 'store'), {recursive: true});
	const header: Header = {id: conv.id, cwd: conv.cwd, ...(conv.parent ? {parent: conv.parent} : {}), createdAt: conv.createdAt ?? Date.now()};
	const messages = Array.from({length: conv.messages ?? 2}, (_, i) => JSON.stringify({role: i % 2 ? 'assistant' : 'user', text: `message ${i} of ${conv.id}`}));
	fs.writeFileSync(path.join(root, 'convs', `${conv.id}.jsonl`), [JSON.stringify(header), ...messages].map(l => `${l}\n`).join(''));
	fs.writeFileSync(path.join(root, 'convs', conv.id, 'subagents', 'agent-1.jsonl'), `{"parent":"${conv.id}"}\n`);
	fs.writeFileSync(path.join(root, 'store', `${conv.id}.row`), JSON.stringify({id: conv.id, ...(conv.parent ? {parent: conv.parent} : {})}));
	fs.appendFileSync(path.join(root, 'index.jsonl'), `${JSON.stringify({id: conv.id})}\n`);
}

/**
 * Install the fake `fixture-agent` delete command into `binDir`: with `fail`, it exits 1 and
 * deletes nothing; otherwise it removes the store rows of the ids it is given.
 */
export function installFixtureDeleteCommand(binDir: string, fail: boolean): string {
	fs.mkdirSync(binDir, {recursive: true});
	const file = path.join(binDir, FIXTURE_DELETE_COMMAND);
	const body = fail
		? `#!${process.execPath}\nprocess.stderr.write('fixture-agent: database is locked\\n');\nprocess.exit(1);\n`
		: [
				`#!${process.execPath}`,
				"const fs = require('node:fs'); const path = require('node:path');",
				'const home = process.env.FIXTURE_HOME; const ids = process.argv.slice(3);',
				"if (process.argv[2] !== 'delete' || !home) process.exit(2);",
				"for (const id of ids) fs.rmSync(path.join(home, '.fixture', 'store', id + '.row'), {force: true});",
				'',
			].join('\n');
	fs.writeFileSync(file, body, {mode: 0o755});
	return file;
}

/** Every file under `dir` with its bytes, for "byte-identical" checks. */
export function snapshotTree(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (p: string) => {
		for (const entry of fs.readdirSync(p, {withFileTypes: true})) {
			const full = path.join(p, entry.name);
			if (entry.isDirectory()) walk(full);
			else out[path.relative(dir, full)] = fs.readFileSync(full).toString('base64');
		}
	};
	if (fs.existsSync(dir)) walk(dir);
	return out;
}
