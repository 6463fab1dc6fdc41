import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import type {OpenFile} from '../../src/system/processes.js';
import {answerMoved, listingChange} from '../../src/sync/useChange.js';
import {ctx, proc, UUID} from './support.js';

// What a new process listing moves in the rows' in-use answers (a view; purge and resume ask fresh).

const withOpen = (open: readonly OpenFile[]): AdapterContext => ({
	...ctx,
	processes: {...ctx.processes, openFilesOfPids: async pids => open.filter(f => pids.includes(f.pid))},
});

describe('listingChange', () => {
	const before = [proc(1, 'init'), proc(2, 'sh')];

	it.each([
		{name: 'nothing new', added: [], open: [], pinned: [], users: false},
		{
			name: 'a process holding devices, pipes and libraries',
			added: [proc(5, 'sleep', ['sleep', '9'])],
			open: ['/dev/pts/3', 'socket:[9]', '/usr/lib/x.so', '/etc/hosts'],
			pinned: [],
			users: false,
		},
		{
			name: 'a tmux client naming panes and a socket',
			added: [proc(5, 'tmux', ['tmux', '-L', 'mam-bench-7PfmjJ', 'capture-pane', '-t', '%12'])],
			open: [],
			pinned: [],
			users: false,
		},
		{name: "an agent's process", added: [proc(5, 'codex')], open: [], pinned: [], users: true},
		{name: 'an argv word shaped like an id', added: [proc(5, 'grep', ['grep', `rollout-${UUID(4)}.jsonl`])], open: [], pinned: [], users: true},
		{name: 'an argv word a row pins (any word is a gemini id)', added: [proc(5, 'cat', ['cat', 'my-work'])], open: [], pinned: ['my-work'], users: true},
		{name: 'a file outside the system folders held open', added: [proc(5, 'tail')], open: ['/home/u/.claude/projects/p/x.jsonl'], pinned: [], users: true},
		{name: 'a file in /tmp held open', added: [proc(5, 'less')], open: ['/tmp/store.db'], pinned: [], users: true},
	])('$name: a new user could be there: $users', async ({added, open, pinned, users}) => {
		const files = open.map(path => ({pid: 5, path}));
		const change = await listingChange(withOpen(files), ADAPTERS, before, [...before, ...added], new Set(pinned));
		expect(change.newUsers).toBe(users);
	});

	it("fails safe: a table that cannot read a new process's open files could have a new user", async () => {
		expect((await listingChange(ctx, ADAPTERS, before, [...before, proc(5, 'sleep')], new Set())).newUsers).toBe(true);
		expect((await listingChange(ctx, ADAPTERS, before, before.slice(1), new Set())).newUsers).toBe(false);
	});

	it('a pid whose start time changed is a new process', async () => {
		const reused = {...proc(2, 'claude'), startTime: 999};
		expect((await listingChange(withOpen([]), ADAPTERS, before, [before[0] ?? proc(1, 'init'), reused], new Set())).newUsers).toBe(true);
	});
});

describe('answerMoved', () => {
	const holder = {pid: 2, startTime: 20, command: 'sh', reason: 'argv names x'};
	it.each([
		{name: 'its holders all still run', now: ['1:10', '2:20'], newUsers: false, answer: {ok: true as const, holders: [holder]}, moved: false},
		{name: 'no holders, nothing new', now: ['1:10'], newUsers: false, answer: {ok: true as const, holders: []}, moved: false},
		{name: 'a holder left', now: ['1:10'], newUsers: false, answer: {ok: true as const, holders: [holder]}, moved: true},
		{name: 'a holder pid runs with another start time', now: ['1:10', '2:21'], newUsers: false, answer: {ok: true as const, holders: [holder]}, moved: true},
		{name: 'a new process could be a user', now: ['1:10', '2:20'], newUsers: true, answer: {ok: true as const, holders: [holder]}, moved: true},
		{name: 'the last answer was an error', now: ['1:10'], newUsers: false, answer: {ok: false as const}, moved: true},
	])('$name: asked again: $moved', ({now, newUsers, answer, moved}) => {
		expect(answerMoved({now: new Set(now), newUsers}, answer)).toBe(moved);
	});
});
