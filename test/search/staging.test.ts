import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {openSearchStore, searchIndexPath, type IndexedConversation} from '../../src/search/index.js';

// A whole sync reads one agent after another and stages the messages (SearchStore.put staged):
// they are indexed at its end, oldest conversation first, so rowids still grow with time; what a
// build that stopped half-way staged is indexed at the next open; and a purge erases staged text too.

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) fs.rmSync(d, {recursive: true, force: true});
});

function stateDir(): string {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-stage-'));
	dirs.push(dir);
	return dir;
}

function conv(agent: 'claude' | 'codex', id: string, at: number): IndexedConversation {
	return {agent, id, cwd: '/w', createdAt: at, updatedAt: at, stamp: at, cursor: '{}', headless: false};
}

/** The indexed messages' texts in rowid order, read beside the store. */
function textsByRowid(dir: string): string[] {
	const db = new Database(searchIndexPath(dir), {readonly: true});
	try {
		return (db.prepare('SELECT text FROM msg ORDER BY rowid').all() as {text: string}[]).map(r => r.text);
	} finally {
		db.close();
	}
}

function bytesUnder(dir: string): Buffer {
	return Buffer.concat(fs.readdirSync(dir).map(f => fs.readFileSync(path.join(dir, f))));
}

describe('staged messages of a whole sync', () => {
	it('are indexed oldest conversation first, whatever order the agents were read in', () => {
		const dir = stateDir();
		const store = openSearchStore(dir);
		store.transaction(() => {
			// claude is read first, but its conversation is the newer one.
			store.put(conv('claude', 'c-new', 3000), [{role: 'user', at: 3000, text: 'newest words'}], false, true);
			store.put(conv('codex', 'x-old', 1000), [{role: 'user', at: 1000, text: 'oldest words'}], false, true);
			store.put(conv('codex', 'x-mid', 2000), [{role: 'user', at: 2000, text: 'middle words'}], false, true);
		});
		expect(store.query('"words"', {all: true})).toEqual([]);
		expect(store.flushStaged()).toBe(3);
		expect(store.query('"words"', {all: true}).map(h => h.conversation.id)).toHaveLength(3);
		store.close();
		expect(textsByRowid(dir)).toEqual(['oldest words', 'middle words', 'newest words']);
	});

	it('are indexed when the index is opened again after a build that stopped', () => {
		const dir = stateDir();
		const store = openSearchStore(dir);
		store.transaction(() => store.put(conv('claude', 'c1', 1000), [{role: 'user', at: 1000, text: 'interrupted zebra'}], false, true));
		store.close();
		const again = openSearchStore(dir);
		try {
			expect(again.query('"zebra"', {all: true}).map(h => h.conversation.id)).toEqual(['c1']);
		} finally {
			again.close();
		}
	});

	it('are erased with their conversation: no byte of them left in the files', () => {
		const dir = stateDir();
		const store = openSearchStore(dir);
		store.transaction(() => {
			store.put(conv('claude', 'keep', 1000), [{role: 'user', at: 1000, text: 'ordinary words'}], false, true);
			store.put(conv('claude', 'gone', 2000), [{role: 'user', at: 2000, text: 'quokkasecretword'}], false, true);
		});
		expect(bytesUnder(dir).includes('quokkasecretword')).toBe(true);
		expect(store.forget('claude', ['gone'])).toBe(1);
		expect(bytesUnder(dir).includes('quokkasecretword')).toBe(false);
		store.flushStaged();
		expect(store.query('"quokkasecretword"', {all: true})).toEqual([]);
		store.close();
		expect(bytesUnder(dir).includes('quokkasecretword')).toBe(false);
	});
});

describe('opening the index while another connection writes', () => {
	it('does not wait for it or fail: the staged messages are indexed by whoever comes later', () => {
		const dir = stateDir();
		const store = openSearchStore(dir);
		store.transaction(() => store.put(conv('claude', 'c1', 1000), [{role: 'user', at: 1000, text: 'locked wombat'}], false, true));
		store.close();
		// A build in another process, in the middle of a write.
		const writer = new Database(searchIndexPath(dir));
		writer.exec("BEGIN IMMEDIATE; UPDATE conv SET title = 'busy'");
		const started = Date.now();
		const during = openSearchStore(dir);
		expect(Date.now() - started).toBeLessThan(2000);
		// Trusted, not taken for corrupt and built again under the writer.
		expect(during.rebuilt).toBe(false);
		expect(during.get('claude', 'c1')?.id).toBe('c1');
		expect(during.query('"wombat"', {all: true})).toEqual([]);
		writer.exec('COMMIT');
		writer.close();
		during.close();
		const after = openSearchStore(dir);
		try {
			expect(after.query('"wombat"', {all: true}).map(h => h.conversation.id)).toEqual(['c1']);
		} finally {
			after.close();
		}
	});
});
