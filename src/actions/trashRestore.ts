import fs from 'node:fs';
import path from 'node:path';
import {fsyncDir, writeSynced} from '../adapters/common/rewrite.js';
import type {AgentId} from '../domain/types.js';
import {messageOf} from '../domain/result.js';
import type {WriterAlive} from './trash.js';
import {checkRowsRestorable, restoreRows} from './trashRows.js';
import {
	copySynced,
	entryDir,
	readManifest,
	readMeta,
	removeEntry,
	sha256File,
	sha256Text,
	writeMeta,
	type StoredEdit,
	type StoredFile,
	type TrashWriter,
} from './trashStore.js';

// `mam-tui restore ID`: put a purge back from the trash byte for byte (SPEC 6.3 step 5), never
// over something that is there now; what cannot go back is said, not forced.

/** Why a stored file cannot go back, or undefined (it can, or it is back already with the same bytes). */
function fileProblem(file: StoredFile): string | undefined {
	const st = fs.lstatSync(file.source, {throwIfNoEntry: false});
	if (!st) return undefined;
	if (file.kind === 'link')
		return st.isSymbolicLink() && fs.readlinkSync(file.source) === file.target ? undefined : `${file.source} exists; restoring would overwrite it`;
	return st.isFile() && st.size === file.size && sha256File(file.source) === file.sha256 ? undefined : `${file.source} exists; restoring would overwrite it`;
}

/** The bytes a rewritten file should hold after the restore, or why it cannot be worked out. */
function editTarget(dir: string, edit: StoredEdit): {data?: Buffer; skip?: string; problem?: string} {
	const before = fs.readFileSync(path.join(dir, edit.before));
	let current: Buffer | undefined;
	try {
		current = fs.readFileSync(edit.source);
	} catch {
		current = undefined;
	}
	if (current === undefined) return edit.afterSha256 === undefined ? {data: before} : {problem: `${edit.source} is gone since the purge`};
	const sha = sha256Text(current);
	if (sha === edit.beforeSha256) return {};
	if (sha === edit.afterSha256) return {data: before};
	// An append-only file the agent wrote to since: the old lines back, the new ones kept after them.
	if (
		edit.kind === 'lines' &&
		edit.afterSize !== undefined &&
		current.length >= edit.afterSize &&
		sha256Text(current.subarray(0, edit.afterSize)) === edit.afterSha256
	) {
		return {data: Buffer.concat([before, current.subarray(edit.afterSize)])};
	}
	if (edit.kind === 'key') return {skip: `${edit.source} changed since the purge; its lastSessionId was not put back (resume does not need it)`};
	return {problem: `${edit.source} changed since the purge in a way that is not an append; restoring would overwrite it`};
}

/**
 * The temp name a restore writes beside `file`: fixed (no pid), so a rerun after a crash removes
 * the one the killed run left instead of leaving it in the agent's folder.
 */
function restoreTemp(file: string): string {
	return path.join(path.dirname(file), `.${path.basename(file)}.mam-restore.tmp`);
}

/** Replace a file with `data` (new file, fsync, rename), keeping its mode. */
function replaceWith(file: string, data: Buffer, mode: number): void {
	fs.mkdirSync(path.dirname(file), {recursive: true});
	const temp = restoreTemp(file);
	fs.rmSync(temp, {force: true});
	writeSynced(temp, data, mode);
	fs.renameSync(temp, file);
	fsyncDir(path.dirname(file));
}

/** Put one stored file back: copied beside its place, then linked into it (never over something there). */
function putBack(dir: string, file: StoredFile): void {
	const temp = restoreTemp(file.source);
	if (fs.existsSync(path.dirname(file.source))) fs.rmSync(temp, {force: true});
	if (fs.lstatSync(file.source, {throwIfNoEntry: false})) return;
	fs.mkdirSync(path.dirname(file.source), {recursive: true});
	if (file.kind === 'link') {
		fs.symlinkSync(file.target ?? '', file.source);
		return;
	}
	copySynced(path.join(dir, file.stored), temp, file.mode);
	fs.utimesSync(temp, new Date(), new Date(file.mtimeMs));
	fs.linkSync(temp, file.source);
	fs.unlinkSync(temp);
	fsyncDir(path.dirname(file.source));
}

