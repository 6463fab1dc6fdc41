import fs from 'node:fs';
import path from 'node:path';

/**
 * Write stand-in agents into `binDir`: tiny `/bin/sh` scripts named like the agent (`claude`,
 * `codex`, …). The kernel names a script's process after the file, so both herdr-style
 * foreground detection and the adapters' `matchesProcess` see `claude`. Each prints a prompt,
 * echoes what it reads, and ends on `/exit` or `/quit`.
 */
export function writeAgentStandIns(binDir: string, names: readonly string[]): string[] {
	fs.mkdirSync(binDir, {recursive: true});
	return names.map(name => {
		if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`bad stand-in name ${name}`);
		const file = path.join(binDir, name);
		const script = [
			'#!/bin/sh',
			`printf '%s> ' '${name}'`,
			'while IFS= read -r line; do',
			'  case "$line" in /exit|/quit) echo bye; exit 0 ;; esac',
			`  printf 'got: %s\\n%s> ' "$line" '${name}'`,
			'done',
			'',
		].join('\n');
		fs.writeFileSync(file, script, {mode: 0o755});
		return file;
	});
}
