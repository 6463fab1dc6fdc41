import fs from 'node:fs';

/**
 * Is `dir` a folder that exists (symlinks followed)? The ONE cwd check: resume runs an agent only
 * in its recorded cwd, so the snapshot, the conversations views, discovery and the resume action
 * all ask this before calling a conversation resumable.
 */
export function folderExists(dir: string): boolean {
	try {
		return fs.statSync(dir, {throwIfNoEntry: false})?.isDirectory() === true;
	} catch {
		return false; // EACCES on a parent, ENOTDIR, ELOOP: not a folder resume can run in
	}
}
