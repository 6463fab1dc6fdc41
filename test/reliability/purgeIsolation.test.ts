import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentId} from '../../src/domain/types.js';
import {FIXTURE_BUILDERS} from '../adapters/fixtures/index.js';
import type {FixtureWorld} from '../adapters/fixtures/types.js';
import {oddName} from './support/hostile.js';
import {differences, othersSnapshot, outsideSnapshot, ownershipOf, withDescendants} from './support/isolation.js';
import {budgetMs, fcOptions, trials} from './support/soak.js';
import {purgeNow} from '../helpers/purge.js';

const AGENTS = Object.keys(FIXTURE_BUILDERS) as AgentId[];
const SESSION_KEYS = ['target', 'sibling', 'old', 'foreign', 'verifiableChild'] as const;
type SessionKey = (typeof SESSION_KEYS)[number];
const LINK_KINDS = ['outside-dir', 'outside-file', 'dangling', 'other-session', 'parent-loop'] as const;

interface OddFile {
	readonly name: string;
	readonly content: string;
	readonly pick: number;
	readonly where: 'root' | 'home';
}

interface OddLink {
	readonly name: string;
	readonly pick: number;
	readonly kind: (typeof LINK_KINDS)[number];
	/** Name the link after the purged id: an adapter that globs for the id meets it. */
	readonly namedAfterVictim: boolean;
}

interface WorldSpec {
	readonly agents: readonly AgentId[];
	readonly victimWorld: number;
	readonly victim: SessionKey;
	readonly second: SessionKey | null;
	readonly oddFiles: readonly OddFile[];
	readonly links: readonly OddLink[];
	readonly escape: boolean;
}

const specArb: fc.Arbitrary<WorldSpec> = fc.record({
	agents: fc.uniqueArray(fc.constantFrom(...AGENTS), {minLength: 1, maxLength: 3}),
	victimWorld: fc.nat(),
	// The target has the most artifacts (descendants, the builders' escape symlinks): draw it most.
	victim: fc.constantFrom<SessionKey>('target', 'target', 'target', ...SESSION_KEYS),
	second: fc.option(fc.constantFrom(...SESSION_KEYS), {nil: null}),
	oddFiles: fc.array(
		fc.record({name: oddName, content: fc.string({maxLength: 200}), pick: fc.nat(), where: fc.constantFrom<'root' | 'home'>('root', 'root', 'home')}),
		{maxLength: 6},
	),
	links: fc.array(fc.record({name: oddName, pick: fc.nat(), kind: fc.constantFrom(...LINK_KINDS), namedAfterVictim: fc.boolean()}), {maxLength: 4}),
	escape: fc.boolean(),
});

function idOf(world: FixtureWorld, key: SessionKey): string {
	return key === 'verifiableChild' ? (world.ids.verifiableChild ?? world.ids.target) : world.ids[key];
}

/** Every id of the world an adapter can be asked about (claude's sub-agent ids are not resumable ids). */
function askableIds(world: FixtureWorld): string[] {
	const adapter = ADAPTERS[world.agent];
	return world.sessions.map(s => s.id).filter(id => adapter.idPattern.test(id));
}

/** Folders inside the agent roots that name no conversation: shared places where a user's stray file may sit. */
function sharedDirs(world: FixtureWorld): string[] {
	const ids = world.sessions.map(s => s.id);
	const out: string[] = [];
	const walk = (dir: string) => {
		if (ids.some(id => dir.includes(id))) return;
		out.push(dir);
		for (const entry of fs.readdirSync(dir, {withFileTypes: true})) if (entry.isDirectory()) walk(path.join(dir, entry.name));
	};
	for (const root of world.roots) if (fs.existsSync(root)) walk(root);
	return out;
}

function anyFileOf(world: FixtureWorld, id: string): string | undefined {
	let found: string | undefined;
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
			const abs = path.join(dir, entry.name);
			if (found) return;
			if (entry.isFile() && abs.includes(id)) found = abs;
			else if (entry.isDirectory()) walk(abs);
		}
	};
	walk(world.home);
	return found;
}

interface Planted {
	/**
	 * A link named after the purged id, or the builder's escape symlinks, exist: residual may name
	 * what purge rightly kept (a link it must not follow, a folder that resolves outside the root).
	 */
	readonly residualMayRemain: boolean;
}

