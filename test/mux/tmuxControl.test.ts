import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {createTmuxMux, type TmuxMux, type TmuxMuxOptions} from '../../src/mux/tmux.js';
import {controlCapable} from '../../src/mux/tmuxArgs.js';
import {decodeOutput, quoteTmuxArg, tmuxCommandLine} from '../../src/mux/tmuxControl.js';
import type {MuxEvent} from '../../src/mux/types.js';
import {createProcessTable} from '../../src/system/processes.js';
import {isolatedEnv, isolatedExec, paneScratch, privateTmux, type PrivateTmux} from '../helpers/tmux.js';
import {muxContract} from './contract.js';
import {eventually} from '../helpers/poll.js';

function options(tmux: PrivateTmux, extra: Partial<TmuxMuxOptions> = {}): TmuxMuxOptions {
	return {server: {socketName: tmux.name}, exec: isolatedExec, processes: createProcessTable(), env: isolatedEnv(), pollMs: 100, control: true, ...extra};
}

describe('tmux command grammar', () => {
	it('quotes so that nothing can end the command, expand or start a directive', () => {
		expect(quoteTmuxArg('send-keys')).toBe("'send-keys'");
		expect(quoteTmuxArg('a; kill-server')).toBe("'a; kill-server'");
		expect(quoteTmuxArg('%if')).toBe("'%if'");
		expect(quoteTmuxArg('$HOME ~')).toBe("'$HOME ~'");
		expect(quoteTmuxArg("it's")).toBe('"it\'s"');
		expect(quoteTmuxArg('a\nb\\"$')).toBe('"a\\012b\\\\\\"\\$"');
		expect(tmuxCommandLine(['display-message', '-p', 'x;'])).toBe("'display-message' '-p' 'x;'");
	});
	it("decodes %output's octal escapes and keeps other bytes as they are", () => {
		expect(decodeOutput(Buffer.from('a\\033]7501;state=idle\\007\\134z')).toString('latin1')).toBe('a\x1b]7501;state=idle\x07\\z');
		expect(decodeOutput(Buffer.from('caf\u00e9')).toString('utf8')).toBe('caf\u00e9');
	});
	it('knows which tmux has attach -f ignore-size', () => {
		expect(controlCapable('3.3a')).toBe(true);
		expect(controlCapable('3.2')).toBe(true);
		expect(controlCapable('3.1c')).toBe(false);
		expect(controlCapable('next-3.5')).toBe(false);
	});
});

describe('tmux backend through one control-mode client: the mux contract', {timeout: 30_000}, () => {
	muxContract(async () => {
		const tmux = privateTmux();
		const s = paneScratch('mam-tmuxc-');
		await tmux.run(['new-session', '-d', '-s', 'keeper', '--', 'sleep', '3600']);
		const socketPath = (await tmux.run(['display-message', '-p', '#{socket_path}'])).stdout.trim();
		const made: TmuxMux[] = [];
		const make = (extra: Partial<TmuxMuxOptions> = {}) => {
			const mux = createTmuxMux(options(tmux, extra));
			made.push(mux);
			return mux;
		};
		return {
			mux: make(),
			cwd: s.dir,
			path: s.path,
			selfByEnv: paneId => make({env: {...isolatedEnv(), TMUX: `${socketPath},1,0`, TMUX_PANE: paneId}}),
			selfByPid: pid => make({selfPid: pid}),
			async dispose() {
				for (const mux of made) await mux.dispose();
				await tmux.kill();
				s.dispose();
			},
		};
	});
});

