import fs from 'node:fs';
import path from 'node:path';
import {fsyncDir, writeSynced} from '../adapters/common/rewrite.js';
import type {PurgePlan} from '../adapters/types.js';
import type {AgentId} from '../domain/types.js';

/**
 * mam-tui's trash (issue 18 item 4): one folder per purge, `<trash>/<purge id>/`, holding copies
 * of what the purge took out of the agent's stores, so `restore` can put it back byte for byte.
 * This file is the on-disk format: the entry's state (its journal), its manifest, and the safe
 * writes both need. Capturing and restoring live in trash.ts.
 */

/** `20261201-101500-codex-3fa9c1`: sortable by time, says the agent, unique by its random tail. */
export const PURGE_ID = /^\d{8}-\d{6}-[a-z]+-[0-9a-f]{6}$/;

/**
 * Where an entry is in its life. A purge writes `capturing` (the agent's stores are untouched),
 * then `ready` (everything copied; the agent's data is about to go), then `done`. A restore writes
 * `restoring`, an empty `emptying`; both end with the folder gone. A crash leaves the state that
 * tells a rerun where to go on.
 */
export type TrashState = 'capturing' | 'ready' | 'done' | 'restoring' | 'emptying';

/** Who wrote the state, so an entry whose writer died is known to be abandoned, not in progress. */
export interface TrashWriter {
	readonly pid: number;
	readonly startTime: number;
}

export interface TrashMeta {
	readonly purgeId: string;
	readonly agent: AgentId;
	readonly conversation: string;
	readonly label: string;
	/** The registry row's name, when there was one. */
	readonly session: string | null;
	/**
	 * Whose agent data the purge took it from (`--home`): a restore checks resumability there,
	 * whatever home it runs with. Absent in entries written before it was kept.
	 */
	readonly home?: string;
	readonly createdAt: number;
	readonly state: TrashState;
	readonly writer: TrashWriter;
}

/** A file (or link) copied out of the agent's store. */
export interface StoredFile {
	readonly kind: 'file' | 'link';
	/** Where it lived (and goes back to). */
	readonly source: string;
	/** Its copy, relative to the entry folder. */
	readonly stored: string;
	readonly sha256: string;
	readonly size: number;
	readonly mode: number;
	readonly mtimeMs: number;
	/** For a link: where it pointed. */
	readonly target?: string;
}

/** A folder the purge removed: recreated (empty, same mode) before its files go back. */
export interface StoredDir {
	readonly source: string;
	readonly mode: number;
}

/** A shared file the purge rewrote (lines taken out, a JSON key removed). */
export interface StoredEdit {
	readonly kind: 'lines' | 'key';
	readonly source: string;
	/** The whole file as it was before the purge, relative to the entry folder. */
	readonly before: string;
	readonly beforeSha256: string;
	/** The file right after the purge (undefined: the purge removed it, or it was not there). */
	readonly afterSha256?: string;
	readonly afterSize?: number;
}

/** One table's rows the purge deleted, kept in the entry's sqlite file of the same schema. */
export interface StoredTable {
	readonly name: string;
	/** The `CREATE TABLE` text in the agent's database when the rows were taken: restore refuses when it differs. */
	readonly sql: string;
	readonly rows: number;
}

export interface StoredDatabase {
	readonly source: string;
	/** The sqlite file of deleted rows, relative to the entry folder. */
	readonly stored: string;
	/** A whole copy taken before the purge, used only until the deleted rows are known (then erased). */
	readonly snapshot: string;
	readonly tables: readonly StoredTable[];
	readonly sha256?: string;
}

export interface TrashManifest {
	readonly plan: PurgePlan;
	readonly dirs: readonly StoredDir[];
	readonly files: readonly StoredFile[];
	readonly edits: readonly StoredEdit[];
	readonly databases: readonly StoredDatabase[];
	/** Things captured but not restorable, said once in the outcome (a WITHOUT ROWID table, …). */
	readonly notes: readonly string[];
}

export function entryDir(trashDir: string, purgeId: string): string {
	if (!PURGE_ID.test(purgeId)) throw new Error(`not a purge id: ${JSON.stringify(purgeId)}`);
	return path.join(trashDir, purgeId);
}

/** A new purge id for `agent` at `now`. */
export function newPurgeId(agent: AgentId, now: number): string {
	const t = new Date(now).toISOString();
	const stamp = `${t.slice(0, 10).replaceAll('-', '')}-${t.slice(11, 19).replaceAll(':', '')}`;
	const nonce = process.getBuiltinModule('node:crypto').randomBytes(3).toString('hex');
	return `${stamp}-${agent}-${nonce}`;
}

/** sha256 of a file's bytes. */
export function sha256File(file: string): string {
	return process.getBuiltinModule('node:crypto').createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export function sha256Text(data: string | Uint8Array): string {
	return process.getBuiltinModule('node:crypto').createHash('sha256').update(data).digest('hex');
}

/** Write JSON atomically: a new file, fsynced, renamed over the old one, the folder fsynced. */
export function writeJsonAtomic(file: string, value: unknown): void {
	const temp = `${file}.tmp-${process.pid}`;
	fs.rmSync(temp, {force: true});
	writeSynced(temp, `${JSON.stringify(value, null, 1)}\n`, 0o600);
	fs.renameSync(temp, file);
	fsyncDir(path.dirname(file));
}

function readJson<T>(file: string): T | undefined {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
	} catch {
		return undefined;
	}
}

export function readMeta(dir: string): TrashMeta | undefined {
	return readJson<TrashMeta>(path.join(dir, 'state.json'));
}

export function writeMeta(dir: string, meta: TrashMeta): void {
	writeJsonAtomic(path.join(dir, 'state.json'), meta);
}

export function readManifest(dir: string): TrashManifest | undefined {
	return readJson<TrashManifest>(path.join(dir, 'manifest.json'));
}

export function writeManifest(dir: string, manifest: TrashManifest): void {
	writeJsonAtomic(path.join(dir, 'manifest.json'), manifest);
}

/** Every entry folder in the trash (by purge id), oldest first. */
export function entryIds(trashDir: string): string[] {
	try {
		return fs
			.readdirSync(trashDir)
			.filter(name => PURGE_ID.test(name))
			.sort();
	} catch {
		return [];
	}
}

/** Bytes under a folder (links counted as themselves). */
export function folderBytes(dir: string): number {
	let total = 0;
	for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
		const p = path.join(dir, entry.name);
		total += entry.isDirectory() ? folderBytes(p) : fs.lstatSync(p).size;
	}
	return total;
}

/** Copy `from` to a new file `to`, fsynced, with the source's mode; the copy is a new inode. */
export function copySynced(from: string, to: string, mode: number): void {
	fs.mkdirSync(path.dirname(to), {recursive: true});
	fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
	fs.chmodSync(to, mode & 0o7777);
	const fd = fs.openSync(to, 'r');
	try {
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

/** Remove an entry folder: state `emptying` first, so a crash half-way is known for what it is. */
export function removeEntry(dir: string, meta: TrashMeta | undefined, writer: TrashWriter): void {
	if (meta) writeMeta(dir, {...meta, state: 'emptying', writer});
	fs.rmSync(dir, {recursive: true, force: true});
	fsyncDir(path.dirname(dir));
}
