import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import type {Conversation, Finding} from '../../src/domain/types.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, type AppState, type PlanView} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

const rows = [
	session({name: 'api', agent: 'codex', agentSessionId: '01a22b1d-8e49-79f2-a157-8e33808531cf'}),
	session({name: 'docs', agent: 'claude', status: 'stopped', paneId: null, agentSessionId: '69e68769-2dbb-4664-996b-bc39e1d62900'}),
	session({name: 'web', agent: 'opencode'}),
];

const conversations: Conversation[] = [
	{
		agent: 'claude',
		id: '69e68769-2dbb-4664-996b-bc39e1d62900',
		cwd: '/home/u/src/app',
		createdAt: 1,
		updatedAt: 2,
		childCount: 0,
		resumeState: {kind: 'yes'},
		title: 'fix login',
	},
	{
		agent: 'codex',
		id: '01a22b1d-90ae-71a0-9666-6253868f587f',
		cwd: '/home/u/src/app',
		createdAt: 1,
		updatedAt: 2,
		childCount: 1,
		resumeState: {kind: 'no', reason: 'cwd is gone'},
	},
];

const findings: Finding[] = [
	{
		kind: 'pane-gone',
		sessionId: rows[0]?.id,
		sessionName: 'api',
		message: 'api is running but pane %1 is gone',
		evidence: ['tmux list-panes has no %1'],
		fix: {type: 'mark-stopped', sessionId: rows[0]?.id ?? 0},
	},
	{kind: 'duplicate-pin', sessionName: 'web', message: 'two rows pin one id', evidence: []},
];

const plan: PlanView = {
	target: 'docs',
	agent: 'claude',
	id: '69e68769-2dbb-4664-996b-bc39e1d62900',
	descendants: ['agent-a1'],
	lines: [
		{
			kind: 'file',
			description: 'transcript',
			path: '/home/u/.claude/projects/x/69e68769.jsonl',
			bytes: 2048,
			sessionId: '69e68769-2dbb-4664-996b-bc39e1d62900',
		},
	],
	totalBytes: 2048,
};

function setup(overrides: Partial<AppState> = {}) {
	const store = createStore(reducer, initialState({sessions: rows, conversations, findings, ...overrides}));
	const actions = fakeActions();
	const r = render(
		<AppProvider store={store} actions={actions}>
			<App home="/home/u" />
		</AppProvider>,
	);
	return {r, store, actions};
}

async function ready() {
	const ctx = setup();
	await waitForFrame(ctx.r, f => f.includes('api'));
	return ctx;
}

describe('session keys', () => {
	it('enter focuses the selected pane', async () => {
		const {r, actions} = await ready();
		await press(r, KEYS.enter);
		expect(actions.focus).toHaveBeenCalledWith('api');
	});

	it('r resumes the selected session (the one under the cursor when pressed)', async () => {
		const {r, actions} = await ready();
		// j then r back to back: the handler reads the store, not a stale render value
		r.stdin.write('j');
		r.stdin.write('j');
		r.stdin.write('r');
		await press(r);
		await waitForFrame(r, () => actions.resume.mock.calls.length > 0);
		expect(actions.resume).toHaveBeenCalledWith('docs');
	});

	it('s asks for the selected session; with marked rows it asks for all of them', async () => {
		const {r, actions, store} = await ready();
		await press(r, 's');
		expect(actions.openStop).toHaveBeenLastCalledWith(['api']);
		expect(actions.stop).not.toHaveBeenCalled();
		await press(r, ' ', 'j', ' ');
		expect(await press(r)).toMatch(/>\*!web/);
		expect([...store.getState().ui.marked].sort()).toEqual(['api', 'web']);
		await press(r, 's');
		expect(actions.openStop).toHaveBeenLastCalledWith(['api', 'web']);
		expect(actions.stop).not.toHaveBeenCalled();
	});

	it('p opens the purge confirmation, never purges by itself', async () => {
		const {r, actions} = await ready();
		await press(r, 'p');
		expect(actions.openPurge).toHaveBeenCalledWith(['api']);
		expect(actions.confirmPurge).not.toHaveBeenCalled();
	});

	it('n opens the new-session dialog: pick an agent and a cwd, enter spawns', async () => {
		const {r, actions} = await ready();
		const dialog = await press(r, 'n');
		expect(dialog).toContain('New session');
		await press(r, KEYS.down, KEYS.tab);
		for (let i = 0; i < '/home/u/src/app'.length; i++) await press(r, KEYS.backspace);
		await press(r, ...'/tmp/x');
		await press(r, KEYS.enter);
		expect(actions.newSession).toHaveBeenCalledWith('codex', '/tmp/x');
	});

	it('a cwd pasted with its Enter (one chunk) spawns in that cwd, with no CR in it', async () => {
		const {r, actions} = await ready();
		await press(r, 'n', KEYS.tab);
		for (let i = 0; i < '/home/u/src/app'.length; i++) await press(r, KEYS.backspace);
		r.stdin.write('/tmp/pasted\r');
		await waitForFrame(r, f => !f.includes('New session'));
		expect(actions.newSession).toHaveBeenCalledWith('claude', '/tmp/pasted');
	});

	it('esc leaves the new-session dialog without spawning', async () => {
		const {r, actions} = await ready();
		await press(r, 'n');
		r.stdin.write(KEYS.escape);
		await waitForFrame(r, f => !f.includes('New session'));
		expect(actions.newSession).not.toHaveBeenCalled();
	});

	it('R refreshes', async () => {
		const {r, actions} = await ready();
		await press(r, 'R');
		expect(actions.refresh).toHaveBeenCalled();
	});
});

