import {describe, expect, it} from 'vitest';
import type {Finding, MuxHealth} from '../../src/domain/types.js';
import {createShown, samePlain} from '../../src/sync/liveUpdate.js';

const health = (over: Partial<MuxHealth> = {}): MuxHealth => ({kind: 'herdr', ok: true, message: 'herdr 0.8 at /s', lastOkAt: 1, ...over});
const finding = (over: Partial<Finding> = {}): Finding => ({
	kind: 'pane-gone',
	sessionId: 1,
	message: 'gone',
	evidence: ['a'],
	fix: {type: 'mark-stopped', sessionId: 1},
	...over,
});

describe('what the supervisor gives the store', () => {
	it('the first refresh is shown whole; the same objects again are not shown at all', () => {
		const shown = createShown();
		const fields = {panes: [], live: {}, conversations: [], findings: [finding()], mux: health()};
		expect(shown.changes(fields)).toEqual({type: 'live/updated', ...fields});
		expect(shown.changes({...fields})).toBeUndefined();
	});

	it('findings made anew but equal, and a health that only moved lastOkAt, are not news', () => {
		const shown = createShown();
		shown.changes({findings: [finding()], mux: health()});
		expect(shown.changes({findings: [finding()], mux: health({lastOkAt: 2})})).toBeUndefined();
	});

	it('only what changed is carried', () => {
		const shown = createShown();
		const live = {};
		shown.changes({panes: [], live, findings: [finding()], mux: health()});
		const panes = [] as const;
		expect(shown.changes({panes, live, findings: [finding({message: 'other'})], mux: health({ok: false, message: 'down'})})).toEqual({
			type: 'live/updated',
			panes,
			findings: [finding({message: 'other'})],
			mux: health({ok: false, message: 'down'}),
		});
	});

	it('a finding that differs anywhere, however deep, is news', () => {
		const a = finding();
		for (const b of [
			finding({evidence: ['b']}),
			finding({evidence: ['a', 'b']}),
			finding({fix: {type: 'mark-stopped', sessionId: 2}}),
			finding({level: 'info'}),
		])
			expect(samePlain(a, b)).toBe(false);
		expect(samePlain(a, finding())).toBe(true);
		expect(samePlain([1], {0: 1})).toBe(false);
	});
});
