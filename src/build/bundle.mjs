// Bundles tsc's output (dist/src/cli.js) into dist/bin/, the installed `mam-tui`, and puts the
// launcher in front of the bin. Run by `npm run bundle`, after tsc.
import fs from 'node:fs';
import path from 'node:path';
import {build} from 'esbuild';

const OUT_DIR = 'dist/bin';
const BIN = path.join(OUT_DIR, 'cli.js');

// npm packages stay external: they resolve from node_modules as they would unbundled. Only
// better-sqlite3's JavaScript is bundled (its addon is loaded by path at run time).
const EXTERNAL = ['ink', 'react', 'react/jsx-runtime', 'execa', 'ps-list', 'yaml'];

// The bundled CommonJS (better-sqlite3) calls require(), which an ES module does not have.
const REQUIRE_BANNER = "import {createRequire as __bundleRequire} from 'node:module'; const require = __bundleRequire(import.meta.url);";

/**
 * The bin's first two lines. sh reads them and execs node on this same file; node skips the
 * first line and reads the second as a string and a comment.
 *
 * Why not `#!/usr/bin/env node`: when NODE_EXTRA_CA_CERTS is set, Node 20 builds its whole root
 * certificate store while it starts, before any JavaScript, and OpenSSL 3 makes that slow
 * (nodejs/node#40524; newer Node releases load certificates only once TLS is used,
 * nodejs/node#59856). Measured here (medians of 20 starts): 37 ms more with a one-certificate
 * file, 65 ms more with the system's ~140 that this machine names, on every `mam-tui` run. And
 * mam-tui opens no TLS connection. So node starts with the variable empty, and the user's value
 * rides along in MAM_TUI_NODE_EXTRA_CA_CERTS: `src/cli/launcher.ts` puts it back before anything
 * runs, so every process mam-tui starts sees it as the user set it.
 */
const LAUNCHER = [
	'#!/bin/sh',
	`':' //; if [ -n "\${NODE_EXTRA_CA_CERTS-}" ]; then export MAM_TUI_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS" NODE_EXTRA_CA_CERTS=; else unset MAM_TUI_NODE_EXTRA_CA_CERTS; fi; exec node "$0" "$@"`,
	'',
].join('\n');

fs.rmSync(OUT_DIR, {recursive: true, force: true});
const result = await build({
	entryPoints: ['dist/src/cli.js'],
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
for (const file of result.outputFiles) {
	fs.mkdirSync(path.dirname(file.path), {recursive: true});
	const isBin = path.resolve(file.path) === path.resolve(BIN);
	fs.writeFileSync(file.path, isBin ? LAUNCHER + file.text.replace(/^#!.*\n/, '') : file.contents);
	if (isBin) fs.chmodSync(file.path, 0o755);
}