describe('findings panel', () => {
	it('tab shows every finding with its evidence and the fix f would apply; f applies it', async () => {
		const {r, actions} = await ready();
		const frame = await press(r, KEYS.tab);
		expect(frame).toContain('pane-gone');
		expect(frame).toContain('duplicate-pin');
		expect(frame).toContain('tmux list-panes has no %1');
		expect(frame).toContain('f: mark stopped');
		await press(r, 'f');
		expect(actions.applyFix).toHaveBeenCalledWith(0);
		const second = await press(r, 'j');
		expect(second).toContain('no automatic fix');
		await press(r, 'f');
		expect(actions.applyFix).toHaveBeenLastCalledWith(1);
	});

	it('marks sessions that have findings in the list', async () => {
		const {r} = await ready();
		expect(r.lastFrame()).toMatch(/>\s+!api/);
	});
});

describe('conversations view', () => {
	it('c lists conversations on disk with resume state; a adopts, r resumes, p purges', async () => {
		const {r, actions} = await ready();
		const frame = await press(r, 'c');
		expect(frame).toContain('conversations on disk');
		expect(frame).toMatch(/claude\s+69e68769-2dbb~\s+docs\s+yes/);
		expect(frame).toMatch(/codex\s+~6253868f587f\s+-\s+no: cwd is/);
		await press(r, 'a');
		expect(actions.adopt).toHaveBeenCalledWith({agent: 'claude', id: '69e68769-2dbb-4664-996b-bc39e1d62900'});
		await press(r, 'j', 'r');
		expect(actions.resumeConversation).toHaveBeenCalledWith({agent: 'codex', id: '01a22b1d-90ae-71a0-9666-6253868f587f'});
		await press(r, 'p');
		expect(actions.openPurgeConversation).toHaveBeenCalledWith({agent: 'codex', id: '01a22b1d-90ae-71a0-9666-6253868f587f'});
		expect(actions.resume).not.toHaveBeenCalled();
		expect(await press(r, 'c')).toContain('mam-tui — sessions');
	});
});

