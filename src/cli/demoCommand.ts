import {CliError, EXIT} from '../domain/exitCodes.js';
import type {Command} from './commands.js';
import {loadDashboard} from './loadDashboard.js';
import {errOut, out} from './output.js';

/** The global options that would point the demo at real data or another multiplexer: the sandbox decides those. */
const REFUSED = ['registry', 'home', 'tmux-socket', 'tmux-path', 'json'] as const;

export const demoCommand: Command = {
	name: 'demo',
	summary: 'try every key in a private sandbox: sample data of all seven agents, stand-in agents in a private tmux server; removed on exit',
	usage: 'mam-tui demo',
	options: {},
	async run(world, values) {
		const given = REFUSED.filter(key => values[key] !== undefined && values[key] !== false).map(key => `--${key}`);
		if (world.options.mux !== undefined && world.options.mux !== 'tmux') given.push('--mux');
		if (given.length > 0) throw new CliError(`the demo makes its own registry, home and tmux server; drop ${given.join(', ')}`, EXIT.usage);
		// Imported lazily, like the dashboard command: the scriptable commands never load React and Ink,
		// and no other command loads the demo's sandbox (execa and the sample writers).
		const {runDashboard} = await loadDashboard();
		const {runDemo} = await import('../demo/runDemo.js');
		return runDemo({env: world.env, out, err: errOut, runDashboard});
	},
};
