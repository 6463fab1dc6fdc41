import fs from 'node:fs';
import path from 'node:path';
import type {Vouch} from '../adapters/common/refresh.js';

/** How many changed paths are remembered; past that, everything read before counts as changed. */
const REMEMBERED = 100_000;

/**
 * File-change notification for the discovery cache. Stat-polling every watch path costs what
 * exists (20,000 conversations: tens of thousands of stat calls per tick); inotify (fs.watch on
 * the folders that hold the paths) costs nothing while nothing changes. Each cache key (an
 * agent and cwd) names its watch paths; a change in one of their folders marks the key dirty
 * and calls `onChange`. Where a folder cannot be watched the key stays "unwatched" and the
 * cache stats it on every tick, as before.
 */
export class FolderWatch {
	private readonly onChange: () => void;
	private readonly watchers = new Map<string, fs.FSWatcher>();
	/** Each folder with the keys that watch it. */
	private readonly keysOf = new Map<string, Set<string>>();
	/** Keys some of whose folders could not be watched. */
	private readonly unwatched = new Set<string>();
	private dirty = new Set<string>();
	private readonly keysTracked = new Set<string>();
	/** Change events seen (the Vouch sequence), and when each path or folder last changed. */
	private seq = 0;
	private floor = 0;
	private readonly fileChanged = new Map<string, number>();
	private readonly listingChanged = new Map<string, number>();
	private closed = false;

	constructor(onChange: () => void) {
		this.onChange = onChange;
	}

	/** Watch `folders` for `key` (a folder not there yet through its nearest parent). */
	track(key: string, folders: readonly string[]): void {
		if (this.closed) return;
		this.keysTracked.add(key);
		let complete = true;
		for (const folder of folders) {
			if (!this.add(folder, key)) complete = false;
		}
		if (complete) this.unwatched.delete(key);
		else this.unwatched.add(key);
	}

	/** Are all of `key`'s folders watched (so a change there is reported)? */
	covers(key: string): boolean {
		return !this.closed && this.keysTracked.has(key) && !this.unwatched.has(key);
	}

	/** Does a tick have to stat `key`'s paths (a change was seen, or it is not fully watched)? */
	needsLook(key: string, dirty: ReadonlySet<string>): boolean {
		return dirty.has(key) || this.unwatched.has(key) || this.closed;
	}

	/** What this watch vouches for, for the reads of one refresh (see `Vouch`). */
	vouch(): Vouch {
		return {
			seq: this.seq,
			fileUnchangedSince: (file, since) => {
				const dir = path.dirname(file);
				return (
					!this.closed &&
					since >= this.floor &&
					this.watchers.has(dir) &&
					(this.fileChanged.get(file) ?? 0) <= since &&
					(this.fileChanged.get(dir) ?? 0) <= since &&
					(this.listingChanged.get(dir) ?? 0) <= since
				);
			},
			listingUnchangedSince: (dir, since) =>
				!this.closed &&
				since >= this.floor &&
				this.watchers.has(dir) &&
				(this.listingChanged.get(dir) ?? 0) <= since &&
				(this.fileChanged.get(dir) ?? 0) <= since,
		};
	}

	/** Note what an event says changed: the named entry (or, unnamed, the whole folder); a rename changes the listing. */
	private remember(dir: string, event: string, name: string | Buffer | null): void {
		this.seq += 1;
		if (this.fileChanged.size >= REMEMBERED) {
			this.fileChanged.clear();
			this.listingChanged.clear();
			this.floor = this.seq;
		}
		this.fileChanged.set(name ? path.join(dir, String(name)) : dir, this.seq);
		if (event === 'rename' || !name) this.listingChanged.set(dir, this.seq);
	}

	/** Was a change seen that no refresh has taken yet? */
	pending(): boolean {
		return this.dirty.size > 0;
	}

	/** The keys changed since the last call, forgotten here. */
	take(): Set<string> {
		const taken = this.dirty;
		this.dirty = new Set();
		return taken;
	}

	close(): void {
		this.closed = true;
		for (const watcher of this.watchers.values()) watcher.close();
		this.watchers.clear();
	}

	/** Watch `folder` (or, while it does not exist, the nearest parent that does) for `key`. */
	private add(folder: string, key: string): boolean {
		let dir = folder;
		for (let up = 0; up < 4; up++) {
			const keys = this.keysOf.get(dir);
			if (keys && this.watchers.has(dir)) {
				keys.add(key);
				return true;
			}
			try {
				const watcher = fs.watch(dir, {persistent: false}, (event, name) => this.changed(dir, event, name));
				watcher.on('error', () => this.lost(dir));
				this.watchers.set(dir, watcher);
				this.keysOf.set(dir, new Set([...(keys ?? []), key]));
				return true;
			} catch (error) {
				// A folder that is not there yet: its parent sees it appear.
				if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
				const parent = path.dirname(dir);
				if (parent === dir) return false;
				dir = parent;
			}
		}
		return false;
	}

	private changed(dir: string, event: string, name: string | Buffer | null): void {
		this.remember(dir, event, name);
		// The watched folder itself removed or renamed: its watch is dead, so drop it.
		if (event === 'rename' && !fs.existsSync(dir)) return this.lost(dir);
		for (const key of this.keysOf.get(dir) ?? []) this.dirty.add(key);
		this.onChange();
	}

	/** A folder removed or a watch lost: its keys look again (and re-watch) on the next tick. */
	private lost(dir: string): void {
		this.watchers.get(dir)?.close();
		this.watchers.delete(dir);
		for (const key of this.keysOf.get(dir) ?? []) {
			this.dirty.add(key);
			this.unwatched.add(key);
		}
		this.keysOf.delete(dir);
		this.onChange();
	}
}
