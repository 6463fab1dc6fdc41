import {describe, expect, it} from 'vitest';
import {sessionDescendants} from '../../src/adapters/common/groups.js';
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

	it('gives a process tree root first, then its subtree breadth first', () => {
		const proc = (pid: number, ppid: number) => ({pid, ppid, startTime: pid, name: `p${pid}`, argv: []});
		const table = [proc(1, 0), proc(10, 1), proc(11, 10), proc(12, 10), proc(13, 11), proc(20, 1)];
		expect(processTree(table, 10).map(p => p.pid)).toEqual([10, 11, 12, 13]);
		expect(processTree(table, 99)).toEqual([]);
	});
});
