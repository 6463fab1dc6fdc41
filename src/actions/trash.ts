import fs from 'node:fs';
import path from 'node:path';
import type {PurgePlan} from '../adapters/types.js';
import type {AgentId} from '../domain/types.js';
import {exportGoneRows, snapshotDatabase} from './trashRows.js';
import {
	copySynced,
	entryDir,
	entryIds,
	folderBytes,
	newPurgeId,
	readManifest,
	readMeta,
	removeEntry,
	sha256File,
	writeManifest,
	writeMeta,
	type StoredDatabase,
	type StoredDir,
	type StoredEdit,
	type StoredFile,
	type TrashManifest,
	type TrashMeta,
	type TrashWriter,
} from './trashStore.js';

/** What the purge hands the trash: the plan it is about to carry out. */
export interface TrashSubject {
	readonly agent: AgentId;
	readonly conversation: string;
	readonly label: string;
	readonly session: string | null;
	/** The agent data's home (the adapter context's `home`). */
	readonly home: string;
	readonly plan: PurgePlan;
}

/** An entry being filled by a purge. */
export interface OpenEntry {
	readonly dir: string;
	readonly meta: TrashMeta;
	readonly manifest: TrashManifest;
}

/** Is the process that wrote an entry's state still the one running? */
export type WriterAlive = (writer: TrashWriter) => Promise<boolean>;

function walk(dir: string, dirs: StoredDir[], files: {source: string}[]): void {
	dirs.push({source: dir, mode: fs.lstatSync(dir).mode & 0o7777});
	for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
		const p = path.join(dir, entry.name);
		if (entry.isDirectory()) walk(p, dirs, files);
		else files.push({source: p});
	}
}

/** Copy one file or link out of the agent's store into the entry (a copy: the agent's deleter may change files in place). */
function storeFile(dir: string, source: string, n: number): StoredFile | undefined {
	let st: fs.Stats;
	try {
		st = fs.lstatSync(source);
	} catch {
		return undefined;
	}
	if (st.isSymbolicLink()) {
		return {kind: 'link', source, stored: '', sha256: '', size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs, target: fs.readlinkSync(source)};
	}
	if (!st.isFile()) return undefined;
	const stored = path.join('files', String(n));
	copySynced(source, path.join(dir, stored), st.mode);
	return {kind: 'file', source, stored, sha256: sha256File(path.join(dir, stored)), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs};
}

function captureFiles(dir: string, plan: PurgePlan): {dirs: StoredDir[]; files: StoredFile[]} {
	const dirs: StoredDir[] = [];
	const sources: {source: string}[] = [];
	for (const item of plan.items) {
		if (item.kind === 'file') sources.push({source: item.path});
		else if (item.kind === 'dir' && fs.lstatSync(item.path, {throwIfNoEntry: false})?.isDirectory()) walk(item.path, dirs, sources);
	}
	const seen = new Set<string>();
	const files: StoredFile[] = [];
	for (const {source} of sources) {
		if (seen.has(source)) continue;
		seen.add(source);
		const stored = storeFile(dir, source, files.length);
		if (stored) files.push(stored);
	}
	return {dirs, files};
}

