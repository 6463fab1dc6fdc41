// `node test/mutation/summary.mjs [group…] [--survivors]`: the per-file table of the JSON reports
// under reports/mutation/ (all groups that have one by default), and with --survivors the mutants
// no test noticed, with their line and replacement, to choose the next test from.
import fs from 'node:fs';
import path from 'node:path';

const dir = 'reports/mutation';
const args = process.argv.slice(2);
const showSurvivors = args.includes('--survivors');
const asked = args.filter(a => !a.startsWith('--'));
const groups =
	asked.length > 0
		? asked
		: fs
				.readdirSync(dir)
				.filter(f => f.endsWith('.json') && !f.endsWith('.incremental.json'))
				.map(f => f.slice(0, -'.json'.length))
				.sort();

const lines = ['| group | file | mutants | killed | timeout | survived | no coverage | score % |', '|---|---|---|---|---|---|---|---|'];
const survivors = [];
for (const group of groups) {
	const report = JSON.parse(fs.readFileSync(path.join(dir, `${group}.json`), 'utf8'));
	for (const [file, {mutants, source}] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
		const count = status => mutants.filter(m => m.status === status).length;
		const killed = count('Killed');
		const timeout = count('Timeout');
		const survived = count('Survived');
		const noCoverage = count('NoCoverage');
		const valid = killed + timeout + survived + noCoverage;
		const score = valid === 0 ? 'n/a' : ((100 * (killed + timeout)) / valid).toFixed(2);
		lines.push(`| ${group} | ${file} | ${mutants.length} | ${killed} | ${timeout} | ${survived} | ${noCoverage} | ${score} |`);
		const sourceLines = source.split('\n');
		for (const m of mutants.filter(x => x.status === 'Survived' || x.status === 'NoCoverage')) {
			const line = m.location.start.line;
			const original = sourceLines[line - 1]?.trim() ?? '';
			survivors.push(`${file}:${line}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}\n    ${original}`);
		}
	}
}
process.stdout.write(`${lines.join('\n')}\n`);
if (showSurvivors) process.stdout.write(`\n${survivors.join('\n')}\n`);
