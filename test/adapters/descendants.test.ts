import {describe, expect, it} from 'vitest';
import {sessionDescendants, sessionTree} from '../../src/adapters/common/groups.js';
import {createRefresh} from '../../src/adapters/common/refresh.js';
import {buildFamily} from '../../src/adapters/grok/build.js';
import {childrenFrom, descendants} from '../../src/system/descendants.js';
import {processTree} from '../../src/system/processes.js';

// The one breadth-first walk every adapter (sub-agents, continuations) and the process tree use.

describe('descendants', () => {
	it('lists every level breadth first, children in link order, without the root', () => {
		const parents = new Map([
			['b', 'a'],
			['c', 'a'],
			['d', 'b'],
			['e', 'c'],
			['f', 'd'],
			['x', 'y'],
		]);
		expect(descendants('a', childrenFrom(parents))).toEqual(['b', 'c', 'd', 'e', 'f']);
		expect(descendants('f', childrenFrom(parents))).toEqual([]);
		expect(descendants('nobody', childrenFrom(parents))).toEqual([]);
	});

	it('stops at a cycle back to the root or to a node already listed', () => {
		const parents = new Map([
			['b', 'a'],
			['a', 'b'],
			['c', 'b'],
		]);
		expect(descendants('a', childrenFrom(parents))).toEqual(['b', 'c']);
		const graph: Record<string, string[]> = {a: ['b', 'c'], b: ['c', 'a'], c: ['b']};
		expect(descendants('a', n => graph[n] ?? [])).toEqual(['b', 'c']);
	});

	it('keeps two session objects with one id, and never the root id (gemini, grok)', () => {
		const one = {id: 'k1', parentId: 'p'};
		const twin = {id: 'k1', parentId: 'p'};
		const grandchild = {id: 'g', parentId: 'k1'};
		const self = {id: 'p', parentId: 'g'};
		expect(sessionDescendants([grandchild, one, self, twin], 'p')).toEqual([one, twin, grandchild]);
	});

	it('sessionDescendants with a tree made once answers as without, and the list is walked once for many ids', () => {
		const s = (id: string, parentId?: string) => ({id, dir: `/g/${id}`, ...(parentId ? {parentId} : {})});
		const list = [s('c', 'b'), s('a'), s('b', 'a'), s('a', 'c'), s('d', 'b'), s('e')];
		const tree = sessionTree(list);
		for (const id of ['a', 'b', 'c', 'd', 'e', 'none']) expect(sessionDescendants(list, id, tree)).toEqual(sessionDescendants(list, id));
		// grok's family: every session named the id (two groups), then its descendants.
		const ctx = {refresh: createRefresh()};
		expect(buildFamily(ctx, list, 'a')).toEqual([list[1], list[3], list[2], list[0], list[4]]);
		let walks = 0;
		const counted = new Proxy(list, {
			get: (target, key, receiver) => {
				if (key === Symbol.iterator) walks += 1;
				return Reflect.get(target, key, receiver) as unknown;
			},
		});
		for (const id of ['a', 'b', 'c', 'd', 'e']) buildFamily(ctx, counted, id);
		expect(walks).toBe(1);
	});

	it('gives a process tree root first, then its subtree breadth first', () => {
		const proc = (pid: number, ppid: number) => ({pid, ppid, startTime: pid, name: `p${pid}`, argv: []});
		const table = [proc(1, 0), proc(10, 1), proc(11, 10), proc(12, 10), proc(13, 11), proc(20, 1)];
		expect(processTree(table, 10).map(p => p.pid)).toEqual([10, 11, 12, 13]);
		expect(processTree(table, 99)).toEqual([]);
	});
});
