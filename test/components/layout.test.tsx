import {renderToString} from 'ink';
import {describe, expect, it} from 'vitest';
import {AppProvider} from '../../components/StoreContext.js';
import {SessionsScreen} from '../../components/screens/SessionsScreen.js';
import {selectSessionsView} from '../../src/store/selectors.js';
import {initialState} from '../../src/store/state.js';
import {reducer} from '../../src/store/reducer.js';
import {createStore} from '../../src/store/store.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

const sessions = [
	session({
		name: 'refactor-payment-service-v2',
		agent: 'codex',
		cwd: '/home/u/src/very/long/path/to/the/payments/service',
		agentSessionId: '01a22b1d-8e49-79f2-a157-8e33808531cf',
		createdAt: 0,
	}),
	session({name: 'docs', agent: 'claude', status: 'stopped', paneId: null, createdAt: 0}),
];
const state = initialState({
	sessions,
	live: {
		'refactor-payment-service-v2': {liveStatus: 'working', resumeState: {kind: 'no', reason: 'session is live'}},
		docs: {liveStatus: 'stopped', resumeState: {kind: 'yes'}},
	},
});

function frameAt(columns: number): string {
	const store = createStore(reducer, state);
	return renderToString(
		<AppProvider store={store} actions={fakeActions()}>
			<SessionsScreen state={selectSessionsView(state)} height={14} width={columns} home="/home/u" now={3_600_000} />
		</AppProvider>,
		{columns},
	);
}

describe('session list layout', () => {
	it('fits 80 columns: every column present, long names and paths cut with ~, detail below', () => {
		const frame = frameAt(80);
		for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
		const [header, first, second] = frame.split('\n');
		expect(header).toMatch(/NAME\s+AGENT\s+PANE\s+STATUS\s+RESUME\s+AGE\s+CWD/);
		expect(header).not.toContain('PIN');
		expect(first).toMatch(/^>\s+refactor-paym~\s+codex\s+%\d+\s+working\s+no: sessio~\s+1h\s+~\/src\/very\/long\/p~$/);
		expect(second).toMatch(/docs\s+claude\s+-\s+stopped\s+yes\s+1h\s+~\/src\/app/);
		expect(frame).toMatch(/┌─+┐\n│ refactor-payment-service-v2 · codex · running +│\n│ id 01a22b1d-8e49-79f2-a157-8e33808531cf +│/);
	});

	it('uses 140 columns: the pin column, full resume text and the whole name', () => {
		const frame = frameAt(140);
		for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(140);
		const [header, first] = frame.split('\n');
		expect(header).toMatch(/RESUME\s+PIN\s+AGE\s+CWD/);
		expect(first).toMatch(
			/refactor-payment-service-v2\s+codex\s+%\d+\s+working\s+no: session is live\s+~808531cf\s+1h\s+~\/src\/very\/long\/path\/to\/the\/payments\/ser~$/,
		);
	});

	it('tells apart pins that begin with the same time: a UUIDv7 shows its end', () => {
		// Two codex threads started in the same minute (the real CLI's ids): their first 8 characters are one.
		const twins = [
			session({name: 'a', agent: 'codex', agentSessionId: '01a22b1d-8e49-79f2-a157-8e33808531cf', createdAt: 0}),
			session({name: 'b', agent: 'codex', agentSessionId: '01a22b1d-90ae-71a0-9666-6253868f587f', createdAt: 0}),
			session({name: 'c', agent: 'claude', agentSessionId: '69e68769-2dbb-4664-996b-bc39e1d62900', createdAt: 0}),
		];
		const twinState = initialState({sessions: twins});
		const frame = renderToString(
			<AppProvider store={createStore(reducer, twinState)} actions={fakeActions()}>
				<SessionsScreen state={selectSessionsView(twinState)} height={14} width={140} home="/home/u" now={3_600_000} />
			</AppProvider>,
			{columns: 140},
		);
		const pins = frame
			.split('\n')
			.slice(1, 4)
			.map(line => /\s(\S+)\s+\d+h\s/.exec(line)?.[1]);
		expect(pins).toEqual(['~808531cf', '~868f587f', '69e68769~']);
	});

	it('puts the detail panel beside the list from 170 columns', () => {
		const frame = frameAt(180);
		for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(180);
		// the detail panel's border starts on the header line, to the right of the table
		expect(frame.split('\n')[0]).toMatch(/CWD\s+┌─+┐$/);
		// The index has not read any tokens yet (the conversations view never opened).
		expect(frame).toContain('tokens not read yet (c reads them)');
	});
});
