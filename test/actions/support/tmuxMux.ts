import type {Pane} from '../../../src/domain/types.js';
import type {Multiplexer, MuxHealth} from '../../../src/mux/types.js';
import {processTree, type ProcessTable} from '../../../src/system/processes.js';
import type {TmuxServer} from './tmux.js';

/**
 * A bare Multiplexer over a test tmux server, for driving the actions before the real tmux
 * backend exists and for wrapping (self pane, call logs). It lists panes with their process trees.
 */
export function tmuxTestMux(server: TmuxServer, processes: ProcessTable, selfPaneId?: string): Multiplexer {
	const health: MuxHealth = {kind: 'tmux', ok: true, message: `tmux -L ${server.socket}`};
	return {
		kind: 'tmux',
		async listPanes() {
			const all = await processes.list();
			const text = await server.run(['list-panes', '-a', '-F', '#{pane_id} #{pane_pid} #{pane_dead} #{pane_current_path}']);
			const panes: Pane[] = [];
			for (const line of text.split('\n').filter(Boolean)) {
				// tmux 3.3 turns tabs in formats into underscores: split on spaces, cwd last (it may hold spaces).
				const [id = '', pid = '', dead = '', ...rest] = line.split(' ');
				const cwd = rest.join(' ');
				if (dead === '1') continue;
				panes.push({id, mux: 'tmux', cwd, agentStatus: 'unknown', shellPid: Number(pid), processes: processTree(all, Number(pid)), isSelf: id === selfPaneId});
			}
			return panes;
		},
		subscribe: () => () => {},
		async sendText(paneId, text) {
			await server.run(['send-keys', '-t', paneId, '-l', text]);
		},
		async sendKeys(paneId, keys) {
			await server.run(['send-keys', '-t', paneId, ...keys]);
		},
		async readOutput(paneId, lines) {
			return server.run(['capture-pane', '-p', '-t', paneId, '-S', String(-lines)]);
		},
		async openPane(request) {
			const env = Object.entries(request.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
			const out = await server.run(['new-window', '-d', '-P', '-F', '#{pane_id}', '-t', 'base:', '-c', request.cwd, ...env, '--', ...request.argv]);
			return out.trim();
		},
		async closePane(paneId) {
			await server.run(['kill-pane', '-t', paneId]);
		},
		async focusPane(paneId) {
			await server.run(['select-pane', '-t', paneId]);
		},
		health: () => health,
		async dispose() {},
	};
}