describe('tmux control-mode specifics', {timeout: 30_000}, () => {
	let tmux: PrivateTmux;
	let s: ReturnType<typeof paneScratch>;
	beforeAll(() => {
		tmux = privateTmux();
		s = paneScratch('mam-tmuxc-');
	});
	afterAll(async () => {
		await tmux.kill();
		s.dispose();
	});

	async function shellPane(mux: TmuxMux): Promise<string> {
		return mux.openPane({argv: ['sh'], cwd: s.dir, env: {PATH: s.path, PS1: '$ '}});
	}

	it('lists and reads without starting a process per call, and types hostile text literally', async () => {
		await tmux.run(['new-session', '-d', '-s', 'k1', '--', 'sleep', '3600']);
		const mux = createTmuxMux(options(tmux));
		try {
			const id = await shellPane(mux);
			await mux.listPanes();
			const before = mux.cost.processes;
			for (let i = 0; i < 5; i++) await mux.listPanes();
			const text = `it's; kill-server; "$HOME" ~ %if #{pane_id} \\ end;`;
			await mux.sendText(id, `: ${text}`);
			await eventually('typed', async () => ((await mux.readOutput(id, 5)).includes(text) ? true : undefined), {retryErrors: true});
			expect(mux.cost.processes).toBe(before);
			expect(mux.cost.commands).toBeGreaterThan(5);
			expect((await tmux.run(['list-sessions'])).exitCode).toBe(0);
			await mux.closePane(id);
		} finally {
			await mux.dispose();
		}
	});

	it("attaching leaves the session's environment as it was (update-environment is not applied)", async () => {
		await tmux.run(['new-session', '-d', '-s', 'env1', '--', 'sleep', '3600']);
		await tmux.run(['set-environment', '-t', 'env1', 'SSH_AUTH_SOCK', '/run/user-agent.sock']);
		await tmux.run(['set-environment', '-t', 'env1', 'DISPLAY', ':5']);
		// mam-tui started from another login: no DISPLAY, its own agent socket.
		const mux = createTmuxMux(options(tmux, {env: {...isolatedEnv(), SSH_AUTH_SOCK: '/tmp/mam-other-agent.sock'}}));
		try {
			await mux.listPanes();
			await eventually('the control client attached', async () =>
				(await tmux.run(['list-clients', '-F', '#{client_control_mode}'])).stdout.includes('1') ? true : undefined,
			);
			expect((await tmux.run(['show-environment', '-t', 'env1', 'SSH_AUTH_SOCK'])).stdout.trim()).toBe('SSH_AUTH_SOCK=/run/user-agent.sock');
			expect((await tmux.run(['show-environment', '-t', 'env1', 'DISPLAY'])).stdout.trim()).toBe('DISPLAY=:5');
		} finally {
			await mux.dispose();
			await tmux.run(['kill-session', '-t', 'env1']);
		}
	});

	it('with no server running: never attaches (that would start one), lists every 5th poll, and sees a server that starts', async () => {
		const none = privateTmux();
		const mux = createTmuxMux(options(none, {pollMs: 40}));
		const events: MuxEvent[] = [];
		const off = mux.subscribe(event => events.push(event));
		try {
			await eventually('the first listing', () => (mux.cost.processes > 0 ? true : undefined));
			await new Promise(resolve => setTimeout(resolve, 2500));
			// 60 polls in 2.5 s: a listing each 5th, and one attach at most (the first, before the server was known absent).
			expect(mux.cost.processes).toBeLessThanOrEqual(20);
			expect(mux.cost.attaches).toBeLessThanOrEqual(1);
			expect(mux.health()).toMatchObject({ok: true, message: expect.stringMatching(/no server .* running yet/)});
			await none.run(['new-session', '-d', '-s', 'late', '--', 'sleep', '3600']);
			await eventually('the new pane reported', () => (events.some(e => e.type === 'pane-created') ? true : undefined), {timeoutMs: 5000});
			await eventually('attached once the server is there', () => (mux.cost.attaches >= 1 && mux.cost.commands > 0 ? true : undefined), {timeoutMs: 5000});
		} finally {
			off();
			await mux.dispose();
			await none.kill();
		}
	});

	it("sees a program's OSC 7501 state reports and which panes printed; re-reads only those", async () => {
		await tmux.run(['new-session', '-d', '-s', 'k2', '--', 'sleep', '3600']);
		const mux = createTmuxMux(options(tmux));
		const events: MuxEvent[] = [];
		const stop = mux.subscribe(e => events.push(e));
		try {
			const a = await shellPane(mux);
			const b = await shellPane(mux);
			await eventually('both listed', async () => ((await mux.listPanes()).filter(p => p.id === a || p.id === b).length === 2 ? true : undefined), {
				retryErrors: true,
			});
			// Let both shells draw their prompts, and the client watch them.
			await eventually(
				'quiet',
				async () => {
					await mux.readScreens([a, b]);
					const reads = mux.cost.screenReads;
					await new Promise(resolve => setTimeout(resolve, 400));
					await mux.readScreens([a, b]);
					return mux.cost.screenReads === reads ? true : undefined;
				},
				{retryErrors: true},
			);
			events.length = 0;
			await mux.sendText(a, "printf '\\033]7501;state=blocked:app=codex:kind=permission\\007ASKING\\n'");
			await mux.sendKeys(a, ['Enter']);
			await eventually('output event for a', () => (events.some(e => e.type === 'output' && e.paneIds.includes(a)) ? true : undefined), {retryErrors: true});
			const screens = await eventually(
				'state seen',
				async () => {
					const read = await mux.readScreens([a, b]);
					return read.get(a)?.text.includes('ASKING') ? read : undefined;
				},
				{retryErrors: true},
			);
			expect(screens.get(a)?.osc).toBe('state=blocked:app=codex:kind=permission');
			expect(screens.get(b)?.osc).toBeUndefined();
			// Nothing printed since: no pane is read again.
			const reads = mux.cost.screenReads;
			await mux.readScreens([a, b]);
			expect(mux.cost.screenReads).toBe(reads);
			expect(events.some(e => e.type === 'output' && e.paneIds.includes(b))).toBe(false);
		} finally {
			stop();
			await mux.dispose();
		}
	});

	it("never reports mam-tui's own pane printing (the dashboard drawing would feed a refresh loop)", async () => {
		await tmux.run(['new-session', '-d', '-s', 'k3', '--', 'sleep', '3600']);
		const probe = createTmuxMux(options(tmux));
		const own = await shellPane(probe);
		const other = await shellPane(probe);
		await probe.dispose();
		const socketPath = (await tmux.run(['display-message', '-p', '#{socket_path}'])).stdout.trim();
		const mux = createTmuxMux(options(tmux, {env: {...isolatedEnv(), TMUX: `${socketPath},1,0`, TMUX_PANE: own}}));
		const events: MuxEvent[] = [];
		const stop = mux.subscribe(e => events.push(e));
		try {
			await eventually('own pane known', async () => ((await mux.listPanes()).find(p => p.id === own)?.isSelf ? true : undefined), {retryErrors: true});
			await tmux.run(['send-keys', '-t', own, 'echo drawn', 'Enter']);
			await tmux.run(['send-keys', '-t', other, 'echo printed', 'Enter']);
			await eventually('the other pane reported', () => (events.some(e => e.type === 'output' && e.paneIds.includes(other)) ? true : undefined), {
				retryErrors: true,
			});
			expect(events.some(e => e.type === 'output' && e.paneIds.includes(own))).toBe(false);
		} finally {
			stop();
			await mux.dispose();
		}
	});

	it('polls less while nothing changes and no pane prints; a change is still found, and output polls every time again', async () => {
		const quiet = privateTmux();
		try {
			await quiet.run(['new-session', '-d', '-s', 'q', '--', 'sleep', '3600']);
			const mux = createTmuxMux(options(quiet, {pollMs: 40}));
			const events: MuxEvent[] = [];
			const stop = mux.subscribe(e => events.push(e));
			try {
				const id = await shellPane(mux);
				await eventually('attached', () => (mux.cost.attaches >= 1 && mux.cost.commands > 0 ? true : undefined));
				// Ten quiet polls (0.4 s), then every fourth: about 12 listings in 1.6 s, not 40.
				await new Promise(resolve => setTimeout(resolve, 800));
				const before = mux.cost.commands;
				await new Promise(resolve => setTimeout(resolve, 1600));
				expect(mux.cost.commands - before).toBeLessThanOrEqual(20);
				// A title carries no notification: a quiet poll still finds it.
				await quiet.run(['select-pane', '-t', id, '-T', 'renamed']);
				await eventually('the title change found', () => (events.some(e => e.type === 'changed') ? true : undefined), {timeoutMs: 5000});
				// A pane that prints makes every poll look again.
				await new Promise(resolve => setTimeout(resolve, 800));
				await quiet.run(['send-keys', '-t', id, 'echo printed', 'Enter']);
				await eventually('the output seen', () => (events.some(e => e.type === 'output') ? true : undefined), {timeoutMs: 5000});
				const after = mux.cost.commands;
				await new Promise(resolve => setTimeout(resolve, 300));
				expect(mux.cost.commands - after).toBeGreaterThanOrEqual(4);
			} finally {
				stop();
				await mux.dispose();
			}
		} finally {
			await quiet.kill();
		}
	});

	it('reconnects when the server restarts', async () => {
		const other = privateTmux();
		try {
			await other.run(['new-session', '-d', '-s', 'first', '--', 'sleep', '3600']);
			const mux = createTmuxMux(options(other));
			const events: MuxEvent[] = [];
			const stop = mux.subscribe(e => events.push(e));
			try {
				await mux.listPanes();
				await other.run(['kill-server']);
				await eventually('gone', () => (events.some(e => e.type === 'pane-exited') ? true : undefined), {retryErrors: true});
				await other.run(['new-session', '-d', '-s', 'second', '--', 'sleep', '3600']);
				const id = await shellPane(mux);
				// Only a watching client sees a report (one printed before it attached is lost): print until seen.
				const osc = await eventually(
					'watched again',
					async () => {
						await mux.sendText(id, "printf '\\033]7501;state=working:app=codex\\007\\n'");
						await mux.sendKeys(id, ['Enter']);
						await new Promise(resolve => setTimeout(resolve, 300));
						return (await mux.readScreens([id])).get(id)?.osc;
					},
					{retryErrors: true},
				);
				expect(osc).toBe('state=working:app=codex');
			} finally {
				stop();
				await mux.dispose();
			}
		} finally {
			await other.kill();
		}
	});
});
