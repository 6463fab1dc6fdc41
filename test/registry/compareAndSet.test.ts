import '../support/sqliteUri.js';
import path from 'node:path';
import Database from 'better-sqlite3';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {ConflictError, Registry} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';

// The registry's writes as the actions rely on them: a compare-and-set that refuses a stale
// version and changes nothing, read-modify-writes that see each other, and lookups that find
// exactly the rows asked for.

let tmp: ReturnType<typeof tempDir>;
let registry: Registry;
let now: number;
beforeEach(() => {
	tmp = tempDir('mam-cas-');
	now = 1000;
	registry = Registry.open(path.join(tmp.dir, 'registry.db'), () => (now += 10));
});
afterEach(() => {
	registry.close();
	tmp.dispose();
});

const row = (name: string, extra: Record<string, unknown> = {}) => registry.insert({name, agent: 'claude', cwd: '/w', status: 'running', epoch: 1, extra});

describe('compare-and-set', () => {
	it('applies an update made on the current version, bumps it and stamps the time', () => {
		const r = row('a');
		const next = registry.update(r.id, {status: 'stopped'}, r.version);
		expect(next).toMatchObject({status: 'stopped', version: r.version + 1, updatedAt: 1020, createdAt: 1010});
	});

	it('refuses a stale version with a ConflictError naming the session, and writes nothing', () => {
		const r = row('a');
		const moved = registry.update(r.id, {paneId: '%1'});
		let thrown: unknown;
		try {
			registry.update(r.id, {status: 'stopped', paneId: '%2'}, r.version);
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(ConflictError);
		expect((thrown as ConflictError).sessionName).toBe('a');
		expect((thrown as ConflictError).name).toBe('ConflictError');
		expect((thrown as ConflictError).message).toBe('session a was changed by another mam-tui process; reload and try again');
		expect(registry.get('a')).toEqual(moved);
	});

	it('without a version, always applies; only the fields named change', () => {
		const r = registry.insert({
			name: 'a',
			agent: 'codex',
			cwd: '/w',
			mux: 'tmux',
			paneId: '%1',
			agentSessionId: 'x',
			status: 'running',
			epoch: 1,
			extra: {k: 1},
		});
		registry.update(r.id, {status: 'stopped'});
		expect(registry.update(r.id, {cwd: '/v'})).toMatchObject({
			mux: 'tmux',
			paneId: '%1',
			agentSessionId: 'x',
			status: 'stopped',
			cwd: '/v',
			extra: {k: 1},
			version: 3,
		});
	});

	it('an update of a missing row says so', () => {
		expect(() => registry.update(999, {status: 'stopped'})).toThrow('session #999 does not exist');
		expect(() => registry.updateExtra(999, e => e)).toThrow('session #999 does not exist');
	});

	it('two handles on one file: the second one’s stale write is refused', () => {
		const other = Registry.open(path.join(tmp.dir, 'registry.db'));
		try {
			const r = row('a');
			const seen = other.get('a');
			registry.update(r.id, {status: 'stopped'}, r.version);
			expect(() => other.update(r.id, {status: 'running'}, seen?.version)).toThrow(ConflictError);
			expect(other.get('a')?.status).toBe('stopped');
		} finally {
			other.close();
		}
	});
});

describe('read-modify-write', () => {
	it('updateExtra changes a copy of the current extra and keeps the rest', () => {
		const r = row('a', {keep: true, n: 1});
		const seen: unknown[] = [];
		const next = registry.updateExtra(r.id, extra => {
			seen.push({...extra});
			extra['n'] = 2;
			return extra;
		});
		expect(seen).toEqual([{keep: true, n: 1}]);
		expect(next.extra).toEqual({keep: true, n: 2});
		expect(next.version).toBe(r.version + 1);
		// The record read before is not changed behind the caller's back.
		expect(r.extra).toEqual({keep: true, n: 1});
	});

	it('a transaction that throws writes nothing; one that returns gives back its value', () => {
		const r = row('a');
		expect(() =>
			registry.transaction(() => {
				registry.update(r.id, {status: 'stopped'});
				throw new Error('half-way');
			}),
		).toThrow('half-way');
		expect(registry.get('a')?.status).toBe('running');
		expect(registry.transaction(() => registry.update(r.id, {status: 'stopped'}).status)).toBe('stopped');
	});

	it("changeStamp moves when another connection commits and for our own writes (a serve's stop), not for reads", () => {
		const other = Registry.open(path.join(tmp.dir, 'registry.db'));
		try {
			const before = registry.changeStamp();
			registry.list();
			expect(registry.changeStamp()).toBe(before);
			row('mine');
			const afterOurs = registry.changeStamp();
			expect(afterOurs).not.toBe(before);
			other.insert({name: 'theirs', agent: 'claude', cwd: '/w', status: 'running', epoch: 1});
			expect(registry.changeStamp()).not.toBe(afterOurs);
		} finally {
			other.close();
		}
	});
});

describe('lookups', () => {
	it('findByPin finds the rows pinned to that agent and id only', () => {
		const a = registry.insert({name: 'a', agent: 'claude', cwd: '/w', agentSessionId: 'same', status: 'running', epoch: 1});
		registry.insert({name: 'b', agent: 'codex', cwd: '/w', agentSessionId: 'same', status: 'running', epoch: 1});
		registry.insert({name: 'c', agent: 'claude', cwd: '/w', agentSessionId: 'other', status: 'running', epoch: 1});
		expect(registry.findByPin('claude', 'same')).toEqual([a]);
		expect(registry.findByPin('claude', 'none')).toEqual([]);
	});

	it('getById and get answer undefined for a row that is not there', () => {
		expect(registry.getById(42)).toBeUndefined();
		expect(registry.get('nobody')).toBeUndefined();
	});

	it('uniqueName takes the first free suffix, and a LIKE wildcard in the name matches only itself', () => {
		expect(registry.uniqueName('a')).toBe('a');
		row('a');
		row('a-2');
		expect(registry.uniqueName('a')).toBe('a-3');
		row('x_y');
		// `x_y-%` unescaped would match `xzy-…`; `x%` would match everything starting with x.
		row('xzy-2');
		expect(registry.uniqueName('x_y')).toBe('x_y-2');
		row('50%');
		row('50abc-2');
		expect(registry.uniqueName('50%')).toBe('50%-2');
		row('back\\slash');
		expect(registry.uniqueName('back\\slash')).toBe('back\\slash-2');
	});

	it('uniqueName sees the suffixed names of a base holding LIKE wildcards or the escape', () => {
		for (const base of ['x_y', '50%', 'back\\slash']) {
			row(base);
			row(`${base}-2`);
			expect(registry.uniqueName(base)).toBe(`${base}-3`);
		}
	});

	it('auditLog gives the newest `limit` entries of one session, oldest first', () => {
		for (let i = 1; i <= 4; i++) registry.audit({session: 'a', action: 'stop', step: `s${i}`, outcome: 'ok'});
		registry.audit({session: 'b', action: 'purge', outcome: 'refused', detail: {why: 'in use'}});
		expect(registry.auditLog('a', 2).map(e => e.step)).toEqual(['s3', 's4']);
		expect(registry.auditLog('b')).toEqual([expect.objectContaining({session: 'b', action: 'purge', step: null, outcome: 'refused', detail: {why: 'in use'}})]);
		expect(registry.auditLog(undefined, 3).map(e => e.session)).toEqual(['a', 'a', 'b']);
		expect(registry.auditLog().length).toBe(5);
	});
});

describe('rows written by someone else', () => {
	it('an extra that is not a JSON object reads as empty', () => {
		const r = row('a', {k: 1});
		const raw = new Database(path.join(tmp.dir, 'registry.db'));
		try {
			for (const extra of ['[1, 2]', 'null', '"text"', 'not json', '7']) {
				raw.prepare('UPDATE sessions SET extra = ? WHERE id = ?').run(extra, r.id);
				expect(registry.get('a')?.extra, extra).toEqual({});
			}
		} finally {
			raw.close();
		}
	});
});
