import {describe, expect, it} from 'vitest';
import {detailLines} from '../../components/widgets/detailLines.js';
import type {AuditRecord} from '../../src/domain/types.js';
import {session} from './fixtures.js';

const at = new Date(2026, 11, 7, 17, 43, 53).getTime();
// What a stop of the real codex, waiting on an approval, wrote to the audit log.
const audit: AuditRecord[] = [
	{
		id: 14,
		at,
		session: 'codex-beta',
		action: 'stop',
		step: 'exit-input',
		outcome: 'info',
		detail: {message: 'not typing into pane %2: the agent waits on an approval', paneId: '%2'},
	},
	{id: 17, at, session: 'codex-beta', action: 'stop', step: null, outcome: 'ok', detail: {endedBy: 'close-pane'}},
];

describe('the detail panel history', () => {
	it("shows each step's own words after its outcome", () => {
		const s = session({name: 'codex-beta', agent: 'codex'});
		const detail = {name: 'codex-beta', processes: [], audit, resumeCommand: ['codex', 'resume', 'x'], loadedAt: 0};
		const lines = detailLines({session: s, detail, findings: [], home: '/home/u'}, 120).map(l => l.text);
		expect(lines).toContain('  17:43:53 stop/exit-input info: not typing into pane %2: the agent waits on an approval');
		expect(lines).toContain('  17:43:53 stop ok');
	});
});
