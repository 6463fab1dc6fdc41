// Run as a child process by registry.test.ts: increments a counter in the row's extra N times,
// each a read-modify-write, to prove two processes lose no update.
import {Registry} from '../../src/registry/registry.js';

const [file, name, times, startAt] = process.argv.slice(2);
const registry = Registry.open(file ?? '');
// Both workers spin until the same moment so their writes really interleave.
while (Date.now() < Number(startAt)) {
	// busy wait on purpose: a timer would let the other process finish first
}
const row = registry.get(name ?? '');
if (!row) throw new Error('row missing');
for (let i = 0; i < Number(times); i++) {
	registry.updateExtra(row.id, extra => ({...extra, counter: Number(extra['counter'] ?? 0) + 1}));
}
registry.close();
