import '../support/sqliteUri.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, describe, expect, it} from 'vitest';
import {MIGRATIONS} from '../../src/registry/migrations.js';
import {parkedExtra, parkingExtra} from '../../src/registry/extra.js';
import {Registry} from '../../src/registry/registry.js';

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) fs.rmSync(d, {recursive: true, force: true});
});

function tmp(): string {
	const d = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-park-mig-'));
	dirs.push(d);
	return d;
}

describe('the park migration', () => {
	it("moves a schema-1 registry forward: every row kept with its id and version, and 'parked' allowed", () => {
		const file = path.join(tmp(), 'registry.db');
		const old = new Database(file);
		old.exec(MIGRATIONS[0] ?? '');
		old.pragma('user_version = 1');
		old
			.prepare(
				"INSERT INTO sessions (id, name, agent, cwd, status, epoch, created_at, updated_at, version, extra) VALUES (7, 'api', 'claude', '/p', 'stopped', 1, 2, 3, 9, '{\"x\":1}')",
			)
			.run();
		expect(() => old.prepare("UPDATE sessions SET status = 'parked' WHERE id = 7").run()).toThrow(/CHECK/);
		old.close();
		const registry = Registry.open(file);
		try {
			const row = registry.get('api');
			expect(row).toMatchObject({id: 7, status: 'stopped', version: 9, extra: {x: 1}, createdAt: 2});
			const parked = registry.update(7, {status: 'parked'});
			expect(parked.status).toBe('parked');
			expect(registry.findByPin('claude', 'none')).toEqual([]);
		} finally {
			registry.close();
		}
	});

	it('still refuses a status nobody knows', () => {
		const registry = Registry.open(path.join(tmp(), 'registry.db'));
		try {
			const row = registry.insert({name: 'a', agent: 'claude', cwd: '/p', status: 'running', epoch: 0});
			// @ts-expect-error: a status outside SESSION_STATUSES, as a bad writer would send
			expect(() => registry.update(row.id, {status: 'sleeping'})).toThrow(/CHECK/);
		} finally {
			registry.close();
		}
	});
});

describe('park codecs', () => {
	it('read back what they wrote and drop what they cannot trust', () => {
		const record = {
			at: 5,
			freedBytes: 10,
			idleSeconds: 60,
			argv: ['claude', '--resume', 'x'],
			cwd: '/p',
			paneId: '%1',
			placement: {session: 'work', window: '2'},
		};
		expect(parkedExtra.read(parkedExtra.write({}, record))).toEqual(record);
		expect(parkedExtra.read({parked: {at: 5, argv: [], cwd: '/p'}})).toBeUndefined();
		expect(parkedExtra.read({parked: {at: 5, argv: ['a'], cwd: '/p', freedBytes: -3, placement: {session: 4}}})).toEqual({
			at: 5,
			freedBytes: 0,
			idleSeconds: 0,
			argv: ['a'],
			cwd: '/p',
		});
		expect(parkingExtra.read({parking: {at: 'now'}})).toBeUndefined();
	});
});
