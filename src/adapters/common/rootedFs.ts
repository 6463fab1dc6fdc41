import fs from 'node:fs';
import path from 'node:path';

/** A path that would leave the agent's root once symlinks are resolved; nothing was deleted. */
export class OutsideRootError extends Error {
	readonly target: string;
	constructor(target: string, root: string) {
		super(`refusing to delete ${target}: it resolves outside ${root}`);
		this.target = target;
		this.name = 'OutsideRootError';
	}
}

/** True when `child` is `parent` or lies below it (both already absolute and normalised). */
export function isWithin(parent: string, child: string): boolean {
	const rel = path.relative(parent, child);
	return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** realpath, or undefined when the path does not exist (or cannot be resolved). */
export function realOrUndefined(file: string): string | undefined {
	try {
		return fs.realpathSync(file);
	} catch {
		return undefined;
	}
}

/** realpath when it exists, else the resolved path: for comparing recorded cwds with a query. */
export function canonicalPath(file: string): string {
	return realOrUndefined(file) ?? path.resolve(file);
}

/** lstat that answers undefined instead of throwing: the path itself, never its symlink target. */
export function lstatOrUndefined(file: string): fs.Stats | undefined {
	try {
		return fs.lstatSync(file);
	} catch {
		return undefined;
	}
}

/**
 * Where `target` really is, for deletion: its parent folder resolved through symlinks, plus its
 * own name (a symlink named `target` is deleted as a link, never followed). Throws
 * OutsideRootError when that is not inside the real `root`, or when `root` does not exist.
 */
export function resolveForDelete(root: string, target: string): string {
	const realRoot = realOrUndefined(root);
	const realParent = realOrUndefined(path.dirname(target));
	if (!realRoot || !realParent) throw new OutsideRootError(target, root);
	const resolved = path.join(realParent, path.basename(target));
	if (resolved === realRoot || !isWithin(realRoot, resolved)) throw new OutsideRootError(target, root);
	return resolved;
}

/**
 * Delete `target` (file, folder tree or symlink) only when it resolves inside `root`. Folder trees
 * are removed without following symlinks inside them. Returns false when it was already gone.
 */
export function removeInsideRoot(root: string, target: string): boolean {
	if (!lstatOrUndefined(target)) return false;
	const resolved = resolveForDelete(root, target);
	const stat = lstatOrUndefined(resolved);
	if (!stat) return false;
	if (stat.isDirectory()) fs.rmSync(resolved, {recursive: true, force: true});
	else fs.unlinkSync(resolved);
	return true;
}

/** Remove an empty folder inside `root`; a folder that gained entries meanwhile is left alone. */
export function removeEmptyDirInsideRoot(root: string, target: string): boolean {
	const stat = lstatOrUndefined(target);
	if (!stat?.isDirectory()) return false;
	const resolved = resolveForDelete(root, target);
	try {
		fs.rmdirSync(resolved);
		return true;
	} catch {
		return false;
	}
}

/** On-disk bytes of a file or folder tree, never following symlinks (a link counts its own size). */
export function bytesOf(file: string): number {
	const stat = lstatOrUndefined(file);
	if (!stat) return 0;
	if (!stat.isDirectory()) return stat.size;
	let total = 0;
	for (const entry of listDir(file)) total += bytesOf(path.join(file, entry.name));
	return total;
}

/** Folder entries, or none when the folder is missing or unreadable. */
export function listDir(dir: string): fs.Dirent[] {
	try {
		return fs.readdirSync(dir, {withFileTypes: true});
	} catch {
		return [];
	}
}

/** A regular file's text, or undefined when it is missing, not a regular file or larger than `maxBytes`. */
export function readSmallText(file: string, maxBytes = 64 * 1024 * 1024): string | undefined {
	const stat = lstatOrUndefined(file);
	if (!stat?.isFile() || stat.size > maxBytes) return undefined;
	try {
		return fs.readFileSync(file, 'utf8');
	} catch {
		return undefined;
	}
}

/** Parse JSON text; undefined for anything that is not valid JSON. */
export function parseJsonOrUndefined(text: string | undefined): unknown {
	if (text === undefined) return undefined;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

/** Write `text` to `file` through a sibling temp file and a rename, so a reader never sees half of it. */
export function replaceFileAtomically(root: string, file: string, text: string): void {
	const resolved = resolveForDelete(root, file);
	const temp = `${resolved}.mam-${process.pid}.tmp`;
	const mode = lstatOrUndefined(resolved)?.mode;
	fs.writeFileSync(temp, text, mode === undefined ? undefined : {mode: mode & 0o777});
	fs.renameSync(temp, resolved);
}
