import {spawn, spawnSync, type ChildProcess} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {builtCli, cliEnv} from '../helpers/cli.js';
import {inspectRegistry, rowProblems} from './support/registryCheck.js';
import {budgetMs, trials} from './support/soak.js';

const REGISTRY_MODULE = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/registry/registry.js')).href;

/**
 * A writer that never stops: it creates sessions and bumps them, each change and its audit record
 * in one transaction, through the built Registry class. A SIGKILL can land anywhere in it.
 */
const WORKER = `
import {Registry} from ${JSON.stringify(REGISTRY_MODULE)};
const [file, tag] = process.argv.slice(2);
const reg = Registry.open(file);
console.log('ready');
for (;;) {
	const row = reg.transaction(() => {
		const created = reg.insert({name: reg.uniqueName(tag), agent: 'claude', cwd: '/tmp', status: 'stopped', epoch: Date.now(), extra: {counter: 0}});
		reg.audit({session: created.name, action: 'created', outcome: 'ok'});
		return created;
	});
	for (let i = 0; i < 25; i++) {
		reg.transaction(() => {
			const current = reg.getById(row.id);
			const next = reg.update(row.id, {status: i % 2 ? 'running' : 'stopped', extra: {...current.extra, counter: Number(current.extra.counter) + 1, pad: 'x'.repeat(i * 40)}});
			reg.audit({session: row.name, action: 'bump', outcome: 'ok', detail: {version: next.version}});
		});
	}
}
`;

let dir: string;
let worker: string;

beforeAll(() => {
	dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-regsafety-')));
	worker = path.join(dir, 'worker.mjs');
	fs.writeFileSync(worker, WORKER);
});

afterAll(() => {
	spawnSync('chattr', ['-R', '-i', dir], {stdio: 'ignore'});
	fs.rmSync(dir, {recursive: true, force: true});
});

function startWorker(file: string, tag: string): {child: ChildProcess; ready: Promise<void>} {
	const child = spawn(process.execPath, [worker, file, tag], {stdio: ['ignore', 'pipe', 'pipe']});
	const ready = new Promise<void>(resolve => {
		child.stdout?.on('data', (chunk: Buffer) => {
			if (chunk.toString().includes('ready')) resolve();
		});
		child.once('exit', () => resolve());
	});
	return {child, ready};
}

async function kill(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return;
	const gone = new Promise<void>(resolve => child.once('exit', () => resolve()));
	child.kill('SIGKILL');
	await gone;
}

/** Every change and its audit record went in together: the counts agree for every session. */
function consistency(file: string): string[] {
	const state = inspectRegistry(file);
	const problems = state.integrity === 'ok' ? [] : [`integrity_check: ${state.integrity}`];
	problems.push(...rowProblems(state.sessions));
	for (const s of state.sessions) {
		const audits = state.audit.filter(a => a.session === s.name);
		const bumps = audits.filter(a => a.action === 'bump').length;
		const created = audits.filter(a => a.action === 'created').length;
		if (created !== 1) problems.push(`${s.name}: ${created} created records`);
		if (s.extra['counter'] !== s.version - 1) problems.push(`${s.name}: counter ${String(s.extra['counter'])} at version ${s.version}`);
		if (bumps !== s.version - 1) problems.push(`${s.name}: ${bumps} bump records at version ${s.version}`);
	}
	const names = new Set(state.sessions.map(s => s.name));
	for (const a of state.audit) if (a.session !== null && !names.has(a.session)) problems.push(`audit for a session that does not exist: ${a.session}`);
	return problems;
}

