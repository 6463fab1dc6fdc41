// `npm run test:mutation [group…]`: each group of test/mutation/groups in turn (all by default).
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'groups');
const all = fs
	.readdirSync(dir)
	.filter(f => f.endsWith('.stryker.mjs'))
	.map(f => f.slice(0, -'.stryker.mjs'.length))
	.sort();
const asked = process.argv.slice(2);
const unknown = asked.filter(g => !all.includes(g));
if (unknown.length > 0) {
	process.stderr.write(`unknown mutation group(s) ${unknown.join(', ')}; the groups are ${all.join(', ')}\n`);
	process.exit(2);
}
let failed = 0;
for (const name of asked.length > 0 ? asked : all) {
	process.stdout.write(`\n== mutation group ${name}\n`);
	const run = spawnSync('npx', ['stryker', 'run', path.join('test/mutation/groups', `${name}.stryker.mjs`)], {stdio: 'inherit'});
	if (run.status !== 0) failed += 1;
}
process.exitCode = failed > 0 ? 1 : 0;
