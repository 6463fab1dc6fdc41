import {describe, expect, it} from 'vitest';
import {parseEvent, parsePaneInfo, parseProcessInfo, parseSnapshot} from '../../src/mux/herdr/wire.js';
import {MuxError} from '../../src/mux/types.js';

const pane = {pane_id: 'w1:p1', terminal_id: 'term_1', workspace_id: 'w1', tab_id: 'w1:t1', focused: false, agent_status: 'idle', revision: 3};

describe('herdr wire readers (PROTOCOL 12: tolerate unknown fields, nulls, new values)', () => {
	it('ignores unknown fields and treats null optionals as absent', () => {
		const read = parsePaneInfo({...pane, cwd: null, agent: 'claude', title: null, brand_new: {x: 1}, agent_session: null});
		expect(read).toEqual({
			paneId: 'w1:p1',
			terminalId: 'term_1',
			workspaceId: 'w1',
			tabId: 'w1:t1',
			focused: false,
			agentStatus: 'idle',
			revision: 3,
			agent: 'claude',
		});
	});

	it('reads an unknown agent status as unknown', () => {
		expect(parsePaneInfo({...pane, agent_status: 'thinking-hard'}).agentStatus).toBe('unknown');
	});

	it('keeps a well-formed agent_session and drops a malformed one', () => {
		const ok = {source: 'herdr:codex', agent: 'codex', kind: 'id', value: 'abc'};
		expect(parsePaneInfo({...pane, agent_session: ok}).agentSession).toEqual(ok);
		expect(parsePaneInfo({...pane, agent_session: {...ok, kind: 'url'}}).agentSession).toBeUndefined();
	});

	it('refuses a pane without its required ids, with a readable MuxError', () => {
		expect(() => parsePaneInfo({...pane, pane_id: undefined})).toThrow(MuxError);
		expect(() => parseSnapshot({type: 'session_snapshot', snapshot: {panes: 'nope'}})).toThrow(/malformed session snapshot/);
	});

	it('reads a snapshot and process info, ignoring what it does not need', () => {
		const snap = parseSnapshot({
			type: 'session_snapshot',
			snapshot: {version: '0.9.1', protocol: 20, focused_pane_id: 'w1:p1', panes: [pane], layouts: [], extra: 1},
		});
		expect(snap).toMatchObject({version: '0.9.1', protocol: 20, focusedPaneId: 'w1:p1', panes: [{paneId: 'w1:p1'}]});
		expect(
			parseProcessInfo({
				type: 'pane_process_info',
				process_info: {pane_id: 'w1:p1', shell_pid: 42, tty: null, foreground_processes: [{pid: 43, name: 'x', more: true}]},
			}),
		).toEqual({
			paneId: 'w1:p1',
			shellPid: 42,
		});
	});

	it('accepts both event shapes and unknown kinds; rejects what is not an event', () => {
		expect(parseEvent({event: 'pane_closed', data: {type: 'pane_closed', pane_id: 'w1:p1', workspace_id: 'w1'}})).toBeDefined();
		expect(parseEvent({event: 'pane.agent_status_changed', data: {pane_id: 'w1:p1', workspace_id: 'w1', agent_status: 'done'}})).toBeDefined();
		expect(parseEvent({event: 'future_kind', data: {}})).toEqual({event: 'future_kind', data: {}});
		expect(parseEvent({event: 'pane_closed'})).toBeUndefined();
		expect(parseEvent(['pane_closed'])).toBeUndefined();
	});
});
