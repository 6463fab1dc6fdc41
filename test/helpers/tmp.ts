import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A private temp dir, removed by the returned dispose. */
export function tempDir(prefix = 'mam-test-'): {dir: string; dispose: () => void} {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	return {dir, dispose: () => fs.rmSync(dir, {recursive: true, force: true})};
}