describe('registry safety', () => {
	const kills = trials(12, 200);

	it(
		`two writers killed with SIGKILL at random moments, ${kills} times: never a corrupt or inconsistent registry`,
		{timeout: budgetMs(120_000, 1_800_000)},
		async () => {
			const file = path.join(dir, 'power-cut.db');
			let sessions = 0;
			for (let round = 0; round < kills; round++) {
				const workers = [startWorker(file, 'a'), startWorker(file, 'b')];
				// Now and then a kill lands while the registry is still being opened (migrations, WAL setup).
				if (Math.random() < 0.8) await Promise.all(workers.map(w => w.ready));
				await new Promise(resolve => setTimeout(resolve, Math.floor(Math.random() * 250)));
				await Promise.all(workers.map(w => kill(w.child)));
				const problems = consistency(file);
				expect(problems, `after kill ${round + 1}`).toEqual([]);
				sessions = inspectRegistry(file).sessions.length;
			}
			// The writers did write: the kills cut real work, not idle processes.
			expect(sessions).toBeGreaterThan(0);
			console.info(`registry power cut: ${kills} kills of two writers, ${sessions} sessions written, integrity ok every time`);
		},
	);

	const env = () => cliEnv(path.join(dir, 'user'), path.join(dir, 'state'));
	const status = (registry: string) =>
		builtCli(
			[
				'status',
				'--json',
				'--registry',
				registry,
				'--home',
				path.join(dir, 'home'),
				'--mux',
				'tmux',
				'--tmux-socket',
				`mam-test-${crypto.randomBytes(4).toString('hex')}`,
			],
			{env: env(), cwd: dir, timeoutMs: 20_000},
		);

	function expectClearRefusal(run: Awaited<ReturnType<typeof status>>, registry: string): void {
		const label = `exit ${run.exitCode}: ${String(run.stderr)}`;
		expect(run.exitCode, label).toBe(2);
		expect(String(run.stderr), label).toContain(`registry ${registry}`);
		expect(String(run.stderr), label).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
	}

	it('a registry whose parent is a regular file: exit 2 naming the registry', {timeout: 30_000}, async () => {
		const parent = path.join(dir, 'plain-file');
		fs.writeFileSync(parent, 'not a folder');
		const registry = path.join(parent, 'registry.db');
		expectClearRefusal(await status(registry), registry);
		expect(fs.readFileSync(parent, 'utf8')).toBe('not a folder');
	});

	it('a registry under /proc (a place nothing can be created): exit 2 naming the registry', {timeout: 30_000}, async () => {
		for (const registry of [`/proc/mam-${crypto.randomBytes(4).toString('hex')}.db`, `/proc/mam-${crypto.randomBytes(4).toString('hex')}/registry.db`]) {
			expectClearRefusal(await status(registry), registry);
		}
	});

	const immutable = canChattr();
	it.skipIf(!immutable)(
		'an immutable folder (chattr +i), new and existing registry: exit 2 naming the registry, the file untouched',
		{timeout: 30_000},
		async () => {
			const fresh = path.join(dir, 'immutable-empty');
			fs.mkdirSync(fresh);
			const existing = path.join(dir, 'immutable-full');
			fs.mkdirSync(existing);
			const kept = path.join(existing, 'registry.db');
			const seed = await status(kept);
			expect(seed.exitCode, String(seed.stderr)).toBe(0);
			// A clean close checkpoints the WAL away: only the database file is left.
			const bytes = fs.readFileSync(kept);
			expect(spawnSync('chattr', ['+i', fresh, existing]).status).toBe(0);
			try {
				expectClearRefusal(await status(path.join(fresh, 'registry.db')), path.join(fresh, 'registry.db'));
				expectClearRefusal(await status(kept), kept);
				expect(fs.readdirSync(fresh)).toEqual([]);
				expect(fs.readFileSync(kept).equals(bytes)).toBe(true);
			} finally {
				spawnSync('chattr', ['-i', fresh, existing]);
			}
		},
	);
});

/** `chattr +i` needs CAP_LINUX_IMMUTABLE and a file system that has the flag. */
function canChattr(): boolean {
	const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-chattr-'));
	try {
		if (spawnSync('chattr', ['+i', probe], {stdio: 'ignore'}).status !== 0) return false;
		spawnSync('chattr', ['-i', probe], {stdio: 'ignore'});
		return true;
	} finally {
		fs.rmSync(probe, {recursive: true, force: true});
	}
}
