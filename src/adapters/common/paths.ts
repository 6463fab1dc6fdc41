import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../../domain/result.js';
import {memo, memoKind, type InRefresh} from './refresh.js';

/** A cwd as the refresh compares it (canonicalCwd). */
const CANONICAL_CWD = memoKind<string>('cwd');

/** True when `p` is `root` or lies below it (both already resolved). */
export function isInside(p: string, root: string): boolean {
	return p === root || p.startsWith(root.endsWith(path.sep) ? root : `${root}${path.sep}`);
}

/**
 * The realpath of `p`, or undefined when it does not exist. One realpath(3) call: the JavaScript
 * realpathSync lstats every path component, and a refresh resolves thousands of transcripts.
 */
export function realpathOrUndefined(p: string): string | undefined {
	try {
		return fs.realpathSync.native(p);
	} catch {
		return undefined;
	}
}

/**
 * The realpath of `cwd` when it exists, else the path normalised (a deleted cwd still matches its
 * record). Inside a refresh, once per cwd: a discovery pass compares thousands of conversations
 * with the same few dozen cwds, and a realpath walks every component.
 */
export function canonicalCwd(ctx: InRefresh, cwd: string): string {
	// An unnamed arrow: a named one is wrapped to keep its name (tsx, the in-process bench) on
	// every call, and a discovery pass calls this once per conversation.
	return memo(ctx, CANONICAL_CWD.of(cwd), () => realpathOrUndefined(cwd) ?? path.resolve(cwd));
}

/** A plain file or folder name: no separators, not `.`/`..`, no NUL. */
export function isPlainName(name: string): boolean {
	return name.length > 0 && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\\') && !name.includes('\0');
}

/**
 * `root/...names`, refusing anything that is not a plain name. The result is not checked on disk;
 * deletion checks it again with `resolveInsideRoot`.
 */
export function joinNames(root: string, ...names: readonly string[]): string {
	for (const name of names) {
		if (!isPlainName(name)) throw new Error(`refusing path segment ${JSON.stringify(name)}`);
	}
	return path.join(root, ...names);
}

/**
 * Where `p` really lives, for deciding whether it may be deleted: its parent folder resolved with
 * realpath (a symlinked folder on the way is followed, so an escape shows), its own name kept
 * (a symlink at `p` itself is an entry to unlink, not a place to go). Undefined when the parent is gone.
 */
export function resolvedLocation(p: string): string | undefined {
	const parent = realpathOrUndefined(path.dirname(p));
	if (parent === undefined) return undefined;
	const name = path.basename(p);
	if (!isPlainName(name)) return undefined;
	return path.join(parent, name);
}

/** The root (of `roots`) that `p` really lies inside, or undefined (missing root, escape, `p` is a root). */
export function rootContaining(p: string, roots: readonly string[]): string | undefined {
	const location = resolvedLocation(p);
	if (location === undefined) return undefined;
	for (const root of roots) {
		const real = realpathOrUndefined(root);
		if (real !== undefined && location !== real && isInside(location, real)) return real;
	}
	return undefined;
}

/** Entries of a folder, or [] when it is missing or unreadable. Symlinks show as links (not followed). */
export function listDir(dir: string, ctx: InRefresh = {}): fs.Dirent[] {
	const read = () => {
		try {
			return fs.readdirSync(dir, {withFileTypes: true});
		} catch {
			return [];
		}
	};
	// Inside a live refresh, a folder the watch saw no entry come or go in is not read again.
	return ctx.refresh ? ctx.refresh.list(dir, read) : read();
}

/**
 * A hidden temporary name beside `file`, for writing a replacement and renaming it over. node:crypto
 * is loaded here, on first use (a purge), not at import: loading it costs every start about 8 ms.
 */
export function tempBeside(file: string): string {
	const nonce = process.getBuiltinModule('node:crypto').randomBytes(6).toString('hex');
	return path.join(path.dirname(file), `.${path.basename(file)}.mam-${nonce}.tmp`);
}

/**
 * Names in a folder, or [] when it is missing or unreadable: half the cost of `listDir` (no entry
 * objects), for indexes by name whose few hits the caller lstat()s before trusting them.
 */
export function listNames(dir: string, ctx: InRefresh = {}): string[] {
	const read = () => {
		try {
			return fs.readdirSync(dir);
		} catch {
			return [];
		}
	};
	return ctx.refresh ? ctx.refresh.names(dir, read) : read();
}

/**
 * `fs.existsSync`, asked once per path for as long as the caller keeps the function (one
 * discover): a store of thousands of conversations names a few dozen cwds.
 */
export function existsOnce(): (p: string) => boolean {
	const known = new Map<string, boolean>();
	return p => {
		let exists = known.get(p);
		if (exists === undefined) known.set(p, (exists = fs.existsSync(p)));
		return exists;
	};
}

/** lstat without throwing. */
export function lstatOrUndefined(p: string): fs.Stats | undefined {
	try {
		// No exception for a missing path: lookups by id probe many paths that are not there.
		return fs.lstatSync(p, {throwIfNoEntry: false});
	} catch {
		return undefined;
	}
}

/** Bytes under `p` (a file, a link, or a folder walked without following links). */
export function diskSize(p: string): number {
	const st = lstatOrUndefined(p);
	if (!st) return 0;
	if (!st.isDirectory()) return st.size;
	let total = 0;
	for (const entry of listDir(p)) total += diskSize(path.join(p, entry.name));
	return total;
}

/**
 * Delete `p` (file, link or folder) only when it really lies inside one of `roots`. Folders are
 * walked with lstat: a symlink inside is unlinked, never followed. Returns an error text or undefined.
 */
export function removeInsideRoots(p: string, roots: readonly string[]): string | undefined {
	if (rootContaining(p, roots) === undefined) return `${p}: refused, not inside the agent's folder`;
	try {
		removeTree(p);
		return undefined;
	} catch (error) {
		return `${p}: ${messageOf(error)}`;
	}
}

function removeTree(p: string): void {
	const st = lstatOrUndefined(p);
	if (!st) return;
	if (!st.isDirectory()) {
		fs.unlinkSync(p);
		return;
	}
	for (const entry of fs.readdirSync(p)) removeTree(path.join(p, entry));
	fs.rmdirSync(p);
}
