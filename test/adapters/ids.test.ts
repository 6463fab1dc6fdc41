import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {assertPlanOf, assertValidId, InvalidIdError} from '../../src/adapters/types.js';
import {FIXTURE_BUILDERS} from './fixtures/index.js';
import {planNaming} from '../helpers/purge.js';

// An id reaches a path, a query or an argv only once its adapter's idPattern accepted it.

const loose = {id: 'claude', idPattern: /^.*$/s} as const;

describe('assertValidId', () => {
	it('accepts what the pattern accepts', () => {
		expect(() => assertValidId(loose, 'x')).not.toThrow();
		expect(() => assertValidId(loose, 'y'.repeat(256))).not.toThrow();
	});

	it('refuses an empty id, one over 256 characters, and anything not a string, even when the pattern would take it', () => {
		expect(() => assertValidId(loose, '')).toThrow(InvalidIdError);
		expect(() => assertValidId(loose, 'y'.repeat(257))).toThrow(InvalidIdError);
		// A caller outside the type system (JSON, argv parsing) may hand over anything.
		expect(() => assertValidId(loose, 42 as unknown as string)).toThrow('invalid claude session id "42"');
		expect(() => assertValidId(loose, ['a'] as unknown as string)).toThrow(InvalidIdError);
	});

	it('names the agent and the id, cut at 80 characters', () => {
		const strict = {id: 'codex', idPattern: /^[a-z]+$/} as const;
		const error = (() => {
			try {
				assertValidId(strict, '../etc/passwd');
			} catch (e) {
				return e;
			}
			return undefined;
		})();
		expect(error).toBeInstanceOf(InvalidIdError);
		expect((error as Error).name).toBe('InvalidIdError');
		expect((error as Error).message).toBe('invalid codex session id "../etc/passwd"');
		expect(() => assertValidId(strict, 'Z'.repeat(80))).toThrow(`invalid codex session id "${'Z'.repeat(80)}"`);
		const long = `${'Z'.repeat(81)}`;
		expect(() => assertValidId(strict, long)).toThrow(`invalid codex session id "${'Z'.repeat(80)}…"`);
	});
});

describe('assertPlanOf', () => {
	const codex = {id: 'codex', idPattern: /^[a-z]+$/} as const;

	it("takes the adapter's own plan with a valid id", () => {
		expect(() => assertPlanOf(codex, planNaming(codex, 'abc'))).not.toThrow();
	});

	it("refuses another agent's plan, naming both agents, even when the id would pass", () => {
		expect(() => assertPlanOf(codex, planNaming({id: 'claude'}, 'abc'))).toThrow('a claude purge plan handed to the codex adapter');
	});

	it('refuses its own plan whose id the pattern refuses', () => {
		expect(() => assertPlanOf(codex, planNaming(codex, '../x'))).toThrow(InvalidIdError);
	});
});

describe.each(Object.values(ADAPTERS).filter(a => FIXTURE_BUILDERS[a.id]))('$id: a plan of another agent deletes nothing', adapter => {
	it('purge refuses it before touching anything', async () => {
		const world = await FIXTURE_BUILDERS[adapter.id]?.();
		if (!world) throw new Error('no fixture');
		try {
			const plan = await adapter.artifacts(world.ctx, world.ids.target);
			expect(plan.items.length).toBeGreaterThan(0);
			const other = Object.keys(ADAPTERS).find(a => a !== adapter.id) ?? '';
			const before = world.snapshotOthers([]);
			await expect(adapter.purge(world.ctx, {...plan, agent: other as typeof plan.agent})).rejects.toThrow(
				`a ${other} purge plan handed to the ${adapter.id} adapter`,
			);
			expect(world.snapshotOthers([])).toEqual(before);
		} finally {
			world.cleanup();
		}
	});
});

describe.each(Object.values(ADAPTERS).filter(a => FIXTURE_BUILDERS[a.id]))('$id: every id-taking method checks the id first', adapter => {
	const hostile = ['', '../x', 'a/b', 'x\0y', '; rm -rf /', '-rf', "x' OR '1'='1"];

	it.each(hostile)('refuses %j before touching anything', async id => {
		const world = await FIXTURE_BUILDERS[adapter.id]?.();
		if (!world) throw new Error('no fixture');
		try {
			const before = world.snapshotOthers([]);
			const calls: string[] = [];
			const ctx = {
				...world.ctx,
				exec: async (file: string) => {
					calls.push(file);
					return {exitCode: 0, stdout: '', stderr: ''};
				},
			};
			await expect(adapter.verify(ctx, id)).rejects.toThrow(InvalidIdError);
			await expect(adapter.artifacts(ctx, id)).rejects.toThrow(InvalidIdError);
			await expect(adapter.purge(ctx, planNaming(adapter, id))).rejects.toThrow(InvalidIdError);
			await expect(adapter.residual(ctx, id)).rejects.toThrow(InvalidIdError);
			await expect(adapter.inUse(ctx, id)).rejects.toThrow(InvalidIdError);
			expect(() => adapter.resume(ctx, id)).toThrow(InvalidIdError);
			expect(calls).toEqual([]);
			expect(world.snapshotOthers([])).toEqual(before);
		} finally {
			world.cleanup();
		}
	});
});
