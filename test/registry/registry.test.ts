import '../support/sqliteUri.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import Database from 'better-sqlite3';
import {execa} from 'execa';
import {afterEach, beforeEach, describe, expect, it} from 'vitest';
import {RegistryError} from '../../src/registry/db.js';
import {MUX_KINDS, type MuxKind} from '../../src/domain/types.js';
import {MIGRATIONS, SCHEMA_VERSION} from '../../src/registry/migrations.js';
import {registryPath, stateDir} from '../../src/registry/paths.js';
import {ConflictError, Registry} from '../../src/registry/registry.js';
import {tempDir} from '../helpers/tmp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const listing = (dir: string) => fs.readdirSync(dir).sort();

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
	tmp = tempDir();
});
afterEach(() => tmp.dispose());

const newRow = {name: 'alpha', agent: 'claude', cwd: '/work/alpha', status: 'running', epoch: 1000} as const;

describe('registry paths', () => {
	it('prefers MAM_HOME, then XDG_STATE_HOME/mam, then ~/.local/state/mam', () => {
		expect(stateDir({env: {MAM_HOME: '/m', XDG_STATE_HOME: '/x'}, home: '/h'})).toBe('/m');
		expect(stateDir({env: {XDG_STATE_HOME: '/x'}, home: '/h'})).toBe('/x/mam');
		expect(stateDir({env: {}, home: '/h'})).toBe('/h/.local/state/mam');
		expect(registryPath('/opt/r.db', {env: {MAM_HOME: '/m'}, home: '/h'})).toBe('/opt/r.db');
		expect(registryPath(undefined, {env: {MAM_HOME: '/m'}, home: '/h'})).toBe('/m/registry.db');
	});

	it('creates missing folders with mode 0700', () => {
		const file = path.join(tmp.dir, 'a', 'b', 'registry.db');
		Registry.open(file).close();
		expect(fs.statSync(path.join(tmp.dir, 'a', 'b')).mode & 0o777).toBe(0o700);
	});
});

describe('migrations', () => {
	it('brings a new file to the current schema version, in WAL mode', () => {
		const file = path.join(tmp.dir, 'registry.db');
		Registry.open(file).close();
		const db = new Database(file, {readonly: true});
		expect(db.pragma('user_version', {simple: true})).toBe(SCHEMA_VERSION);
		expect(db.pragma('journal_mode', {simple: true})).toBe('wal');
		const tables = db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all();
		expect(tables).toEqual([{name: 'audit'}, {name: 'sessions'}]);
		db.close();
	});

	it('reopening an up-to-date registry keeps its rows', () => {
		const file = path.join(tmp.dir, 'registry.db');
		const first = Registry.open(file);
		first.insert(newRow);
		first.close();
		const second = Registry.open(file);
		expect(second.list().map(s => s.name)).toEqual(['alpha']);
		second.close();
	});

	it("checks a row's multiplexer against MUX_KINDS, not SQL: a version-1 file keeps its rows", () => {
		const file = path.join(tmp.dir, 'registry.db');
		const v1 = new Database(file);
		v1.exec(MIGRATIONS[0] ?? '');
		v1.pragma('user_version = 1');
		v1.prepare(
			"INSERT INTO sessions (name, agent, cwd, mux, pane_id, status, epoch, created_at, updated_at, version) VALUES ('old', 'codex', '/w', 'tmux', '%4', 'stopped', 5, 6, 7, 3)",
		).run();
		expect(() => v1.prepare("UPDATE sessions SET mux = 'zellij'").run()).toThrow(/CHECK/);
		v1.close();
		const registry = Registry.open(file);
		expect(registry.list()).toEqual([expect.objectContaining({id: 1, name: 'old', mux: 'tmux', paneId: '%4', status: 'stopped', version: 3, createdAt: 6})]);
		for (const [i, mux] of MUX_KINDS.entries()) expect(registry.insert({...newRow, name: `k${i}`, mux}).mux).toBe(mux);
		const off = 'zellij' as MuxKind;
		expect(() => registry.insert({...newRow, name: 'z', mux: off})).toThrow(`unknown multiplexer "zellij" (known: ${MUX_KINDS.join(', ')})`);
		expect(() => registry.update(1, {mux: off})).toThrow(/unknown multiplexer "zellij"/);
		expect(registry.get('z')).toBeUndefined();
		registry.close();
		// A kind a newer mam-tui wrote reads as none, and the row stays listed.
		const raw = new Database(file);
		raw.prepare("UPDATE sessions SET mux = 'zellij' WHERE id = 1").run();
		raw.close();
		const again = Registry.open(file);
		expect(again.getById(1)).toMatchObject({name: 'old', mux: null});
		again.close();
	});
});

