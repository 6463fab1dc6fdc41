import {describe, expect, it} from 'vitest';
import type {Pane, ProcessRef} from '../../src/domain/types.js';
import {createPaneKeeper, samePane} from '../../src/mux/keepPanes.js';

const proc = (pid: number, argv: string[], startTime = 100): ProcessRef => ({pid, ppid: 1, startTime, name: argv[0] ?? '?', argv});

/** A pane as a fresh listing makes it: new objects all the way down. */
const listed = (id: string, over: Partial<Pane> = {}): Pane => ({
	id,
	mux: 'tmux',
	cwd: '/w',
	agentStatus: 'unknown',
	processes: [proc(10, ['bash']), proc(11, ['claude', '--resume', 'x'])],
	isSelf: false,
	placement: {session: 's', window: '1'},
	...over,
});

describe('keeping unchanged panes across listings', () => {
	it('a pane listed again as it was is the same object, and so is the whole array', () => {
		const keeper = createPaneKeeper();
		const first = keeper.keep([listed('%1'), listed('%2')]);
		const second = keeper.keep([listed('%1'), listed('%2')]);
		expect(second).toBe(first);
	});

	it('a changed pane is the new object; the others keep theirs', () => {
		const keeper = createPaneKeeper();
		const first = keeper.keep([listed('%1'), listed('%2')]);
		const second = keeper.keep([listed('%1'), listed('%2', {agentStatus: 'working'})]);
		expect(second).not.toBe(first);
		expect(second[0]).toBe(first[0]);
		expect(second[1]).not.toBe(first[1]);
		expect(second[1]?.agentStatus).toBe('working');
	});

	it('a new, gone or reordered pane gives a new array', () => {
		const keeper = createPaneKeeper();
		const first = keeper.keep([listed('%1'), listed('%2')]);
		expect(keeper.keep([listed('%2'), listed('%1')])).not.toBe(first);
		const third = keeper.keep([listed('%1')]);
		expect(third).toHaveLength(1);
		expect(keeper.keep([listed('%1'), listed('%3')])[1]?.id).toBe('%3');
	});

	it('every fact a listing reads counts: the tree, a process reused or re-exec’d, the placement, a field that appears', () => {
		const base = listed('%1');
		expect(samePane(base, listed('%1'))).toBe(true);
		const changes: Partial<Pane>[] = [
			{processes: [proc(10, ['bash'])]},
			{processes: [proc(10, ['bash']), proc(11, ['claude', '--resume', 'y'])]},
			{processes: [proc(10, ['bash']), proc(11, ['claude', '--resume', 'x'], 101)]},
			{processes: [proc(10, ['bash']), proc(12, ['claude', '--resume', 'x'])]},
			{processes: [proc(10, ['bash']), {...proc(11, ['claude', '--resume', 'x']), ppid: 10}]},
			{processes: [proc(10, ['bash']), {...proc(11, ['claude', '--resume', 'x']), name: 'node'}]},
			{placement: {session: 's', window: '2'}},
			{cwd: '/elsewhere'},
			{title: 'new title'},
			{agent: 'claude'},
			{isSelf: true},
			{server: 'tmux:other'},
		];
		for (const change of changes) expect(samePane(base, listed('%1', change)), JSON.stringify(change)).toBe(false);
	});

	it('never reads a process cwd to compare (a readlink per process)', () => {
		let reads = 0;
		const lazy = (): ProcessRef => ({
			...proc(11, ['claude']),
			get cwd() {
				reads += 1;
				return '/w';
			},
		});
		expect(samePane(listed('%1', {processes: [lazy()]}), listed('%1', {processes: [lazy()]}))).toBe(true);
		expect(reads).toBe(0);
	});
});
