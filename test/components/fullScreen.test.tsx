// Issue 21, pressed in ink-testing-library: chunked keys, the stop confirmation, notices that
// expire, the scrolling detail panel, the conversations view's scope and search, rebound keys,
// and a resize.
import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import {DEFAULT_KEYMAP, keymapWith, KeymapError, type Keymap} from '../../components/input/keymap.js';
import type {Conversation} from '../../src/domain/types.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState, NOTICE_TTL_MS, type AppState, type SessionDetail} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {KEYS, press, waitForFrame} from '../helpers/ink.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => cleanup());

const rows = [
	session({name: 'api', agent: 'codex', paneId: '%1'}),
	session({name: 'docs', agent: 'claude', paneId: '%2'}),
	session({name: 'web', agent: 'opencode', paneId: '%3'}),
	session({name: 'zed', agent: 'claude', paneId: '%4'}),
];

function setup(overrides: Partial<AppState> = {}, keymap: Keymap = DEFAULT_KEYMAP) {
	const store = createStore(reducer, initialState({sessions: rows, ...overrides}));
	const actions = fakeActions();
	// What the controller does: put the question in the store.
	actions.openStop.mockImplementation(names =>
		store.dispatch({
			type: 'stop/open',
			dialog: {targets: names.map(name => ({name, agent: 'codex', pane: '%1', exitText: '/exit'})), graceSeconds: 10, killWaitSeconds: 3},
		}),
	);
	const r = render(
		<AppProvider store={store} actions={actions} keymap={keymap}>
			<App home="/home/u" />
		</AppProvider>,
	);
	return {r, store, actions};
}

async function ready(overrides: Partial<AppState> = {}, keymap?: Keymap) {
	const ctx = setup(overrides, keymap);
	await waitForFrame(ctx.r, f => f.includes('zed'));
	return ctx;
}

const selectedName = (state: AppState) => state.sessions.length && [...state.sessions].sort((a, b) => a.name.localeCompare(b.name))[state.ui.cursor]?.name;

describe('keys that arrive in one chunk', () => {
	it('jjj moves three rows, and kk two back', async () => {
		const {r, store} = await ready();
		await press(r, 'jjj');
		expect(selectedName(store.getState())).toBe('zed');
		await press(r, 'kk');
		expect(selectedName(store.getState())).toBe('docs');
	});

	it('a pasted ss asks about one stop, once, and stops nothing', async () => {
		const {r, actions, store} = await ready();
		await press(r, 'ss');
		expect(actions.openStop).toHaveBeenCalledTimes(1);
		expect(actions.stop).not.toHaveBeenCalled();
		expect(store.getState().ui.mode).toBe('stop');
	});

	it('a chunk never answers the question it asked: sy asks and waits', async () => {
		const {r, actions, store} = await ready();
		await press(r, 'sy');
		expect(store.getState().ui.mode).toBe('stop');
		expect(actions.stop).not.toHaveBeenCalled();
	});

	it('a chunk typed into the open question is not an answer; a y of its own is', async () => {
		const {r, actions, store} = await ready();
		await press(r, 's');
		await press(r, 'yy');
		expect(actions.stop).not.toHaveBeenCalled();
		expect(store.getState().ui.mode).toBe('stop');
		await press(r, 'y');
		expect(actions.stop).toHaveBeenCalledTimes(1);
		expect(actions.stop).toHaveBeenCalledWith(['api']);
	});

	it('pp opens one purge dialog; jr resumes the second row once; two Enters focus once', async () => {
		const {r, actions} = await ready();
		await press(r, 'pp');
		expect(actions.openPurge).toHaveBeenCalledTimes(1);
		const second = await ready();
		await press(second.r, 'jrr');
		expect(second.actions.resume).toHaveBeenCalledTimes(1);
		expect(second.actions.resume).toHaveBeenCalledWith('docs');
		await press(second.r, '\r\r');
		expect(second.actions.focus).toHaveBeenCalledTimes(1);
	});

	it('/we opens the filter and types into it; the Enter in the chunk keeps it and j moves in the list', async () => {
		const {r, store} = await ready();
		const frame = await press(r, '/we\rj');
		expect(store.getState().ui.filter).toBe('we');
		expect(store.getState().ui.mode).toBe('sessions');
		expect(frame).toContain('filter: we');
		expect(frame).not.toContain('zed');
	});
});