describe('sessions and audit', () => {
	it('inserts, updates with a version bump and keeps names unique', () => {
		const registry = Registry.open(':memory:', () => 5000);
		const row = registry.insert(newRow);
		expect(row).toMatchObject({name: 'alpha', status: 'running', agentSessionId: null, version: 1, createdAt: 5000});
		const pinned = registry.update(row.id, {agentSessionId: 'abc', paneId: '%3', mux: 'tmux'});
		expect(pinned).toMatchObject({agentSessionId: 'abc', paneId: '%3', mux: 'tmux', version: 2});
		expect(() => registry.insert(newRow)).toThrow(/UNIQUE/);
		expect(registry.uniqueName('alpha')).toBe('alpha-2');
		registry.close();
	});

	it('list returns every field of every row as get does, in id order', () => {
		let now = 5000;
		const registry = Registry.open(path.join(tmp.dir, 'r.db'), () => (now += 7));
		const a = registry.insert({...newRow, mux: 'herdr', paneId: 'w1:p2', agentSessionId: 'id-a', extra: {note: 'x'}});
		const b = registry.insert({name: 'beta', agent: 'codex', cwd: '/work/beta', status: 'stopped', epoch: 2000});
		registry.update(a.id, {status: 'stopped', cwd: '/work/moved'});
		const listed = registry.list();
		expect(listed).toEqual([registry.get('alpha'), registry.get('beta')]);
		expect(listed[0]).toEqual({
			id: a.id,
			name: 'alpha',
			agent: 'claude',
			cwd: '/work/moved',
			mux: 'herdr',
			paneId: 'w1:p2',
			agentSessionId: 'id-a',
			status: 'stopped',
			epoch: 1000,
			createdAt: 5007,
			updatedAt: 5021,
			version: 2,
			extra: {note: 'x'},
		});
		expect(listed[1]).toMatchObject({id: b.id, mux: null, paneId: null, agentSessionId: null, extra: {}});
		registry.close();
	});

	it('refuses an update based on a stale version (compare-and-set)', () => {
		const registry = Registry.open(':memory:');
		const row = registry.insert(newRow);
		registry.update(row.id, {status: 'stopped'}, row.version);
		expect(() => registry.update(row.id, {status: 'running'}, row.version)).toThrow(ConflictError);
		expect(registry.get('alpha')?.status).toBe('stopped');
		registry.close();
	});

	it('writes and reads audit records with JSON detail', () => {
		const registry = Registry.open(':memory:', () => 42);
		registry.audit({session: 'alpha', action: 'stop', step: 'exit-input', outcome: 'ok', detail: {pid: 7}});
		registry.audit({session: 'beta', action: 'purge', outcome: 'refused'});
		expect(registry.auditLog('alpha')).toEqual([{id: 1, at: 42, session: 'alpha', action: 'stop', step: 'exit-input', outcome: 'ok', detail: {pid: 7}}]);
		expect(registry.auditLog().map(a => a.session)).toEqual(['alpha', 'beta']);
		registry.close();
	});

	it('binds values as parameters: quotes and SQL in a name are stored verbatim', () => {
		const registry = Registry.open(':memory:');
		const name = "x'); DROP TABLE sessions; --";
		registry.insert({...newRow, name});
		expect(registry.get(name)?.name).toBe(name);
		expect(registry.list()).toHaveLength(1);
		registry.close();
	});
});

describe('two processes at once', () => {
	it('loses no update when two processes read-modify-write the same row', async () => {
		const file = path.join(tmp.dir, 'registry.db');
		const registry = Registry.open(file);
		registry.insert(newRow);
		registry.close();
		const worker = path.join(here, 'incrementWorker.ts');
		const startAt = String(Date.now() + 3000);
		const run = () => execa('node', ['--import', 'tsx', worker, file, 'alpha', '400', startAt]);
		await Promise.all([run(), run()]);
		const after = Registry.open(file);
		expect(after.get('alpha')?.extra['counter']).toBe(800);
		after.close();
	}, 60_000);
});

describe('bad files are reported and left untouched', () => {
	it('refuses a file of random bytes and leaves it byte-identical', () => {
		const file = path.join(tmp.dir, 'registry.db');
		fs.writeFileSync(file, crypto.randomBytes(4096));
		const before = sha(file);
		expect(() => Registry.open(file)).toThrow(RegistryError);
		expect(() => Registry.open(file)).toThrow(file);
		expect(sha(file)).toBe(before);
		expect(listing(tmp.dir)).toEqual(['registry.db']);
	});

	it('refuses a file with a sqlite header but corrupt pages, untouched', () => {
		const file = path.join(tmp.dir, 'registry.db');
		Registry.open(file).close();
		const bytes = fs.readFileSync(file);
		// Keep the 100-byte header, wreck everything after it.
		crypto.randomFillSync(bytes, 100);
		fs.writeFileSync(file, bytes);
		const before = sha(file);
		expect(() => Registry.open(file)).toThrow(/corrupt|not a database|malformed/);
		expect(sha(file)).toBe(before);
		expect(listing(tmp.dir)).toEqual(['registry.db']);
	});

	it('refuses a schema newer than it knows, without writing', () => {
		const file = path.join(tmp.dir, 'registry.db');
		Registry.open(file).close();
		const db = new Database(file);
		db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
		db.pragma('journal_mode = DELETE');
		db.close();
		const before = sha(file);
		expect(() => Registry.open(file)).toThrow(/newer than this mam-tui knows/);
		expect(sha(file)).toBe(before);
		expect(listing(tmp.dir)).toEqual(['registry.db']);
	});
});
