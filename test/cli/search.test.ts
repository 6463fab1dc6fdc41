import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {projectSlug} from '../../src/adapters/claude.js';
import {runCli} from '../helpers/cli.js';

// `mam-tui search` and `mam-tui usage` as users run them (the built CLI), over a claude home.

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) fs.rmSync(d, {recursive: true, force: true});
});

function setup(): {env: Record<string, string>; cwd: string; id: string; file: string; mamHome: string} {
	const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-search-cli-')));
	dirs.push(base);
	const home = path.join(base, 'home');
	const cwd = path.join(base, 'proj');
	const mamHome = path.join(base, 'mam');
	fs.mkdirSync(cwd, {recursive: true});
	const id = crypto.randomUUID();
	const file = path.join(home, '.claude', 'projects', projectSlug(cwd), `${id}.jsonl`);
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const common = {cwd, sessionId: id, entrypoint: 'cli', timestamp: new Date().toISOString()};
	fs.writeFileSync(
		file,
		[
			{type: 'user', message: {role: 'user', content: 'where does the quillwort config live'}, ...common},
			{
				type: 'assistant',
				message: {
					id: 'msg_1',
					role: 'assistant',
					content: [{type: 'text', text: 'in the settings file'}],
					usage: {input_tokens: 12, output_tokens: 8, cache_read_input_tokens: 100, cache_creation_input_tokens: 0},
				},
				...common,
			},
		]
			.map(r => JSON.stringify(r))
			.join('\n') + '\n',
	);
	return {env: {HOME: home, MAM_HOME: mamHome}, cwd, id, file, mamHome};
}

describe('mam-tui search', () => {
	it('prints the hit as JSON with its snippet and tokens, and usage sums the folder', async () => {
		const w = setup();
		const run = await runCli(['search', 'quillwort', '--json'], w.env);
		expect(run.exitCode, run.stderr).toBe(0);
		const body = JSON.parse(run.stdout) as {hits: {agent: string; id: string; cwd: string; snippet: string; usage: unknown}[]};
		expect(body.hits).toHaveLength(1);
		expect(body.hits[0]).toMatchObject({agent: 'claude', id: w.id, cwd: w.cwd, usage: {input: 12, output: 8, cacheRead: 100, cacheWrite: 0}});
		expect(body.hits[0]?.snippet).toContain('[quillwort]');
		const table = await runCli(['search', 'quillwort'], w.env);
		expect(table.stdout).toMatch(/in 12 out 8 cache 100/);
		const usage = JSON.parse((await runCli(['usage', '--json'], w.env)).stdout) as {folders: unknown[]};
		expect(usage.folders).toEqual([{cwd: w.cwd, conversations: 1, withUsage: 1, usage: {input: 12, output: 8, cacheRead: 100, cacheWrite: 0}}]);
	});

	it('refuses a bad --since and a query with no word, changing nothing', async () => {
		const w = setup();
		const since = await runCli(['search', 'x', '--since', 'yesterday-ish'], w.env);
		expect(since.exitCode).toBe(2);
		expect(since.stderr).toMatch(/--since takes/);
		expect(fs.existsSync(path.join(w.mamHome, 'search.db'))).toBe(false);
		const empty = await runCli(['search', '--', '--'], w.env);
		expect(empty.exitCode).toBe(2);
	});
});
