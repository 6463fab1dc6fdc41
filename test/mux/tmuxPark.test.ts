import {execa} from 'execa';
import {afterEach, describe, expect, it} from 'vitest';
import {createTmuxMux} from '../../src/mux/tmux.js';
import {createProcessTable} from '../../src/system/processes.js';
import {eventually} from '../helpers/poll.js';
import {isolatedExec, privateTmux, type PrivateTmux} from '../helpers/tmux.js';

/** What park and wake ask of tmux, on a private server: which pane a person looks at, where a pane sits, and a window opened back in its session. */
let tmux: PrivateTmux | undefined;
afterEach(async () => {
	await tmux?.kill();
	tmux = undefined;
});

const muxOf = (t: PrivateTmux) => createTmuxMux({server: {socketName: t.name}, exec: isolatedExec, processes: createProcessTable(), env: {}, pollMs: 100});

describe('tmux: park and wake', {timeout: 30_000}, () => {
	it('the focused panes are the active pane of the window each attached client shows; nobody attached: none', async () => {
		const t = (tmux = privateTmux());
		await t.run(['new-session', '-d', '-s', 'work', '-x', '80', '-y', '20', '--', 'sleep', '3600']);
		await t.run(['new-window', '-d', '-t', 'work:', '--', 'sleep', '3600']);
		const mux = muxOf(t);
		try {
			expect([...(await mux.focusedPanes())]).toEqual([]);
			const panes = (await t.run(['list-panes', '-a', '-F', '#{pane_id} #{window_active}'])).stdout.trim().split('\n');
			const shown = panes.find(l => l.endsWith(' 1'))?.split(' ')[0];
			const hidden = panes.find(l => l.endsWith(' 0'))?.split(' ')[0];
			const client = execa('script', ['-qfc', `tmux -L ${t.name} attach -t work`, '/dev/null'], {reject: false, stdin: 'pipe'});
			try {
				await eventually('the client shows its window', async () => (await mux.focusedPanes()).size > 0);
				expect([...(await mux.focusedPanes())]).toEqual([shown]);
				expect(await mux.focusedPanes()).not.toContain(hidden);
				// A control-mode client (mam-tui's own, an editor's) on another session shows nothing to a person.
				await t.run(['new-session', '-d', '-s', 'other', '--', 'sleep', '3600']);
				const control = execa('tmux', ['-L', t.name, '-C', 'attach', '-t', 'other'], {reject: false, stdin: 'pipe'});
				try {
					await eventually('the control client attached', async () => (await t.run(['list-clients', '-F', '#{client_control_mode}'])).stdout.includes('1'));
					expect([...(await mux.focusedPanes())]).toEqual([shown]);
				} finally {
					control.kill();
					await control;
				}
			} finally {
				await t.run(['detach-client', '-s', 'work']);
				client.kill();
				await client;
			}
		} finally {
			await mux.dispose();
		}
	});

	it('panes carry their session and window, and a wake opens a window back in that session', async () => {
		const t = (tmux = privateTmux());
		await t.run(['new-session', '-d', '-s', 'keeper', '--', 'sleep', '3600']);
		await t.run(['new-session', '-d', '-s', 'work', '--', 'sleep', '3600']);
		const mux = muxOf(t);
		try {
			const pane = (await mux.listPanes()).find(p => p.placement?.session === 'work');
			expect(pane?.placement).toEqual({session: 'work', window: '0'});
			const opened = await mux.openPane({argv: ['sleep', '3600'], cwd: '/', placement: {session: 'work'}});
			expect((await mux.listPanes()).find(p => p.id === opened)?.placement?.session).toBe('work');
			// A session gone since: the window opens where it would anyway.
			const elsewhere = await mux.openPane({argv: ['sleep', '3600'], cwd: '/', placement: {session: 'gone'}});
			expect((await mux.listPanes()).some(p => p.id === elsewhere)).toBe(true);
		} finally {
			await mux.dispose();
		}
	});
});
