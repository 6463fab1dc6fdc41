import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

/** The package version, found by walking up from this file (works from src/ and dist/src/). */
export function packageVersion(): string {
	let dir = path.dirname(fileURLToPath(import.meta.url));
	for (let i = 0; i < 5; i++) {
		const file = path.join(dir, 'package.json');
		try {
			const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as {name?: string; version?: string};
			if (pkg.name === 'mam-tui' && pkg.version) return pkg.version;
		} catch {
			// not here; keep walking
		}
		dir = path.dirname(dir);
	}
	return '0.0.0';
}