/** Does `file` start with sqlite's header? A `rows` item of another store (a JSON file of rows) is kept as a rewritten file. */
function isSqlite(file: string): boolean {
	let fd: number | undefined;
	try {
		fd = fs.openSync(file, 'r');
		const head = Buffer.alloc(16);
		fs.readSync(fd, head, 0, 16, 0);
		return head.toString('latin1') === 'SQLite format 3\u0000';
	} catch {
		return false;
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}

function captureEdits(dir: string, plan: PurgePlan): StoredEdit[] {
	const edits: StoredEdit[] = [];
	const seen = new Set<string>();
	for (const item of plan.items) {
		const rewritten = item.kind === 'lines' || item.kind === 'key' || (item.kind === 'rows' && !isSqlite(item.path));
		if (!rewritten || seen.has(item.path)) continue;
		seen.add(item.path);
		const st = fs.lstatSync(item.path, {throwIfNoEntry: false});
		if (!st?.isFile()) continue;
		const before = path.join('edits', String(edits.length));
		copySynced(item.path, path.join(dir, before), st.mode);
		edits.push({kind: item.kind === 'key' ? 'key' : 'lines', source: item.path, before, beforeSha256: sha256File(path.join(dir, before))});
	}
	return edits;
}

async function captureDatabases(dir: string, plan: PurgePlan): Promise<StoredDatabase[]> {
	const out: StoredDatabase[] = [];
	for (const source of [...new Set(plan.items.filter(i => i.kind === 'rows' && isSqlite(i.path)).map(i => i.path))]) {
		const n = out.length;
		const snapshot = path.join('dbs', `${n}.snapshot.sqlite`);
		fs.mkdirSync(path.join(dir, 'dbs'), {recursive: true});
		await snapshotDatabase(source, path.join(dir, snapshot));
		out.push({source, stored: path.join('dbs', `${n}.sqlite`), snapshot, tables: []});
	}
	return out;
}

/**
 * Copy everything the plan names into a new trash entry, before anything is deleted (also before
 * the agent's own deleter runs). The agent's stores are not changed here; a crash leaves an
 * entry in `capturing`, which the next purge or trash command removes.
 */
export async function captureToTrash(trashDir: string, subject: TrashSubject, writer: TrashWriter, now: number): Promise<OpenEntry> {
	const purgeId = newPurgeId(subject.agent, now);
	const dir = entryDir(trashDir, purgeId);
	fs.mkdirSync(dir, {recursive: true, mode: 0o700});
	const meta: TrashMeta = {
		purgeId,
		agent: subject.agent,
		conversation: subject.conversation,
		label: subject.label,
		session: subject.session,
		home: subject.home,
		createdAt: now,
		state: 'capturing',
		writer,
	};
	writeMeta(dir, meta);
	const {dirs, files} = captureFiles(dir, subject.plan);
	const edits = captureEdits(dir, subject.plan);
	const databases = await captureDatabases(dir, subject.plan);
	const manifest: TrashManifest = {plan: subject.plan, dirs, files, edits, databases, notes: []};
	writeManifest(dir, manifest);
	const ready: TrashMeta = {...meta, state: 'ready'};
	writeMeta(dir, ready);
	return {dir, meta: ready, manifest};
}

/** An entry a purge left in `ready` (it died after copying, maybe half-way through deleting): a rerun finishes it. */
export async function unfinishedEntry(trashDir: string, agent: AgentId, conversation: string, alive: WriterAlive): Promise<OpenEntry | undefined> {
	for (const purgeId of entryIds(trashDir).reverse()) {
		const dir = entryDir(trashDir, purgeId);
		const meta = readMeta(dir);
		const manifest = readManifest(dir);
		if (meta?.state !== 'ready' || meta.agent !== agent || meta.conversation !== conversation || !manifest) continue;
		if (await alive(meta.writer)) continue;
		return {dir, meta, manifest};
	}
	return undefined;
}

/**
 * After the purge: note what the rewritten files look like now, keep the deleted rows (and erase
 * the whole-database snapshots), record every stored file's sha256, and mark the entry done.
 */
export function finishTrash(entry: OpenEntry, writer: TrashWriter): {purgeId: string; notes: string[]} {
	const edits = entry.manifest.edits.map((edit): StoredEdit => {
		const st = fs.lstatSync(edit.source, {throwIfNoEntry: false});
		if (!st?.isFile()) return {kind: edit.kind, source: edit.source, before: edit.before, beforeSha256: edit.beforeSha256};
		return {...edit, afterSha256: sha256File(edit.source), afterSize: st.size};
	});
	const notes: string[] = [];
	const databases = entry.manifest.databases.map((db): StoredDatabase => {
		const snapshot = path.join(entry.dir, db.snapshot);
		const stored = path.join(entry.dir, db.stored);
		// No snapshot: an earlier run got past this point, and the manifest already says what was kept.
		if (!fs.existsSync(snapshot)) return db;
		fs.rmSync(stored, {force: true});
		const kept = exportGoneRows(db.source, snapshot, stored);
		notes.push(...kept.notes);
		return {...db, tables: kept.tables, sha256: sha256File(stored)};
	});
	// The manifest names the kept rows before the snapshots go: a crash between the two loses nothing.
	writeManifest(entry.dir, {...entry.manifest, edits, databases, notes: [...entry.manifest.notes, ...notes]});
	for (const db of databases) fs.rmSync(path.join(entry.dir, db.snapshot), {force: true});
	writeMeta(entry.dir, {...entry.meta, state: 'done', writer});
	return {purgeId: entry.meta.purgeId, notes};
}

/** One purge in the trash, as `mam-tui trash` lists it. */
export interface TrashListing {
	readonly purgeId: string;
	readonly agent: AgentId;
	readonly conversation: string;
	readonly label: string;
	readonly state: TrashMeta['state'];
	readonly createdAt: number;
	readonly ageMs: number;
	readonly bytes: number;
	readonly items: number;
}

export function listTrash(trashDir: string, now: number): TrashListing[] {
	const out: TrashListing[] = [];
	for (const purgeId of entryIds(trashDir)) {
		const dir = entryDir(trashDir, purgeId);
		const meta = readMeta(dir);
		if (!meta) continue;
		const manifest = readManifest(dir);
		out.push({
			purgeId,
			agent: meta.agent,
			conversation: meta.conversation,
			label: meta.label,
			state: meta.state,
			createdAt: meta.createdAt,
			ageMs: Math.max(0, now - meta.createdAt),
			bytes: folderBytes(dir),
			items: manifest?.plan.items.length ?? 0,
		});
	}
	return out;
}

/**
 * Hard-delete trash entries: the finished ones older than `olderThanMs` (all finished ones when
 * undefined), and the abandoned ones (a purge or restore that died while capturing or restoring
 * is garbage: the agent's stores are in the old state or the restored one). Files are unlinked;
 * the trash's sqlite files go whole. Returns the purge ids removed.
 */
export async function emptyTrash(trashDir: string, now: number, writer: TrashWriter, alive: WriterAlive, olderThanMs?: number): Promise<string[]> {
	const removed: string[] = [];
	for (const purgeId of entryIds(trashDir)) {
		const dir = entryDir(trashDir, purgeId);
		const meta = readMeta(dir);
		const abandoned = meta === undefined || ((meta.state === 'capturing' || meta.state === 'emptying') && !(await alive(meta.writer)));
		const expired = meta?.state === 'done' && (olderThanMs === undefined || now - meta.createdAt >= olderThanMs);
		if (!abandoned && !expired) continue;
		removeEntry(dir, meta, writer);
		removed.push(purgeId);
	}
	return removed;
}

/** Hard-delete one finished purge; false when there is none by that id (or it is not finished). */
export function emptyEntry(trashDir: string, purgeId: string, writer: TrashWriter): boolean {
	const dir = entryDir(trashDir, purgeId);
	const meta = readMeta(dir);
	if (meta?.state !== 'done') return false;
	removeEntry(dir, meta, writer);
	return true;
}