describe('stop asks first', () => {
	it('s shows the session, its pane, the three steps with their waits, and asks y/n', async () => {
		const {r, actions} = await ready();
		const frame = await press(r, 's');
		expect(frame).toContain('Stop api?');
		expect(frame).toContain('api (codex) in pane %1');
		expect(frame).toContain('1. type /exit into the pane, then wait up to 10s');
		expect(frame).toContain('2. close the pane (SIGHUP), then wait up to 3s');
		expect(frame).toContain('3. SIGKILL');
		expect(frame).toContain('y or s stops it');
		expect(actions.stop).not.toHaveBeenCalled();
	});

	it.each([['n'], [KEYS.escape]])('%j cancels and stops nothing', async key => {
		const {r, actions, store} = await ready();
		await press(r, 's');
		r.stdin.write(key);
		const frame = await waitForFrame(r, f => f.includes('stop cancelled'));
		expect(frame).not.toContain('Stop api?');
		expect(actions.stop).not.toHaveBeenCalled();
		expect(store.getState().stopDialog).toBeNull();
	});

	it('s again confirms', async () => {
		const {r, actions} = await ready();
		await press(r, 's', 's');
		expect(actions.stop).toHaveBeenCalledWith(['api']);
	});

	it('a bulk stop gives the count and stops every marked row', async () => {
		const {r, actions, store} = await ready();
		await press(r, ' ', 'j', 'j', ' ');
		const frame = await press(r, 's');
		expect(frame).toContain('Stop 2 sessions?');
		expect(frame).toContain('y or s stops all 2');
		await press(r, 'y');
		expect(actions.stop).toHaveBeenCalledWith(['api', 'web']);
		expect(store.getState().ui.marked.size).toBe(0);
	});
});

describe('notices that go away', () => {
	it('an info notice and a finished stop expire; an error stays until esc', async () => {
		const {r, store} = await ready();
		const at = Date.now();
		store.dispatch({type: 'notice/set', notice: {level: 'error', text: 'resume docs: cwd is gone', at}});
		store.dispatch({type: 'notice/set', notice: {level: 'info', text: 'focused %1', at}});
		store.dispatch({type: 'operation/started', operation: {kind: 'stop', session: 'api', startedAt: at - 2000, steps: []}});
		store.dispatch({type: 'operation/step', session: 'api', step: {id: 'exit-input', label: '1 exit input', state: 'done', startedAt: at - 2000, endedAt: at}});
		store.dispatch({type: 'operation/ended', session: 'api', at, ok: true, text: 'ended by exit-input'});
		const shown = await waitForFrame(r, f => f.includes('focused %1'));
		expect(shown).toContain('✓ stop api: ended by exit-input (✓1) in 2.0s');
		expect(shown).toContain('✗ resume docs: cwd is gone (esc dismisses)');

		store.dispatch({type: 'clock/expire', now: at + NOTICE_TTL_MS});
		const later = await waitForFrame(r, f => !f.includes('focused %1'));
		expect(later).not.toContain('stop api');
		expect(later).toContain('resume docs: cwd is gone');

		r.stdin.write(KEYS.escape);
		await waitForFrame(r, f => !f.includes('cwd is gone'));
	});

	it('a failed stop stays after the others expired', async () => {
		const {r, store} = await ready();
		const at = Date.now();
		store.dispatch({type: 'operation/started', operation: {kind: 'stop', session: 'web', startedAt: at, steps: []}});
		store.dispatch({type: 'operation/ended', session: 'web', at, ok: false, text: 'survivors: 4242'});
		store.dispatch({type: 'clock/expire', now: at + 10 * NOTICE_TTL_MS});
		expect(await waitForFrame(r, f => f.includes('survivors'))).toContain('✗ stop web: survivors: 4242');
	});
});

const longPath = `/home/u/.claude/projects/${'-very-long-folder-name'.repeat(6)}/69e68769-2dbb-4664-996b-bc39e1d62900.jsonl`;
const detail: SessionDetail = {
	name: 'api',
	processes: [
		{pid: 4242, depth: 0, startedAt: new Date(2026, 0, 1, 9, 30, 5).getTime(), command: 'codex resume 01a22b1d'},
		{pid: 4250, depth: 1, command: 'node mcp-server.js'},
	],
	plan: {
		target: 'api',
		agent: 'codex',
		id: '01a22b1d',
		descendants: [],
		lines: [{kind: 'file', description: 'rollout', path: longPath, bytes: 4096, sessionId: '01a22b1d'}],
		totalBytes: 4096,
	},
	resumeCommand: ['codex', 'resume', '01a22b1d'],
	output: Array.from({length: 20}, (_, i) => `output line ${i + 1}`).join('\n'),
	audit: [{id: 1, at: new Date(2026, 0, 1, 10, 0, 0).getTime(), session: 'api', action: 'stop', step: 'exit-input', outcome: 'ok', detail: {}}],
	loadedAt: 0,
};

