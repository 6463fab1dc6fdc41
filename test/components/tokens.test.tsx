// Issue 29 item 4 in the dashboard: tokens from the search index in the conversations view (a
// column, the selected folder's sum) and the sessions view's detail panel. Unknown is `—`, never 0.
import {renderToString} from 'ink';
import {render} from 'ink-testing-library';
import {describe, expect, it} from 'vitest';
import {ConversationsScreen, type ConversationsScreenProps} from '../../components/screens/ConversationsScreen.js';
import {detailLines} from '../../components/widgets/detailLines.js';
import type {Conversation} from '../../src/domain/types.js';
import {folderUsage, usageLine} from '../../src/domain/usage.js';
import {session} from './fixtures.js';

const conv = (id: string, agent: Conversation['agent'], cwd: string): Conversation => ({
	agent,
	id,
	cwd,
	createdAt: 1,
	updatedAt: 1,
	title: `title ${id}`,
	childCount: 0,
	resumeState: {kind: 'yes'},
});

describe('tokens in the dashboard', () => {
	const a = conv('aaaa', 'claude', '/home/u/p');
	const b = conv('bbbb', 'codex', '/home/u/p');
	const c = conv('cccc', 'agy', '/home/u/p');
	const usage = new Map([
		['claude:aaaa', {input: 1200, output: 30, cacheRead: 50_000, cacheWrite: 0}],
		['codex:bbbb', {input: 800, output: 70}],
	]);

	/** The conversations view over a, b and c with their tokens, `width` columns wide. */
	const screenProps = (width: number): ConversationsScreenProps => ({
		conversations: [a, b, c],
		sessions: [],
		scope: 'registry',
		search: '',
		searching: false,
		loadingAll: false,
		cursor: 0,
		height: 12,
		width,
		home: '/home/u',
		now: 2,
		usage,
	});

	it('sums a folder over the conversations with figures and counts the ones without', () => {
		const sum = folderUsage([a, b, c], usage, '/home/u/p');
		expect(sum).toEqual({usage: {input: 2000, output: 100, cacheRead: 50_000, cacheWrite: 0}, counted: 2, total: 3});
		expect(usageLine(sum.usage)).toBe('in 2.0k out 100 cache 50.0k');
		// codex records no cache figure here: unknown, not 0.
		expect(usageLine(usage.get('codex:bbbb'))).toBe('in 800 out 70 cache —');
		expect(usageLine(undefined)).toBe('—');
	});

	it('at 120 columns leaves the tokens column out: the title (a search snippet) keeps its room', () => {
		const snippet = 'the [token] budget ran out before the refactor';
		const frame = renderToString(<ConversationsScreen {...screenProps(120)} search="token" snippets={new Map([['claude:aaaa', snippet]])} />, {columns: 120});
		expect(frame).not.toContain('IN/OUT/CACHE');
		expect(frame).toContain('the [token] budget ran');
	});

	it('shows each row’s tokens in a column, — for an agent that records none, and the folder line', () => {
		const r = render(
			<ConversationsScreen {...screenProps(160)} folderLine="/home/u/p: in 2.0k out 100 cache 50.0k (tokens of 2 of its 3 conversations here)" />,
		);
		const frame = r.lastFrame() ?? '';
		r.unmount();
		expect(frame).toContain('IN/OUT/CACHE');
		expect(frame).toMatch(/aaaa.*1\.2k\/30\/50\.0k/);
		expect(frame).toMatch(/bbbb.*800\/70\/—/);
		expect(frame).toMatch(/cccc.* — /);
		expect(frame).not.toMatch(/cccc.* 0\/0/);
		expect(frame).toContain('tokens of 2 of its 3 conversations');
	});

	it('puts the pinned conversation’s tokens in the detail panel', () => {
		const s = session({name: 'api', agent: 'claude', agentSessionId: 'aaaa'});
		const lines = detailLines({session: s, detail: null, findings: [], home: '/home/u', usage: usage.get('claude:aaaa')}, 80).map(l => l.text);
		expect(lines).toContain('tokens in 1.2k out 30 cache 50.0k');
		const unknown = detailLines({session: s, detail: null, findings: [], home: '/home/u'}, 80).map(l => l.text);
		expect(unknown).toContain('tokens —');
		// Before the index read any (the conversations view never opened), `—` would say the agent records none.
		const unread = detailLines({session: s, detail: null, findings: [], home: '/home/u', usageUnread: true}, 80).map(l => l.text);
		expect(unread).toContain('tokens not read yet (c reads them)');
		// Another machine's conversation is in that machine's index, never in this one's: no line that `c` would fill or `—` would deny.
		const remote = {...s, name: 'devbox:api', host: 'devbox'};
		for (const shown of [{usageUnread: true}, {usage: undefined}]) {
			const hostLines = detailLines({session: remote, detail: null, findings: [], home: '/home/u', ...shown}, 80).map(l => l.text);
			expect(hostLines.filter(l => l.startsWith('tokens'))).toEqual(['tokens are counted on devbox (mam-tui search there)']);
		}
	});
});
