import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import {parkedExtra} from '../../src/registry/extra.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

const GB = 1024 ** 3;
const parked = (name: string, freedBytes: number) =>
	session({
		name,
		status: 'parked',
		paneId: null,
		agentSessionId: '69e68769-2dbb-4664-996b-bc39e1d62900',
		extra: parkedExtra.write({}, {at: 1, freedBytes, idleSeconds: 3000, argv: ['claude', '--resume', 'x'], cwd: '/home/u/src/app'}),
	});

function setup() {
	const rows = [session({name: 'api', agent: 'codex'}), session({name: 'web', agent: 'opencode'}), parked('zz-old', 1.5 * GB), parked('zz-older', 0.6 * GB)];
	const store = createStore(reducer, initialState({sessions: rows}));
	const actions = fakeActions();
	const r = render(
		<AppProvider store={store} actions={actions}>
			<App home="/home/u" />
		</AppProvider>,
	);
	return {r, store, actions};
}

describe('park keys', () => {
	it('z asks first; y parks the selected session, n cancels', async () => {
		const {r, actions} = setup();
		await waitForFrame(r, f => f.includes('api'));
		const dialog = await press(r, 'z');
		expect(dialog).toContain('Park api?');
		expect(actions.park).not.toHaveBeenCalled();
		await press(r, 'n');
		expect(actions.park).not.toHaveBeenCalled();
		await press(r, 'z');
		await press(r, 'y');
		expect(actions.park).toHaveBeenCalledWith(['api']);
	});

	it('z with marked rows parks them together; a pasted "zy" never answers its own question', async () => {
		const {r, actions} = setup();
		await waitForFrame(r, f => f.includes('api'));
		await press(r, ' ', 'j', ' ');
		r.stdin.write('zy');
		const frame = await waitForFrame(r, f => f.includes('Park 2 sessions?'));
		expect(frame).toContain('Park 2 sessions?');
		expect(actions.park).not.toHaveBeenCalled();
		await press(r, 'y');
		expect(actions.park).toHaveBeenCalledWith(['api', 'web']);
	});

	it('the list shows parked rows with what they freed, the status bar the sum; enter and r wake a parked row', async () => {
		const {r, actions} = setup();
		const frame = await waitForFrame(r, f => f.includes('zz-old'));
		expect(frame).toMatch(/zz-old\s+claude\s+1.5 GB parked/);
		expect(frame).toMatch(/zz-older\s+claude\s+614 MB parked/);
		expect(frame).toContain('2 parked · 2.1 GB freed');
		await press(r, 'G', 'k');
		await press(r, KEYS.enter);
		expect(actions.wake).toHaveBeenLastCalledWith('zz-old');
		expect(actions.focus).not.toHaveBeenCalled();
		await press(r, 'j', 'r');
		expect(actions.wake).toHaveBeenLastCalledWith('zz-older');
		expect(actions.resume).not.toHaveBeenCalled();
	});

	it('z on a parked row parks nothing and says why', async () => {
		const {r, actions} = setup();
		await waitForFrame(r, f => f.includes('zz-old'));
		const frame = await press(r, 'G', 'z');
		expect(frame).toContain('only running sessions can be parked');
		expect(actions.park).not.toHaveBeenCalled();
	});
});
