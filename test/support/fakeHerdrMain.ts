// Run the fake herdr as its own process, for end-to-end tests and demos:
//   node --import tsx test/support/fakeHerdrMain.ts --socket PATH [--tmux-socket NAME]
//        [--protocol 20|22] [--cwd DIR] [--path-prepend DIR] [--pane 'command line']... [--strict]
// Each --pane opens a pane (the first one a workspace, the rest splits of it) and types the
// command line into its shell. One JSON line on stdout says it is ready; SIGTERM stops it and
// kills every pane. With --strict, a schema violation makes the exit code 3.
import {parseArgs} from 'node:util';
import {startFakeHerdr} from './fakeHerdr.js';
import {FAKE_PROTOCOLS} from './herdrSchema.js';
import {privateTmux} from '../helpers/tmux.js';

const {values} = parseArgs({
	options: {
		socket: {type: 'string'},
		'tmux-socket': {type: 'string'},
		protocol: {type: 'string'},
		cwd: {type: 'string'},
		'path-prepend': {type: 'string'},
		pane: {type: 'string', multiple: true},
		strict: {type: 'boolean'},
	},
	strict: true,
});

const protocol = FAKE_PROTOCOLS.find(p => String(p) === (values.protocol ?? '22'));
if (!values.socket || protocol === undefined) {
	process.stderr.write(
		'usage: fakeHerdrMain.ts --socket PATH [--tmux-socket NAME] [--protocol 20|22] [--cwd DIR] [--path-prepend DIR] [--pane LINE]... [--strict]\n',
	);
	process.exit(2);
}

const tmux = values['tmux-socket'] ? privateTmux('mam-test', values['tmux-socket']) : privateTmux();
const pathPrepend = values['path-prepend'];
const fake = await startFakeHerdr({
	socketPath: values.socket,
	protocol,
	tmux,
	...(pathPrepend ? {paneEnv: {PATH: `${pathPrepend}:${process.env['PATH'] ?? '/usr/bin:/bin'}`}} : {}),
});

const cwd = values.cwd ?? process.cwd();
const panes: string[] = [];
for (const line of values.pane ?? []) {
	const id = panes.length === 0 ? await fake.openWorkspace(cwd) : await fake.split(panes[0] ?? '', cwd);
	if (line.trim()) await fake.run(id, line);
	panes.push(id);
}

let reported = 0;
const report = setInterval(() => {
	for (; reported < fake.violations.length; reported++) process.stderr.write(`schema violation: ${fake.violations[reported]}\n`);
}, 200);

let stopping = false;
async function stop(): Promise<void> {
	if (stopping) return;
	stopping = true;
	clearInterval(report);
	await fake.stop();
	for (; reported < fake.violations.length; reported++) process.stderr.write(`schema violation: ${fake.violations[reported]}\n`);
	process.exit(values.strict && fake.violations.length > 0 ? 3 : 0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

process.stdout.write(
	`${JSON.stringify({ready: true, socket: fake.socketPath, protocol: fake.protocol, version: fake.version, tmuxSocket: tmux.name, pid: process.pid, panes})}\n`,
);