describe('the detail panel', () => {
	it('lists the process tree, the artifact with its whole path, the resume command, output and history; J/K scroll it', async () => {
		const {r, store} = await ready({detail});
		const top = await waitForFrame(r, f => f.includes('processes (2)'));
		expect(top).toMatch(/4242 09:30:05 codex resume 01a22b1d/);
		expect(top).toMatch(/ {4}4250 --:--:-- node mcp-server\.js/);
		expect(top).toContain('$ codex resume 01a22b1d');
		// the long path is wrapped over lines, every character of it on screen (one J brings it all in)
		const withPath = await press(r, 'J');
		const joined = withPath
			.split('\n')
			.map(l => l.replace(/^│\s*/, '').replace(/\s*│$/, ''))
			.join('');
		expect(joined.replace(/\s+/g, '')).toContain(longPath.replace('/home/u', '~'));
		expect(top).not.toContain('output line 20');

		await press(r, 'J', 'J', 'J', 'J', 'J');
		const bottom = r.lastFrame() ?? '';
		expect(bottom).toContain('output line 20');
		expect(bottom).toMatch(/10:00:00 stop\/exit-input ok/);
		expect(bottom).not.toContain('processes (2)');
		const scrolled = store.getState().ui.detailScroll;

		// one K from the last page moves up at once: the scroll never runs past the end
		await press(r, 'J', 'J', 'K');
		expect(store.getState().ui.detailScroll).toBeLessThan(scrolled);
		await press(r, ...Array.from({length: 10}, () => 'K'));
		expect(r.lastFrame()).toContain('processes (2)');
	});

	it('PgDn scrolls too, and another row starts at the top', async () => {
		const {r, store} = await ready({detail});
		await waitForFrame(r, f => f.includes('processes (2)'));
		await press(r, '\u001B[6~');
		expect(store.getState().ui.detailScroll).toBeGreaterThan(0);
		await press(r, 'j');
		expect(store.getState().ui.detailScroll).toBe(0);
	});
});

const conversation = (id: string, cwd: string, title: string, resume: Conversation['resumeState'] = {kind: 'yes'}): Conversation => ({
	agent: 'claude',
	id,
	cwd,
	createdAt: 1,
	updatedAt: 2,
	childCount: 0,
	resumeState: resume,
	title,
});

describe('the conversations view', () => {
	const inRegistryFolder = conversation('11111111-aaaa-4aaa-8aaa-111111111111', '/home/u/src/app', 'fix the login', {kind: 'no', reason: 'in use by pid 77'});
	const elsewhere = conversation('22222222-bbbb-4bbb-8bbb-222222222222', '/home/u/other/tool', 'port the parser');

	it('A switches to every folder (loaded once), with the live snapshot’s resume state; A again back', async () => {
		const {r, store, actions} = await ready({conversations: [inRegistryFolder]});
		await press(r, 'c');
		expect(r.lastFrame()).toContain("1 in the registry's folders");
		await press(r, 'A');
		expect(actions.loadAllConversations).toHaveBeenCalledTimes(1);
		expect(r.lastFrame()).toContain('every folder (reading…)');
		// the all-folders scan says yes; the snapshot knows it is in use, and that is what shows
		store.dispatch({type: 'conversations/all', conversations: [{...inRegistryFolder, resumeState: {kind: 'yes'}}, elsewhere]});
		const all = await waitForFrame(r, f => f.includes('2 in every folder'));
		expect(all).toMatch(/11111111-aaaa~ .*no: in use/);
		expect(all).toContain('~/other/tool');
		await press(r, 'A');
		expect(r.lastFrame()).not.toContain('~/other/tool');
	});

	it('/ searches titles, ids and folders; esc clears the search', async () => {
		const {r, store} = await ready({conversations: [inRegistryFolder, elsewhere], allConversations: null});
		await press(r, 'c', 'A');
		store.dispatch({type: 'conversations/all', conversations: [inRegistryFolder, elsewhere]});
		await waitForFrame(r, f => f.includes('2 in every folder'));
		const byTitle = await press(r, '/', 'parser');
		expect(byTitle).toContain('1 in every folder');
		expect(byTitle).toContain('port the parser');
		await press(r, KEYS.escape, '/', '1111');
		expect(r.lastFrame()).toContain('fix the login');
		expect(r.lastFrame()).not.toContain('port the parser');
		await press(r, KEYS.backspace, KEYS.backspace, KEYS.backspace, KEYS.backspace, 'other/tool', KEYS.enter);
		expect(r.lastFrame()).toContain('port the parser');
		expect(store.getState().ui.filter).toBe('');
		await press(r, KEYS.escape);
		expect(r.lastFrame()).toContain('mam-tui — sessions');
	});
});