/** Stray files, odd names and symlinks in and around the agent roots; none of it belongs to a session. */
function plant(world: FixtureWorld, spec: WorldSpec, victimId: string, canary: string): Planted {
	const dirs = sharedDirs(world);
	let idNamedLink = false;
	for (const odd of spec.oddFiles) {
		const dir = odd.where === 'home' ? world.home : dirs[odd.pick % dirs.length];
		if (!dir) continue;
		const file = path.join(dir, odd.name);
		if (!fs.existsSync(file)) fs.writeFileSync(file, odd.content);
	}
	for (const link of spec.links) {
		const dir = dirs[link.pick % dirs.length];
		if (!dir) continue;
		const name = link.namedAfterVictim ? `${victimId}${link.name.slice(3)}` : link.name;
		const file = path.join(dir, name);
		if (fs.existsSync(file) || Buffer.byteLength(name) > 250) continue;
		const other = world.sessions.find(s => !withDescendants(world, victimId).includes(s.id) && s.parentId === undefined);
		const target = {
			'outside-dir': canary,
			'outside-file': path.join(canary, 'keep.txt'),
			dangling: path.join(canary, 'nowhere', 'gone'),
			'other-session': (other && anyFileOf(world, other.id)) ?? canary,
			'parent-loop': '..',
		}[link.kind];
		fs.symlinkSync(target, file);
		if (link.namedAfterVictim) idNamedLink = true;
	}
	if (spec.escape) world.plantEscapeSymlink(canary);
	return {residualMayRemain: idNamedLink || spec.escape};
}

function makeCanary(): string {
	const canary = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-canary-')));
	fs.writeFileSync(path.join(canary, 'keep.txt'), 'precious');
	fs.mkdirSync(path.join(canary, 'sub'));
	fs.writeFileSync(path.join(canary, 'sub', 'keep2.txt'), 'precious too');
	return canary;
}

async function verifyAll(world: FixtureWorld): Promise<Map<string, string>> {
	const adapter = ADAPTERS[world.agent];
	const out = new Map<string, string>();
	for (const id of askableIds(world)) out.set(id, (await adapter.verify(world.ctx, id)).kind);
	return out;
}

/** Purge `victimId` in `world` and check that nothing else moved: the property of SPEC 4.2. */
async function purgeAndCheck(
	world: FixtureWorld,
	others: readonly FixtureWorld[],
	victimId: string,
	canary: string,
	planted: Planted,
	label: string,
): Promise<void> {
	const adapter = ADAPTERS[world.agent];
	const excluded = withDescendants(world, victimId);
	const own = ownershipOf(world, excluded);
	const before = othersSnapshot(world, own);
	const outsideBefore = [world, ...others].map(w => outsideSnapshot(path.dirname(w.home), w.roots));
	const otherWorldsBefore = others.map(w => w.snapshotOthers([]));
	const canaryBefore = outsideSnapshot(canary, []);
	const verifiedBefore = await verifyAll(world);

	await purgeNow(adapter, world.ctx, victimId);

	expect(differences(before, othersSnapshot(world, own)), `${label}: other sessions of ${world.agent}`).toEqual([]);
	[world, ...others].forEach((w, i) => {
		expect(differences(outsideBefore[i] ?? new Map(), outsideSnapshot(path.dirname(w.home), w.roots)), `${label}: outside the ${w.agent} roots`).toEqual([]);
	});
	others.forEach((w, i) => expect(differences(otherWorldsBefore[i] ?? new Map(), w.snapshotOthers([])), `${label}: the ${w.agent} home`).toEqual([]));
	expect(differences(canaryBefore, outsideSnapshot(canary, [])), `${label}: the folder symlinks point to`).toEqual([]);
	const verifiedAfter = await verifyAll(world);
	for (const [id, kind] of verifiedBefore) {
		if (excluded.includes(id)) continue;
		expect(verifiedAfter.get(id), `${label}: ${world.agent} ${id} still verifies`).toBe(kind);
	}
	if (!planted.residualMayRemain) {
		expect(await adapter.residual(world.ctx, victimId), `${label}: residual`).toEqual([]);
		expect((await adapter.verify(world.ctx, victimId)).kind, `${label}: purged id verifies`).toBe('no');
	}
}

describe('purge isolation over random worlds (SPEC 4.2)', () => {
	const runs = trials(12, 150);
	it(
		`purging a random session changes nothing of any other session, nor anything outside the agent roots (${runs} worlds)`,
		{timeout: budgetMs(90_000, 1_800_000)},
		async () => {
			await fc.assert(
				fc.asyncProperty(specArb, async spec => {
					const worlds: FixtureWorld[] = [];
					const canary = makeCanary();
					try {
						for (const agent of spec.agents) {
							const build = FIXTURE_BUILDERS[agent];
							if (build) worlds.push(await build());
						}
						const world = worlds[spec.victimWorld % worlds.length];
						if (!world) return;
						const others = worlds.filter(w => w !== world);
						const victimId = idOf(world, spec.victim);
						const planted = plant(world, spec, victimId, canary);
						const label = `${world.agent} ${spec.victim}`;
						await purgeAndCheck(world, others, victimId, canary, planted, label);
						if (spec.second) {
							const secondId = idOf(world, spec.second);
							if (!withDescendants(world, victimId).includes(secondId)) {
								await purgeAndCheck(world, others, secondId, canary, {residualMayRemain: spec.escape}, `${label}, then ${spec.second}`);
							}
						}
					} finally {
						for (const w of worlds) w.cleanup();
						fs.rmSync(canary, {recursive: true, force: true});
					}
				}),
				fcOptions(runs),
			);
		},
	);
});