export interface RestoreOutcome {
	readonly purgeId: string;
	readonly agent: AgentId;
	readonly conversation: string;
	readonly label: string;
	readonly session: string | null;
	/** Whose agent data it went back into, when the entry says (TrashMeta.home). */
	readonly home?: string;
	readonly files: number;
	readonly rows: number;
	readonly edits: number;
	readonly notes: readonly string[];
}

/**
 * Put a purge back. Everything is checked first (nothing there would be overwritten, every
 * table's schema is as it was, the trash copies still match their sha256); then folders, files,
 * rewritten files and rows go back, and the entry is removed. A crash half-way leaves the entry
 * in `restoring`; a rerun skips what is already back (same bytes, same rows) and finishes.
 */
export async function restoreFromTrash(
	trashDir: string,
	purgeId: string,
	writer: TrashWriter,
	alive: WriterAlive,
): Promise<{ok: true; value: RestoreOutcome} | {ok: false; error: string}> {
	const dir = entryDir(trashDir, purgeId);
	const meta = readMeta(dir);
	const manifest = readManifest(dir);
	if (!meta || !manifest) return {ok: false, error: `no purge ${purgeId} in the trash`};
	if (meta.state === 'capturing' || meta.state === 'ready') {
		const how = (await alive(meta.writer)) ? 'is still running' : 'was interrupted; run the same purge again to finish it first';
		return {ok: false, error: `purge ${purgeId} ${how}`};
	}
	if (meta.state === 'emptying') return {ok: false, error: `purge ${purgeId} is being emptied from the trash`};
	for (const file of manifest.files) {
		if (file.kind === 'file' && sha256File(path.join(dir, file.stored)) !== file.sha256)
			return {ok: false, error: `the trash copy of ${file.source} is damaged (sha256 differs); nothing was restored`};
	}
	const problems = manifest.files.map(fileProblem).filter((p): p is string => p !== undefined);
	const edits = manifest.edits.map(edit => ({edit, target: editTarget(dir, edit)}));
	problems.push(...edits.map(e => e.target.problem).filter((p): p is string => p !== undefined));
	for (const db of manifest.databases) {
		if (db.tables.length === 0) continue;
		const problem = checkRowsRestorable(db.source, path.join(dir, db.stored), db.tables);
		if (problem) problems.push(problem);
	}
	if (problems.length > 0) return {ok: false, error: `refusing to restore ${purgeId}: ${problems.join('; ')}. Nothing was restored.`};
	writeMeta(dir, {...meta, state: 'restoring', writer});
	try {
		for (const d of manifest.dirs) if (!fs.existsSync(d.source)) fs.mkdirSync(d.source, {recursive: true, mode: d.mode});
		for (const file of manifest.files) putBack(dir, file);
		const notes: string[] = [];
		for (const {edit, target} of edits) {
			if (target.skip) notes.push(target.skip);
			if (target.data) replaceWith(edit.source, target.data, fs.statSync(path.join(dir, edit.before)).mode & 0o7777);
		}
		let rows = 0;
		for (const db of manifest.databases) if (db.tables.length > 0) rows += restoreRows(db.source, path.join(dir, db.stored), db.tables);
		removeEntry(dir, {...meta, state: 'restoring'}, writer);
		return {
			ok: true,
			value: {
				purgeId,
				agent: meta.agent,
				conversation: meta.conversation,
				label: meta.label,
				session: meta.session,
				...(meta.home ? {home: meta.home} : {}),
				files: manifest.files.length,
				rows,
				edits: edits.length,
				notes: [...manifest.notes, ...notes],
			},
		};
	} catch (error) {
		return {ok: false, error: `restoring ${purgeId} stopped: ${messageOf(error)}; run the restore again to finish it`};
	}
}
