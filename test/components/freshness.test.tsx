// The dashboard re-renders by slice and memoises rows and the detail panel (for key latency).
// These tests fail if a shortcut kept showing stale data: every store change a part of the
// screen shows must reach the frame.
import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import type {Finding} from '../../src/domain/types.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

const rows = [session({name: 'alpha'}), session({name: 'beta'}), session({name: 'gamma'})];

function setup(overrides: Partial<AppState> = {}) {
	const store = createStore(reducer, initialState({sessions: rows, ...overrides}));
	const r = render(
		<AppProvider store={store} actions={fakeActions()}>
			<App home="/home/u" />
		</AppProvider>,
	);
	return {r, store};
}

/** The table line of `name` (three marker columns, then the name cell). */
const lineOf = (frame: string, name: string) => frame.split('\n').find(l => l.slice(3).startsWith(`${name} `)) ?? '';

describe('a memoised screen still shows every change', () => {
	it("the status bar's need-you count follows the live data and the untracked panes, not only new arrays of them", async () => {
		const {r, store} = setup();
		await waitForFrame(r, f => f.includes('gamma'));
		const blocked = {liveStatus: 'blocked', resumeState: {kind: 'yes'}} as const;
		store.dispatch({type: 'live/updated', live: {beta: blocked}});
		await waitForFrame(r, f => f.includes('│ 1 needs you'));
		const finding = {kind: 'untracked-pane', paneId: 'w9:p1', level: 'warn', message: 'an agent outside the registry', evidence: []} as unknown as Finding;
		const pane = {id: 'w9:p1', mux: 'herdr', agent: 'claude', agentStatus: 'idle', processes: [], isSelf: false} as const;
		store.dispatch({type: 'live/updated', findings: [finding], panes: [pane]});
		await waitForFrame(r, f => f.includes('1 findings'));
		// The same findings array, a new listing where the untracked pane asks for the user.
		store.dispatch({type: 'live/updated', panes: [{...pane, agentStatus: 'blocked'}]});
		await waitForFrame(r, f => f.includes('│ 2 need you'));
		// The same rows, new live data: beta is no longer blocked.
		store.dispatch({type: 'live/updated', live: {beta: {...blocked, liveStatus: 'idle'}}});
		const frame = await waitForFrame(r, f => f.includes('│ 1 needs you'));
		expect(lineOf(frame, 'beta')).toMatch(/idle/);
	});

	it('a live update of a row that is not selected reaches its line', async () => {
		const {r, store} = setup();
		await waitForFrame(r, f => f.includes('gamma'));
		store.dispatch({type: 'live/updated', live: {gamma: {liveStatus: 'blocked', resumeState: {kind: 'yes'}}}});
		const frame = await waitForFrame(r, f => /blocked/.test(lineOf(f, 'gamma')));
		expect(lineOf(frame, 'alpha')).toMatch(/running/);
	});

	it('a new finding marks its row and shows in the detail panel of the selected row', async () => {
		const {r, store} = setup();
		await waitForFrame(r, f => f.includes('alpha'));
		const finding: Finding = {
			kind: 'unpinned',
			sessionId: rows[0]!.id,
			sessionName: 'alpha',
			level: 'info',
			message: 'alpha: no conversation yet',
			evidence: [],
		} as unknown as Finding;
		store.dispatch({type: 'live/updated', findings: [finding]});
		const frame = await waitForFrame(r, f => f.includes('! unpinned: alpha: no conversation yet'));
		expect(lineOf(frame, 'alpha')).toMatch(/^> !alpha/);
		expect(frame).toContain('1 findings');
	});

	it('the status bar follows notices and counts while the cursor moves', async () => {
		const {r, store} = setup();
		await waitForFrame(r, f => f.includes('3 running'));
		await press(r, KEYS.down);
		store.dispatch({type: 'notice/set', notice: {level: 'ok', text: 'stopped beta', at: 0}});
		await waitForFrame(r, f => f.includes('stopped beta'));
		store.dispatch({type: 'registry/loaded', sessions: [rows[0]!, {...rows[1]!, status: 'stopped', paneId: null}, rows[2]!], at: 0});
		const frame = await waitForFrame(r, f => f.includes('2 running, 1 stopped'));
		// the cursor stays on beta, now sorted last
		expect(lineOf(frame, 'beta')).toMatch(/^>/);
	});

	it('the detail panel follows the loaded detail and the selection', async () => {
		const {r, store} = setup();
		await waitForFrame(r, f => f.includes('alpha · claude'));
		store.dispatch({type: 'detail/loaded', detail: {name: 'alpha', processes: [], audit: [], resumeCommand: ['claude', '--resume', 'x'], loadedAt: 0}});
		await waitForFrame(r, f => f.includes('$ claude --resume x'));
		const frame = await press(r, KEYS.down);
		expect(frame).toContain('beta · claude');
		expect(frame).not.toContain('$ claude --resume x');
	});
});
