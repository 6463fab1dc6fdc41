import {createTmuxMux} from '../../../src/mux/tmux.js';
import type {Multiplexer} from '../../../src/mux/types.js';
import {realExec} from '../../../src/system/exec.js';
import {createProcessTable} from '../../../src/system/processes.js';
import {privateTmux} from '../../helpers/tmux.js';

/** A private tmux server (`tmux -L mam-test-<random>`): never the user's default server. */
export interface TmuxServer {
	readonly socket: string;
	/** Run `tmux -L <socket> ...args`; rejects on a non-zero exit. */
	run(args: readonly string[]): Promise<string>;
	/** Every pane: id, pid of its root process, and whether it is dead. */
	panes(): Promise<Array<{id: string; pid: number}>>;
	kill(): Promise<void>;
}

/**
 * Start a private server with one idle base window (so closing test panes never ends the server).
 * `env` becomes the server's global environment, so panes inherit its PATH.
 */
export async function startTmuxServer(env: Record<string, string>): Promise<TmuxServer> {
	const tmux = privateTmux('mam-test', undefined, env);
	const run = async (args: readonly string[]) => {
		const result = await tmux.run(args);
		if (result.exitCode !== 0) throw new Error(`tmux ${args.join(' ')}: ${result.stderr}`);
		return result.stdout;
	};
	await run(['new-session', '-d', '-s', 'base', '-x', '200', '-y', '50', 'sleep', '100000']);
	return {
		socket: tmux.name,
		run,
		async panes() {
			const text = await run(['list-panes', '-a', '-F', '#{pane_id} #{pane_pid}']);
			return text
				.split('\n')
				.filter(Boolean)
				.map(line => {
					const [id, pid] = line.split(' ');
					return {id: id ?? '', pid: Number(pid)};
				});
		},
		kill: () => tmux.kill(),
	};
}

/**
 * The real tmux backend on the test server. With `selfPaneId`, the backend believes mam-tui runs
 * in that pane (TMUX/TMUX_PANE name it), the way it would inside a real tmux.
 */
export async function tmuxBackend(server: TmuxServer, selfPaneId?: string): Promise<Multiplexer> {
	const env: Record<string, string> = {};
	if (selfPaneId) {
		const socketPath = (await server.run(['display-message', '-p', '#{socket_path}'])).trim();
		env['TMUX'] = `${socketPath},1,0`;
		env['TMUX_PANE'] = selfPaneId;
	}
	return createTmuxMux({server: {socketName: server.socket}, exec: realExec, processes: createProcessTable(), env, pollMs: 1000});
}
