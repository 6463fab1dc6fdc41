import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import type {Finding, Pane} from '../../src/domain/types.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, type AppState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

function setup(overrides: Partial<AppState> = {}) {
	const store = createStore(reducer, initialState(overrides));
	const actions = fakeActions();
	const r = render(
		<AppProvider store={store} actions={actions}>
			<App home="/home/u" />
		</AppProvider>,
	);
	return {r, store, actions};
}

const three = [
	session({name: 'api-refactor', agent: 'codex'}),
	session({name: 'docs', agent: 'claude', status: 'stopped', paneId: null}),
	session({name: 'bugfix', agent: 'opencode'}),
];

describe('the first dashboard frame', () => {
	it('lists the registry sessions with name, agent, status and a shortened cwd', async () => {
		const {r} = setup({sessions: three});
		const frame = await waitForFrame(r, f => f.includes('api-refactor'));
		expect(frame).toMatch(/>\s*api-refactor\s+codex\s+%\d+\s+running\s.*~\/src\/app/);
		expect(frame).toMatch(/docs\s+claude\s+-\s+stopped/);
		// running rows first, then by name
		expect(frame.indexOf('api-refactor')).toBeLessThan(frame.indexOf('bugfix'));
		expect(frame.indexOf('bugfix')).toBeLessThan(frame.indexOf('docs'));
		expect(frame).toContain('2 running, 1 stopped, 0 purged');
	});

	it('shows an empty state that tells a new user what to do', async () => {
		const {r} = setup();
		const frame = await waitForFrame(r, f => f.includes('No sessions yet'));
		expect(frame).toContain('mam-tui new --agent claude --cwd DIR');
		expect(frame).toContain('mam-tui demo');
	});

	it('with no sessions, names the agent panes running outside the registry and those that wait for the user', async () => {
		const pane = (id: string, agentStatus: Pane['agentStatus']): Pane => ({id, mux: 'tmux', agent: 'gemini', agentStatus, processes: [], isSelf: false});
		const untracked = (paneId: string): Finding => ({kind: 'untracked-pane', paneId, message: `tmux pane ${paneId} runs Gemini CLI`, evidence: []});
		const {r} = setup({panes: [pane('%1', 'blocked'), pane('%2', 'idle'), pane('%3', 'blocked')], findings: [untracked('%1'), untracked('%2')]});
		const frame = await waitForFrame(r, f => f.includes('outside the registry'));
		expect(frame).toContain('2 agent panes run outside the registry (1 needs you): tab lists them');
		expect(frame).toMatch(/│ 1 needs you/);
	});

	it('moves with j/k and the arrows, g and G', async () => {
		const {r, store} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		expect(await press(r, 'j')).toMatch(/>\s*bugfix/);
		expect(await press(r, KEYS.down)).toMatch(/>\s*docs/);
		expect(await press(r, 'j')).toMatch(/>\s*docs/); // clamps at the end
		expect(await press(r, 'k')).toMatch(/>\s*bugfix/);
		expect(await press(r, KEYS.up)).toMatch(/>\s*api-refactor/);
		expect(await press(r, 'G')).toMatch(/>\s*docs/);
		expect(await press(r, 'g')).toMatch(/>\s*api-refactor/);
		expect(store.getState().ui.cursor).toBe(0);
	});

	it('quits with q and with ctrl+c, and never through another key', async () => {
		const {r, actions} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		await press(r, 'x', 'Q', KEYS.enter);
		expect(actions.quit).not.toHaveBeenCalled();
		await press(r, 'q');
		expect(actions.quit).toHaveBeenCalledTimes(1);
		await press(r, KEYS.ctrlC);
		expect(actions.quit).toHaveBeenCalledTimes(2);
	});

	it('filters with / and clears with esc', async () => {
		const {r} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		const filtered = await press(r, '/', 'o', 'p', 'e');
		expect(filtered).toContain('filter: ope');
		expect(filtered).toContain('bugfix');
		expect(filtered).not.toContain('api-refactor');
		// q while typing is text, not quit
		expect(await press(r, 'q')).toContain('No session matches');
		r.stdin.write(KEYS.escape);
		const cleared = await waitForFrame(r, f => f.includes('api-refactor'));
		expect(cleared).not.toContain('filter:');
	});

	it('a name and Enter that arrive in one chunk filter by the name and keep it', async () => {
		const {r} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		await press(r, '/');
		r.stdin.write('bugfix\r');
		const kept = await waitForFrame(r, f => f.includes('filter: bugfix') && !f.includes('▏'));
		expect(kept).toContain('bugfix');
		expect(kept).not.toContain('api-refactor');
		expect(kept).not.toContain('No session matches');
	});

	it('shows the keys with ? (generated from the key table) and hides them with esc', async () => {
		const {r} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		const help = await press(r, '?');
		// 24 rows: the keys go in two columns, each description cut to its column
		expect(help).toContain('quit (never stops or kills');
		expect(help).toContain('j / ↓');
		r.stdin.write(KEYS.escape);
		await waitForFrame(r, f => f.includes('api-refactor') && !f.includes('never stops'));
	});

	it('switches to findings with tab and back', async () => {
		const {r} = setup({sessions: three});
		await waitForFrame(r, f => f.includes('api-refactor'));
		expect(await press(r, KEYS.tab)).toContain('No drift findings');
		expect(await press(r, KEYS.tab)).toContain('api-refactor');
	});

	it('renders only the rows that fit, keeping the cursor visible', async () => {
		const many = Array.from({length: 300}, (_, i) => session({name: `s${String(i).padStart(3, '0')}`}));
		const {r} = setup({sessions: many});
		await waitForFrame(r, f => f.includes('s000'));
		const frame = await press(r, 'G');
		expect(frame).toMatch(/>\s*s299/);
		expect(frame).not.toContain('s000');
		expect(frame.split('\n').length).toBeLessThanOrEqual(24);
	});
});
