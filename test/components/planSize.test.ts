import {describe, expect, it} from 'vitest';
import {planTotal} from '../../components/format.js';
import {planLines} from '../../components/screens/PurgeDialog.js';
import type {PlanLine, PurgeDialog} from '../../src/store/state.js';

// Grok Build's purge plan as the real CLI's files gave it: a folder, then one prompt-history line,
// one search-index row and no estimate of their bytes.
const ID = '01a2518e-96cf-73d2-95e6-aa75921372f4';
const lines: PlanLine[] = [
	{kind: 'dir', description: 'session folder', path: `/home/u/.grok/sessions/p/${ID}`, bytes: 87_450, sessionId: ID},
	{
		kind: 'lines',
		description: "prompt history lines (the prompts' text)",
		path: '/home/u/.grok/sessions/p/prompt_history.jsonl',
		count: 1,
		bytes: 0,
		sessionId: ID,
	},
	{
		kind: 'rows',
		description: 'search index rows',
		path: '/home/u/.grok/sessions/session_search.sqlite',
		table: 'session_docs',
		count: 2,
		bytes: 0,
		sessionId: ID,
	},
	{kind: 'key', description: '.claude.json keys', path: '/home/u/.claude.json', count: 3, bytes: 120, sessionId: ID},
];
const dialog: PurgeDialog = {
	targets: ['grok-alpha'],
	expected: 'grok-alpha',
	loading: false,
	plans: [{target: 'grok-alpha', agent: 'grok', id: ID, descendants: [], lines, totalBytes: 87_570}],
	typed: '',
	scroll: 0,
	readToEnd: false,
};

describe('a purge plan line says what it deletes', () => {
	it('a file or folder by its bytes; lines, rows and keys by how many, never "0 B"', () => {
		const text = planLines(dialog, '/home/u', 160).map(l => l.text);
		expect(text).toContain('  session folder: 85.4 KiB');
		expect(text).toContain("  prompt history lines (the prompts' text): 1 line");
		expect(text).toContain('  search index rows: 2 rows of session_docs');
		expect(text).toContain('  .claude.json keys: 3 keys, 120 B');
		expect(text.join('\n')).not.toMatch(/\b0 B/);
	});

	it('a plan of rows alone totals its items, not "0 B"', () => {
		expect(planTotal(7, 0)).toBe('7 items');
		expect(planTotal(1, 2048)).toBe('1 item, 2.0 KiB');
	});
});
