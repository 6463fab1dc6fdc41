import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {linesHolding, readFilesSince} from '../../src/adapters/common/messageRead.js';
import {ParseCache} from '../../src/adapters/common/refresh.js';
import {confirmsId, metaParentOf} from '../../src/adapters/codex/rollouts.js';

// The JSON Lines reader behind the message readers: a block at a time (a transcript of hundreds
// of MB is never one string), whole lines only, the cursor at the end of the last whole line.

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) fs.rmSync(d, {recursive: true, force: true});
});

function scratch(): string {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-lines-'));
	dirs.push(dir);
	return dir;
}

describe('readFilesSince', () => {
	it('reads lines across block ends and a line longer than a block, and leaves a line being written for later', () => {
		const file = path.join(scratch(), 't.jsonl');
		const long = 'x'.repeat(2_500_000);
		const lines = [...Array.from({length: 30_000}, (_, i) => JSON.stringify({n: i, pad: 'p'.repeat(i % 50)})), JSON.stringify({n: 'long', text: long})];
		lines.push(...Array.from({length: 10}, (_, i) => JSON.stringify({n: 30_000 + i})));
		const whole = `${lines.join('\n')}\n`;
		fs.writeFileSync(file, `${whole}{"n": "half`);
		const got: unknown[] = [];
		const read = readFilesSince([file], undefined);
		const offsets = read.each(record => got.push(record['n']));
		expect(got.length).toBe(lines.length);
		expect(got[0]).toBe(0);
		expect(got[30_000]).toBe('long');
		expect(got.at(-1)).toBe(30_009);
		expect(Object.values(offsets)).toEqual([Buffer.byteLength(whole)]);
		// The rest of the half line arrives: read from the cursor on, only it.
		fs.appendFileSync(file, '"}\n');
		const next: unknown[] = [];
		readFilesSince([file], {files: offsets}).each(record => next.push(record['n']));
		expect(next).toEqual(['half']);
	});

	it('skips lines the filter rejects without parsing them', () => {
		const file = path.join(scratch(), 't.jsonl');
		fs.writeFileSync(file, ['{"type":"user","n":1}', '{"type":"progress","n":2}', '{"type":"assistant","n":3}', 'not json "user"'].join('\n') + '\n');
		const got: unknown[] = [];
		readFilesSince([file], undefined).each(record => got.push(record['n']), linesHolding('"user"', '"assistant"'));
		expect(got).toEqual([1, 3]);
	});
});

describe("codex rollouts' first lines in a parse cache", () => {
	it('keep what is asked of them (id, source, parent), not the instructions', () => {
		const dir = path.join(scratch(), 'sessions', '2026', '04', '01');
		fs.mkdirSync(dir, {recursive: true});
		const id = '019d46c7-e5ea-7cb7-a1f5-df8ecb25fddf';
		const parent = '019d46c7-e5ea-7cb7-a1f5-df8ecb25fdde';
		const file = path.join(dir, `rollout-2026-04-01T02-03-18-${id}.jsonl`);
		const instructions = `You are a coding agent. ${'rule '.repeat(4000)}`;
		const meta = {
			id,
			cwd: '/w',
			source: {subagent: {thread_spawn: {parent_thread_id: parent}}},
			base_instructions: {text: instructions},
			user_instructions: instructions,
		};
		fs.writeFileSync(file, `${JSON.stringify({timestamp: '2026-04-01T02:03:18.990Z', type: 'session_meta', payload: meta})}\n`);
		const parses = new ParseCache();
		const ctx = {parses};
		expect(confirmsId(ctx, file, id)).toBe(true);
		expect(metaParentOf(ctx, file, id)).toBe(parent);
		expect(confirmsId(ctx, file, 'another')).toBe(false);
		expect(metaParentOf(ctx, file, 'another')).toBeUndefined();
		const kept = JSON.stringify([...parses.parsed.of('codex-meta-link').values()].map(p => p.value));
		expect(kept).toContain(parent);
		expect(kept).not.toContain('rule rule');
		expect(kept.length).toBeLessThan(500);
	});
});
