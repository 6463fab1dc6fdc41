import v8 from 'node:v8';

/** Where the installed bin's launcher keeps the user's NODE_EXTRA_CA_CERTS while node starts. */
export const SAVED_EXTRA_CA_CERTS = 'MAM_TUI_NODE_EXTRA_CA_CERTS';

/**
 * The installed bin's first two lines (src/build/bundle.mjs puts them in front of the bundle). sh
 * reads them and execs node on this same file; node skips the first line and reads the second as
 * a string and a comment.
 *
 * Why not `#!/usr/bin/env node`: when NODE_EXTRA_CA_CERTS is set, Node 20 builds its whole root
 * certificate store while it starts, before any JavaScript, and OpenSSL 3 makes that slow
 * (nodejs/node#40524; newer Node releases load certificates only once TLS is used,
 * nodejs/node#59856). Measured here (medians of 20 starts): 37 ms more with a one-certificate
 * file, 65 ms more with the system's ~140 that this machine names, on every `mam-tui` run. And
 * mam-tui opens no TLS connection. So node starts with the variable empty, and the user's value
 * rides along in SAVED_EXTRA_CA_CERTS until `restoreLauncherEnv` puts it back.
 *
 * `--max-semi-space-size=8` (MB): V8's young generation on 64-bit Node 20 grows to two 16 MB
 * semi-spaces, and the dashboard's first refresh (tens of MB of agent JSON parsed) fills them.
 * Measured on the bench world (20,000 conversations, the built dashboard, 7 December): peak RSS
 * 166-167 MB with 8, 163-165 MB with 6, 155-158 MB with 4 (three runs each), but with 4 the
 * collections after start cost more: CPU over the first minute of idle 0.81 s twice with 4 against
 * 0.68-0.78 s with 8, and `npm run bench` then missed its idle target (0.57-0.70 % against
 * 0.38 %). A flag only: node reads it when it sizes the heap, before any JavaScript.
 */
export const LAUNCHER = [
	'#!/bin/sh',
	`':' //; if [ -n "\${NODE_EXTRA_CA_CERTS-}" ]; then export ${SAVED_EXTRA_CA_CERTS}="$NODE_EXTRA_CA_CERTS" NODE_EXTRA_CA_CERTS=; else unset ${SAVED_EXTRA_CA_CERTS}; fi; exec node --max-semi-space-size=8 "$0" "$@"`,
	'',
].join('\n');

/**
 * Put the user's NODE_EXTRA_CA_CERTS back before anything runs, so the processes mam-tui starts
 * (an agent's own CLI may) see it as the user set it.
 */
export function restoreLauncherEnv(env: NodeJS.ProcessEnv = process.env): void {
	const saved = env[SAVED_EXTRA_CA_CERTS];
	if (saved === undefined) return;
	delete env[SAVED_EXTRA_CA_CERTS];
	env['NODE_EXTRA_CA_CERTS'] = saved;
}

/**
 * V8's old generation grows to up to twice what survived its last full collection (a factor it
 * picks from its GC speed), and the dashboard's first refresh promotes tens of MB that die soon
 * after (stats, parsed summaries, the in-use pass): the heap peaked at 200-212 MB on the bench
 * world, 176-188 MB with 15 % (the built dashboard 12 s after start, four runs each; CPU within
 * the noise of the runs). Set at run time, not on node's command line: a V8 flag a later
 * Node no longer knows would stop node from starting there, where here it is only ignored.
 */
export function keepHeapTight(): void {
	v8.setFlagsFromString('--heap-growing-percent=15');
}
