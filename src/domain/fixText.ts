import {assertNever} from './result.js';
import type {Fix} from './types.js';

/** What a finding's fix does, in words: `drift`'s report, the findings view and another machine's finding. */
export function describeFix(fix: Fix): string {
	switch (fix.type) {
		case 'mark-stopped':
			return fix.clearPane ? 'mark stopped and forget the pane' : 'mark stopped';
		case 'mark-running':
			return `mark running in pane ${fix.paneId}`;
		case 'pin':
			return `pin ${fix.agentSessionId}`;
		case 'repin':
			return `re-pin ${fix.from} → ${fix.to}`;
		case 'adopt-pane':
			return `adopt pane ${fix.paneId} as a new ${fix.agent} session in ${fix.cwd}${fix.agentSessionId ? ` pinned to ${fix.agentSessionId}` : ''}`;
		default:
			return assertNever(fix);
	}
}
