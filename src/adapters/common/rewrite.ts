import fs from 'node:fs';
import path from 'node:path';

const MAX_ATTEMPTS = 5;

/** What a rewrite makes of the old text: the new text and how many things it took out. */
export interface Rewritten {
	readonly text: string;
	readonly removed: number;
}

/** fsync a folder so a rename in it survives a crash (some filesystems refuse: then nothing more can be done). */
export function fsyncDir(dir: string): void {
	let fd: number | undefined;
	try {
		fd = fs.openSync(dir, 'r');
		fs.fsyncSync(fd);
	} catch {
		// EISDIR/EINVAL on filesystems that cannot fsync a folder.
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}

/** Write `data` to a new file `temp` (mode `mode`) and fsync it. */
export function writeSynced(temp: string, data: string | Uint8Array, mode: number): void {
	const fd = fs.openSync(temp, 'wx', mode);
	try {
		// writeFileSync on a descriptor writes all of `data`, however many writes that takes.
		fs.writeFileSync(fd, data);
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * Replace a shared file with `transform(old text)`: written to a new file beside it, fsynced and
 * renamed over the old one, so a reader sees the old file or the new one and the old bytes are not
 * rewritten in place (the old inode's blocks are freed by the filesystem; that is as far as a file
 * can be erased). If the agent changes the file meanwhile (size or mtime moved), start over.
 * `transform` returns undefined when nothing is to change. Returns how many things went.
 */
export function writeReplacing(file: string, transform: (text: string) => Rewritten | undefined, tempName: (file: string) => string): number {
	for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		let stat: fs.Stats;
		try {
			stat = fs.lstatSync(file);
		} catch {
			return 0;
		}
		if (!stat.isFile()) throw new Error(`${file}: not a regular file`);
		const result = transform(fs.readFileSync(file, 'utf8'));
		if (!result) return 0;
		const temp = tempName(file);
		try {
			writeSynced(temp, result.text, stat.mode & 0o7777);
			const now = fs.lstatSync(file);
			if (now.size !== stat.size || now.mtimeMs !== stat.mtimeMs) continue;
			fs.renameSync(temp, file);
			fsyncDir(path.dirname(file));
			return result.removed;
		} finally {
			fs.rmSync(temp, {force: true});
		}
	}
	throw new Error(`${file}: kept changing while it was rewritten; try again`);
}
