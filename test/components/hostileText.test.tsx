import {render} from 'ink-testing-library';
import {describe, expect, it} from 'vitest';
import {FindingsScreen} from '../../components/screens/FindingsScreen.js';
import {detailLines} from '../../components/widgets/detailLines.js';
import {OperationsPanel} from '../../components/widgets/OperationsPanel.js';
import type {Finding} from '../../src/domain/types.js';
import {session} from './fixtures.js';

/**
 * Text another machine sends (a host's finding, a row's name, a refusal) is shown, never obeyed:
 * an escape sequence in it must not reach the terminal (here, one that sets the window title).
 */
const TITLE = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J';

describe('text from another machine on the screen', () => {
	it("a host's finding: its message, evidence and fix show with ? for each control character", () => {
		const finding: Finding = {
			kind: 'untracked-pane',
			paneId: '%1',
			message: `tmux pane %1 ${TITLE}runs codex`,
			evidence: [`evidence ${CLEAR}here`],
			candidates: [`id${CLEAR}`],
			host: {name: 'devbox', key: 'k', fix: `adopt pane %1${TITLE}`},
		};
		const r = render(<FindingsScreen findings={[finding]} cursor={0} height={20} width={120} />);
		const frame = r.lastFrame() ?? '';
		r.unmount();
		expect(frame).not.toContain('\u001b]');
		expect(frame).not.toContain(CLEAR);
		expect(frame).toContain('?]0;pwned?runs codex');
		expect(frame).toContain('f: adopt pane %1?]0;pwned? (on devbox)');
	});

	it("a host's row in the detail panel, and a host's refusal in the operations panel", () => {
		const row = session({name: `devbox:api${TITLE}`, host: 'devbox', cwd: `/w${CLEAR}`});
		const lines = detailLines({session: row, detail: null, findings: [], home: '/home/u'}, 80).map(l => l.text);
		expect(lines.join('\n')).not.toMatch(/\u001b/);
		expect(lines[0]).toContain('devbox:api?]0;pwned?');
		const r = render(
			<OperationsPanel
				operations={{
					'devbox:api': {kind: 'stop', session: 'devbox:api', startedAt: 0, endedAt: 1000, steps: [], outcome: {ok: false, text: `devbox: refused${TITLE}`}},
				}}
				now={1000}
			/>,
		);
		const frame = r.lastFrame() ?? '';
		r.unmount();
		expect(frame).not.toContain('\u001b]');
		expect(frame).toContain('refused?]0;pwned?');
	});
});