describe('purge confirmation dialog', () => {
	function withDialog(extra: Partial<NonNullable<AppState['purge']>> = {}) {
		const ctx = setup();
		ctx.store.dispatch({type: 'purge/open', targets: ['docs'], expected: 'docs'});
		ctx.store.dispatch({type: 'purge/plans', plans: [plan], ...(extra.refusal ? {refusal: extra.refusal} : {})});
		return ctx;
	}

	it('shows the plan, the child sessions and the total, and asks for the name', async () => {
		const {r} = withDialog();
		const frame = await waitForFrame(r, f => f.includes('Purge docs'));
		expect(frame).toMatch(/transcript: 2\.0 KiB +║\n║ +~\/\.claude\/projects\/x\/69e68769\.jsonl/);
		expect(frame).toContain('1 child session(s): agent-a1');
		expect(frame).toContain('Total 1 item, 2.0 KiB. Type docs and press enter');
	});

	it.each([['doc'], ['Docs'], ['docs '], [''], ['y'], ['purge 1']])('typing %j then enter cancels and purges nothing', async typed => {
		const {r, actions, store} = withDialog();
		await waitForFrame(r, f => f.includes('Purge docs'));
		await press(r, ...typed.split(''), KEYS.enter);
		expect(actions.confirmPurge).not.toHaveBeenCalled();
		expect(store.getState().purge).toBeNull();
		expect(await waitForFrame(r, f => f.includes('purge cancelled'))).toContain('did not match');
	});

	it('only the exact name confirms', async () => {
		const {r, actions} = withDialog();
		await waitForFrame(r, f => f.includes('Purge docs'));
		await press(r, 'd', 'o', 'c', 's', KEYS.enter);
		expect(actions.confirmPurge).toHaveBeenCalledWith('docs');
	});

	it('the name and Enter in one chunk (pasted, or typed fast) confirm it; a wrong name in one chunk cancels', async () => {
		const pasted = withDialog();
		await waitForFrame(pasted.r, f => f.includes('Purge docs'));
		pasted.r.stdin.write('docs\r');
		await waitForFrame(pasted.r, () => pasted.store.getState().purge === null);
		expect(pasted.actions.confirmPurge).toHaveBeenCalledWith('docs');
		cleanup();

		for (const chunk of ['doc\r', 'docs \r', 'do\rcs\r', 'docsx\n']) {
			const wrong = withDialog();
			await waitForFrame(wrong.r, f => f.includes('Purge docs'));
			wrong.r.stdin.write(chunk);
			expect(await waitForFrame(wrong.r, f => f.includes('purge cancelled'))).toContain('did not match');
			expect(wrong.actions.confirmPurge).not.toHaveBeenCalled();
			expect(wrong.store.getState().purge).toBeNull();
			cleanup();
		}
	});

	it('esc cancels even after the name was typed', async () => {
		const {r, actions, store} = withDialog();
		await waitForFrame(r, f => f.includes('Purge docs'));
		await press(r, 'd', 'o', 'c', 's');
		r.stdin.write(KEYS.escape);
		await waitForFrame(r, f => f.includes('purge cancelled'));
		expect(actions.confirmPurge).not.toHaveBeenCalled();
		expect(store.getState().purge).toBeNull();
	});

	it('q and other command keys are text inside the dialog, not commands', async () => {
		const {r, actions} = withDialog();
		await waitForFrame(r, f => f.includes('Purge docs'));
		const frame = await press(r, 'q', 's', 'p');
		expect(actions.quit).not.toHaveBeenCalled();
		expect(actions.stop).not.toHaveBeenCalled();
		expect(frame).toContain('> qsp');
	});

	it('a refusal is explained and cannot be confirmed', async () => {
		const {r, actions} = withDialog({refusal: 'in use by pid 4242 (claude --resume 69e6…)'});
		const frame = await waitForFrame(r, f => f.includes('Refused'));
		expect(frame).toContain('in use by pid 4242');
		await press(r, 'd', 'o', 'c', 's', KEYS.enter);
		expect(actions.confirmPurge).not.toHaveBeenCalled();
	});
});

describe('stop progress', () => {
	it('renders the three steps live and which step ended it', async () => {
		const {r, store} = await ready();
		store.dispatch({type: 'operation/started', operation: {kind: 'stop', session: 'api', startedAt: Date.now(), steps: []}});
		store.dispatch({
			type: 'operation/step',
			session: 'api',
			step: {id: 'exit-input', label: '1 exit input', state: 'done', startedAt: Date.now() - 10_000, endedAt: Date.now()},
		});
		store.dispatch({type: 'operation/step', session: 'api', step: {id: 'close-pane', label: '2 close pane', state: 'running', startedAt: Date.now()}});
		const running = await waitForFrame(r, f => f.includes('2 close pane'));
		expect(running).toMatch(/stop api .*✓ 1 exit input 10\.\ds → [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] 2 close pane/);
		// the UI stays responsive while it runs
		expect(await press(r, 'j')).toMatch(/>\s+!web/);
		store.dispatch({type: 'operation/ended', session: 'api', at: Date.now(), ok: true, text: 'ended by close-pane'});
		expect(await waitForFrame(r, f => f.includes('ended by close-pane'))).toContain('stop api');
	});
});