describe('keys from config.yaml', () => {
	it('a rebound stop key asks; the old one does nothing; ? shows the new binding', async () => {
		const keymap = keymapWith({'session.stop': ['x']});
		const {r, actions} = await ready({}, keymap);
		await press(r, 's');
		expect(actions.openStop).not.toHaveBeenCalled();
		const frame = await press(r, 'x');
		expect(frame).toContain('y or x stops it');
		await press(r, KEYS.escape);
		expect(await press(r, '?')).toMatch(/x +stop: shows the steps/);
		expect(r.lastFrame()).not.toMatch(/\ns +stop/);
	});

	it('n in the stop question cancels even when n is the stop key', async () => {
		const {r, actions, store} = await ready({}, keymapWith({'session.stop': ['n'], 'session.new': ['N']}));
		await press(r, 'n');
		expect(store.getState().ui.mode).toBe('stop');
		await press(r, 'n');
		expect(actions.stop).not.toHaveBeenCalled();
		expect(store.getState().stopDialog).toBeNull();
	});

	it('refuses ctrl+b, a key two commands would share, an unknown command or key, naming it', () => {
		expect(() => keymapWith({'session.stop': ['ctrl+b']})).toThrow(/keys\.session\.stop: ctrl\+b is refused/);
		expect(() => keymapWith({'session.stop': ['j']})).toThrow(/keys: j is bound to both cursor\.down and session\.stop/);
		expect(() => keymapWith({'session.explode': ['x']})).toThrow(/keys\.session\.explode: no such command/);
		expect(() => keymapWith({'session.stop': ['ctrl+shift+x']})).toThrow(KeymapError);
		expect(() => keymapWith({'session.stop': ['x'], 'session.purge': ['s']})).not.toThrow();
	});
});

describe('the terminal size', () => {
	it('fills the rows it has and follows a resize', async () => {
		const {r} = await ready();
		const stdout = r.stdout as unknown as NodeJS.EventEmitter;
		// ink-testing-library's stdout has a fixed 100 columns and no rows: give it a size, as a terminal would
		const size = {columns: 100, rows: 30};
		Object.defineProperty(stdout, 'columns', {get: () => size.columns, configurable: true});
		Object.defineProperty(stdout, 'rows', {get: () => size.rows, configurable: true});
		stdout.emit('resize');
		const tall = await waitForFrame(r, f => f.split('\n').length === 29);
		expect(tall.split('\n').at(-1)).toMatch(/enter focus/);
		size.rows = 16;
		size.columns = 80;
		stdout.emit('resize');
		const small = await waitForFrame(r, f => f.split('\n').length === 15);
		for (const line of small.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
	});
});

describe('the purge dialog shows the whole plan before it confirms', () => {
	const lines = Array.from({length: 30}, (_, i) => ({
		kind: 'file' as const,
		description: `sub-agent transcript ${i + 1}`,
		path: `/home/u/.claude/projects/p/agent-${i + 1}.jsonl`,
		bytes: 100,
		sessionId: 'x',
	}));
	const bigPlan = {target: 'docs', agent: 'claude' as const, id: '69e68769', descendants: [], lines, totalBytes: 3000};

	it('a plan taller than the dialog: the right name and enter wait until PgDn brought its end on screen', async () => {
		const {r, store, actions} = await ready();
		store.dispatch({type: 'purge/open', targets: ['docs'], expected: 'docs'});
		store.dispatch({type: 'purge/plans', plans: [bigPlan]});
		const first = await waitForFrame(r, f => f.includes('more below'));
		expect(first).toContain('agent-1.jsonl');
		expect(first).not.toContain('agent-30.jsonl');
		await press(r, 'docs', KEYS.enter);
		expect(actions.confirmPurge).not.toHaveBeenCalled();
		expect(await waitForFrame(r, f => f.includes('scroll to the end of the plan first'))).toContain('> docs');
		expect(store.getState().purge).not.toBeNull();

		await press(r, '\u001B[6~', '\u001B[6~', '\u001B[6~', '\u001B[6~', '\u001B[6~', '\u001B[6~');
		expect(r.lastFrame()).toContain('agent-30.jsonl');
		await press(r, KEYS.enter);
		expect(actions.confirmPurge).toHaveBeenCalledWith('docs');
	});
});
