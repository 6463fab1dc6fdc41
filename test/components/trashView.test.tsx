// Issue 18 item 4, pressed in ink-testing-library: the dashboard's trash view lists purges, `r`
// restores the selected one, `E` deletes it for good only after `empty 1` is typed.
import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import {DEFAULT_KEYMAP, resolveCommand} from '../../components/input/keymap.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, type TrashRow} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

const entries: TrashRow[] = [
	{
		purgeId: '20261201-120000-claude-aaaa',
		agent: 'claude',
		conversation: 'c0ffee00-0000-4000-8000-000000000001',
		label: 'docs',
		state: 'done',
		ageMs: 3 * 3600_000,
		bytes: 2048,
		items: 3,
	},
	{
		purgeId: '20261201-110000-codex-bbbb',
		agent: 'codex',
		conversation: '019a0000-0000-7000-8000-000000000002',
		label: 'codex:019a0000',
		state: 'done',
		ageMs: 2 * 86_400_000,
		bytes: 10,
		items: 1,
	},
];

async function inTrash() {
	const store = createStore(reducer, initialState({sessions: [session({name: 'docs', agent: 'claude', paneId: '%2'})]}));
	const actions = fakeActions();
	// What the controller does: read the trash into the store.
	actions.loadTrash.mockImplementation(() => store.dispatch({type: 'trash/loaded', entries}));
	const r = render(
		<AppProvider store={store} actions={actions} keymap={DEFAULT_KEYMAP}>
			<App home="/home/u" />
		</AppProvider>,
	);
	await waitForFrame(r, f => f.includes('docs'));
	await press(r, 'T');
	const frame = await waitForFrame(r, f => f.includes('20261201-110000-codex-bbbb'));
	return {r, store, actions, frame};
}

describe('dashboard: the trash view', () => {
	it('T opens it from the sessions list and loads the trash; it lists purge id, agent, age and size; esc goes back', async () => {
		const {r, store, actions, frame} = await inTrash();
		expect(actions.loadTrash).toHaveBeenCalledTimes(1);
		expect(store.getState().ui.mode).toBe('trash');
		expect(frame).toContain('20261201-120000-claude-aaaa');
		expect(frame).toMatch(/claude\s+3h\s+2\.0 KiB\s+docs/);
		expect(frame).toMatch(/codex\s+2d\s+10 B/);
		expect(frame).toMatch(/r restore · E empty/);
		await press(r, KEYS.escape);
		expect(store.getState().ui.mode).toBe('sessions');
	});

	it('r restores the selected purge (j moves to the second)', async () => {
		const {r, actions} = await inTrash();
		await press(r, 'j');
		await press(r, 'r');
		expect(actions.restoreTrash).toHaveBeenCalledWith('20261201-110000-codex-bbbb');
		expect(actions.resume).not.toHaveBeenCalled();
	});

	it('E asks for `empty 1` typed; only that text empties, anything else cancels', async () => {
		const {r, store, actions} = await inTrash();
		let frame = await press(r, 'E');
		expect(frame).toContain('Type empty 1');
		expect(frame).toContain('enter deletes for good');
		expect(store.getState().ui.mode).toBe('trashEmpty');
		// A chunk holding the whole confirmation plus enter is text, then a separate enter.
		await press(r, 'empty 2', KEYS.enter);
		expect(actions.emptyTrash).not.toHaveBeenCalled();
		expect(store.getState().ui.mode).toBe('trash');
		expect(store.getState().notices.at(-1)?.text).toMatch(/did not match/);

		await press(r, 'E', 'empty 1');
		await press(r, KEYS.escape);
		expect(actions.emptyTrash).not.toHaveBeenCalled();

		await press(r, 'E', 'empty 1', KEYS.enter);
		expect(actions.emptyTrash).toHaveBeenCalledWith('20261201-120000-claude-aaaa');
		frame = r.lastFrame() ?? '';
		expect(frame).not.toContain('Type empty 1');
	});

	it('the keys mean trash commands only in the trash view', () => {
		expect(resolveCommand('trash', 'r', {})).toBe('trash.restore');
		expect(resolveCommand('sessions', 'r', {})).toBe('session.resume');
		expect(resolveCommand('sessions', 'E', {})).toBeUndefined();
		expect(resolveCommand('trash', 'E', {})).toBe('trash.empty');
	});
});
