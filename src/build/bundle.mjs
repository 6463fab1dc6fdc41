// Bundles tsc's output (dist/src/cli.js) into dist/bin/, the installed `mam-tui`, and puts the
// launcher in front of the bin. Run by `npm run bundle`, after tsc.
import fs from 'node:fs';
import path from 'node:path';
import {build} from 'esbuild';
// tsc has run: the launcher lives beside the code that undoes its one change to the environment.
import {LAUNCHER} from '../../dist/src/cli/launcher.js';

const OUT_DIR = 'dist/bin';
const BIN = path.join(OUT_DIR, 'cli.js');

// npm packages stay external: they resolve from node_modules as they would unbundled. Two are
// bundled: better-sqlite3's JavaScript (its addon is loaded by path at run time), and execa, whose
// ~140 modules took ~90 ms to resolve and load on a command's first spawn; as one chunk (loaded
// on first use, as before) they take ~30 ms.
const EXTERNAL = ['ink', 'react', 'react/jsx-runtime', 'ps-list', 'yaml'];

// The bundled CommonJS (better-sqlite3) calls require(), which an ES module does not have.
const REQUIRE_BANNER = "import {createRequire as __bundleRequire} from 'node:module'; const require = __bundleRequire(import.meta.url);";

fs.rmSync(OUT_DIR, {recursive: true, force: true});
const result = await build({
	// The search index's thread is an entry of its own: search/worker.ts starts it from the file
	// beside the chunk that holds that module (dist/bin/indexWorker.js).
	entryPoints: [
		{in: 'dist/src/cli.js', out: 'cli'},
		{in: 'dist/src/search/indexWorker.js', out: 'indexWorker'},
	],
	bundle: true,
	// The dashboard and the demo are chunks of their own, loaded when used.
	splitting: true,
	format: 'esm',
	platform: 'node',
	target: 'node20',
	external: EXTERNAL,
	outdir: OUT_DIR,
	banner: {js: REQUIRE_BANNER},
	logLevel: 'warning',
	write: false,
});
fs.mkdirSync(OUT_DIR, {recursive: true});
for (const file of result.outputFiles) {
	const isBin = path.resolve(file.path) === path.resolve(BIN);
	fs.writeFileSync(file.path, isBin ? LAUNCHER + file.text : file.contents);
	if (isBin) fs.chmodSync(file.path, 0o755);
}
